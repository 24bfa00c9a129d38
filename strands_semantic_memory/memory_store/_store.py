"""SemanticMemoryStore: the archive as a Strands ``MemoryStore``, for ``Agent(memory_manager=MemoryManager(...))``.

Strands hands a store's ``search`` nothing but the query, from two places: its injection (an
``InvokeModelStage.Input`` handler, for a model call of the agent) and its ``search_memory`` tool. The agent reaches
a store only through ``ExtractionTrigger.attach``, which ``MemoryManager.init_agent`` calls before it registers its
injection. So the store's trigger notes the agent and registers two handlers of its own: an Input handler, which
runs before Strands' and marks the call in a context variable of the store (a search that sees the mark is Strands'
injection: gated, and fitted to that call), and a Wrap handler, which runs after Strands' Input handler, clears the
mark (a tool's search is never taken for injection) and sees the call's context overflows.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import hashlib
import json
import logging
import os
import uuid
import weakref
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from strands.hooks import BeforeInvocationEvent
from strands.memory.extraction.triggers import InvocationTrigger
from strands.memory.extraction.types import (
    ExtractionConfig,
    ExtractionTriggerContext,
    MemoryMessageFilter,
)
from strands.memory.types import AddMessagesContext, MemoryEntry, MemoryStore, SearchOptions
from strands.middleware import InvokeModelContext, InvokeModelStage, TypedEvent
from strands.types.content import Message
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory.archives._protocol import Archive
from strands_semantic_memory.budget import ContextBudget, agent_budget, estimate_tokens, history_tokens, model_window
from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.errors import ConfigurationError, InvalidMessageError
from strands_semantic_memory.formatting._block import ENTRY_QUOTE, BlockWriter
from strands_semantic_memory.hook._hook import PROFILE_TOKENS, TOKENS_PER_HIT, fit_statements, personal_statements
from strands_semantic_memory.memory_store._entries import entries_for, fit_passages, injected_tokens
from strands_semantic_memory.messages._codec import encode_message
from strands_semantic_memory.messages._session import agent_scope, session_of
from strands_semantic_memory.retrieval._relevance import InjectWhen, Relevance, gated

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["DEFAULT_DESCRIPTION", "KEEP_TOOL_TRAFFIC", "SemanticMemoryStore", "StoreEnrichment"]

logger = logging.getLogger(__name__)

DEFAULT_DESCRIPTION = (
    "Verbatim archive of earlier conversations, tool calls and their results included, found by meaning and "
    "keywords, each message with its neighbours."
)
KEEP_TOOL_TRAFFIC = MemoryMessageFilter(exclude=[])
"""The store's extraction filter: every block. Strands' default drops tool traffic; this archive forgets nothing."""
HELD_LOOKUP = 10_000
"""The newest messages the store archived that a search can leave out as hits before it runs (the agent's context
holds only recent ones; older copies in a context are still left out of the entries, after the search)."""
_RUN_NAMESPACE = uuid.UUID("6f6b1c2e-6c43-4d1b-9d0e-2a51b0f0a7c3")


@dataclass
class _Call:
    """A model call of the served agent, or the next one (what a search is fitted to)."""

    messages: list[Message]
    system_prompt: Any
    tool_specs: Any
    model: Any
    injected: int = 0  # tokens Strands' injection put into it through this store

    def tokens(self) -> int:
        specs = estimate_tokens(json.dumps(self.tool_specs, default=str)) if self.tool_specs else 0
        return history_tokens(self.messages, self.system_prompt) + specs


@dataclass(kw_only=True)
class StoreEnrichment:
    """What the store's latest search returned (``SemanticMemoryStore.last_enrichment``).

    Attributes:
        query: The text searched for.
        source: ``"injection"`` (Strands' injection, for a model call of the store's agent) or ``"request"`` (the
            model's ``search_memory`` tool, or the application): only injection is gated.
        entries: The entries returned, best first.
        gated: Whether the relevance gate applied (injection with ``inject_when="relevant"``).
        relevance: The gate's reading of the query (measured on every search).
        best_similarity: The query's cosine similarity to its nearest archived message, when known.
        budget_tokens: The most tokens the entries could take (the budget, the gate's or an overflow's cap).
        tokens: Estimated tokens of the entries as Strands' default format injects them.
        in_context: Archive indices left out because the agent still holds them in its context.
        overflows: Model calls of the agent's current invocation that overflowed before this search.
    """

    query: str
    source: Literal["injection", "request"]
    entries: list[MemoryEntry] = field(default_factory=list)
    gated: bool = False
    relevance: Relevance = "unknown"
    best_similarity: float | None = None
    budget_tokens: int = 0
    tokens: int = 0
    in_context: list[int] = field(default_factory=list)
    overflows: int = 0


def _digest(message: Any) -> bytes:
    """A message's role and content, as the model sees them (extraction hands over copies without tracking ids)."""
    data = encode_message({"role": message.get("role"), "content": message.get("content")})
    return hashlib.blake2b(data, digest_size=16).digest()


class _ServingTrigger(InvocationTrigger):
    """Archive after every invocation, and tell the store which agent it serves."""

    def __init__(self, serve: Callable[[Agent], None]) -> None:
        self._serve = serve

    def attach(self, context: ExtractionTriggerContext) -> None:
        """Serve the agent, then fire after each of its invocations."""
        self._serve(context.agent)
        super().attach(context)


class SemanticMemoryStore(MemoryStore):
    """A Strands ``MemoryStore`` over a ``SemanticMemory``: the archive, searched by meaning and words.

    **Archiving.** After every invocation Strands hands the new messages to ``add_messages``; they are archived
    verbatim under the agent's session, tool calls and results included (``KEEP_TOOL_TRAFFIC``). A retried batch is
    archived once: each message is keyed by its ``AddMessagesContext.sequence_numbers`` and an id of the agent's run
    (without numbers, by its own tracking id).

    **Searching.** Entries hold merged passages (a ``[date]`` line before each message, every archived line quoted
    with ``"| "``, as Strands escapes ``<``, ``>`` and ``&``), from the sessions the agent may recall, without what
    the agent still holds in its context, fitted to the memory's share of the agent's next model call
    (``ContextBudget``) and packed into at most ``max_search_results`` entries, best first (``_entries``).

    **Only turns that need the past get it.** For Strands' injection, with ``inject_when="relevant"``, the store
    gates as ``SemanticMemoryHook`` does: a relevant turn gets its budget, an uncertain (or unknown) one at most
    ``uncertain_memory_tokens``, an unrelated one nothing, and hits under a share of the best are left out. A
    search the model asks for (``search_memory``) or the application makes is never gated.

    **An overflow ends with less, then nothing.** After a model call of its agent overflows, the store injects at
    most half of what that call carried for the rest of the invocation, and nothing after a second overflow.
    **One store per agent** (it keeps that agent's calls and overflows); stores may share a memory.

    Example:
        ```python
        from strands import Agent
        from strands.memory import MemoryManager
        from strands_semantic_memory import SemanticMemoryStore
        from strands_semantic_memory.testing import ScriptedModel

        store = SemanticMemoryStore(archive_path="alice.db", user_id="alice")
        agent = Agent(model=ScriptedModel(), memory_manager=MemoryManager(stores=[store]), callback_handler=None)
        agent("My storage locker code is 4417-PLUM.")
        ```
    """

    def __init__(
        self,
        memory: SemanticMemory | None = None,
        *,
        archive_path: str | os.PathLike[str] | None = None,
        archive: Archive | None = None,
        user_id: str | None = None,
        clock: Callable[[], float] | None = None,
        budget: ContextBudget | None = None,
        inject_when: InjectWhen = "relevant",
        name: str = "conversation_archive",
        description: str | None = DEFAULT_DESCRIPTION,
        max_search_results: int | None = 5,
    ) -> None:
        """Create the store.

        Args:
            memory: The memory to serve (default: a new one with ``embedding="background"``).
            archive_path: For a new memory: a durable SQLite file.
            archive: For a new memory: the ``Archive`` to keep the messages in.
            user_id: For a new memory: whose it is (a named user recalls every one of their sessions).
            clock: For a new memory: what "now" is, in seconds since the epoch.
            budget: How the model's window is shared (default: the agent's conversation manager's, else
                ``ContextBudget()``).
            inject_when: ``"relevant"`` gates Strands' injection (see the class docstring); ``"always"`` does not.
            name: The store's name in Strands (unique per ``MemoryManager``).
            description: Shown to the model in the ``search_memory`` tool's description.
            max_search_results: Entries per search when the caller does not say.

        Raises:
            ConfigurationError: If an argument has the wrong type or value, or ``memory`` comes with options for a
                new memory.
        """
        if memory is not None and not isinstance(memory, SemanticMemory):
            raise ConfigurationError(f"memory must be a SemanticMemory, got {type(memory).__name__}")
        if memory is not None and (archive_path, archive, user_id, clock) != (None, None, None, None):
            raise ConfigurationError("archive_path, archive, user_id and clock make a new memory: not with memory=")
        if budget is not None and not isinstance(budget, ContextBudget):
            raise ConfigurationError(f"budget must be a ContextBudget, got {type(budget).__name__}")
        if inject_when not in ("relevant", "always"):
            raise ConfigurationError(f"inject_when must be 'relevant' or 'always', got {inject_when!r}")
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"name must be a non-empty string, got {name!r}")
        self._limit(max_search_results, "max_search_results")
        self._owns_memory = memory is None
        if memory is None:  # not ``memory or``: an empty memory is falsy
            memory = SemanticMemory(
                archive=archive, archive_path=archive_path, user_id=user_id, clock=clock, embedding="background"
            )
        self._memory = memory
        self.name, self.description, self.max_search_results = name, description, max_search_results
        self.budget, self.inject_when = budget, inject_when
        self.writable = True
        self.extraction: ExtractionConfig | bool | None = ExtractionConfig(
            trigger=[_ServingTrigger(self._serve)], filter=KEEP_TOOL_TRAFFIC
        )
        self._agent: weakref.ref[Agent] | None = None
        self._run = uuid.uuid4().hex
        self._overflows, self._cap = 0, cast("int | None", None)  # the invocation's; cap: after an overflow
        self._call: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(f"ssm-store-{id(self)}", default=None)
        self._archived: dict[bytes, int] = {}  # digest -> index, of what this store archived
        self.last_enrichment: StoreEnrichment | None = None
        """What the latest search returned (None before the first)."""

    @property
    def memory(self) -> SemanticMemory:
        """The ``SemanticMemory`` this store serves."""
        return self._memory

    # ------------------------------------------------------------------ the agent

    def _serve(self, agent: Agent) -> None:
        """Serve ``agent`` (its ``MemoryManager`` attaches the store's trigger) and follow its model calls.

        Raises:
            ConfigurationError: If the store already serves another agent that is still alive.
        """
        current = self._serving()
        if current is agent:
            return
        if current is not None:
            gc.collect()  # an agent nobody holds any more may only wait for the cycle collector
        if self._serving() is not None:
            raise ConfigurationError(
                f"this SemanticMemoryStore ({self.name!r}) already serves another agent and keeps that agent's model "
                "calls and overflows: build one store per agent (stores may share one memory: "
                "SemanticMemoryStore(memory=first_store.memory))"
            )
        self._agent, self._run = weakref.ref(agent), uuid.uuid4().hex
        agent.add_hook(self._before_invocation, BeforeInvocationEvent)
        agent.add_middleware(InvokeModelStage.Input, self._mark_call)
        agent.add_middleware(InvokeModelStage, self._watch_call)

    def _serving(self) -> Agent | None:
        return None if self._agent is None else self._agent()

    def _before_invocation(self, event: BeforeInvocationEvent) -> None:
        self._overflows, self._cap = 0, None

    def _mark_call(self, context: InvokeModelContext) -> InvokeModelContext:
        """Before Strands' injection: a search from here to the Wrap handler is injection, for this call."""
        self._call.set(_Call(list(context.messages), context.system_prompt, context.tool_specs, context.model))
        return context

    async def _watch_call(
        self, context: InvokeModelContext, next_fn: Callable[[InvokeModelContext], AsyncGenerator[TypedEvent, None]]
    ) -> AsyncGenerator[TypedEvent, None]:
        """After Strands' injection: clear the mark, and note a context overflow of the call."""
        call = self._call.get()
        self._call.set(None)
        try:
            async for event in next_fn(context):
                yield event
        except ContextWindowOverflowException:
            self._overflows += 1
            self._cap = (call.injected if call else 0) // 2 if self._overflows == 1 else 0
            logger.info("store=<%s>, cap=<%s> | context overflow; injecting less", self.name, self._cap)
            raise

    # ------------------------------------------------------------------ search

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        """The archived passages most relevant to ``query``, as at most ``max_search_results`` entries, best first.

        Args:
            query: What to look for.
            options: Strands' search options (``max_search_results``: the most entries).

        Returns:
            The entries (see the class docstring); ``last_enrichment`` records the search.

        Raises:
            ConfigurationError: If ``max_search_results`` is not an integer >= 1.
        """
        requested = options.get("max_search_results") if options else None
        limit = self._limit(requested, "max_search_results") or self.max_search_results or 5
        call, agent = self._call.get(), self._serving()
        injecting = call is not None and agent is not None
        if call is None and agent is not None:  # a tool's or the application's search: for the agent's next call
            specs = agent.tool_registry.get_all_tool_specs()
            call = _Call(list(agent.messages), agent.system_prompt, specs, agent.model)
        record = StoreEnrichment(query=query if isinstance(query, str) else "", source="request")
        if injecting:
            record.source, record.overflows = "injection", self._overflows
        if record.query.strip():
            await asyncio.to_thread(self._search, record, limit, agent, call)
        if injecting and call is not None:
            call.injected = record.tokens
        self.last_enrichment = record
        logger.debug(
            "store=<%s>, source=<%s>, relevance=<%s>, entries=<%d>, tokens=<%d> | searched the archive",
            self.name, record.source, record.relevance, len(record.entries), record.tokens,
        )  # fmt: skip
        return record.entries

    def _search(self, record: StoreEnrichment, limit: int, agent: Agent | None, call: _Call | None) -> None:
        """Search, gate and fit (blocking: runs in a worker thread)."""
        budget = agent_budget(agent, self.budget)
        window = None if call is None else model_window(call.model)
        tokens = budget.memory_tokens(window, None if call is None else call.tokens())
        cap = self._cap if record.source == "injection" else None
        tokens = tokens if cap is None else min(tokens, cap)
        held = {_digest(m) for m in call.messages} if call is not None else set()
        excluded = {self._archived[d] for d in held if d in self._archived}
        result = self._memory.search(
            record.query,
            top_k=max(20, min(100, tokens // TOKENS_PER_HIT)),
            sessions=agent_scope(self._memory.user_id, agent),
            exclude=excluded,
        )
        record.relevance, record.best_similarity = result.relevance, result.best_similarity
        record.gated = record.source == "injection" and self.inject_when == "relevant"
        passages, full = result.passages, tokens
        if record.gated:  # as the hook gates its turns
            reading = (result.relevance, result.best_similarity, result.floor)
            hits = [(h.index, h.score) for h in result]
            passages, tokens, _ = gated(passages, hits, tokens, reading, budget.uncertain_memory_tokens, record.query)
        record.budget_tokens = tokens
        in_context = {r.index for p in passages for r in p.records if held and _digest(r.message) in held}
        writer = BlockWriter(quote_prefix=ENTRY_QUOTE)
        said = self._statements(record.query, agent, in_context | excluded, writer, min(full, PROFILE_TOKENS))
        shown = in_context | {index for _, index in said}
        room = min(tokens, full - (estimate_tokens("\n".join(text for text, _ in said)) if said else 0))
        groups = fit_passages(passages, room, limit - bool(said), self.name, writer, lambda r: r.index in shown)
        about = writer.with_statements([text for text, _ in said], [])
        first = [MemoryEntry(content=about, metadata={"indices": [i for _, i in said], "about_user": True})]
        record.entries = (first if said else []) + entries_for(groups, writer)
        record.tokens = injected_tokens(record.entries, self.name)
        record.in_context = sorted(in_context)

    def _statements(
        self, query: str, agent: Agent | None, skip: set[int], writer: BlockWriter, tokens: int
    ) -> list[tuple[str, int]]:
        """The user's own statements a request about them is given, as the hook gives them: newest first.

        Returns:
            Each statement's text and its message's index, within ``tokens``.
        """
        if tokens <= 0:
            return []
        found = personal_statements(self._memory, query, agent_scope(self._memory.user_id, agent), skip)
        heading = estimate_tokens(writer.with_statements(["x"], [])) - 1
        fitted, _ = fit_statements(found, writer, tokens, heading)
        return [(text, statement.record.index) for text, statement in fitted]

    @staticmethod
    def _limit(value: Any, name: str) -> int | None:
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ConfigurationError(f"{name} must be an integer >= 1 or None, got {value!r}")
        return value

    # ------------------------------------------------------------------ archiving

    async def add_messages(
        self, messages: list[Message], context: AddMessagesContext | None = None
    ) -> list[int | None]:
        """Archive a batch of messages verbatim, under the agent's session (Strands' extraction sink).

        Args:
            messages: The messages, oldest first.
            context: Strands' batch context: its ``sequence_numbers`` make a retried batch idempotent.

        Returns:
            Each message's archive index (None: a forgotten message, not archived again).

        Raises:
            InvalidMessageError: If ``sequence_numbers`` does not align with ``messages``, or a message is not one.
        """
        numbers = context.sequence_numbers if context is not None else None
        if numbers is not None and len(numbers) != len(messages):
            raise InvalidMessageError(f"got {len(numbers)} sequence numbers for {len(messages)} messages")
        keyed = [cast(Message, dict(m)) for m in messages]
        for message, number in zip(keyed, numbers or (), strict=False):  # else each keeps its own tracking id
            message["tracking_id"] = str(uuid.uuid5(_RUN_NAMESPACE, f"{self._run}:{number}"))
        session = session_of(self._serving())
        return await asyncio.to_thread(self._archive, keyed, session)

    def _archive(self, messages: Sequence[Message], session: str | None) -> list[int | None]:
        indices = self._memory.add(messages, session_id=session)
        for message, index in zip(messages, indices, strict=True):
            if index is not None:
                self._archived[_digest(message)] = index
        while len(self._archived) > HELD_LOOKUP:
            del self._archived[next(iter(self._archived))]
        logger.debug("store=<%s>, messages=<%d> | batch archived", self.name, len(indices))
        return indices

    def close(self) -> None:
        """Close the memory if this store built it (``SemanticMemory.close``); a memory given to it stays open."""
        if self._owns_memory:
            self._memory.close()

    def __repr__(self) -> str:
        return f"SemanticMemoryStore(name={self.name!r}, memory={self._memory!r})"
