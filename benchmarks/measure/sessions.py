"""Users and their sessions: each LoCoMo conversation is one user, each of its sessions a new agent over their archive.

What the cross-session measurements share (``cross_session``, ``unrelated``, ``curve``, ``tool_loop``):

- **A user per conversation**, named (``user_id=<conversation name>``: the library recalls across sessions only for
  a named user), with one durable SQLite archive (a file per user in a temporary folder).
- **A session is a new process's agent.** Every session builds everything anew (model, conversation manager, hook,
  memory store, storage) over the user's file, plays its exchanges through a real Strands ``Agent`` (speaker A's
  turns are the user's messages; the scripted ``LoopModel`` of ``locomo_loop`` replies with speaker B's turns and
  overflows above its window), then embeds what is pending and closes, as a process ends.
- **The time is the session's date.** The memory's ``clock=`` (what a user passes as the real time) reads the
  session's ``session_N_date_time``, a minute later for each exchange; turns asked after the last session are a day
  after it.
- **A turn asked afterwards** (a question, an unrelated prompt) is a new session too: everything built anew, one
  turn, and what that turn archived is forgotten again, so every turn meets the same archive.

The rows (:data:`ROWS`): Strands alone (its ``SummarizingConversationManager``, no memory), Strands' ``MemoryManager``
with ``SemanticMemoryStore`` in the setup the memory-manager guide recommends, this library's manager with
``SemanticMemoryHook()``, and Strands' ``ContextManager`` with ``SemanticStorage`` and ``SemanticMemoryHook()``. Each
memory row names its user and clock where the user names them: ``SemanticSummarizingConversationManager(
archive_path=..., user_id=..., clock=...)``, ``SemanticMemoryStore(...)``, ``SemanticStorage(...)`` (the benchmark
also passes its loaded embedder, so sessions do not load the model again).

What a turn delivered is read from the answering call's input (``received``: the archive's ``"> "`` and ``"| "``
quotation marks removed, Strands' XML escapes undone); what it cost is that input less what the same call would
hold without the memory (the agent's own messages and system prompt, which the hook and Strands' injection never
rewrite), in tokens at 4 characters per token.
"""

from __future__ import annotations

import dataclasses
import html
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands import Agent
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.models import Model

from benchmarks.data.locomo import LoopQuestion, LoopSession, SessionConversation
from benchmarks.measure.base import Run
from benchmarks.measure.locomo_loop import QUESTION_REPLY, LoopModel, input_text
from benchmarks.results import AskedCell, SessionsPlayed
from strands_semantic_memory import SemanticMemory, SemanticMemoryHook
from strands_semantic_memory.budget import ContextBudget

__all__ = [
    "DEFAULT_ROW",
    "HOOK_ROWS",
    "MEMORY_ROWS",
    "ROWS",
    "STORAGE_ROW",
    "STORE_ROW",
    "STRANDS_ROW",
    "Answer",
    "Asked",
    "Session",
    "SessionClock",
    "Tuning",
    "User",
    "UserArchives",
    "answer",
    "ask",
    "asked_cell",
    "received",
    "truncated",
    "user_archives",
    "users_of",
]

STRANDS_ROW = "Strands summarizing (no memory)"
STORE_ROW = "Strands MemoryManager + SemanticMemoryStore (recommended setup)"
DEFAULT_ROW = "semantic manager + hook"
STORAGE_ROW = "ContextManager + SemanticStorage + hook"
MEMORY_ROWS = (STORE_ROW, DEFAULT_ROW, STORAGE_ROW)
"""The rows with a memory (held to the targets)."""
HOOK_ROWS = (DEFAULT_ROW, STORAGE_ROW)
"""The rows whose memory reaches the model through ``SemanticMemoryHook``."""
EXCHANGE_SECONDS = 60.0
"""How far the clock moves per exchange within a session."""
ASKED_AFTER = 86_400.0
"""Turns asked after the last session are this long after its start (a day)."""
CHARS_PER_TOKEN = 4
_QUOTES = re.compile(r"^(?:> ?|\| ?)", re.MULTILINE)


class SessionClock:
    """The time a user's sessions read (the memory's ``clock=``): a session's date, a minute later per exchange."""

    def __init__(self, now: float = 0.0) -> None:
        """Start at ``now`` (epoch seconds)."""
        self.now = now

    def __call__(self) -> float:
        """The current time, in seconds since the epoch."""
        return self.now


@dataclass(frozen=True)
class User:
    """One user: their id, their archive file, their clock, and the run's embedder."""

    user_id: str
    archive: Path
    clock: SessionClock
    embedder: Any


@dataclass(frozen=True)
class Tuning:
    """A setting of a session: the hook's keywords and the budget's ``max_memory_tokens`` (None: the default) for
    the hook rows, and tools every row's agent gets.

    The curve (``benchmarks.measure.curve``) asks the same questions under several settings; ``Tuning()`` is the
    library's defaults and no tools.
    """

    label: str = "default"
    hook: Mapping[str, Any] = field(default_factory=dict)
    max_memory_tokens: int | None = None
    tools: tuple[Any, ...] = ()

    def budget(self) -> ContextBudget | None:
        """The budget to pass, or None for the library's own default."""
        return None if self.max_memory_tokens is None else ContextBudget(max_memory_tokens=self.max_memory_tokens)


@dataclass
class Session:
    """One session's agent, the parts that report what they injected, and what closes it."""

    agent: Agent
    memory: SemanticMemory | None = None
    hook: SemanticMemoryHook | None = None
    store: Any = None
    closers: list[Callable[[], None]] = field(default_factory=list)

    def reported_tokens(self) -> float | None:
        """The library's own count of the tokens it injected into the latest turn (None: the row reports none)."""
        if self.hook is not None:
            enrichment = self.hook.enrichment(self.agent)
            return float(enrichment.tokens) if enrichment is not None else 0.0
        if self.store is not None:
            found = self.store.last_enrichment
            return float(found.tokens) if found is not None else 0.0
        return None

    def close(self) -> None:
        """End the session as a process ends: embed what is pending, then close what holds the user's file."""
        if self.memory is not None:
            self.memory.embed_pending()
        for close in self.closers:
            close()


def _strands(model: Model, user: User, tuning: Tuning) -> Session:
    manager = SummarizingConversationManager()
    return Session(Agent(model=model, conversation_manager=manager, tools=list(tuning.tools), callback_handler=None))


def _store(model: Model, user: User, tuning: Tuning) -> Session:
    """The memory-manager guide's recommended setup, over the user's file."""
    from strands.memory import MemoryManager

    from strands_semantic_memory import SemanticMemoryStore

    store = SemanticMemoryStore(
        archive_path=user.archive, user_id=user.user_id, clock=user.clock, embedder=user.embedder
    )
    agent = Agent(
        model=model,
        conversation_manager=SummarizingConversationManager(proactive_compression=True),
        memory_manager=MemoryManager(stores=[store], injection={"max_entries": 50}),
        tools=list(tuning.tools),
        callback_handler=None,
    )
    return Session(agent, store.memory, store=store, closers=[store.close])


def _manager(model: Model, user: User, tuning: Tuning) -> Session:
    from strands_semantic_memory import SemanticSummarizingConversationManager

    manager = SemanticSummarizingConversationManager(
        archive_path=user.archive,
        user_id=user.user_id,
        clock=user.clock,
        embedder=user.embedder,
        budget=tuning.budget(),
    )
    hook = SemanticMemoryHook(**tuning.hook)
    agent = Agent(
        model=model, conversation_manager=manager, hooks=[hook], tools=list(tuning.tools), callback_handler=None
    )
    return Session(agent, manager.memory, hook=hook, closers=[manager.memory.close])


def _storage(model: Model, user: User, tuning: Tuning) -> Session:
    """The context-manager guide's setup (``BudgetSummarization``), over the user's file."""
    from strands.experimental.context_manager import ContextManager

    from strands_semantic_memory import SemanticStorage
    from strands_semantic_memory.storage import BudgetSummarization

    storage = SemanticStorage(archive_path=user.archive, user_id=user.user_id, clock=user.clock, embedder=user.embedder)
    strategy = BudgetSummarization(tuning.budget())
    hook = SemanticMemoryHook(**tuning.hook)
    agent = Agent(
        model=model,
        context_manager=ContextManager(strategies=[strategy]),
        storage=storage,
        plugins=[hook],
        tools=list(tuning.tools),
        callback_handler=None,
    )
    return Session(agent, storage.memory, hook=hook, closers=[storage.close])


ROWS: dict[str, Callable[[Model, User, Tuning], Session]] = {
    STRANDS_ROW: _strands,
    STORE_ROW: _store,
    DEFAULT_ROW: _manager,
    STORAGE_ROW: _storage,
}
"""Every row by name: builds one session's agent over a user's archive."""


def received(text: str) -> str:
    """What a model call received, as the evidence is matched in it: quotation marks and XML escapes undone."""
    return _QUOTES.sub("", html.unescape(text))


def open_session(row: str, model: Model, user: User, tuning: Tuning | None = None) -> Session:
    """Build one session of ``row`` over ``user``'s archive; a ``LoopModel`` measures what the memory adds to calls."""
    session = ROWS[row](model, user, tuning or Tuning())
    agent = session.agent
    if isinstance(model, LoopModel):
        model.baseline = lambda: input_text(agent.messages, agent.system_prompt)
    return session


def play_session(row: str, user: User, session: LoopSession, window: int) -> tuple[float, float, int, int]:
    """Play one session as a new process would.

    Returns:
        Seconds in the agent's calls, seconds building and closing the session, overflowed calls, failed turns.
    """
    model = LoopModel(window)
    user.clock.now = session.began_at
    started = time.perf_counter()
    opened = open_session(row, model, user)
    setup = time.perf_counter() - started
    calls = 0.0
    failed = 0
    try:
        for number, (message, reply) in enumerate(session.exchanges):
            user.clock.now = session.began_at + number * EXCHANGE_SECONDS
            model.reply = reply
            started = time.perf_counter()
            try:
                opened.agent(message)
            except Exception:  # a failing turn is counted, the session goes on
                failed += 1
            calls += time.perf_counter() - started
    finally:
        started = time.perf_counter()
        opened.close()
        setup += time.perf_counter() - started
    return calls, setup, model.overflows, failed


@dataclass(frozen=True)
class Asked:
    """One turn asked in a new session: what its answering call received, and what the memory added to it.

    Attributes:
        received: The answering call's input as the evidence is matched in it (see :func:`received`).
        injected_tokens: The answering call's input less what it holds without the memory, in tokens (4 characters
            each); 0 when nothing answered.
        reported_tokens: The library's own count (None: the row reports none).
        seconds: The turn's time (the agent's call only).
        overflows: Calls refused as longer than the window.
        failed: Whether the turn raised.
    """

    received: str
    injected_tokens: float
    reported_tokens: float | None
    seconds: float
    overflows: int
    failed: bool

    def delivered(self, evidence: Sequence[str]) -> float:
        """The share of ``evidence`` texts found in what the answering call received."""
        return sum(1 for text in evidence if text in self.received) / len(evidence) if evidence else 0.0


def ask(row: str, user: User, text: str, window: int, tuning: Tuning | None = None) -> Asked:
    """Ask ``text`` in a new session of ``row`` over ``user``'s archive, then forget what the turn archived."""
    model = LoopModel(window)
    model.reply = QUESTION_REPLY
    session = open_session(row, model, user, tuning)
    memory = session.memory
    before = set(memory.indices) if memory is not None else set()
    failed = False
    started = time.perf_counter()
    try:
        session.agent(text)
    except Exception:  # a failing turn is counted: nothing was answered
        failed = True
    seconds = time.perf_counter() - started
    try:
        reported = session.reported_tokens()
        if memory is not None:
            added = sorted(set(memory.indices) - before)
            if added:
                memory.forget(added)
    finally:
        session.close()
    answered = bool(model.last_input)
    injected = max(0, len(model.last_input) - len(model.last_baseline)) / CHARS_PER_TOKEN if answered else 0.0
    return Asked(received(model.last_input), injected, reported, seconds, model.overflows, failed)


@dataclass(frozen=True)
class Answer:
    """One question asked in a new session: the share of its evidence delivered, its category, and the turn."""

    delivered: float
    category: int
    asked: Asked


def answer(row: str, user: User, question: LoopQuestion, window: int, tuning: Tuning | None = None) -> Answer:
    """Ask ``question`` (see :func:`ask`) and score what its answering call received."""
    asked = ask(row, user, question.text, window, tuning)
    return Answer(asked.delivered(question.evidence), question.category, dataclasses.replace(asked, received=""))


def asked_cell(turns: Sequence[Asked]) -> AskedCell:
    """What a set of turns cost: mean injected tokens (measured and reported), share given any, time, failures."""
    reported = [t.reported_tokens for t in turns if t.reported_tokens is not None]
    return {
        "turns": len(turns),
        "injected_tokens": round(statistics.fmean(t.injected_tokens for t in turns), 1) if turns else 0.0,
        "reported_tokens": round(statistics.fmean(reported), 1) if reported and len(reported) == len(turns) else None,
        "given_any": round(100 * sum(1 for t in turns if t.injected_tokens > 0) / len(turns), 1) if turns else 0.0,
        "ms_per_turn": round(1000 * statistics.fmean(t.seconds for t in turns), 1) if turns else 0.0,
        "overflows": sum(t.overflows for t in turns),
        "failed_turns": sum(1 for t in turns if t.failed),
    }


class UserArchives:
    """Each user's archive after their sessions, per row and window: played once per run, then shared.

    The files live in a temporary folder for the life of this object. A measurement asks for a row's users at a
    window (:meth:`users`); the first to ask plays their sessions (:func:`play_session`), and what the sessions cost
    is kept (:meth:`played`).
    """

    def __init__(self, embedder: Any, conversations: Sequence[SessionConversation]) -> None:
        """Keep the run's embedder and the conversations (users) to play."""
        self.embedder = embedder
        self.conversations = list(conversations)
        self._folder = tempfile.TemporaryDirectory(prefix="ssm-users-")
        self._played: dict[tuple[str, int, str], SessionsPlayed] = {}
        self._failed: dict[tuple[str, int], Exception] = {}
        self._answers: dict[tuple[str, int, str, str, int | None], list[Answer]] = {}

    def user(self, row: str, window: int, conversation: SessionConversation) -> User:
        """The user of ``conversation`` as ``row`` keeps them at ``window`` (the clock a day after the last session)."""
        folder = Path(self._folder.name) / f"{_slug(row)}-{window}"
        folder.mkdir(exist_ok=True)
        last = conversation.sessions[-1].began_at if conversation.sessions else 0.0
        return User(
            conversation.name,
            folder / f"{_slug(conversation.name)}.sqlite3",
            SessionClock(last + ASKED_AFTER),
            self.embedder,
        )

    def users(
        self, row: str, window: int, progress: Callable[[str], None] | None = None
    ) -> list[tuple[SessionConversation, User]]:
        """Every user after their sessions through ``row`` at ``window`` (played on the first call)."""
        if (row, window) in self._failed:  # a row that failed once is not played again onto its half-written files
            raise self._failed[(row, window)]
        found = []
        for conversation in self.conversations:
            user = self.user(row, window, conversation)
            key = (row, window, conversation.name)
            if key not in self._played:
                try:
                    self._played[key] = self._play(row, window, conversation, user)
                except Exception as error:
                    self._failed[(row, window)] = error
                    raise
                if progress is not None:
                    played = self._played[key]
                    progress(
                        f"W={window} {row} {conversation.name}: {played['sessions']} sessions, "
                        f"{played['ms_per_exchange']} ms / exchange, {played['archived']} archived"
                    )
            found.append((conversation, user))
        return found

    def answers(
        self,
        row: str,
        window: int,
        conversation: SessionConversation,
        questions: int | None,
        tuning: Tuning | None = None,
    ) -> list[Answer]:
        """The first ``questions`` questions of ``conversation`` asked through ``row`` at ``window`` (once per
        setting: the curve's default point is the cross-session default row's answers when both ran)."""
        tuning = tuning or Tuning()
        key = (row, window, tuning.label, conversation.name, questions)
        if key not in self._answers:
            ((_, user),) = [(c, u) for c, u in self.users(row, window) if c.name == conversation.name]
            asked = conversation.questions[:questions]
            self._answers[key] = [answer(row, user, question, window, tuning) for question in asked]
        return self._answers[key]

    def played(self, row: str, window: int, name: str) -> SessionsPlayed:
        """What ``name``'s sessions cost through ``row`` at ``window`` (after :meth:`users`)."""
        return self._played[(row, window, name)]

    def _play(self, row: str, window: int, conversation: SessionConversation, user: User) -> SessionsPlayed:
        calls = setup = 0.0
        overflows = failed = 0
        for session in conversation.sessions:
            spent, opened, overflowed, failures = play_session(row, user, session, window)
            calls, setup = calls + spent, setup + opened
            overflows, failed = overflows + overflowed, failed + failures
        user.clock.now = (conversation.sessions[-1].began_at if conversation.sessions else 0.0) + ASKED_AFTER
        exchanges = conversation.exchanges
        return {
            "sessions": len(conversation.sessions),
            "exchanges": exchanges,
            "ms_per_exchange": round(1000 * calls / max(1, exchanges), 1),
            "open_ms": round(1000 * setup / max(1, len(conversation.sessions)), 1),
            "overflows": overflows,
            "failed_turns": failed,
            "archived": _archived(user) if row != STRANDS_ROW else None,
        }

    def close(self) -> None:
        """Delete the users' files."""
        self._folder.cleanup()


def _archived(user: User) -> int | None:
    """Messages in the user's archive (None when the file was never written)."""
    if not user.archive.is_file():
        return None
    memory = SemanticMemory(archive_path=user.archive, user_id=user.user_id, embedder=user.embedder)
    try:
        return len(memory)
    finally:
        memory.close()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def truncated(conversation: SessionConversation, sessions: int | None) -> SessionConversation:
    """The first ``sessions`` sessions of ``conversation``, with the questions whose evidence they hold (None: all)."""
    if sessions is None or sessions >= len(conversation.sessions):
        return conversation
    kept = conversation.sessions[:sessions]
    said = "\n".join(text for session in kept for exchange in session.exchanges for text in exchange)
    questions = tuple(q for q in conversation.questions if all(e in said for e in q.evidence))
    return SessionConversation(conversation.name, kept, questions)


def users_of(run: Run) -> list[SessionConversation] | str:
    """The conversations (users) this run plays across sessions, or why none (no LoCoMo file)."""
    from benchmarks.data.locomo import load_session_conversations

    if run.locomo is None:
        return "LoCoMo across sessions was not run: `--locomo none`"
    if not run.locomo.is_file():
        return f"LoCoMo across sessions was not run: the data file `{run.locomo}` was not found"
    settings = run.sizes.cross
    conversations = load_session_conversations(run.locomo)[: settings.conversations]
    return [truncated(c, settings.sessions) for c in conversations]


def user_archives(run: Run, conversations: Sequence[SessionConversation]) -> UserArchives:
    """The run's users' archives (built on first use, then shared by the measurements of the run)."""
    archives = run.shared.get("user_archives")
    names = [(c.name, len(c.sessions)) for c in conversations]
    if not isinstance(archives, UserArchives) or [(c.name, len(c.sessions)) for c in archives.conversations] != names:
        archives = UserArchives(run.embedder, conversations)
        run.shared["user_archives"] = archives
    return archives
