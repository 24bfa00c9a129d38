"""Structured compaction vs prose summaries vs Strands' own managers over one long scripted conversation.

For each conversation manager a real Strands ``Agent`` runs the same conversation: filler turns, eight planted facts
early on (one of them later changed), and recall questions at the end. Measured per manager: the tokens sent to the
chat model per turn (characters / 4 of every request, as Strands' heuristic counts), whether each planted value is
in the request of its recall turn, whether the value that was changed still reaches the model, and what the
managers did (overflows, compactions, archived messages).

What is scripted (no chat model runs offline at benchmark speed), and therefore what the figures depend on:

* The chat model: a fixed short reply per turn; it overflows above ``max_input_chars`` characters of input, which
  drives Strands' real overflow recovery.
* The summarizer, identically for every summarizing manager: it recognises a planted fact by its form
  (``Note: <key> is <value>.``) and keeps the latest value per key. The *structured* summarizer returns them as
  ``StructuredSummary`` facts and merges into the previous state, losing nothing (the zero-loss instruction, assumed
  obeyed). The *prose* summarizer re-summarizes the previous summary plus the leaving messages into at most
  ``prose_bullets`` bullets, the most recent kept: a prose summary is bounded in length. With
  ``prose_bullets=None`` it is lossless too (the row "lossless scripted prose" shows that case).
  So "facts reached" for the summary rows measures the format under these assumptions, not a model's quality.
* The hook rows use the real archive and retrieval (the bundled MiniLM model): that part is not scripted.
"""

from __future__ import annotations

import copy
import re
import statistics
import time
import traceback
from collections.abc import AsyncGenerator, Callable
from typing import Any, ClassVar

from pydantic import BaseModel
from strands.models import Model
from strands.types.exceptions import ContextWindowOverflowException

from benchmarks.data.conversations import filler_messages
from benchmarks.measure.base import Measurement, Run
from benchmarks.results import CompactionRow, LoopResult
from strands_semantic_memory.conversation_manager import SummaryFormat
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.testing import previous_summary

__all__ = ["FACTS", "CompactionLoop", "compaction_rows", "format_rows", "local_summarizer"]

FACTS: dict[str, tuple[str, str]] = {
    "locker code": ("LK-4417-QV", "What is my locker code?"),
    "cabin wifi password": ("fjord-otter-92", "What was the cabin wifi password?"),
    "API key rotation date": ("March 14", "When is the API key rotation?"),
    "invoice number": ("INV-20931", "Which invoice number did I give you?"),
    "flight": ("LH 4471 at 07:35", "Which flight am I on?"),
    "budget cap": ("18,400 euros", "What is the budget cap?"),
    "meeting room": ("R-31", "Which meeting room do we use?"),
    "database port": ("6543", "Which port does the database listen on?"),
}
"""key -> (value, recall question). The meeting room is first given as ``STALE_VALUE`` and changed later."""

STALE_VALUE = "R-12"
_NOTE = re.compile(r"Note: (.+?) is (.+?)\.(?:\s|$)")


def _text(message: dict[str, Any]) -> str:
    return render_message(message)


def _notes(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(key, value) for m in messages for key, value in _NOTE.findall(_text(m))]


def _prose_summary(messages: list[dict[str, Any]], bullets: int | None) -> str:
    """The scripted prose summarizer: bullets of the latest value per key, bounded to the most recent ``bullets``."""
    latest: dict[str, str] = {}
    for message in messages:
        text = _text(message)
        for line in text.splitlines():  # the previous summary's bullets
            if line.startswith("* ") and " is " in line:
                key, value = line[2:].split(" is ", 1)
                latest.pop(key, None)
                latest[key] = value
        for key, value in _NOTE.findall(text):
            latest.pop(key, None)
            latest[key] = value
    kept = list(latest.items())[-bullets:] if bullets is not None else list(latest.items())
    lines = ["## Conversation Summary", "* The user shared notes and asked everyday questions."]
    return "\n".join(lines + [f"* {key} is {value}" for key, value in kept])


class ScriptedChat(Model):
    """A real ``strands.models.Model`` whose replies, summaries and structured states come from the script above."""

    def __init__(self, max_input_chars: int, prose_bullets: int | None, summarizer: Model | None = None) -> None:
        self.max_input_chars = max_input_chars
        self.prose_bullets = prose_bullets
        self.summarizer = summarizer  # a real model that writes the summaries instead of the script
        # The window is declared, as a provider's model config does: managers and the hook can plan for it.
        self.config: dict[str, Any] = {"model_id": "scripted", "context_window_limit": max_input_chars // 4}
        self.chat_requests: list[list[dict[str, Any]]] = []
        self.overflows = 0
        self.summaries = 0

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    async def structured_output(  # type: ignore[override]
        self, output_model: type[BaseModel], prompt: list[dict[str, Any]], system_prompt: str | None = None, **_: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        self.summaries += 1
        if self.summarizer is not None:
            real: Any = self.summarizer  # Strands types messages as TypedDicts; the script reads them as dicts
            async for event in real.structured_output(output_model, prompt, system_prompt=system_prompt):
                yield event
            return
        head = _text(prompt[0])
        previous = previous_summary(head, output_model) or {}
        facts = {f["text"].split(" is ", 1)[0]: f for f in previous.get("facts", [])}
        indices = _archive_indices(head)
        for position, message in enumerate(prompt[1:-1]):
            for key, value in _NOTE.findall(_text(message)):
                source = [indices[position]] if position < len(indices) else []
                facts[key] = {"text": f"{key} is {value}", "sources": source}
        yield {"output": output_model.model_validate({"facts": list(facts.values())})}

    async def stream(  # type: ignore[override]
        self, messages: list[dict[str, Any]], tool_specs: Any = None, system_prompt: str | None = None, **_: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        is_summary = bool(messages) and _text(messages[-1]) == "Please summarize this conversation."
        if is_summary:
            self.summaries += 1
            if self.summarizer is not None:
                real: Any = self.summarizer  # Strands types messages as TypedDicts; the script reads them as dicts
                async for event in real.stream(messages, tool_specs, system_prompt):
                    yield event
                return
            reply = _prose_summary(messages[:-1], self.prose_bullets)
        else:
            size = sum(len(_text(m)) for m in messages) + len(system_prompt or "")
            if size > self.max_input_chars:
                self.overflows += 1
                raise ContextWindowOverflowException(f"input of {size} characters exceeds {self.max_input_chars}")
            self.chat_requests.append(copy.deepcopy(messages))
            reply = f"Noted. (reply to: {_text(messages[-1])[:50]})"
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": reply}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def _found_by_hook(enrichment: Any, value: str) -> tuple[bool, bool]:
    """Whether the hook's search found ``value`` this turn (in a window sent or left out), and whether the turn's
    model call was retried with less injected context after an overflow."""
    if enrichment is None:
        return False, False
    windows = [*enrichment.passages, *enrichment.left_out]
    found = any(value in _text(message) for window in windows for message in window.messages)
    return found, enrichment.overflow_retries > 0


def _archive_indices(head: str) -> list[int]:
    """Archive indices from the manager's ``#a-#b, #c`` labels of the leaving messages."""
    indices: list[int] = []
    labels = head[head.find("archived as") :]
    for start, end in re.findall(r"#(\d+)(?:-#(\d+))?", labels[: labels.find("(in order)")]):
        indices.extend(range(int(start), int(end or start) + 1))
    return indices


def _conversation(turns: int, seed: int) -> tuple[list[str], dict[int, str]]:
    """User turns, and recall turn -> the value that must reach the model then."""
    filler = [_text(m) for m in filler_messages(turns * 2, seed=seed)[::2]]
    keys = list(FACTS)
    user_turns = list(filler[:turns])
    for position, key in enumerate(keys):  # facts early: turns 1, 3, 5, ...
        value = STALE_VALUE if key == "meeting room" else FACTS[key][0]
        user_turns[1 + 2 * position] = f"Note: {key} is {value}. Please remember it."
    user_turns[turns // 2] = f"Note: meeting room is {FACTS['meeting room'][0]}. We moved."
    recall: dict[int, str] = {}
    for position, key in enumerate(keys):  # recall questions at the end
        turn = turns - len(keys) + position
        user_turns[turn] = FACTS[key][1]
        recall[turn] = FACTS[key][0]
    return user_turns, recall


def compaction_rows(
    embedder: Any = None,
    *,
    turns: int = 60,
    seed: int = 404,
    max_input_chars: int = 3000,
    preserve_recent_messages: int = 8,
    prose_bullets: int | None = 4,
    with_hook: bool = True,
    summarizer: Model | None = None,
    summarizer_name: str = "a local model",
    structured: bool = True,
) -> list[CompactionRow]:
    """Run the conversation through each manager; one row per manager.

    With ``summarizer`` (a real model, e.g. the demo's SmolLM2), every summary and structured state is written by
    it instead of the script (the chat replies stay scripted), for the summarizing managers only; the rows are
    named after ``summarizer_name`` and carry the seconds each took.

    Args:
        embedder: The embedder of our managers' archives (default: the bundled model).
        turns: User turns (at least 24: eight facts early, eight recall questions at the end).
        seed: Seed of the filler turns.
        max_input_chars: The scripted chat model's window, in characters.
        preserve_recent_messages: For every summarizing manager (the sliding window keeps twice as many).
        prose_bullets: Length bound of the scripted prose summary (None: lossless prose).
        with_hook: Add rows with ``SemanticMemoryHook`` (real retrieval from the archive).
        summarizer: A model that writes the summaries (None: the scripted summarizer).
        summarizer_name: How the rows name that model.
        structured: With ``summarizer``, run the structured managers too (False: the prose ones only).

    Returns:
        Rows: ``manager``, ``mean_tokens``, ``max_tokens``, ``last_tokens`` (tokens of the last request),
        ``facts_reached`` and ``facts`` (values present in their recall turn's request), ``stale_value_sent``
        (the changed value reached the model at its recall turn), ``stale_without_update`` (it did, without the
        newer value after it), ``overflows``, ``summaries``, ``archived``,
        ``scripted`` (what in the row is scripted), ``seconds``, ``summarizer``, ``failed_turns`` (turns that
        raised, e.g. a summary the model could not write; tokens are averaged over the turns that reached the chat
        model) and ``first_failure``; for the hook rows ``found_not_sent`` (recall turns whose value the hook's
        search found but that did not reach the model) and ``retried_recalls`` (recall turns whose model call was
        retried with less injected context after an overflow), None for the others.
    """
    from strands import Agent
    from strands.agent.conversation_manager import SlidingWindowConversationManager, SummarizingConversationManager

    from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager

    if turns < 24:
        raise ValueError(f"turns must be at least 24, got {turns}")
    if embedder is None:
        from strands_semantic_memory.embeddings import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    user_turns, recall = _conversation(turns, seed)
    keep = preserve_recent_messages

    def ours(fmt: SummaryFormat) -> Any:
        return SemanticSummarizingConversationManager(
            embedder=embedder, preserve_recent_messages=keep, summary_format=fmt
        )

    configs: list[tuple[str, Callable[[], Any], bool, int | None, str]] = [
        ("Structured (ours)", lambda: ours("structured"), False, prose_bullets, "summarizer"),
        ("Text (ours)", lambda: ours("text"), False, prose_bullets, "summarizer"),
        (
            "Summarizing (Strands)",
            lambda: SummarizingConversationManager(preserve_recent_messages=keep),
            False,
            prose_bullets,
            "summarizer",
        ),
        (
            "SlidingWindow (Strands)",
            lambda: SlidingWindowConversationManager(window_size=2 * keep),
            False,
            None,
            "nothing but the chat replies",
        ),
    ]
    if prose_bullets is not None:
        configs.insert(2, ("Text (ours), lossless scripted prose", lambda: ours("text"), False, None, "summarizer"))
    if with_hook:
        configs += [
            (
                "Structured + hook (ours)",
                lambda: ours("structured"),
                True,
                prose_bullets,
                "summarizer; retrieval is real",
            ),
            ("Text + hook (ours)", lambda: ours("text"), True, prose_bullets, "summarizer; retrieval is real"),
        ]
    if summarizer is not None:  # the prose bound and the sliding window are the script's, not the model's
        configs = [
            (f"{name}, {summarizer_name} summaries", make, hook, None, scripted.replace("summarizer", "").strip("; "))
            for name, make, hook, _, scripted in configs
            if "summarizer" in scripted and "lossless" not in name and (structured or "Structured" not in name)
        ]
    rows: list[CompactionRow] = []
    for name, make_manager, hook, bullets, scripted in configs:
        began = time.perf_counter()
        model = ScriptedChat(max_input_chars, bullets, summarizer)
        manager = make_manager()
        hooks: list[Any] = [SemanticMemoryHook()] if hook else []
        agent = Agent(model=model, conversation_manager=manager, hooks=hooks, callback_handler=None)
        per_turn: list[int] = []
        reached: dict[str, bool] = {}
        stale = stale_alone = False
        failures: list[str] = []
        found_not_sent = retried_recalls = 0
        for turn, text in enumerate(user_turns):
            answered = len(model.chat_requests)
            try:
                agent(text)
            except Exception as error:  # a real summarizer can fail (a 135M model's JSON): count it, go on
                failures.append(f"{type(error).__name__}: {str(error)[:120]}")
            if len(model.chat_requests) == answered:  # the turn never reached the chat model
                if turn in recall:
                    reached[recall[turn]] = False
                continue
            request = model.chat_requests[-1]
            sent = "\n".join(_text(m) for m in request)
            per_turn.append(len(sent) // 4)
            if turn in recall:
                reached[recall[turn]] = recall[turn] in sent
                if recall[turn] == FACTS["meeting room"][0]:
                    old, new = f"meeting room is {STALE_VALUE}", f"meeting room is {recall[turn]}"
                    stale = old in sent
                    # the old value without the new one after it (later in the input: the model reads it as newer)
                    stale_alone = stale and sent.rfind(new) < sent.rfind(old)
                if hooks:
                    found, retried = _found_by_hook(hooks[0].last_enrichment, recall[turn])
                    found_not_sent += found and not reached[recall[turn]]
                    retried_recalls += retried
        memory = getattr(manager, "memory", None)
        rows.append(
            {
                "manager": name,
                "mean_tokens": round(statistics.mean(per_turn), 1) if per_turn else 0.0,
                "max_tokens": max(per_turn, default=0),
                "last_tokens": per_turn[-1] if per_turn else 0,
                "facts_reached": sum(reached.values()),
                "facts": len(reached),
                "stale_value_sent": stale,
                "stale_without_update": stale_alone,
                "overflows": model.overflows,
                "summaries": model.summaries,
                "archived": len(memory) if memory is not None else 0,
                "scripted": f"chat replies; {scripted}" if scripted else "chat replies",
                "seconds": round(time.perf_counter() - began, 1),
                "summarizer": summarizer_name if summarizer is not None else None,
                "failed_turns": len(failures),
                "first_failure": failures[0] if failures else None,
                "found_not_sent": found_not_sent if hooks else None,
                "retried_recalls": retried_recalls if hooks else None,
            }
        )
    return rows


def local_summarizer() -> tuple[Any, str | None]:
    """The demo's local SmolLM2 as a summarizer, or None and why not (its runtime or weights are not installed).

    Greedy decoding as in the demo, at most 160 tokens per summary (structured states: the grammar's own bound).
    """
    try:
        from demo.local_llm import LocalLlamaModel, ModelNotInstalledError
    except ImportError as error:
        return None, f"the demo package could not be imported ({error})"
    try:
        return LocalLlamaModel(max_tokens=160), None
    except ModelNotInstalledError as error:
        return None, f"{error} (bash scripts/bench.sh or scripts/demo.sh installs it)"
    except Exception as error:  # the runtime is there but the model does not load: say so, keep the other rows
        return None, f"the local model did not load ({type(error).__name__}: {error})"


class CompactionLoop(Measurement):
    """Every manager over the scripted conversation; with the local model's summaries too in a full run."""

    name: ClassVar[str] = "loop"
    label: ClassVar[str] = "Strands loop (compaction rows)"

    def measure(self, run: Run) -> LoopResult:
        """The scripted rows, then the prose managers with SmolLM2's summaries (not in a ``--quick`` run)."""
        turns = run.sizes.run.loop_turns
        rows: list[CompactionRow] = compaction_rows(run.embedder, turns=turns)
        local, missing = local_summarizer() if not run.sizes.quick else (None, "not in a --quick run")
        if local is not None:
            try:  # prose managers only: the report says why the structured ones are left out
                rows += compaction_rows(
                    run.embedder, turns=turns, summarizer=local, summarizer_name="SmolLM2-135M", structured=False
                )
            except Exception as error:  # keep the scripted rows; the report says what failed
                traceback.print_exc()
                missing = f"they failed: {type(error).__name__}: {error}"
        return {"turns": turns, "rows": rows, "local_model_missing": missing}


def format_rows(rows: list[CompactionRow]) -> str:
    """A markdown table of :func:`compaction_rows`."""
    header = (
        "| manager | tokens/turn mean | max | last | facts reached | stale value sent | without its update | "
        "overflows | summaries | archived |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [
        f"| {r['manager']} | {r['mean_tokens']} | {r['max_tokens']} | {r['last_tokens']} | "
        f"{r['facts_reached']}/{r['facts']} | {'yes' if r['stale_value_sent'] else 'no'} | "
        f"{'yes' if r['stale_without_update'] else 'no'} | {r['overflows']} | {r['summaries']} | {r['archived']} |"
        for r in rows
    ]
    return "\n".join([header, *lines])


if __name__ == "__main__":  # pragma: no cover - manual run: python -m benchmarks.measure.compaction
    print(format_rows(compaction_rows()))  # noqa: T201
