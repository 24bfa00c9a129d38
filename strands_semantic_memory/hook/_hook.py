"""SemanticMemoryHook: bring relevant archived exchanges into the model calls of each new user turn.

The hook never rewrites the agent's history. It searches the archive once per user turn and adds what it found
to what the model receives on that turn's model calls only, through Strands' model-invocation middleware
(``agent.add_middleware(InvokeModelStage, ...)``, the mechanism Strands' own ``ContextInjector`` uses). The
user's message in ``agent.messages``, in the session, in the archive and in summaries stays exactly as the user
sent it, so there is nothing to restore or strip afterwards.

One model call goes top-down: the middleware makes the call's plan (``_plan``: options, budget, window, room, the
messages the call holds), searches once per turn with it (``_search``), builds the call's view (``_model_call``,
which chooses the passages that fit: ``_selection``), sends it, and lets the turn record what happened
(``_turn``). The options live in ``_options``.
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

from strands_semantic_memory._validation import check_instance
from strands_semantic_memory.budget import ContextBudget
from strands_semantic_memory.engine._memory import SemanticMemory, resolve_memory
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.hook._model_call import build_view
from strands_semantic_memory.hook._options import CHECKS, HookOptions, InjectWhen
from strands_semantic_memory.hook._plan import CallPlan, plan_call
from strands_semantic_memory.hook._search import Reach, preview_turn, search_turn
from strands_semantic_memory.hook._trace import inject_operation, record_view
from strands_semantic_memory.hook._turn import AgentState, Enrichment, Turn, View, user_text
from strands_semantic_memory.messages._session import agent_scope
from strands_semantic_memory.retrieval._relevance import DEFAULT_INJECT_WHEN

if TYPE_CHECKING:
    from strands.agent.agent import Agent

    from strands_semantic_memory.storage import SemanticStorage

__all__ = ["Enrichment", "SemanticMemoryHook"]

logger = logging.getLogger(__name__)


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

    _options: HookOptions
    memory: SemanticMemory | None
    storage: SemanticStorage | None

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
        show_dates: bool = True,
        budget: ContextBudget | None = None,
        storage: SemanticStorage | None = None,
        inject_when: InjectWhen = DEFAULT_INJECT_WHEN,
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
            show_dates: Show when each injected message was said (else archived), in UTC. On by default: a
                question about time ("what did I do last weekend?") is answered from the dates.
            budget: How the model's window is shared (default: the conversation manager's ``budget`` when it has
                one, or that of a ``BudgetSummarization`` in the agent's ``ContextManager``, else ``ContextBudget()``).
            storage: Search this ``SemanticStorage`` (or a namespaced view of it): the entries of the view that the
                model call's messages no longer hold, such as what Strands' ``ContextManager`` summarized away.
                Without ``memory`` or ``storage``, each agent's own is searched: its conversation manager's memory,
                else its ``Agent(storage=...)`` when that is a ``SemanticStorage``.
            inject_when: ``"relevant"`` (default): a turn gets archived context when it resembles the archive more
                than generic questions do (see ``retrieval.relevance``): the full budget, a small one
                (``ContextBudget.uncertain_memory_tokens``) when it resembles it a little, nothing when not; and
                hits scoring under a share of the best one are left out. ``"always"``: every turn gets its budget's
                worth, best first (questions that never name what the archive calls things may need this).

        Raises:
            ConfigurationError: If an option has the wrong type or is out of range (the message names the option
                and the value). The flags must be ``True`` or ``False``; ``top_k``, ``max_context_length`` and
                ``max_context_tokens`` at least 1, ``context_radius`` at least 0 (or None); ``min_score`` in -1..1
                (or None); ``memory`` a ``SemanticMemory``, ``budget`` a ``ContextBudget`` (or None); ``memory`` and
                ``storage`` not two different memories. Setting an option later (``hook.enabled = False``, or
                ``configure``) is checked the same way.
        """
        object.__setattr__(
            self,
            "_options",
            HookOptions(
                enabled=enabled,
                max_context_length=max_context_length,
                include_metadata=include_metadata,
                top_k=top_k,
                context_radius=context_radius,
                min_score=min_score,
                keep_injected_context=keep_injected_context,
                max_context_tokens=max_context_tokens,
                show_dates=show_dates,
                budget=budget,
                inject_when=inject_when,
            ),
        )
        checked = _checked_storage(storage)
        object.__setattr__(self, "storage", checked)
        object.__setattr__(self, "memory", _fixed_memory(checked, memory))
        self._agents: weakref.WeakKeyDictionary[Any, AgentState] = weakref.WeakKeyDictionary()
        self._served = 0  # agents this hook has been registered with, ever (last_enrichment needs exactly one)
        self._latest: Enrichment | None = None  # the latest enrichment of any agent (read only while _served == 1)
        Plugin.__init__(self)

    @property
    def name(self) -> str:
        """The plugin's name (one per agent)."""
        return "strands-semantic-memory:hook"

    def init_agent(self, agent: Agent) -> None:
        """Register the callbacks with an agent that received the hook as a plugin (``Agent(plugins=[...])``)."""
        self.register_hooks(agent.hooks)

    # ------------------------------------------------------------------ options

    @property
    def options(self) -> HookOptions:
        """The current options (frozen; change them with ``configure`` or by setting one: ``hook.top_k = 5``)."""
        return self._options

    def __getattr__(self, name: str) -> Any:
        """An option read as an attribute (``hook.enabled``): the current value."""
        if name in CHECKS:
            return getattr(self._options, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        """Set an attribute; an option or a source (see ``__init__``) is checked first, as it would be there."""
        if name in CHECKS or name in _SOURCES:
            self.configure(**{name: value})
        else:
            super().__setattr__(name, value)

    def configure(self, **changes: Any) -> None:
        """Change several options at once, in effect from the next model call; all are checked before any changes.

        Args:
            **changes: Options of ``__init__`` (``enabled``, ``top_k``, ``max_context_length``, ...), and ``memory``
                or ``storage``.

        Raises:
            ConfigurationError: If a name is not an option, or a value is invalid; then nothing changed.
        """
        sources = {name: changes.pop(name) for name in _SOURCES if name in changes}
        options = self._options.replace(**changes)
        if sources:
            storage = _checked_storage(sources.get("storage", self.storage))
            memory = _fixed_memory(storage, sources.get("memory", None if "storage" in sources else self.memory))
            object.__setattr__(self, "storage", storage)
            object.__setattr__(self, "memory", memory)
        object.__setattr__(self, "_options", options)

    # ------------------------------------------------------------------ what the hook did

    def enrichment(self, agent: Agent) -> Enrichment | None:
        """What the hook did for ``agent``'s latest user turn (None before one, or while nothing is archived)."""
        state = self._agents.get(agent)
        return state.last_enrichment if state is not None else None

    @property
    def last_enrichment(self) -> Enrichment | None:
        """What the hook did for the latest user turn, when it has only ever served one agent.

        Raises:
            ConfigurationError: If the hook has served several agents: their turns may be different users', so
                read ``enrichment(agent)`` for the one you mean.
        """
        if self._served > 1:
            raise ConfigurationError(
                f"this SemanticMemoryHook has served {self._served} agents, whose turns may be different users': "
                "read hook.enrichment(agent) for the agent you mean"
            )
        return self._latest

    # ------------------------------------------------------------------ registration and callbacks

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the callbacks; the model-call middleware is added when the agent is initialized."""
        registry.add_callback(AgentInitializedEvent, self._on_agent_initialized)
        registry.add_callback(BeforeInvocationEvent, self._on_before_invocation)
        registry.add_callback(MessageAddedEvent, self._on_message_added)
        registry.add_callback(AfterInvocationEvent, self._on_after_invocation)

    def preview(self, query: str, *, agent: Agent | None = None) -> Enrichment:
        """What the hook would inject for a user turn with this text, without calling any model.

        Searches the archive (``memory``, or ``agent``'s) and applies the budget: ``max_context_length``,
        ``max_context_tokens`` and the memory's share of ``agent.model``'s context window when it is known. The
        room left in a real model call is not known here, so only the share applies. Changes nothing the hook
        keeps. For debugging and benchmarks.

        Args:
            query: The user's text.
            agent: The agent whose archive and model to use (default: the ``memory`` given to the hook).

        Returns:
            The passages that would be injected, those left out, and the full text the turn would be sent with.

        Raises:
            ConfigurationError: If there is no memory to search.
        """
        memory = self._memory_for(agent)
        reach = Reach(sessions=agent_scope(memory.user_id, agent))
        return preview_turn(plan_call(self._options, agent), memory, query, reach)

    def _memory_for(self, agent: Any) -> SemanticMemory:
        """The memory searched for ``agent``: the hook's own, else the agent's (its manager's, or its storage's)."""
        if self.memory is not None:
            return self.memory
        storage = _agent_storage(agent)
        if storage is not None and resolve_memory_or_none(agent) is None:
            return storage.memory
        return resolve_memory(agent, pass_as="SemanticMemoryHook(memory=...)")

    def _storage_for(self, agent: Any) -> SemanticStorage | None:
        """The storage whose stash the hook searches for ``agent``, if any (the hook's own, else the agent's)."""
        if self.storage is not None:
            return self.storage
        if self.memory is None and resolve_memory_or_none(agent) is None:
            return _agent_storage(agent)
        return None

    def _state(self, agent: Any) -> AgentState:
        state = self._agents.get(agent)
        if state is None:
            state = self._agents[agent] = AgentState()
            self._served += 1
        return state

    def _note(self, state: AgentState, enrichment: Enrichment | None) -> None:
        """``enrichment`` is the agent's latest (None: its new turn has none yet)."""
        state.last_enrichment = self._latest = enrichment

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
        self._note(state, None)

    def _on_message_added(self, event: MessageAddedEvent) -> None:
        message = event.message
        if message.get("role") != "user":
            return
        query = user_text(message)
        if query is None:
            return  # a tool result belongs to the current turn
        state = self._state(event.agent)
        self._note(state, None)
        state.turn = Turn(message=message, query=query) if self._options.enabled else None
        if state.kept:
            present = {id(m) for m in event.agent.messages}
            state.kept = {k: v for k, v in state.kept.items() if k in present}

    def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        state = self._state(event.agent)
        turn = state.turn
        if self._options.keep_injected_context and turn is not None and turn.sent_content is not None:
            content, extra = turn.sent_content
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
        options = self._options
        if state is None or not options.enabled or (state.turn is None and not state.kept):
            async for event in next_fn(context):
                yield event
            return
        plan = plan_call(options, context.agent, context.messages, context.system_prompt)  # one plan per call
        turn = state.turn
        retries = 0
        while True:
            with inject_operation(retries) as operation:  # a memory.inject span, ended before the call is sent
                if turn is not None and not turn.searched:
                    await self._search(context, plan, state, turn)
                view = build_view(plan, context, state)
                record_view(operation, plan, turn, view)
            if view is None or not view.injected:
                self._sent(state, view, retries)
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
                state.without_kept = True
                if turn is not None:
                    turn.shrink(view)
                logger.info(
                    "retry=<%d>, chars=<%d>, error=<%s> | context overflow with injected context and no history "
                    "left to reduce; retrying with less context",
                    retries,
                    view.body_chars,
                    error,
                )
                continue
            self._sent(state, view, retries)
            return

    async def _search(self, context: InvokeModelContext, plan: CallPlan, state: AgentState, turn: Turn) -> None:
        """The turn's one search: in the sessions the agent's memory may recall, leaving out what the call holds."""
        storage = self._storage_for(context.agent)
        scope = storage.turn_scope(context.messages, plan.depth) if storage is not None else None
        memory = self._memory_for(context.agent)
        sessions = agent_scope(memory.user_id, context.agent)
        messages = context.messages

        def reach() -> Reach:  # in the search's worker thread: it may read the archive
            held = state.held.of(memory, messages) if storage is None else storage.held(messages)
            return Reach(sessions=sessions, held=held)

        await search_turn(plan, memory, turn, scope, reach)
        if turn.enrichment is not None:  # None: nothing archived yet, the enrichment stays None
            self._note(state, turn.enrichment)

    def _sent(self, state: AgentState, view: View | None, retries: int) -> None:
        """Let the turn note what its call was finally sent with (its enrichment is the agent's latest)."""
        if state.turn is not None:
            enrichment = state.turn.sent(view, retries)
            if enrichment is not None:
                self._note(state, enrichment)


_SOURCES = ("memory", "storage")
"""What the hook searches, set like an option and checked the same way."""


def _checked_storage(storage: Any) -> SemanticStorage | None:
    """``storage`` if it is a ``SemanticStorage`` (or None)."""
    if storage is None:
        return None
    from strands_semantic_memory.storage import SemanticStorage  # imported when used: the hook stays light

    if not isinstance(storage, SemanticStorage):
        raise ConfigurationError(f"storage must be a SemanticStorage, got {type(storage).__name__}")
    return storage


def _fixed_memory(storage: SemanticStorage | None, memory: Any) -> SemanticMemory | None:
    """The memory a hook searches whatever the agent: ``memory``, or ``storage``'s (not two different ones)."""
    checked = check_instance("memory", memory, SemanticMemory, "a SemanticMemory (for example manager.memory) or None")
    if storage is None:
        return checked
    if checked is not None and checked is not storage.memory:
        raise ConfigurationError("memory and storage are two different memories: pass one of them")
    return storage.memory


def _agent_storage(agent: Any) -> SemanticStorage | None:
    """The agent's own storage (``Agent(storage=...)``), when it is a ``SemanticStorage``."""
    storage = getattr(agent, "storage", None)
    if storage is None:
        return None
    from strands_semantic_memory.storage import SemanticStorage  # imported when used: the hook stays light

    return storage if isinstance(storage, SemanticStorage) else None


def resolve_memory_or_none(agent: Any) -> SemanticMemory | None:
    """The memory of ``agent``'s conversation manager, if it has one."""
    held = getattr(getattr(agent, "conversation_manager", None), "memory", None)
    return held if isinstance(held, SemanticMemory) else None


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
