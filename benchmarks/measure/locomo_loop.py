"""LoCoMo in the loop: what the memory finds must reach the model, through a real Strands ``Agent``.

Each conversation of the LoCoMo development half is played through a real ``strands.Agent``: speaker A's turns are
the user's messages (consecutive turns of one speaker joined with a newline, each ``"{speaker}: {text}"`` plus the
photo caption, as in the retrieval metric) and a scripted ``strands.models.Model`` replies with speaker B's turns.
The model has a context window of ``W`` characters (its config sets ``context_window_limit = W / 4`` tokens): a
call whose input (system prompt and all message text) is longer raises Strands' ``ContextWindowOverflowException``,
which drives Strands' real reduction path. Summaries are written by the same scripted model for every manager and
are deliberately lossy ("Summary: the speakers talked about" and the 12 most frequent words of more than four
letters), so what reaches the model beyond the recent window must come from the memory.

After the conversation every question with evidence is asked as a user turn, and the agent's history (and the
archive) is put back after each question. A question's score is the share of its evidence turns whose text appears
in the input of the model call that answers it (anywhere: recent window, summary, injected context; the archive's
``"> "`` quotation marks are removed before matching). Every figure here depends on the scripted model: its replies
are the conversation's own, and it answers nothing.

Rows (same run, same table): Strands' ``SlidingWindowConversationManager``, Strands'
``SummarizingConversationManager``, Strands' ``MemoryManager`` injecting from ``SemanticMemoryStore`` beside
Strands' summarizing manager (with Strands' defaults, and in the setup the memory-manager guide recommends), this
library's manager + hook with defaults, and Strands' experimental ``ContextManager`` alone and with
``SemanticStorage`` + the hook (``ROWS`` lists them).

Run: ``python -m benchmarks.measure.locomo_loop [--windows 16000 32000] [--limit N] [--questions N]``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from strands import Agent
from strands.agent.conversation_manager import (
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from strands.models import Model
from strands.types.exceptions import ContextWindowOverflowException

from benchmarks.data.locomo import CATEGORIES, LOCOMO_DEV, LoopConversation, LoopQuestion, load_loop_conversations
from benchmarks.measure.base import Measurement, Run
from benchmarks.results import LocomoLoopResult
from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.messages import render_message

__all__ = ["ROWS", "LocomoInTheLoop", "LoopModel", "locomo_loop", "lossy_summary", "play", "run_loop"]

SUMMARY_REQUEST = "Please summarize this conversation."
CONTEXT_SUMMARY_PROMPT = "You are a summarization assistant."  # how Strands' ContextManager asks for a summary
QUESTION_REPLY = "I will answer from what I can see."
_WORD = re.compile(r"[A-Za-z]+")
_QUOTE = re.compile(r"^> ?", re.MULTILINE)
_STOPWORDS = frozenset(
    "about above after again against their there these those which while would could should other being "
    "where when what with from that this have will your yours them they then than were been into just "
    "only over some such very also because really think thanks thank going great sounds pretty things "
    "something know like love glad sure yeah doing maybe right wanted want always never every still".split()
)


def lossy_summary(messages: Sequence[Any]) -> str:
    """The benchmark's summary: the 12 most frequent words of more than four letters (stopwords removed)."""
    words = Counter(
        w.lower()
        for m in messages
        for w in _WORD.findall(render_message(m))
        if len(w) > 4 and w.lower() not in _STOPWORDS
    )
    return "Summary: the speakers talked about " + ", ".join(w for w, _ in words.most_common(12)) + "."


def input_text(messages: Sequence[Any], system_prompt: str | None) -> str:
    """Everything a call sends, as text: the system prompt and every message's text."""
    return "\n".join([system_prompt or "", *(render_message(m) for m in messages)])


class LoopModel(Model):
    """The scripted model: replies with the next scripted reply, overflows above ``window`` characters of input.

    Attributes:
        reply: What the next chat call answers.
        last_input: The input text of the latest chat call that was answered.
        overflows: Calls refused as longer than the window (chat and summary calls).
        calls: Calls made (chat and summary).
    """

    def __init__(self, window: int) -> None:
        """Create the model with a window of ``window`` characters (``context_window_limit = window / 4``)."""
        self.window = window
        self.config: dict[str, Any] = {"model_id": "locomo-loop", "context_window_limit": window // 4}
        self.reply = "OK."
        self.last_input = ""
        self.overflows = 0
        self.calls = 0

    def update_config(self, **model_config: Any) -> None:
        """Merge ``model_config`` into the configuration."""
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """The configuration."""
        return self.config

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any) -> Any:
        """Not used by this benchmark."""
        raise NotImplementedError("the loop benchmark's model writes prose summaries only")

    async def stream(  # type: ignore[override]
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Answer one call (see the class docstring)."""
        self.calls += 1
        text = input_text(messages, system_prompt)
        if len(text) > self.window:
            self.overflows += 1
            raise ContextWindowOverflowException(f"input of {len(text)} characters exceeds {self.window}")
        is_summary = bool(messages) and render_message(messages[-1]) == SUMMARY_REQUEST
        is_context_summary = bool(messages) and (system_prompt or "").startswith(CONTEXT_SUMMARY_PROMPT)
        if is_summary:
            reply = lossy_summary(messages[:-1])
        elif is_context_summary:  # Strands' ContextManager summarizes content blocks in one user message
            reply = lossy_summary(messages)
        else:
            reply, self.last_input = self.reply, text
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": reply}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        tokens = len(text) // 4
        yield {
            "metadata": {
                "usage": {
                    "inputTokens": tokens,
                    "outputTokens": len(reply) // 4,
                    "totalTokens": tokens + len(reply) // 4,
                },
                "metrics": {"latencyMs": 0},
            }
        }


@dataclass
class Setup:
    """One row's agent, and what is put back after each question."""

    agent: Agent
    memory: SemanticMemory | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _sliding(model: LoopModel, embedder: Any) -> Setup:
    return Setup(Agent(model=model, conversation_manager=SlidingWindowConversationManager(), callback_handler=None))


def _summarizing(model: LoopModel, embedder: Any) -> Setup:
    return Setup(Agent(model=model, conversation_manager=SummarizingConversationManager(), callback_handler=None))


def _memory_manager(model: LoopModel, embedder: Any) -> Setup:
    from strands.memory import MemoryManager

    from strands_semantic_memory import SemanticMemoryStore

    store = SemanticMemoryStore(embedder=embedder)  # the documented setup: the store builds its memory
    agent = Agent(
        model=model,
        conversation_manager=SummarizingConversationManager(),
        memory_manager=MemoryManager(stores=[store], search_tool_config=False),
        callback_handler=None,
    )
    return Setup(agent, store.memory)


def _memory_manager_recommended(model: LoopModel, embedder: Any) -> Setup:
    """The setup the memory-manager guide recommends: Strands' proactive compression, room for 50 entries."""
    from strands.memory import MemoryManager

    from strands_semantic_memory import SemanticMemoryStore

    store = SemanticMemoryStore(embedder=embedder)
    agent = Agent(
        model=model,
        conversation_manager=SummarizingConversationManager(proactive_compression=True),
        memory_manager=MemoryManager(stores=[store], search_tool_config=False, injection={"max_entries": 50}),
        callback_handler=None,
    )
    return Setup(agent, store.memory)


def _semantic(model: LoopModel, embedder: Any) -> Setup:
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    agent = Agent(model=model, conversation_manager=manager, hooks=[SemanticMemoryHook()], callback_handler=None)
    return Setup(agent, manager.memory)


def _context_manager(model: LoopModel, embedder: Any) -> Setup:
    from strands.experimental.context_manager import ContextManager

    manager = ContextManager(strategies=["proactive_summarization"])
    return Setup(Agent(model=model, context_manager=manager, callback_handler=None))


def _context_manager_storage(model: LoopModel, embedder: Any) -> Setup:
    from strands.experimental.context_manager import ContextManager

    from strands_semantic_memory import SemanticStorage
    from strands_semantic_memory.storage import BudgetSummarization

    # The documented setup (docs/guides/context-manager-storage.md), with the benchmark's embedder.
    storage = SemanticStorage(embedder=embedder)
    agent = Agent(
        model=model,
        context_manager=ContextManager(strategies=[BudgetSummarization()]),
        storage=storage,
        plugins=[SemanticMemoryHook(storage=storage)],
        callback_handler=None,
    )
    # What a question stashes is forgotten after it, as for the other rows (the storage's key table notices).
    return Setup(agent, storage.memory)


ROWS: dict[str, Callable[[LoopModel, Any], Setup]] = {
    "Strands sliding window": _sliding,
    "Strands summarizing": _summarizing,
    "Strands MemoryManager + SemanticMemoryStore": _memory_manager,
    "Strands MemoryManager + SemanticMemoryStore (recommended setup)": _memory_manager_recommended,
    "semantic manager + hook": _semantic,
    "Strands ContextManager (proactive summarization)": _context_manager,
    "ContextManager + SemanticStorage + hook": _context_manager_storage,
}


def _drain(memory: SemanticMemory | None) -> None:
    """Embed what is still waiting, so questions search a settled archive (background embedding, if any)."""
    if memory is not None:
        memory.embed_pending()


def _ask(setup: Setup, model: LoopModel, question: LoopQuestion) -> tuple[float, int, bool]:
    """Ask one question, score what its answering call received, and put history and archive back."""
    agent, memory = setup.agent, setup.memory
    saved_messages = list(agent.messages)
    manager = agent.conversation_manager
    saved_manager = dict(vars(manager))
    before = set(memory.indices) if memory is not None else set()
    model.reply, model.last_input = QUESTION_REPLY, ""
    overflows = model.overflows
    failed = False
    try:
        agent(question.text)
    except Exception:  # a failing turn is counted: nothing was answered
        failed = True
    received = _QUOTE.sub("", model.last_input)
    score = sum(1 for text in question.evidence if text in received) / len(question.evidence)
    agent.messages[:] = saved_messages
    vars(manager).clear()
    vars(manager).update(saved_manager)
    if memory is not None and not setup.extra.get("keep_archive"):
        added = sorted(set(memory.indices) - before)
        if added:
            memory.forget(added)
    return score, model.overflows - overflows, failed


def play(
    conversation: LoopConversation, row: str, window: int, embedder: Any, questions: int | None = None
) -> dict[str, Any]:
    """Play one conversation through one row's agent, then ask its questions.

    Returns:
        ``{"delivered", "categories", "overflows", "question_overflows", "input_chars", "ms_per_exchange",
        "failed_turns", "questions"}``: delivered in percent (mean over questions), input characters of the
        answering calls (mean), overflowed calls during the conversation and during the questions.
    """
    model = LoopModel(window)
    setup = ROWS[row](model, embedder)
    failed = 0
    started = time.perf_counter()
    for user, reply in conversation.exchanges:
        model.reply = reply
        try:
            setup.agent(user)
        except Exception:
            failed += 1
    elapsed = time.perf_counter() - started
    conversation_overflows = model.overflows
    _drain(setup.memory)
    scores: list[float] = []
    by_category: dict[int, list[float]] = {}
    input_chars: list[int] = []
    question_overflows = 0
    for question in conversation.questions[:questions]:
        score, overflowed, question_failed = _ask(setup, model, question)
        failed += question_failed
        question_overflows += overflowed
        scores.append(score)
        by_category.setdefault(question.category, []).append(score)
        input_chars.append(len(model.last_input))
    return {
        "delivered": round(100 * statistics.fmean(scores), 1) if scores else 0.0,
        "categories": {
            f"{c} {CATEGORIES.get(c, '?')}": round(100 * statistics.fmean(v), 1) for c, v in sorted(by_category.items())
        },
        "overflows": conversation_overflows,
        "question_overflows": question_overflows,
        "input_chars": round(statistics.fmean(input_chars)) if input_chars else 0,
        "ms_per_exchange": round(1000 * elapsed / max(1, len(conversation.exchanges)), 1),
        "failed_turns": failed,
        "questions": len(scores),
    }


def run_loop(
    path: Path = LOCOMO_DEV,
    *,
    windows: Sequence[int] = (16_000, 32_000),
    rows: Sequence[str] = tuple(ROWS),
    embedder: Any = None,
    limit: int | None = None,
    questions: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every row at every window on every conversation (see the module docstring).

    Returns:
        ``{"windows": {W: {row: {"conversations": {name: result}, "all": {...}}}}}`` where ``"all"`` weighs each
        question once (delivered, by category) and sums overflows over the conversations.
    """
    if embedder is None:
        from strands_semantic_memory.embeddings import resolve_embedder

        embedder = resolve_embedder()
    conversations = load_loop_conversations(path)[:limit]
    results: dict[str, Any] = {"windows": {}}
    for window in windows:
        per_row: dict[str, Any] = {}
        for row in rows:
            by_conversation = {}
            for conversation in conversations:
                result = play(conversation, row, window, embedder, questions)
                by_conversation[conversation.name] = result
                if progress is not None:
                    progress(f"W={window} {row} {conversation.name}: {result['delivered']} % delivered")
            per_row[row] = {"conversations": by_conversation, "all": _overall(by_conversation.values())}
        results["windows"][str(window)] = per_row
    return results


def _overall(results: Any) -> dict[str, Any]:
    rows = list(results)
    weights = [r["questions"] for r in rows]
    total = sum(weights) or 1
    categories: dict[str, list[tuple[float, int]]] = {}
    return {
        "delivered": round(sum(r["delivered"] * w for r, w in zip(rows, weights)) / total, 1),
        "lowest": min((r["delivered"] for r in rows), default=0.0),
        "overflows": sum(r["overflows"] for r in rows),
        "question_overflows": sum(r["question_overflows"] for r in rows),
        "input_chars": round(sum(r["input_chars"] * w for r, w in zip(rows, weights)) / total),
        "ms_per_exchange": round(statistics.fmean(r["ms_per_exchange"] for r in rows), 1) if rows else 0.0,
        "failed_turns": sum(r["failed_turns"] for r in rows),
        "categories": {
            name: round(sum(s * n for s, n in pairs) / max(1, sum(n for _, n in pairs)), 1)
            for name, pairs in _by_category(rows, categories).items()
        },
    }


def _by_category(
    rows: Sequence[dict[str, Any]], into: dict[str, list[tuple[float, int]]]
) -> dict[str, list[tuple[float, int]]]:
    for row in rows:
        for name, score in row["categories"].items():
            into.setdefault(name, []).append((score, 1))
    return into


def format_loop(results: dict[str, Any]) -> str:
    """A Markdown table per window: delivered (overall, lowest conversation, by category), overflows, input, time."""
    lines = []
    for window, per_row in results["windows"].items():
        categories = sorted({c for r in per_row.values() for c in r["all"]["categories"]})
        lines.append(f"\nW = {int(window):,} characters ({int(window) // 4:,} tokens)\n")
        header = [
            "row",
            "delivered %",
            "lowest conv. %",
            *categories,
            "overflows",
            "answering input chars",
            "ms / exchange",
        ]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        for row, result in per_row.items():
            overall = result["all"]
            cells = [
                row,
                f"{overall['delivered']:.1f}",
                f"{overall['lowest']:.1f}",
                *(f"{overall['categories'].get(c, 0.0):.1f}" for c in categories),
                str(overall["overflows"]),
                str(overall["input_chars"]),
                f"{overall['ms_per_exchange']:.1f}",
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(
            "Per conversation (delivered %): "
            + "; ".join(
                f"{row}: " + ", ".join(f"{r['delivered']:.0f}" for r in result["conversations"].values())
                for row, result in per_row.items()
            )
        )
    return "\n".join(lines)


def locomo_loop(
    path: Path | None,
    embedder: Any,
    *,
    windows: Sequence[int] = (16_000, 32_000),
    limit: int | None = None,
    questions: int | None = None,
) -> LocomoLoopResult:
    """Every row of :data:`ROWS` at every window, on the first ``limit`` conversations of ``path``, as run data.

    Args:
        path: The LoCoMo file, or None when the run skips LoCoMo.
        embedder: The run's embedder (loaded: the rows time a warm process).
        windows: The model's windows, in characters.
        limit: Only the first ``limit`` conversations (None: all).
        questions: Only the first ``questions`` questions of each conversation (None: all).

    Returns:
        The results, or ``{"skipped": why}`` without a LoCoMo file.
    """
    if path is None:
        return {"skipped": "LoCoMo in the loop was not run: `--locomo none`"}
    if not path.is_file():
        print(f"LoCoMo in the loop skipped: {path} not found", flush=True)
        return {"skipped": f"LoCoMo in the loop was not run: the data file `{path}` was not found"}
    conversations = load_loop_conversations(path)[:limit]
    started = time.perf_counter()
    measured = run_loop(
        path,
        windows=windows,
        rows=tuple(ROWS),
        embedder=embedder,
        limit=limit,
        questions=questions,
        progress=lambda line: print(f"    {line}", flush=True),
    )
    return {
        "windows": measured["windows"],
        "rows": list(ROWS),
        "conversations": [c.name for c in conversations],
        "exchanges": {c.name: len(c.exchanges) for c in conversations},
        "questions": questions,
        "seconds": time.perf_counter() - started,
    }


class LocomoInTheLoop(Measurement):
    """LoCoMo in the loop: every row at every window of the run, on the run's LoCoMo file."""

    name: ClassVar[str] = "locomo_loop"
    label: ClassVar[str] = "LoCoMo in the loop"

    def measure(self, run: Run) -> LocomoLoopResult:
        """The run's windows, conversations and questions (``--loop-windows``, ``--loop-limit``, ``--loop-questions``)."""
        return locomo_loop(
            run.locomo,
            run.embedder,
            windows=run.loop_windows,
            limit=run.loop_limit,
            questions=run.loop_questions,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--path", type=Path, default=LOCOMO_DEV)
    parser.add_argument("--windows", type=int, nargs="+", default=[16_000, 32_000])
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--questions", type=int, default=None, help="only the first N questions of each")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    results = run_loop(
        args.path, windows=args.windows, rows=args.rows, limit=args.limit, questions=args.questions, progress=print
    )
    print(format_loop(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
