"""SemanticMemoryHook: bring relevant archived exchanges into the model calls of each new user turn.

The hook never rewrites the agent's history. It searches the archive once per user turn, off the event loop
(``asyncio.to_thread``), and adds what it found to that turn's model calls only, through Strands' model-invocation
middleware (``agent.add_middleware(InvokeModelStage, ...)``, the mechanism of Strands' own ``ContextInjector``). The
user's message in ``agent.messages``, in the session, in the archive and in summaries stays as the user sent it.

One model call, top-down: the call's budget (``budget.py``: the model's window, the room the history leaves), the
turn's search (``SemanticMemory.search``, once per turn; tool loops reuse it) leaving out what the call holds, the
relevance gate (``retrieval._relevance``), the passages that fit (``retrieval._passages.pack_passages``, hits first)
written by ``formatting._block``, then the call. On a context overflow the history is reduced first when the
conversation manager can reduce it (it is archived, so nothing is lost); only otherwise is the call retried with half
the injected context, then none.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from strands.hooks import (
    AfterInvocationEvent,
    AgentInitializedEvent,
    BeforeInvocationEvent,
    HookProvider,
    HookRegistry,
    MessageAddedEvent,
)
from strands.middleware import InvokeModelContext, InvokeModelStage, TypedEvent
from strands.plugins import Plugin
from strands.types.content import Message
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory import _telemetry
from strands_semantic_memory.budget import ContextBudget, agent_budget, estimate_tokens, history_tokens, model_window
from strands_semantic_memory.engine._memory import SearchResult, SemanticMemory, Statement
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.formatting._block import GAP, BlockWriter, context_block
from strands_semantic_memory.messages._profile import personal_request
from strands_semantic_memory.messages._session import agent_scope
from strands_semantic_memory.retrieval._passages import Passage, pack_passages
from strands_semantic_memory.retrieval._relevance import InjectWhen, Relevance, gated

if TYPE_CHECKING:
    from strands.agent.agent import Agent

    from strands_semantic_memory.storage import SemanticStorage

__all__ = ["Enrichment", "SemanticMemoryHook"]

logger = logging.getLogger(__name__)

TOKENS_PER_HIT = 25
"""A budget of ``T`` tokens searches ``T / 25`` hits (20 to 100) when ``top_k`` is not set: on LoCoMo's development
half a 2,500-token budget delivered 90.2 % of the evidence from 100 hits and 88.1 % from 50."""
BLOCK_OVERHEAD = estimate_tokens(context_block("", ""))
PROFILE_STATEMENTS = 6
"""A request that depends on the user (``messages._profile.personal_request``) gets at most this many messages of
their own statements about themselves, nearest first, shown newest first..."""
PROFILE_TOKENS = 400
"""...within at most this many tokens of the call's budget..."""
PROFILE_FLOOR = 0.1
"""...each at least this similar to the request (cosine, the bundled model)."""


def personal_statements(
    memory: SemanticMemory, query: str, sessions: Iterable[str | None] | None, exclude: Iterable[int] = ()
) -> list[Statement]:
    """What a request that depends on the user (``personal_request``) is given of their statements, newest first.

    Shared by the hook and the store (``memory_store``): at most ``PROFILE_STATEMENTS`` messages, each at least
    ``PROFILE_FLOOR`` similar to the request; nothing for a request without a first-person signal.
    """
    if not personal_request(query):
        return []
    found = memory.statements(query, top_k=PROFILE_STATEMENTS, sessions=sessions, exclude=exclude)
    return sorted((s for s in found if s.similarity >= PROFILE_FLOOR), key=lambda s: -s.record.time)


def fit_statements(
    statements: Sequence[Statement], writer: BlockWriter, tokens: int, spent: int = 0
) -> tuple[list[tuple[str, Statement]], int]:
    """The statements (in order) whose texts fit in ``tokens`` with ``spent`` already used; each with its text.

    Shared by the hook and the store. Returns the chosen ``(text, statement)`` pairs and the tokens then used.
    """
    chosen: list[tuple[str, Statement]] = []
    for statement in statements:
        text = writer.statement(statement.record, statement.sentences, statement.asked)
        cost = estimate_tokens(text + "\n")
        if spent + cost <= tokens:
            chosen.append((text, statement))
            spent += cost
    return chosen, spent


@dataclass(kw_only=True)
class Enrichment:
    """What the hook did for one user turn.

    Attributes:
        query: The user's words that were searched for.
        passages: The passages injected into the turn's latest model call, in conversation order.
        statements: What the user said about themselves that the latest call was given (a request that depends on
            the user: ``messages._profile.personal_request``), newest first.
        left_out: Passages found but left out (the budget, the gate, or the room left after an overflow).
        text: The text the user's turn was sent with on the latest call (empty when nothing was injected).
        tokens: Estimated tokens of the injected lines.
        relevance: The gate's reading of the turn (``"always"`` with ``inject_when="always"``).
        best_similarity: The turn's cosine similarity to its nearest archived message, when known.
        elapsed_ms: Time the search and the choice took for the turn's first model call.
        overflow_retries: Calls of this turn retried with less or no injected context after an overflow.
        error: Why the search failed, when it did (the turn was then sent without earlier context).
    """

    query: str
    passages: list[Passage] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    left_out: list[Passage] = field(default_factory=list)
    text: str = ""
    tokens: int = 0
    relevance: Relevance | Literal["always"] = "unknown"
    best_similarity: float | None = None
    elapsed_ms: float = 0.0
    overflow_retries: int = 0
    error: str | None = None


@dataclass
class _Turn:
    message: Message  # the object in agent.messages (recognised by identity, never by its fields)
    query: str
    enrichment: Enrichment
    found: list[Passage] | None = None  # None until searched
    statements: list[Statement] = field(default_factory=list)  # what the user said about themselves
    held: frozenset[int] = frozenset()  # archive indices the call holds: never shown again
    cap: int | None = None  # tokens, after an overflow
    gate: int | None = None  # tokens of earlier messages the relevance gate allows (the statements have their own)
    without_context: bool = False
    sent: list[Any] | None = None  # the content of the latest call sent with context (keep_injected_context)


@dataclass
class _AgentState:
    turn: _Turn | None = None
    kept: dict[int, tuple[Message, list[Any]]] = field(default_factory=dict)
    held: dict[str, int] = field(default_factory=dict)  # tracking id -> archive index, found before
    registered: bool = False
    latest: Enrichment | None = None


def user_text(message: Message) -> str | None:
    """The text of a user turn the hook acts on, or None (tool results, assistant turns, turns without text)."""
    content = message.get("content") or []
    if message.get("role") != "user" or any(isinstance(b, dict) and ("toolResult" in b) for b in content):
        return None
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(t for t in texts if t.strip()) or None


class SemanticMemoryHook(Plugin, HookProvider):
    """Adds the archived exchanges most relevant to each new user turn to that turn's model calls.

    The hook searches the memory of ``agent.conversation_manager`` (a ``SemanticSummarizingConversationManager``),
    the ``memory`` you pass, or the ``SemanticStorage`` Strands' ``ContextManager`` stashes into, and the model
    receives the user's message as a fenced block of quoted earlier messages followed by ``Current question: `` and
    the user's words (``formatting._block``). It is a Strands ``Plugin`` (``Agent(plugins=[hook])``) and a hook
    provider (``Agent(hooks=[hook])``): give it one way, not both. One hook may serve many agents at once.

    Example:
        ```python
        from strands import Agent
        from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
        from strands_semantic_memory.testing import ScriptedModel

        agent = Agent(
            model=ScriptedModel(),
            conversation_manager=SemanticSummarizingConversationManager(),
            plugins=[SemanticMemoryHook()],
        )
        agent("My booking reference is BK-7731-QZ.")
        ```
    """

    def __init__(
        self,
        memory: SemanticMemory | None = None,
        *,
        storage: SemanticStorage | None = None,
        budget: ContextBudget | None = None,
        inject_when: InjectWhen = "relevant",
        top_k: int | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
        max_context_tokens: int | None = None,
        show_dates: bool = True,
        include_metadata: bool = False,
        keep_injected_context: bool = False,
        enabled: bool = True,
    ) -> None:
        """Create the hook.

        Args:
            memory: Search this memory (default: each agent's own, its conversation manager's or its storage's).
            storage: Search this ``SemanticStorage`` (or a namespaced view): the entries of Strands' stash that the
                call's messages no longer hold, such as what Strands' ``ContextManager`` summarized away.
            budget: How the model's window is shared (default: the agent's conversation manager's or context
                strategy's, else ``ContextBudget()``).
            inject_when: ``"relevant"``: a turn gets archived context when it resembles the archive more than generic
                questions do (the full budget; ``uncertain_memory_tokens`` when only a little; nothing when not), and
                hits under a share of the best are left out. ``"always"``: every turn gets its budget's worth.
            top_k: Hits per search (default: as many as the budget holds, ``TOKENS_PER_HIT`` each, 20 to 100).
            context_radius: Neighbours per hit (default: the memory's ``context_radius``).
            min_score: Minimum cosine similarity of a hit (default: the memory's).
            max_context_tokens: A cap on the injected lines, on top of the budget.
            show_dates: Show when each injected message was said, in UTC (questions about time are answered by them).
            include_metadata: Show each injected message's archive index and role.
            keep_injected_context: Keep showing each turn's block on later turns' calls while its message is in the
                context (the history still holds only the user's words; kept per process, not in the session).
            enabled: False leaves every turn untouched (may be set later).

        Raises:
            ConfigurationError: If an option has the wrong type or is out of range.
        """
        Plugin.__init__(self)
        if memory is not None and not isinstance(memory, SemanticMemory):
            raise ConfigurationError(
                f"memory must be a SemanticMemory (e.g. manager.memory), got {type(memory).__name__}"
            )
        if storage is not None:
            from strands_semantic_memory.storage import SemanticStorage

            if not isinstance(storage, SemanticStorage):
                raise ConfigurationError(f"storage must be a SemanticStorage, got {type(storage).__name__}")
            if memory is not None and memory is not storage.memory:
                raise ConfigurationError("memory and storage are two different memories: pass one of them")
        if budget is not None and not isinstance(budget, ContextBudget):
            raise ConfigurationError(f"budget must be a ContextBudget, got {type(budget).__name__}")
        if inject_when not in ("relevant", "always"):
            raise ConfigurationError(f"inject_when must be 'relevant' or 'always', got {inject_when!r}")
        for name, value, low in (("top_k", top_k, 1), ("context_radius", context_radius, 0)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
                raise ConfigurationError(f"{name} must be an integer >= {low} or None, got {value!r}")
        if max_context_tokens is not None and (not isinstance(max_context_tokens, int) or max_context_tokens < 1):
            raise ConfigurationError(f"max_context_tokens must be an integer >= 1 or None, got {max_context_tokens!r}")
        if min_score is not None and not (isinstance(min_score, (int, float)) and -1 <= min_score <= 1):
            raise ConfigurationError(f"min_score must be a number in -1..1 or None, got {min_score!r}")
        for name, flag in (("show_dates", show_dates), ("include_metadata", include_metadata),
                           ("keep_injected_context", keep_injected_context), ("enabled", enabled)):  # fmt: skip
            if not isinstance(flag, bool):
                raise ConfigurationError(f"{name} must be True or False, got {flag!r}")
        self.memory, self.storage, self.budget, self.inject_when = memory, storage, budget, inject_when
        self.top_k, self.context_radius, self.min_score = top_k, context_radius, min_score
        self.max_context_tokens, self.show_dates, self.include_metadata = (
            max_context_tokens,
            show_dates,
            include_metadata,
        )
        self.keep_injected_context, self.enabled = keep_injected_context, enabled
        self._agents: weakref.WeakKeyDictionary[Any, _AgentState] = weakref.WeakKeyDictionary()
        self._latest: Enrichment | None = None

    name = "strands-semantic-memory:hook"

    def init_agent(self, agent: Agent) -> None:
        """Register with an agent that received the hook as a plugin."""
        self.register_hooks(agent.hooks)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the callbacks; the model-call middleware is added when the agent is initialized."""
        registry.add_callback(AgentInitializedEvent, self._on_initialized)
        registry.add_callback(BeforeInvocationEvent, self._on_before_invocation)
        registry.add_callback(MessageAddedEvent, self._on_message_added)
        registry.add_callback(AfterInvocationEvent, self._on_after_invocation)

    # ------------------------------------------------------------------ what the hook did

    def enrichment(self, agent: Agent) -> Enrichment | None:
        """What the hook did for ``agent``'s latest user turn (None before one)."""
        state = self._agents.get(agent)
        return None if state is None else state.latest

    @property
    def last_enrichment(self) -> Enrichment | None:
        """What the hook did for the latest user turn, when it serves one agent.

        Raises:
            ConfigurationError: If it serves several agents (their turns may be different users'): read
                ``enrichment(agent)``.
        """
        if len(self._agents) > 1:
            raise ConfigurationError("this hook serves several agents: read hook.enrichment(agent) for one of them")
        return self._latest

    def preview(self, query: str, *, agent: Agent | None = None) -> Enrichment:
        """What the hook would inject for a user turn with this text, without calling a model (for debugging).

        Only the memory's share of the window applies (the room a real call leaves is not known here).
        """
        memory = self._memory_for(agent)
        turn = _Turn({"role": "user", "content": [{"text": query}]}, query, Enrichment(query=query))
        budget = agent_budget(agent, self.budget)
        window = model_window(getattr(agent, "model", None))
        storage = self._storage_for(agent)
        self._search_turn(memory, storage, turn, agent_scope(memory.user_id, agent), budget, window)
        text, chosen, left, tokens = self._choose(turn, budget.memory_tokens(window))
        turn.enrichment.passages, turn.enrichment.text, turn.enrichment.tokens = chosen, text, tokens
        turn.enrichment.left_out = left
        return turn.enrichment

    # ------------------------------------------------------------------ callbacks

    def _memory_for(self, agent: Any) -> SemanticMemory:
        if self.memory is not None:
            return self.memory
        if self.storage is not None:
            found: SemanticMemory = self.storage.memory
            return found
        memory = getattr(getattr(agent, "conversation_manager", None), "memory", None)
        if isinstance(memory, SemanticMemory):
            return memory
        storage = self._storage_for(agent)
        if storage is not None:
            held: SemanticMemory = storage.memory
            return held
        raise ConfigurationError(
            "SemanticMemoryHook has no memory to search: give the agent a SemanticSummarizingConversationManager, "
            "Agent(storage=SemanticStorage()), or pass SemanticMemoryHook(memory=...)"
        )

    def _storage_for(self, agent: Any) -> SemanticStorage | None:
        if self.storage is not None or self.memory is not None:
            return self.storage
        if isinstance(getattr(getattr(agent, "conversation_manager", None), "memory", None), SemanticMemory):
            return None
        from strands_semantic_memory.storage import SemanticStorage

        storage = getattr(agent, "storage", None)
        return storage if isinstance(storage, SemanticStorage) else None

    def _state(self, agent: Any) -> _AgentState:
        state = self._agents.get(agent)
        if state is None:
            state = self._agents[agent] = _AgentState()
        if not state.registered:
            agent.add_middleware(InvokeModelStage, self._invoke_model)
            state.registered = True
        return state

    def _on_initialized(self, event: AgentInitializedEvent) -> None:
        self._memory_for(event.agent)  # fail when the agent is built, with the explanation, not on its first turn
        self._state(event.agent)

    def _on_before_invocation(self, event: BeforeInvocationEvent) -> None:
        self._state(event.agent).turn = None

    def _on_message_added(self, event: MessageAddedEvent) -> None:
        storage = self._storage_for(event.agent)
        if storage is not None:  # registered before Strands' ContextManager: runs before its stash writes
            storage.note_speaker(event.message)
        query = user_text(event.message)
        if query is None:
            return  # a tool result belongs to the current turn
        state = self._state(event.agent)
        state.turn = _Turn(event.message, query, Enrichment(query=query)) if self.enabled else None
        state.latest = self._latest = None if state.turn is None else state.turn.enrichment
        if state.kept:
            present = {id(m) for m in event.agent.messages}
            state.kept = {k: v for k, v in state.kept.items() if k in present}

    def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        state = self._state(event.agent)
        turn = state.turn
        if self.keep_injected_context and turn is not None and turn.sent is not None:
            state.kept[id(turn.message)] = (turn.message, turn.sent)
        state.turn = None

    # ------------------------------------------------------------------ the model call

    async def _invoke_model(
        self,
        context: InvokeModelContext,
        next_fn: Callable[[InvokeModelContext], AsyncGenerator[TypedEvent, None]],
    ) -> AsyncGenerator[TypedEvent, None]:
        """Send the call with the turn's archived context; after an overflow, with less, then none."""
        state = self._agents.get(context.agent)
        turn = None if state is None else state.turn
        if state is None or not self.enabled or (turn is None and not state.kept):
            async for event in next_fn(context):
                yield event
            return
        agent = context.agent
        budget = agent_budget(agent, self.budget)
        window = model_window(context.model)
        while True:
            with _telemetry.operation("memory.inject") as span:
                # Everything but the call itself runs in a worker thread: search, sizing and writing the block.
                messages, tokens, chosen = await asyncio.to_thread(self._prepare, context, state, budget, window)
                if span.is_recording():
                    span.set_attribute("memory.inject.tokens", tokens)
                    span.set_attribute("memory.entry.count", len(chosen))
                _telemetry.METRICS.inject_tokens.record(tokens)
            if messages is None:
                async for event in next_fn(context):
                    yield event
                return
            streamed = False
            try:
                async for event in next_fn(context.replace(messages=messages)):
                    streamed = True
                    yield event
            except ContextWindowOverflowException:
                if streamed:
                    raise
                if chosen and _can_reduce(agent):
                    raise  # the manager reduces the (archived) history first; the call then comes back here
                if turn is None or turn.without_context:
                    state.kept.clear()
                    raise
                turn.enrichment.overflow_retries += 1
                if turn.cap is None or turn.cap > tokens // 2 > 0:
                    turn.cap = tokens // 2
                else:
                    turn.without_context = True
                logger.info("tokens=<%d> | context overflow with injected context; retrying with less", tokens)
                continue
            return

    def _prepare(
        self, context: InvokeModelContext, state: _AgentState, budget: ContextBudget, window: int | None
    ) -> tuple[list[Message] | None, int, list[Passage]]:
        """The call's messages with the turn's block (None: nothing added), searching first if the turn has not."""
        turn = state.turn
        if turn is not None and turn.found is None:
            started = time.perf_counter()
            agent = context.agent
            memory = self._memory_for(agent)
            storage = self._storage_for(agent)
            try:
                turn.held = self._held(memory, storage, context.messages, state)
                self._search_turn(memory, storage, turn, agent_scope(memory.user_id, agent), budget, window)
            except Exception as error:  # a failing embedder or database must not break the conversation
                logger.warning("error=<%s> | archive search failed; the turn is sent without earlier context", error)
                turn.found, turn.enrichment.error = [], f"{type(error).__name__}: {error}"
            turn.enrichment.elapsed_ms = (time.perf_counter() - started) * 1000
        used = history_tokens(context.messages, context.system_prompt) + BLOCK_OVERHEAD
        return self._view(context, state, budget.memory_tokens(window, used))

    def _held(
        self, memory: SemanticMemory, storage: SemanticStorage | None, messages: Sequence[Message], state: _AgentState
    ) -> frozenset[int]:
        """The archive indices of what the call holds (never hits), found once per tracking id (a worker thread)."""
        if storage is not None:
            return frozenset(storage.held(messages))
        known = state.held
        unknown = [m for m in messages if m.get("tracking_id") not in known]
        for position, index in memory.indices_of(unknown).items():
            known[unknown[position]["tracking_id"]] = index
        return frozenset(known[m["tracking_id"]] for m in messages if m.get("tracking_id") in known)

    def _search_turn(
        self,
        memory: SemanticMemory,
        storage: SemanticStorage | None,
        turn: _Turn,
        sessions: frozenset[str | None] | None,
        budget: ContextBudget,
        window: int | None,
    ) -> None:
        """The turn's one search, and the gate's reading of it (blocking: runs in a worker thread)."""
        depth = self.top_k or max(20, min(100, budget.memory_tokens(window) // TOKENS_PER_HIT))
        result: SearchResult = memory.search(
            turn.query,
            top_k=depth,
            context_radius=self.context_radius,
            min_score=self.min_score,
            sessions=sessions,
            exclude=turn.held,
        )
        passages = result.passages if storage is None else storage.visible(result.passages)
        turn.statements = personal_statements(memory, turn.query, sessions, turn.held)
        enrichment = turn.enrichment
        enrichment.best_similarity = result.best_similarity
        if self.inject_when == "always":
            enrichment.relevance = "always"
        else:
            enrichment.relevance = result.relevance
            full = budget.memory_tokens(window)
            reading = (result.relevance, result.best_similarity, result.floor)
            hits = [(h.index, h.score) for h in result]
            small = budget.uncertain_memory_tokens
            passages, tokens, enrichment.left_out = gated(passages, hits, full, reading, small, turn.query)
            if tokens < full:
                turn.gate = tokens
        turn.found = passages

    def _choose(self, turn: _Turn, tokens: int) -> tuple[str, list[Passage], list[Passage], int]:
        """The block for one call within ``tokens``: its text, the chosen passages, those left out, their tokens."""
        for cap in (self.max_context_tokens, turn.cap):
            if cap is not None:
                tokens = min(tokens, cap)
        if turn.without_context or not (turn.found or turn.statements) or tokens <= 0:
            return "", [], list(turn.found or []), 0
        writer = BlockWriter(include_metadata=self.include_metadata, show_dates=self.show_dates)
        fitted, spent = fit_statements(turn.statements, writer, min(tokens, PROFILE_TOKENS))  # the user's own first
        said = [text for text, _ in fitted]
        turn.enrichment.statements = [statement for _, statement in fitted]
        shown = {s.record.index for s in turn.statements}
        gap = estimate_tokens(GAP + "\n")
        chosen, left = pack_passages(
            turn.found or [],
            lambda record: (estimate_tokens(writer.message(record) + "\n\n"),),
            [tokens - spent if turn.gate is None else min(tokens - spent, turn.gate)],
            (gap,),
            skip=lambda record: record.index in turn.held or record.index in shown,
        )
        if not chosen and not said:
            return "", [], left, 0
        body = writer.with_statements(said, chosen)
        return context_block(body, turn.query, self.show_dates), chosen, left, estimate_tokens(body)

    def _view(
        self, context: InvokeModelContext, state: _AgentState, tokens: int
    ) -> tuple[list[Message] | None, int, list[Passage]]:
        """The call's messages with the turn's block (and kept blocks), or None when nothing is added."""
        agent_messages = context.agent.messages
        if len(context.messages) != len(agent_messages):
            return None, 0, []  # other middleware added or removed messages: nothing is injected
        messages = list(context.messages)
        changed = False
        for original, content in state.kept.values():
            position = _position(agent_messages, original)
            if position is not None:
                messages[position] = {**messages[position], "content": list(content)}
                changed = True
                tokens -= sum(estimate_tokens(b["text"]) for b in content if isinstance(b.get("text"), str))
        turn = state.turn
        if turn is None:
            return (messages if changed else None), 0, []
        position = _position(agent_messages, turn.message)
        text, chosen, left, used = self._choose(turn, tokens)
        enrichment = turn.enrichment
        enrichment.passages, enrichment.left_out, enrichment.text, enrichment.tokens = chosen, left, text, used
        if position is None or not text:
            enrichment.passages, enrichment.text, enrichment.tokens = [], "", 0
            return (messages if changed else None), 0, []
        rest = [b for b in messages[position].get("content") or [] if not (isinstance(b, dict) and "text" in b)]
        content = [{"text": text}, *rest]
        messages[position] = {**messages[position], "content": content}
        turn.sent = content
        return messages, used, chosen


def _position(messages: Sequence[Message], message: Message) -> int | None:
    """Where ``message`` (the object itself, not an equal copy) is in ``messages``, searching from the end."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is message:
            return i
    return None


def _can_reduce(agent: Any) -> bool:
    """Whether the agent's conversation manager says it can reduce the history now (this library's can)."""
    can_reduce = getattr(getattr(agent, "conversation_manager", None), "can_reduce", None)
    try:
        return bool(can_reduce(agent)) if callable(can_reduce) else False
    except Exception:  # a manager's check must not break the call
        return False
