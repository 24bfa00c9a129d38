"""LoCoMo retrieval recall: the held-out check's metric on the development half, beside DRAGON's figures.

The metric, as ``shared/data/locomo/README.md`` gives it: every turn of a conversation archived in order, one message
per turn, text ``"{speaker}: {text}"`` plus ``" [shares a photo: {caption}]"``, role ``user`` for speaker A and
``assistant`` for speaker B, nothing else (no dates, no ids); each question with evidence asked once with
``search(question, top_k=50)`` on a ``SemanticMemory()`` in its default configuration; recall@k = the share of the
question's evidence turns among the first k hits, averaged over questions, for k = 5, 10, 25, 50. The generated
conversations (``benchmarks.data.devset``) are measured the same way, each turn's own text archived.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import Section, Settings, table
from benchmarks.data import devset
from benchmarks.data.locomo import Conversation, load, located, paper_text
from strands_semantic_memory import SemanticMemory

KS = (5, 10, 25, 50)
DRAGON = {"r5": 56.7, "r10": 66.2, "r25": 76.7, "r50": 82.7}
"""DRAGON, the LoCoMo paper's best retriever, on all ten conversations, same metric."""
QUICK_SESSIONS, QUICK_QUESTIONS = 6, 40


def archive(memory: SemanticMemory, conversation: Conversation) -> None:
    """Archive every turn in order, as the metric says (the paper's text for LoCoMo, the own text otherwise)."""
    memory.add(
        [
            {
                "role": "user" if turn.speaker == conversation.user else "assistant",
                "content": [{"text": paper_text(turn) if conversation.speaker_prefix else turn.text}],
            }
            for turn in conversation.turns
        ]
    )


def recall_rows(conversation: Conversation, build: Callable[[], SemanticMemory] = SemanticMemory) -> list[list[float]]:
    """One ``[R@5, R@10, R@25, R@50]`` (shares) per question, on a memory from ``build``."""
    position = {turn.dia_id: n for n, turn in enumerate(conversation.turns)}
    memory = build()
    try:
        archive(memory, conversation)
        rows = []
        for question in conversation.questions:
            hits = [hit.index for hit in memory.search(question.text, top_k=max(KS))]
            wanted = {position[i] for i in question.evidence}
            rows.append([len(wanted & set(hits[:k])) / len(wanted) for k in KS])
        return rows
    finally:
        memory.close()


def _means(rows: Sequence[Sequence[float]]) -> dict[str, float]:
    return {f"r{k}": round(100 * sum(r[n] for r in rows) / len(rows), 1) if rows else 0.0 for n, k in enumerate(KS)}


def measure(conversations: Sequence[Conversation]) -> dict[str, Any]:
    """Recall overall (each question once), per conversation and per category."""
    every: list[list[float]] = []
    per_conversation: dict[str, dict[str, float]] = {}
    by_category: dict[str, list[list[float]]] = {}
    for conversation in conversations:
        rows = recall_rows(conversation)
        every += rows
        per_conversation[conversation.name] = {**_means(rows), "questions": len(rows)}
        for question, row in zip(conversation.questions, rows):
            by_category.setdefault(conversation.category(question.category), []).append(row)
    return {
        "all": _means(every),
        "questions": len(every),
        "turns": sum(len(c.turns) for c in conversations),
        "conversations": per_conversation,
        "categories": {name: {**_means(rows), "questions": len(rows)} for name, rows in sorted(by_category.items())},
    }


def run(settings: Settings) -> dict[str, Any]:
    path = located(settings.locomo)
    generated = devset.build(0)
    if settings.quick:
        generated = [c.sliced(QUICK_SESSIONS, QUICK_QUESTIONS // 4) for c in generated[:1]]
    data: dict[str, Any] = {"dragon": DRAGON, "devset": measure(generated)}
    if path is None:
        data["skipped"] = f"the LoCoMo file {settings.locomo} was not found"
        return data
    conversations = load(path)
    if settings.quick:
        conversations = [c.sliced(QUICK_SESSIONS, QUICK_QUESTIONS) for c in conversations[:1]]
    data["locomo"] = measure(conversations)
    return data


def _cells(figures: dict[str, float]) -> list[str]:
    return [f"{figures[f'r{k}']:.1f}" for k in KS]


def render(data: dict[str, Any], output: Path) -> str:
    parts = []
    locomo = data.get("locomo")
    if locomo is None:
        parts.append(f"LoCoMo not measured: {data.get('skipped')}.")
    else:
        parts += [
            f"LoCoMo's development half ({len(locomo['conversations'])} conversations, {locomo['turns']:,} turns, "
            f"{locomo['questions']} questions with evidence), the held-out check's metric: every turn archived as "
            '`"{speaker}: {text}"` (and its photo\'s caption), `SemanticMemory()` in its default configuration, '
            "`search(question, top_k=50)`; recall@k is the share of a question's evidence turns among the first k "
            "hits, in percent, each question weighing once. No chat model is involved. DRAGON's figures are the "
            "LoCoMo paper's, on all ten conversations.",
            "",
            table(
                ["retriever", "R@5", "R@10", "R@25", "R@50"],
                [
                    ["this library (hybrid default)", *_cells(locomo["all"])],
                    ["DRAGON (paper)", *_cells(data["dragon"])],
                ],
            ),
            "",
            "Per conversation and per category:",
            "",
            table(
                ["", "questions", "R@5", "R@10", "R@25", "R@50"],
                [[name, row["questions"], *_cells(row)] for name, row in locomo["conversations"].items()]
                + [[name, row["questions"], *_cells(row)] for name, row in locomo["categories"].items()],
            ),
        ]
        parts += ["", _plot(locomo, data["dragon"], output)]
    generated = data["devset"]
    parts += [
        "",
        "The generated conversations (`benchmarks.data.devset`: work threads with long answers and changing facts, "
        "life admin with dated events, many short sessions, a user who asks the same things again), each turn's own "
        "text archived, measured the same way:",
        "",
        table(
            ["", "questions", "R@5", "R@10", "R@25", "R@50"],
            [["all", generated["questions"], *_cells(generated["all"])]]
            + [[name, row["questions"], *_cells(row)] for name, row in generated["conversations"].items()]
            + [[name, row["questions"], *_cells(row)] for name, row in generated["categories"].items()],
        ),
    ]
    return "\n".join(parts)


def _plot(locomo: dict[str, Any], dragon: dict[str, float], output: Path) -> str:
    from benchmarks.delivery import plot

    series = {"this library": [(f"R@{k}", locomo["all"][f"r{k}"]) for k in KS]}
    series.update({name: [(f"R@{k}", row[f"r{k}"]) for k in KS] for name, row in locomo["conversations"].items()})
    series["DRAGON (paper, all ten)"] = [(f"R@{k}", dragon[f"r{k}"]) for k in KS]
    return plot(output, "recall.png", "LoCoMo dev: evidence recall@k (%)", series, "recall %")


SECTION = Section("recall", "LoCoMo retrieval recall", run, render)
