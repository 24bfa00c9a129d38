"""What reaches the model: the scripted model's recorder, the guides' three paths, the scoring and the summaries.

Shared by ``across_sessions``, ``in_session`` and ``loo``. The chat model is ``ScriptedModel`` (from
``strands_semantic_memory.testing``) with a responder (:class:`Script`) that replies with the conversation's own
next turn, writes summaries that carry no fact, and records the latest chat call it answered: what that call
received (every message's text and the system prompt; the archive's ``"> "`` and ``"| "`` quotation marks and
Strands' XML escapes undone) and what the memory added to it (that input less the agent's own messages and system
prompt at the time of the call, which the hook and Strands' injection never rewrite). A question scores the share
of its evidence turns whose text is in what the answering call received. Everything depends on the scripted model:
it answers nothing, so the figures measure delivery, not answers.

The paths (:data:`PATHS`) are written as ``docs/guides/across-sessions.md`` writes them, plus ``clock=`` (the
session's date) where the constructor takes one; a path whose parts cannot be imported yet is "not available".
"""

from __future__ import annotations

import html
import inspect
import logging
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands import Agent
from strands.types.content import Messages

from benchmarks.data.locomo import Conversation, Exchange, Formation, Session, evidence_texts, exchanges
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.testing import DEFAULT_SUMMARY, ScriptedModel

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
QUESTION_REPLY = "I am not sure."
"""What the model answers a question: a reply that says nothing (it is archived in the pile-up mode)."""
MINUTE = 60.0
"""The clock moves a minute per exchange within a session; questions come a day after the last session."""
DAY = 86_400.0
CONTEXT_SUMMARY_PROMPT = "You are a summarization assistant."
"""How Strands' ``ContextManager`` summarize method opens its system prompt (its summary calls)."""
_QUOTES = re.compile(r"^(?:> ?|\| ?)", re.MULTILINE)


def input_text(messages: Iterable[Any], system_prompt: str | None) -> str:
    """Everything a call sends, as text: the system prompt and every message."""
    return "\n".join([system_prompt or "", *(render_message(m) for m in messages)])


def received(text: str) -> str:
    """A call's input as evidence is matched in it: XML escapes and the archive's quotation marks undone."""
    return _QUOTES.sub("", html.unescape(text))


def share_found(evidence: Sequence[str], text: str) -> float:
    """The share of ``evidence`` texts found in ``text``."""
    return sum(1 for e in evidence if e in text) / len(evidence) if evidence else 0.0


class Clock:
    """What "now" is for a memory (its ``clock=``): set by the benchmark to the session's date."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Script:
    """The scripted model's responder: replies ``reply``, summarizes without facts, records the latest chat call."""

    def __init__(self, reply: str = QUESTION_REPLY) -> None:
        self.reply = reply
        self.agent: Agent | None = None
        self.received = ""
        self.added_chars = 0
        self.summaries = 0

    def __call__(self, messages: Messages, system_prompt: str | None, is_summary: bool) -> str:
        if is_summary or (system_prompt or "").startswith(CONTEXT_SUMMARY_PROMPT):
            self.summaries += 1
            return DEFAULT_SUMMARY
        sent = input_text(messages, system_prompt)
        own = input_text(self.agent.messages, self.agent.system_prompt) if self.agent is not None else sent
        self.received, self.added_chars = sent, len(sent) - len(own)
        return self.reply

    def answered(self) -> tuple[str, float]:
        """What the latest answered call received (as matched), and the tokens the memory added to it."""
        return received(self.received), max(0, self.added_chars) / CHARS_PER_TOKEN


def scripted_model(window: int, script: Script) -> ScriptedModel:
    """A model with a window of ``window`` tokens that refuses longer calls, as providers do."""
    return ScriptedModel(script, context_window_limit=window, max_input_chars=window * CHARS_PER_TOKEN)


def prompt(exchange: Exchange) -> str | Messages:
    """What the agent is called with: the user's text, after any turns of the model that open the session."""
    if not exchange.before:
        return exchange.user
    said: Messages = [{"role": "assistant", "content": [{"text": text}]} for text in exchange.before]
    return [*said, {"role": "user", "content": [{"text": exchange.user}]}]


# ---------------------------------------------------------------------------------------------------- the paths


@dataclass(frozen=True)
class Where:
    """A user's archive: an SQLite file, or the user's partition of a PostgreSQL server."""

    user_id: str
    path: Path | None = None
    dsn: str | None = None


@dataclass
class Opened:
    """One session's agent, the memory behind it, and how the guide closes it."""

    agent: Agent
    memory: SemanticMemory
    close: Callable[[], None]


Builder = Callable[[ScriptedModel, Where, "Clock | None"], Opened]


def _archive(where: Where) -> dict[str, Any]:
    if where.dsn is None:
        return {"archive_path": where.path, "user_id": where.user_id}
    from strands_semantic_memory.archives import PostgresArchive

    return {"archive": PostgresArchive(where.dsn, where.user_id)}


def dated(make: Callable[..., Any], clock: Clock | None, **arguments: Any) -> Any:
    """``make(**arguments)``, with ``clock=`` when ``make`` takes one (the session's date)."""
    if clock is not None and "clock" in inspect.signature(make).parameters:
        arguments["clock"] = clock
    return make(**arguments)


def takes_clock(make: Callable[..., Any]) -> bool:
    """Whether a constructor takes ``clock=`` (else its messages are dated by the run's own time)."""
    return "clock" in inspect.signature(make).parameters


def manager_and_hook(hook: Callable[[], Any] | None = None, options: Mapping[str, Any] | None = None) -> Builder:
    """The guide's first path; a candidate may build another hook or configure the memory (``loo``)."""

    def build(model: ScriptedModel, where: Where, clock: Clock | None) -> Opened:
        from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager

        agent = Agent(
            model=model,
            conversation_manager=dated(SemanticSummarizingConversationManager, clock, **_archive(where)),
            plugins=[(hook or SemanticMemoryHook)()],
            callback_handler=None,
        )
        memory = agent.conversation_manager.memory  # type: ignore[attr-defined]
        if options:
            memory.configure(**options)
        return Opened(agent, memory, memory.close)

    return build


def memory_manager_and_store(model: ScriptedModel, where: Where, clock: Clock | None) -> Opened:
    """The guide's second path: Strands' ``MemoryManager`` with its default options, a sliding window."""
    from strands.agent.conversation_manager import SlidingWindowConversationManager
    from strands.memory import MemoryManager

    from strands_semantic_memory import SemanticMemoryStore

    store = dated(SemanticMemoryStore, clock, **_archive(where))
    agent = Agent(
        model=model,
        memory_manager=MemoryManager(stores=[store]),
        conversation_manager=SlidingWindowConversationManager(),
        callback_handler=None,
    )
    return Opened(agent, store.memory, store.memory.close)


def context_manager_and_storage(model: ScriptedModel, where: Where, clock: Clock | None) -> Opened:
    """The guide's third path: Strands' ``ContextManager`` stashing into ``SemanticStorage``, and the hook."""
    from strands.experimental.context_manager import ContextManager

    from strands_semantic_memory import SemanticMemoryHook, SemanticStorage
    from strands_semantic_memory.storage import BudgetSummarization

    storage = dated(SemanticStorage, clock, **_archive(where))
    agent = Agent(
        model=model,
        context_manager=ContextManager(strategies=[BudgetSummarization()]),
        storage=storage,
        plugins=[SemanticMemoryHook(storage=storage)],
        callback_handler=None,
    )
    return Opened(agent, storage.memory, storage.close)


PATHS: dict[str, Builder] = {
    "manager + hook": manager_and_hook(),
    "MemoryManager + store": memory_manager_and_store,
    "ContextManager + storage + hook": context_manager_and_storage,
}
"""The across-sessions guide's three paths, by row name."""


def available(build: Builder, where: Where) -> str | None:
    """None when ``build`` can be built here; else why not (``"not available: ..."``: a part not written yet)."""
    try:
        opened = build(scripted_model(8_000, Script()), where, None)
    except ImportError as error:
        return f"not available: {error}"
    opened.close()
    return None


# ---------------------------------------------------------------------------------------------------- playing


def play_session(
    build: Builder,
    where: Where,
    conversation: Conversation,
    session: Session,
    window: int,
    formation: Formation = "turns",
    dates: bool = True,
) -> tuple[int, int]:
    """Play one session through a new agent, as a new process would; settle the archive and close.

    Returns:
        Calls the model refused as too long, and turns that raised.
    """
    script = Script()
    model = scripted_model(window, script)
    clock = Clock(session.date) if dates else None
    opened = build(model, where, clock)
    script.agent = opened.agent
    failed = 0
    try:
        for number, exchange in enumerate(exchanges(conversation, session, formation)):
            if clock is not None:
                clock.now = session.date + number * MINUTE
            script.reply = exchange.reply
            try:
                opened.agent(prompt(exchange))
            except Exception as error:  # a failing turn is counted; the session goes on
                logger.warning("error=<%s> | a turn failed", error)
                failed += 1
        opened.memory.embed_pending()  # a process that lived on would have embedded these in the background
    finally:
        opened.close()
    return model.overflows, failed


@dataclass(frozen=True)
class Asked:
    """One turn asked in a new session: what its answering call received, the tokens the memory added, whether it
    failed, and whether a search of the turn went by words alone (its query vector was late: a loaded machine)."""

    received: str
    tokens: float
    failed: bool
    by_words: bool = False


def ask(build: Builder, where: Where, text: str, window: int, clock: Clock | None, keep: bool) -> Asked:
    """Ask ``text`` in a new session; unless ``keep``, forget what the turn archived (the clean mode)."""
    script = Script()
    opened = build(scripted_model(window, script), where, clock)
    script.agent = opened.agent
    memory = opened.memory
    start = memory.stats().next_index
    failed = by_words = False
    try:
        opened.agent(text)
    except Exception as error:  # nothing answered
        logger.warning("error=<%s> | a question failed", error)
        failed = True
    finally:
        try:
            by_words = memory.stats().lexical_searches > 0
            if keep:
                memory.embed_pending()
            else:
                added = [r.index for r in memory.records(start)]
                if added:
                    memory.forget(added)
        finally:
            opened.close()
    found, tokens = script.answered()
    return Asked(found, tokens if not failed else 0.0, failed, by_words)


# ---------------------------------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class Scored:
    """One question's figures."""

    conversation: str
    category: str
    delivered: float
    tokens: float
    failed: bool = False
    by_words: bool = False


def score(conversation: Conversation, question_index: int, asked: Asked, formation: Formation = "turns") -> Scored:
    """A question's delivered share and tokens from what its answering call received."""
    question = conversation.questions[question_index]
    found = share_found(evidence_texts(conversation, question, formation), asked.received)
    category = conversation.category(question.category)
    return Scored(conversation.name, category, found, asked.tokens, asked.failed, asked.by_words)


def percent(values: Iterable[float]) -> float:
    """The mean of shares, in percent, to 0.1 (0 for none)."""
    found = list(values)
    return round(100 * statistics.fmean(found), 1) if found else 0.0


def summary(scored: Sequence[Scored]) -> dict[str, Any]:
    """Delivered % overall (each question once), per conversation and category, the lowest, tokens per call, and
    how many questions failed or were searched by words alone (a loaded machine: the figures are then too low)."""
    by_conversation: dict[str, list[float]] = {}
    by_category: dict[str, list[float]] = {}
    for s in scored:
        by_conversation.setdefault(s.conversation, []).append(s.delivered)
        by_category.setdefault(s.category, []).append(s.delivered)
    conversations = {name: percent(v) for name, v in by_conversation.items()}
    lowest = min(conversations, key=lambda name: conversations[name]) if conversations else ""
    return {
        "delivered": percent(s.delivered for s in scored),
        "conversations": conversations,
        "lowest": {"conversation": lowest, "delivered": conversations.get(lowest, 0.0)},
        "categories": {name: percent(v) for name, v in sorted(by_category.items())},
        "tokens": round(statistics.fmean(s.tokens for s in scored), 1) if scored else 0.0,
        "questions": len(scored),
        "failed": sum(1 for s in scored if s.failed),
        "by_words": sum(1 for s in scored if s.by_words),
    }


def plot(output: Path, name: str, title: str, series: Mapping[str, Sequence[tuple[str, float]]], ylabel: str) -> str:
    """A line plot (one line per series of ``(x label, value)``) written as ``output/name``; its markdown link."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 3.6))
    for label, points in series.items():
        axes.plot([x for x, _ in points], [y for _, y in points], marker="o", label=label)
    axes.set_title(title, fontsize=10)
    axes.set_ylabel(ylabel)
    axes.set_ylim(0, 102)  # every figure plotted here is a percentage
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(output / name, dpi=110)
    plt.close(figure)
    return f"![{title}]({name})"
