"""LoCoMo retrieval: recall@k of annotated evidence turns, measured the way the LoCoMo paper measures its retrievers.

Data: ``locomo10.json`` of the public repository snap-research/LoCoMo (Maharana et al., "Evaluating Very Long-Term
Conversational Memory of LLM Agents", ACL 2024), licensed CC BY-NC 4.0 and therefore not shipped with this
project. Pass the path of that file (or of a subset with the same shape, such as the development half) to
``python -m benchmarks.run --locomo PATH`` or ``python -m benchmarks.locomo PATH``.

The metric, exactly:

- every turn of a conversation is archived, in order, one message per turn, text ``"{speaker}: {text}"`` plus
  ``" [shares a photo: {blip_caption}]"`` when the turn has a caption; role ``user`` for ``speaker_a`` and
  ``assistant`` for ``speaker_b``; nothing else reaches the library (no dates, no ids, no sessions);
- evidence ids are read leniently (``"D:11:26"`` is ``D11:26``; ``"D8:6; D9:17"`` is two ids); ids that name no turn
  are dropped, and a question left without evidence is skipped;
- each question is asked once with ``search(question, top_k=50)``; recall@k is the share of the question's evidence
  turns among the first k hits, averaged over questions, for k = 5, 10, 25, 50.

Everything else is the library's default configuration; only ``retrieval`` changes between the modes.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from strands.types.content import Message

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.retrieval import RETRIEVAL_MODES

from .measuring import PrecomputedEmbedder
from .results import CategoryRecall, LocomoMode, LocomoResult, Recall

KS = (5, 10, 25, 50)
MODES = RETRIEVAL_MODES
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DRAGON: Recall = {"r5": 56.7, "r10": 66.2, "r25": 76.7, "r50": 82.7}
"""The LoCoMo paper's best retriever (DRAGON), recall % on all ten conversations, same metric."""

_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class Question:
    """One question with the archive positions of its evidence turns."""

    text: str
    evidence: tuple[int, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation as the library sees it: messages in order, and its questions."""

    name: str
    messages: list[Message]
    questions: list[Question]


def turn_text(turn: Mapping[str, Any]) -> str:
    """The archived text of one turn: ``"{speaker}: {text}"`` plus the photo caption when there is one."""
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


def turn_text_of(message: Message) -> str:
    """The text of a message built by :func:`load_conversations`."""
    return str(message["content"][0].get("text", ""))


def evidence_ids(raw: object) -> list[str]:
    """Turn ids in one evidence entry, repaired: ``"D:11:26"`` -> ``D11:26``; ``"D8:6; D9:17"`` -> both ids."""
    return [f"D{int(m.group(1))}:{int(m.group(2))}" for m in _EVIDENCE.finditer(str(raw))]


def load_conversations(path: Path) -> list[Conversation]:
    """Read LoCoMo samples into conversations (see the module docstring for the rules)."""
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    conversations = []
    for number, sample in enumerate(samples):
        dialogue = sample["conversation"]
        sessions = sorted(
            (key for key in dialogue if _SESSION.fullmatch(key) and isinstance(dialogue[key], list)),
            key=lambda key: int(key.split("_")[1]),
        )
        messages: list[Message] = []
        position: dict[str, int] = {}
        for key in sessions:
            for turn in dialogue[key]:
                position[turn["dia_id"]] = len(messages)
                role: Literal["user", "assistant"] = "user" if turn["speaker"] == dialogue["speaker_a"] else "assistant"
                messages.append({"role": role, "content": [{"text": turn_text(turn)}]})
        questions = []
        for qa in sample.get("qa", []):
            found = {position[i] for raw in qa.get("evidence", []) for i in evidence_ids(raw) if i in position}
            if found:
                questions.append(Question(str(qa["question"]), tuple(sorted(found)), int(qa["category"])))
        conversations.append(Conversation(str(sample.get("sample_id", number)), messages, questions))
    return conversations


def recall_at(hits: Sequence[int], evidence: Sequence[int], k: int) -> float:
    """Share of the evidence among the first ``k`` hits."""
    return len(set(evidence) & set(hits[:k])) / len(evidence)


def at_ks(recall: Recall) -> tuple[float, float, float, float]:
    """A recall's figures in the order of ``KS``."""
    return recall["r5"], recall["r10"], recall["r25"], recall["r50"]


def _summary(rows: list[list[float]]) -> Recall:
    means = np.mean(np.asarray(rows), axis=0) * 100 if rows else np.zeros(len(KS))
    r5, r10, r25, r50 = (round(float(m), 1) for m in means)
    return {"r5": r5, "r10": r10, "r25": r25, "r50": r50}


def _by_category(rows: list[list[float]]) -> CategoryRecall:
    return {**_summary(rows), "questions": len(rows)}


def run_locomo(
    path: Path,
    *,
    embedder: Any = None,
    modes: Sequence[str] = MODES,
    limit: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> LocomoResult:
    """Recall@5/10/25/50 on LoCoMo by retrieval mode and question category, and search latency.

    Args:
        path: A LoCoMo JSON file (``locomo10.json`` or a subset of it). When it is absent, one line says so and
            the result is ``{"skipped": reason}``.
        embedder: The embedder to use (default: the bundled all-MiniLM-L6-v2). Each message is embedded once and
            the vectors are shared by the modes.
        modes: Retrieval modes to measure; the first one's searches are timed.
        limit: Only the first ``limit`` conversations (smoke tests).
        options: Extra ``SemanticMemory`` options (default: none, i.e. the default configuration).

    Returns:
        ``{"conversations", "messages", "questions", "modes": {mode: {"all": {"r5", ...}, "categories":
        {name: {...}}}}, "latency_ms": {"p50", "p95", "searches"}, "dragon": {...}}`` with recalls in percent.
    """
    path = Path(path)
    if not path.is_file():
        reason = f"LoCoMo skipped: {path} not found (locomo10.json from snap-research/LoCoMo, CC BY-NC 4.0)"
        print(reason, flush=True)
        return {"skipped": reason}
    conversations = load_conversations(path)[:limit]
    if embedder is None:
        from strands_semantic_memory.embeddings import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    texts = [turn_text_of(m) for c in conversations for m in c.messages]
    shared = PrecomputedEmbedder(embedder, texts, embedder.embed_documents(texts)) if texts else embedder
    modes_measured: dict[str, LocomoMode] = {}
    results: LocomoResult = {
        "conversations": len(conversations),
        "messages": len(texts),
        "questions": sum(len(c.questions) for c in conversations),
        "modes": modes_measured,
        "dragon": DRAGON,
    }
    latencies: list[float] = []
    for number, mode in enumerate(modes):
        rows: list[list[float]] = []
        by_category: dict[int, list[list[float]]] = {}
        for conversation in conversations:
            memory = SemanticMemory(embedder=shared, **{**(options or {}), "retrieval": mode})
            memory.add(conversation.messages)
            for question in conversation.questions:
                started = time.perf_counter()
                hits = [h.index for h in memory.search(question.text, top_k=50)]
                if number == 0:
                    latencies.append((time.perf_counter() - started) * 1000)
                row = [recall_at(hits, question.evidence, k) for k in KS]
                rows.append(row)
                by_category.setdefault(question.category, []).append(row)
        modes_measured[mode] = {
            "all": _summary(rows),
            "categories": {f"{c} {CATEGORIES.get(c, '?')}": _by_category(v) for c, v in sorted(by_category.items())},
        }
    if latencies:
        results["latency_ms"] = {
            "mode": modes[0],
            "p50": round(statistics.median(latencies), 2),
            "p95": round(float(np.percentile(latencies, 95)), 2),
            "searches": len(latencies),
        }
    return results


def format_results(results: LocomoResult) -> str:
    """A markdown report of :func:`run_locomo`'s results."""
    if "skipped" in results:
        return str(results["skipped"])
    lines = [
        f"LoCoMo: {results['conversations']} conversations, {results['messages']} messages, "
        f"{results['questions']} questions; search(question, top_k=50), default configuration.",
        "",
        "| retriever | R@5 | R@10 | R@25 | R@50 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for mode, summary in results["modes"].items():
        lines.append(f"| {mode} | " + " | ".join(f"{value:.1f}" for value in at_ks(summary["all"])) + " |")
    lines.append("| DRAGON (LoCoMo paper, all ten) | " + " | ".join(f"{value:.1f}" for value in at_ks(DRAGON)) + " |")
    for mode, summary in results["modes"].items():
        lines += ["", f"By category ({mode}):", "", "| category | questions | R@5 | R@10 | R@25 | R@50 |"]
        lines.append("| --- | --- | --- | --- | --- | --- |")
        for name, row in summary["categories"].items():
            lines.append(
                f"| {name} | {row['questions']} | " + " | ".join(f"{value:.1f}" for value in at_ks(row)) + " |"
            )
    if "latency_ms" in results:
        latency = results["latency_ms"]
        lines += [
            "",
            f"search(q, top_k=50), {latency['mode']}: p50 {latency['p50']:.1f} ms, p95 {latency['p95']:.1f} ms "
            f"over {latency['searches']} searches (query embedding included; {os.cpu_count()} CPUs).",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.locomo PATH [--modes hybrid,dense] [--limit N] [--json OUT]``."""
    parser = argparse.ArgumentParser(description="LoCoMo evidence recall of the default configuration")
    parser.add_argument("path", type=Path, help="locomo10.json (snap-research/LoCoMo) or a subset of it")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated retrieval modes")
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    results = run_locomo(args.path, modes=tuple(args.modes.split(",")), limit=args.limit)
    if "skipped" not in results:  # run_locomo printed the one line that says why
        print(format_results(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
