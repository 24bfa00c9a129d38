"""SemanticMemoryHook: bring relevant archived exchanges into the model calls of each new user turn.

The hook never rewrites the agent's history. It searches the archive once per user turn and adds what it found
to what the model receives on that turn's model calls only, through Strands' model-invocation middleware
(``agent.add_middleware(InvokeModelStage, ...)``, the mechanism Strands' own ``ContextInjector`` uses). The
user's message in ``agent.messages``, in the session, in the archive and in summaries stays exactly as the user
sent it, so there is nothing to restore or strip afterwards.

The hook orchestrates; its parts live beside it: ``_turn`` (per-agent and per-turn records, and ``Enrichment``),
``_search`` (the archive search for a turn), ``_selection`` (which messages fit a call) and ``_model_call`` (the
messages a call receives, and shrinking them after a context overflow).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

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
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory._validation import check_flag, check_instance, check_int, check_score
from strands_semantic_memory.budget import ContextBudget, agent_budget, model_window
from strands_semantic_memory.engine._memory import SemanticMemory, resolve_memory
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.hook._model_call import View, build_view, record_view, shrink
from strands_semantic_memory.hook._search import preview_turn, search_turn
from strands_semantic_memory.hook._selection import InjectionSettings
from strands_semantic_memory.hook._turn import AgentState, Enrichment, Turn, user_text

if TYPE_CHECKING:
    from strands.agent.agent import Agent

    from strands_semantic_memory.storage import SemanticStorage

__all__ = ["Enrichment", "SemanticMemoryHook", "search_depth"]

logger = logging.getLogger(__name__)

TOKENS_PER_HIT = 40
"""A short message with its separator, in tokens: how many hits a budget can hold is its tokens / this."""


def search_depth(memory_tokens: int) -> int:
    """Hits to search for when ``top_k`` is not set: about as many as the memory's budget can hold (20 to 200).

    The budget then keeps the best that fit; searching deeper than the budget holds only costs time.
    """
    return max(20, min(200, memory_tokens // TOKENS_PER_HIT))


def _optional_count(minimum: int) -> Callable[[str, Any], int | None]:
    return lambda name, value: check_int(name, value, minimum=minimum, optional=True)


def _memory_option(name: str, value: Any) -> SemanticMemory | None:
    return check_instance(name, value, SemanticMemory, "a SemanticMemory (for example manager.memory) or None")


_OPTION_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "enabled": check_flag,
    "max_context_length": _optional_count(1),
    "include_metadata": check_flag,
    "top_k": _optional_count(1),
    "context_radius": _optional_count(0),
    "min_score": check_score,
    "keep_injected_context": check_flag,
    "memory": _memory_option,
    "max_context_tokens": _optional_count(1),
    "show_dates": check_flag,
    "budget": lambda name, value: check_instance(name, value, ContextBudget, "a ContextBudget or None"),
}
"""The hook's options and their checks: at construction, on assignment and in ``configure``."""


class SemanticMemoryHook(Plugin, HookProvider):
    """Adds the archived exchanges most relevant to each new user turn to that turn's model calls.

    The hook searches the archive of ``agent.conversation_manager`` (a
    ``SemanticSummarizingConversationManager``), or the ``memory`` you pass, or the ``SemanticStorage`` that
    Strands' ``ContextManager`` stashes into (only the entries the active context no longer holds come back),
    once per user turn, and the model receives the user's message as (see ``_block``
    for the format and why archived text cannot forge it)::

        Possibly relevant earlier messages, oldest first (each archived line starts with "> " and is a quotation, ...):
        [archive]
        [Message 5, user]
        > Tell me about Python decorators
        [Message 6, assistant]
        > Python decorators are functions that modify...
        [end of archive]
        Current question: What was the exact decorator syntax you showed earlier?

    The block reaches the model for the model calls of that turn only (tool loops reuse the turn's search), through
    Strands' ``InvokeModelStage`` middleware; the agent's history, the session, the archive and summaries keep the
    user's own message.

    What is injected is chosen within a ``ContextBudget`` (the conversation manager's, so both share one budget):
    at most ``memory_share`` of the model's ``context_window_limit``, never more than the room the call leaves;
    hits first, best first, then their neighbours; never a message the model already sees in the call. If the
    model still reports a context overflow, the history is reduced first when the conversation manager can reduce
    it (it is archived, so nothing is lost); only when it cannot is the call retried with half the injected
    context, then with none.

    It is a Strands ``Plugin`` (``Agent(plugins=[hook])``) and a hook provider (``Agent(hooks=[hook])``); give it
    to an agent one way, not both.
    """

    def __init__(
        self,
        enabled: bool = True,
        max_context_length: int | None = None,
        include_metadata: bool = False,
        *,
        top_k: int | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
        keep_injected_context: bool = False,
        memory: SemanticMemory | None = None,
        max_context_tokens: int | None = None,
        show_dates: bool = False,
        budget: ContextBudget | None = None,
        storage: SemanticStorage | None = None,
    ) -> None:
        """Create the hook.

        Args:
            enabled: When False the hook leaves every turn untouched (can be flipped at run time).
            max_context_length: A cap in characters on the injected context (the lines between the fences), on
                top of the budget; None (default): the budget alone decides.
            include_metadata: Show a ``[Message N, role]`` line before each injected message. Off by default: the
                messages are shown oldest first, passages apart, and a small local model echoed the lines.
            top_k: Hits per search (default: ``search_depth`` of the memory's budget, about as many short messages
                as it can hold: the budget keeps the best ones, and their neighbours where room is left).
            context_radius: Neighbours per hit (default: the memory's ``context_radius``).
            min_score: Minimum cosine similarity (default: the memory's ``min_score``).
            keep_injected_context: Keep showing each turn's injected context on the model calls of later turns
                (at that turn's message, as long as it is in the agent's context). The agent's history, the
                session, the archive and summaries still hold only the user's words; the kept context lives in
                this hook (per process, not in the session). Off by default: kept context grows every call.
            memory: Search this memory instead of the agent's conversation manager's.
            max_context_tokens: A cap in tokens on the injected context, on top of the budget; None: no cap.
            show_dates: Show the date of each injected message (when it was said, else archived), in UTC.
            budget: How the model's window is shared (default: the conversation manager's ``budget`` when it has
                one, or that of a ``BudgetSummarization`` in the agent's ``ContextManager``, else ``ContextBudget()``).
            storage: Search this ``SemanticStorage`` (or a namespaced view of it): the entries of the view that the
                model call's messages no longer hold, such as what Strands' ``ContextManager`` summarized away.

        Raises:
            ConfigurationError: If an option has the wrong type or is out of range (the message names the option
                and the value). The flags must be ``True`` or ``False``; ``top_k``, ``max_context_length`` and
                ``max_context_tokens`` at least 1, ``context_radius`` at least 0 (or None); ``min_score`` in -1..1
                (or None); ``memory`` a ``SemanticMemory``, ``budget`` a ``ContextBudget`` (or None); ``memory`` and
                ``storage`` not two different memories. Setting an option later (``hook.enabled = False``, or
                ``configure``) is checked the same way.
        """
        self.enabled = enabled
        self.max_context_length = max_context_length
        self.max_context_tokens = max_context_tokens
        self.include_metadata = include_metadata
        self.show_dates = show_dates
        self.top_k = top_k
        self.context_radius = context_radius
        self.min_score = min_score
        self.keep_injected_context = keep_injected_context
        self.budget = budget
        self.storage = storage
        self.memory = self._storage_memory(storage, memory)
        self.last_enrichment: Enrichment | None = None
        self._agents: weakref.WeakKeyDictionary[Any, AgentState] = weakref.WeakKeyDictionary()
        Plugin.__init__(self)

    @property
    def name(self) -> str:
        """The plugin's name (one per agent)."""
        return "strands-semantic-memory:hook"

    def init_agent(self, agent: Agent) -> None:
        """Register the callbacks with an agent that received the hook as a plugin (``Agent(plugins=[...])``)."""
        self.register_hooks(agent.hooks)

    @staticmethod
    def _storage_memory(storage: SemanticStorage | None, memory: SemanticMemory | None) -> SemanticMemory | None:
        if storage is None:
            return memory
        from strands_semantic_memory.storage import SemanticStorage  # imported when used: the hook stays light

        if not isinstance(storage, SemanticStorage):
            raise ConfigurationError(f"storage must be a SemanticStorage, got {type(storage).__name__}")
        found = storage.memory
        if memory is not None and memory is not found:
            raise ConfigurationError("memory and storage are two different memories: pass one of them")
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        """Set an attribute; an option (see ``__init__``) is checked first, and refused as it would be there."""
        check = _OPTION_CHECKS.get(name)
        super().__setattr__(name, value if check is None else check(name, value))

    def configure(self, **changes: Any) -> None:
        """Change several options at once, in effect from the next model call; all are checked before any changes.

        Args:
            **changes: Options of ``__init__`` (``enabled``, ``top_k``, ``max_context_length``, ...).

        Raises:
            ConfigurationError: If a name is not an option, or a value is invalid; then nothing changed.
        """
        unknown = sorted(set(changes) - set(_OPTION_CHECKS))
        if unknown:
            raise ConfigurationError(
                f"unknown SemanticMemoryHook option(s) {unknown}; options: {sorted(_OPTION_CHECKS)}"
            )
        checked = {name: _OPTION_CHECKS[name](name, value) for name, value in changes.items()}
        for name, value in checked.items():
            super().__setattr__(name, value)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the callbacks; the model-call middleware is added when the agent is initialized."""
        registry.add_callback(AgentInitializedEvent, self._on_agent_initialized)
        registry.add_callback(BeforeInvocationEvent, self._on_before_invocation)
        registry.add_callback(MessageAddedEvent, self._on_message_added)
        registry.add_callback(AfterInvocationEvent, self._on_after_invocation)

    def preview(self, query: str, *, agent: Agent | None = None) -> Enrichment:
        """What the hook would inject for a user turn with this text, without calling any model.

        Searches the archive (``memory``, or ``agent``'s manager's) and applies the budget: ``max_context_length``,
        ``max_context_tokens`` and the memory's share of ``agent.model``'s context window when it is known. The
        room left in a real model call is not known here, so only the share applies. Does not change
        ``last_enrichment``. For debugging and benchmarks.

        Args:
            query: The user's text.
            agent: The agent whose archive and model to use (default: the ``memory`` given to the hook).

        Returns:
            The passages that would be injected, those left out, and the full text the turn would be sent with.
        """
        settings = self._settings(agent)
        return preview_turn(
            agent,
            self.memory,
            query,
            settings,
            top_k=self.top_k
            or search_depth(settings.budget.memory_tokens(model_window(getattr(agent, "model", None)))),
            context_radius=self.context_radius,
            min_score=self.min_score,
        )

    # ------------------------------------------------------------------ agent callbacks

    def _memory_for(self, agent: Any) -> SemanticMemory:
        return resolve_memory(agent if self.memory is None else self.memory, pass_as="SemanticMemoryHook(memory=...)")

    def _state(self, agent: Any) -> AgentState:
        state = self._agents.get(agent)
        if state is None:
            state = self._agents[agent] = AgentState()
        return state

    def _register(self, agent: Agent) -> None:
        state = self._state(agent)
        if not state.registered:
            agent.add_middleware(InvokeModelStage, self._invoke_model)
            state.registered = True

    def _on_agent_initialized(self, event: AgentInitializedEvent) -> None:
        self._memory_for(event.agent)  # fail at construction, with the explanation, not on the first turn
        self._register(event.agent)

    def _on_before_invocation(self, event: BeforeInvocationEvent) -> None:
        self._register(event.agent)  # a hook added after the agent was built
        state = self._state(event.agent)
        state.turn = None
        state.without_kept = False
        self.last_enrichment = None

    def _on_message_added(self, event: MessageAddedEvent) -> None:
        message = event.message
        if message.get("role") != "user":
            return
        query = user_text(message)
        if query is None:
            return  # a tool result belongs to the current turn
        state = self._state(event.agent)
        self.last_enrichment = None
        state.turn = Turn(message=message, query=query) if self.enabled else None
        if state.kept:
            present = {id(m) for m in event.agent.messages}
            state.kept = {k: v for k, v in state.kept.items() if k in present}

    def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        state = self._state(event.agent)
        turn = state.turn
        if self.keep_injected_context and turn is not None and turn.sent is not None:
            content, extra = turn.sent
            state.kept[id(turn.message)] = (turn.message, content, extra)
        state.turn = None

    # ------------------------------------------------------------------ the model-call middleware

    async def _invoke_model(
        self,
        context: InvokeModelContext,
        next_fn: Callable[[InvokeModelContext], AsyncGenerator[TypedEvent, None]],
    ) -> AsyncGenerator[TypedEvent, None]:
        """Send the turn's model call with the retrieved context; on overflow, retry with less, then none."""
        state = self._agents.get(context.agent)
        if state is None or not self.enabled or (state.turn is None and not state.kept):
            async for event in next_fn(context):
                yield event
            return
        turn = state.turn
        if turn is not None and not turn.searched:
            settings = self._settings(context.agent)
            await self._search(
                context,
                turn,
                self.top_k or search_depth(settings.budget.memory_tokens(model_window(context.agent.model))),
            )
        retries = 0
        while True:
            view = await build_view(self._settings(context.agent), context, state)
            if view is None or not view.injected:
                if turn is not None and turn.enrichment is not None:
                    self._record(turn, view, retries)
                async for event in next_fn(context):
                    yield event
                return
            streamed = False
            try:
                async for event in next_fn(context.replace(messages=view.messages)):
                    streamed = True
                    yield event
            except ContextWindowOverflowException as error:
                if streamed:
                    raise
                if view.chosen and _history_can_shrink(context.agent):
                    logger.info(
                        "chars=<%d>, error=<%s> | context overflow with injected context; the conversation manager "
                        "reduces the history first (it is archived), then the call is retried",
                        view.body_chars,
                        error,
                    )
                    raise
                retries += 1
                shrink(state, view)
                logger.info(
                    "retry=<%d>, chars=<%d>, error=<%s> | context overflow with injected context and no history "
                    "left to reduce; retrying with less context",
                    retries,
                    view.body_chars,
                    error,
                )
                continue
            if turn is not None:
                self._record(turn, view, retries)
            return

    def _record(self, turn: Turn, view: View | None, retries: int) -> None:
        """Note what the turn's call was finally sent with, as ``last_enrichment``."""
        enrichment = record_view(turn, view, retries)
        if enrichment is not None:
            self.last_enrichment = enrichment

    async def _search(self, context: InvokeModelContext, turn: Turn, top_k: int) -> None:
        """Search the archive once for the turn; what was found becomes ``last_enrichment``."""
        scope = self.storage.turn_scope(context.messages, top_k) if self.storage is not None else None
        enrichment = await search_turn(
            context.agent,
            self.memory,
            turn,
            top_k=top_k if scope is None else scope.depth,
            context_radius=self.context_radius,
            min_score=self.min_score,
        )
        if scope is not None:  # a storage also holds what the context still shows: keep what left it
            turn.passages = scope.passages(turn.passages)
        if enrichment is not None:  # None: nothing archived yet, last_enrichment stays None
            turn.enrichment = self.last_enrichment = enrichment

    def _settings(self, agent: Any) -> InjectionSettings:
        """The options that shape the block, as they are now (they may be changed between calls)."""
        budget = agent_budget(agent, self.budget)
        return InjectionSettings(
            max_context_length=self.max_context_length,
            max_context_tokens=self.max_context_tokens,
            include_metadata=self.include_metadata,
            show_dates=self.show_dates,
            keep_injected_context=self.keep_injected_context,
            budget=budget,
        )


def _history_can_shrink(agent: Any) -> bool:
    """Whether the agent's conversation manager says it can reduce the history now (this library's manager can)."""
    can_reduce = getattr(getattr(agent, "conversation_manager", None), "can_reduce", None)
    if not callable(can_reduce):
        return False
    try:
        return bool(can_reduce(agent))
    except Exception as error:  # a manager's check must not break the call
        logger.debug("error=<%s> | can_reduce failed; treating the history as not reducible", error)
        return False
