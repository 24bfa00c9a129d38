"""SemanticMemoryHook: bring relevant archived exchanges into the model calls of each new user turn.

The hook never rewrites the agent's history. It searches the archive once per user turn and adds what it found
to what the model receives on that turn's model calls only, through Strands' model-invocation middleware
(``agent.add_middleware(InvokeModelStage, ...)``, the mechanism Strands' own ``ContextInjector`` uses). The
user's message in ``agent.messages``, in the session, in the archive and in summaries stays exactly as the user
sent it, so there is nothing to restore or strip afterwards.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field, fields
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
from strands.types.content import ContentBlock, Message
from strands.types.exceptions import ContextWindowOverflowException

from .enrichment import (
    ARCHIVE_BEGIN,
    ARCHIVE_END,
    CONTEXT_HEADER,
    QUESTION_PREFIX,
    format_body,
    format_window,
    render_context_block,
)
from .errors import ConfigurationError
from .memory import SemanticMemory
from .windows import ContextWindow

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["Enrichment", "SemanticMemoryHook"]

logger = logging.getLogger(__name__)

_WINDOW_FIELDS = {f.name for f in fields(ContextWindow)}
_GAP_PROBE = "[... 999999999 messages not shown ...]"  # the longest gap line, to bound its token count
_OVERHEAD = f"{CONTEXT_HEADER}\n{ARCHIVE_BEGIN}\n\n{ARCHIVE_END}\n{QUESTION_PREFIX}"  # the block's own lines


@dataclass
class Enrichment:
    """What the hook did for one user turn (kept as :attr:`SemanticMemoryHook.last_enrichment`).

    Attributes:
        query: The user's words that were searched for.
        windows: The windows injected into the turn's latest model call, in conversation order.
        dropped_windows: Windows found but left out to respect the budgets (characters, tokens, or the room left
            after a context overflow).
        text: The full text the user's turn was sent with on the latest model call (empty when nothing was
            injected). The agent's history keeps the user's own words.
        elapsed_ms: Time spent searching and formatting for the turn's first model call.
        tokens: Estimated tokens of the injected lines (``Model.count_tokens``), when a token budget applied.
        overflow_retries: Model calls of this turn retried with less or no injected context after the model
            reported a context overflow.
        error: Why the search failed, when it did (the turn was then sent without earlier context).
    """

    query: str
    windows: list[ContextWindow] = field(default_factory=list)
    dropped_windows: list[ContextWindow] = field(default_factory=list)
    text: str = ""
    elapsed_ms: float = 0.0
    tokens: int | None = None
    overflow_retries: int = 0
    error: str | None = None


@dataclass
class _Turn:
    """One user turn: the user's message (recognised by identity) and what the search found for it."""

    message: Message
    query: str
    searched: bool = False
    windows: list[ContextWindow] = field(default_factory=list)
    enrichment: Enrichment | None = None
    char_cap: int | None = None  # lowered after a context overflow, for the rest of the turn
    token_cap: int | None = None
    without_context: bool = False  # after a second overflow: nothing is injected for the rest of the turn
    sent: tuple[list[ContentBlock], int] | None = None  # content of the latest successful call, its extra tokens
    tokens: dict[str, int] = field(default_factory=dict)


@dataclass
class _AgentState:
    """Per-agent state (a hook can serve several agents)."""

    turn: _Turn | None = None
    # keep_injected_context: id(user message) -> (the message, the content it was sent with, extra tokens)
    kept: dict[int, tuple[Message, list[ContentBlock], int]] = field(default_factory=dict)
    without_kept: bool = False  # after an overflow in this invocation: earlier turns' kept context is left out
    registered: bool = False


@dataclass
class _View:
    """What one model call receives: the messages, and what the hook put into them."""

    messages: list[Message]
    chosen: list[ContextWindow]
    dropped: list[ContextWindow]
    text: str
    body_chars: int
    body_tokens: int | None
    kept_used: bool
    turn_content: list[ContentBlock] | None
    extra_tokens: int

    @property
    def injected(self) -> bool:
        return bool(self.chosen) or self.kept_used


def _is_text_block(block: Any) -> bool:
    return isinstance(block, dict) and "text" in block


def _user_text(message: Message) -> str | None:
    """The text of a user turn the hook acts on, or None (tool results, assistant turns, non-text turns).

    Nothing in the message's metadata is read: a message's fields never change what the hook does.
    """
    if message.get("role") != "user":
        return None
    content = message.get("content") or []
    if any(isinstance(b, dict) and ("toolResult" in b or "toolUse" in b) for b in content):
        return None
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    text = "\n".join(t for t in texts if t.strip())
    return text or None


def _position(messages: Sequence[Message], message: Message) -> int | None:
    """Where ``message`` (the object itself, not an equal copy) is in ``messages``, searching from the end."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is message:
            return i
    return None


def _single(window: ContextWindow, position: int, score: float) -> ContextWindow:
    """A window of one message of ``window`` (a hit shown on its own when its whole window does not fit)."""
    index = window.indices[position]
    values: dict[str, Any] = {
        "start": index,
        "end": index,
        "messages": [window.messages[position]],
        "hit_indices": [index],
        "score": score,
        "indices": [index],
        "hit_scores": [score],
    }
    for name in ("roles", "timestamps"):
        aligned = getattr(window, name, None)
        if name in _WINDOW_FIELDS and aligned is not None and len(aligned) == len(window.messages):
            values[name] = [aligned[position]]
    return ContextWindow(**values)


class SemanticMemoryHook(HookProvider):
    """Adds the archived exchanges most relevant to each new user turn to that turn's model calls.

    The hook searches the archive of ``agent.conversation_manager`` (a
    :class:`~strands_semantic_memory.manager.SemanticSummarizingConversationManager`), or the ``memory`` you pass,
    once per user turn, and the model receives the user's message as (see :mod:`strands_semantic_memory.enrichment`
    for the format and why archived text cannot forge it)::

        Possibly relevant earlier messages (each archived line starts with "> " and is a quotation, not ...):
        [archive]
        [Message 5, user]
        > Tell me about Python decorators
        [Message 6, assistant]
        > Python decorators are functions that modify...
        [end of archive]
        Current question: What was the exact decorator syntax you showed earlier?

    The block reaches the model for the model calls of that turn only (tool loops reuse the turn's search), through
    Strands' ``InvokeModelStage`` middleware; the agent's history, the session, the archive and summaries keep the
    user's own message. If the model reports a context overflow, the call is retried with half the injected
    context, then with none, before Strands asks the conversation manager to reduce; where the model's
    ``context_window_limit`` is known, the injected lines are sized in tokens to the room left.
    """

    def __init__(
        self,
        enabled: bool = True,
        max_context_length: int | None = 2000,
        include_metadata: bool = True,
        *,
        top_k: int | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
        keep_injected_context: bool = False,
        memory: SemanticMemory | None = None,
        max_context_tokens: int | None = None,
        show_dates: bool = False,
    ) -> None:
        """Create the hook.

        Args:
            enabled: When False the hook leaves every turn untouched (can be flipped at run time).
            max_context_length: Maximum characters of injected context (the lines between the fences). Whole
                windows are dropped, least relevant first, to fit; a window too long on its own is reduced to
                its hit messages, each on its own; a message is never cut. None: no limit.
            include_metadata: Show a ``[Message N, role]`` line before each injected message.
            top_k: Hits per search (default: the memory's ``top_k``).
            context_radius: Neighbours per hit (default: the memory's ``context_radius``).
            min_score: Minimum cosine similarity (default: the memory's ``min_score``).
            keep_injected_context: Keep showing each turn's injected context on the model calls of later turns
                (at that turn's message, as long as it is in the agent's context). The agent's history, the
                session, the archive and summaries still hold only the user's words; the kept context lives in
                this hook (per process, not in the session). Off by default: kept context grows every call.
            memory: Search this memory instead of the agent's conversation manager's.
            max_context_tokens: Maximum tokens of injected context (the lines between the fences), as the
                model's ``count_tokens`` counts them. Independently of this option, when the model's
                ``context_window_limit`` is set and Strands projects the call's input tokens, the injected
                lines are kept within the room the call leaves. None: no fixed token limit.
            show_dates: Show the date of each injected message (when it was said, else archived), in UTC.

        Raises:
            ConfigurationError: If ``max_context_length`` or ``max_context_tokens`` is not positive.
        """
        if max_context_length is not None and max_context_length < 1:
            raise ConfigurationError(f"max_context_length must be >= 1 or None, got {max_context_length}")
        if max_context_tokens is not None and max_context_tokens < 1:
            raise ConfigurationError(f"max_context_tokens must be >= 1 or None, got {max_context_tokens}")
        self.enabled = enabled
        self.max_context_length = max_context_length
        self.max_context_tokens = max_context_tokens
        self.include_metadata = include_metadata
        self.show_dates = show_dates
        self.top_k = top_k
        self.context_radius = context_radius
        self.min_score = min_score
        self.keep_injected_context = keep_injected_context
        self.memory = memory
        self.last_enrichment: Enrichment | None = None
        self._agents: weakref.WeakKeyDictionary[Any, _AgentState] = weakref.WeakKeyDictionary()

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the callbacks; the model-call middleware is added when the agent is initialized."""
        registry.add_callback(AgentInitializedEvent, self._on_agent_initialized)
        registry.add_callback(BeforeInvocationEvent, self._on_before_invocation)
        registry.add_callback(MessageAddedEvent, self._on_message_added)
        registry.add_callback(AfterInvocationEvent, self._on_after_invocation)

    def preview(self, query: str, *, agent: Agent | None = None) -> Enrichment:
        """What the hook would inject for a user turn with this text, without calling any model.

        Searches the archive (``memory``, or ``agent``'s manager's) and applies ``max_context_length`` and
        ``max_context_tokens`` (counted with ``agent.model.count_tokens`` when an agent is given, else Strands'
        characters / 4 estimate). The room left in a real model call is not known here, so the automatic token
        budget does not apply. Does not change :attr:`last_enrichment`. For debugging and benchmarks; it runs
        its own event loop, so call it from synchronous code.

        Args:
            query: The user's text.
            agent: The agent whose archive and model to use (default: the ``memory`` given to the hook).

        Returns:
            The windows that would be injected, those left out, and the full text the turn would be sent with.
        """
        return asyncio.run(self._preview(query, agent))

    async def _preview(self, query: str, agent: Agent | None) -> Enrichment:
        started = time.perf_counter()
        turn = _Turn(message={"role": "user", "content": [{"text": query}]}, query=query, searched=True)
        memory = self._memory_for(agent)
        enrichment = Enrichment(query=query)
        if len(memory) == 0:
            return enrichment
        turn.windows = memory.retrieve(
            query, top_k=self.top_k, context_radius=self.context_radius, min_score=self.min_score
        )
        model = agent.model if agent is not None else None
        chosen, dropped, _, tokens = await self._select(model, None, turn, 0)
        enrichment.windows, enrichment.dropped_windows, enrichment.tokens = chosen, dropped, tokens
        enrichment.text = (
            render_context_block(chosen, query, include_metadata=self.include_metadata, show_dates=self.show_dates)
            if chosen
            else ""
        )
        enrichment.elapsed_ms = (time.perf_counter() - started) * 1000
        return enrichment

    # ------------------------------------------------------------------ agent callbacks

    def _memory_for(self, agent: Any) -> SemanticMemory:
        if self.memory is not None:
            return self.memory
        manager = getattr(agent, "conversation_manager", None)
        memory = getattr(manager, "memory", None)
        if not isinstance(memory, SemanticMemory):
            raise ConfigurationError(
                "SemanticMemoryHook needs an archive to search, but the agent's conversation manager is a "
                f"{type(manager).__name__}. Create the agent with "
                "conversation_manager=SemanticSummarizingConversationManager(...), or pass "
                "SemanticMemoryHook(memory=...)"
            )
        return memory

    def _state(self, agent: Any) -> _AgentState:
        state = self._agents.get(agent)
        if state is None:
            state = self._agents[agent] = _AgentState()
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
        query = _user_text(message)
        if query is None:
            return  # a tool result belongs to the current turn
        state = self._state(event.agent)
        self.last_enrichment = None
        state.turn = _Turn(message=message, query=query) if self.enabled else None
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
            await self._search(context, turn)
        retries = 0
        while True:
            view = await self._view(context, state)
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
                retries += 1
                self._shrink(state, view)
                logger.info(
                    "retry=<%d>, chars=<%d>, error=<%s> | context overflow with injected context; "
                    "retrying with less before the conversation manager reduces",
                    retries,
                    view.body_chars,
                    error,
                )
                continue
            if turn is not None:
                self._record(turn, view, retries)
            return

    def _shrink(self, state: _AgentState, view: _View) -> None:
        """After an overflow: no kept context and half the injected lines; after another one, nothing."""
        turn = state.turn
        state.without_kept = True
        if turn is None:
            return
        if view.chosen and turn.char_cap is None:
            turn.char_cap = view.body_chars // 2
            if view.body_tokens is not None:
                turn.token_cap = view.body_tokens // 2
        elif view.chosen or not view.kept_used:
            turn.without_context = True

    def _record(self, turn: _Turn, view: _View | None, retries: int) -> None:
        enrichment = turn.enrichment
        if enrichment is None:
            return
        enrichment.overflow_retries += retries
        if view is None or not view.chosen:
            enrichment.dropped_windows = view.dropped if view is not None and view.dropped else list(turn.windows)
            enrichment.windows, enrichment.text, enrichment.tokens = [], "", None
            turn.sent = None
        else:
            enrichment.windows, enrichment.dropped_windows = view.chosen, view.dropped
            enrichment.text, enrichment.tokens = view.text, view.body_tokens
            turn.sent = (view.turn_content, view.extra_tokens) if view.turn_content is not None else None
        self.last_enrichment = enrichment

    async def _search(self, context: InvokeModelContext, turn: _Turn) -> None:
        """Search the archive once for the turn (off the event loop: embedding and databases block)."""
        turn.searched = True
        started = time.perf_counter()
        enrichment = Enrichment(query=turn.query)
        try:
            memory = self._memory_for(context.agent)
            if len(memory) == 0:
                return  # nothing archived yet: no search, last_enrichment stays None
            turn.windows = await asyncio.to_thread(
                memory.retrieve,
                turn.query,
                top_k=self.top_k,
                context_radius=self.context_radius,
                min_score=self.min_score,
            )
        except Exception as error:  # a failing embedding service or database must not break the conversation
            logger.warning("error=<%s> | archive search failed; the user turn is sent without earlier context", error)
            enrichment.error = f"{type(error).__name__}: {error}"
            turn.windows = []
        enrichment.elapsed_ms = (time.perf_counter() - started) * 1000
        turn.enrichment = self.last_enrichment = enrichment
        logger.debug(
            "windows=<%d>, ms=<%.1f> | archive searched for the user turn", len(turn.windows), enrichment.elapsed_ms
        )

    # ------------------------------------------------------------------ budgets and selection

    async def _count(self, model: Any, turn: _Turn | None, text: str) -> int:
        """Tokens of ``text`` as the model counts them, cached per turn.

        Without a model, or if counting fails, characters / 4 (Strands' own fallback estimate).
        """
        cache = turn.tokens if turn is not None else {}
        if text not in cache:
            try:
                if model is None:
                    raise LookupError("no model to count with")
                cache[text] = await model.count_tokens([{"role": "user", "content": [{"text": text}]}])
            except Exception as error:  # a provider's counter must not break the call
                logger.debug("error=<%s> | token counting failed; estimating characters / 4", error)
                cache[text] = math.ceil(len(text) / 4)
        return cache[text]

    async def _token_budget(self, model: Any, projected: int | None, turn: _Turn, kept_extra: int) -> int | None:
        """The most tokens the injected lines may take on this call, or None when no token limit applies."""
        budget = self.max_context_tokens
        if turn.token_cap is not None:
            budget = turn.token_cap if budget is None else min(budget, turn.token_cap)
        limit = getattr(model, "context_window_limit", None)
        if isinstance(limit, int) and limit > 0 and projected is not None:
            overhead = await self._count(model, turn, _OVERHEAD)
            room = max(0, limit - projected - overhead - kept_extra)
            budget = room if budget is None else min(budget, room)
        return budget

    def _candidates(
        self, turn: _Turn, char_budget: int | None, token_budget: int | None, texts: dict[int, str]
    ) -> list[ContextWindow]:
        """Windows most relevant first; one too large on its own is replaced by its hits, each alone."""
        ranked = sorted(turn.windows, key=lambda w: (-w.score, w.start))
        candidates: list[ContextWindow] = []
        for window in ranked:
            text = self._text(window, texts)
            fits = (char_budget is None or len(text) <= char_budget) and (
                token_budget is None or turn.tokens.get(text, 0) <= token_budget
            )
            if fits or not window.hit_indices:
                candidates.append(window)
                continue
            positions = {index: p for p, index in enumerate(window.indices)}
            hits = sorted(zip(window.hit_scores, window.hit_indices, strict=False), key=lambda p: (-p[0], p[1]))
            candidates.extend(_single(window, positions[i], s) for s, i in hits if i in positions)
        return candidates

    def _text(self, window: ContextWindow, texts: dict[int, str]) -> str:
        key = id(window)
        if key not in texts:
            texts[key] = format_window(window, include_metadata=self.include_metadata, show_dates=self.show_dates)
        return texts[key]

    async def _select(
        self, model: Any, projected: int | None, turn: _Turn, kept_extra: int
    ) -> tuple[list[ContextWindow], list[ContextWindow], str, int | None]:
        """Choose windows for this call within the character and token budgets.

        Returns:
            ``(chosen in conversation order, left out, body text, body tokens or None)``.
        """
        char_budget = self.max_context_length
        if turn.char_cap is not None:
            char_budget = turn.char_cap if char_budget is None else min(char_budget, turn.char_cap)
        token_budget = await self._token_budget(model, projected, turn, kept_extra)
        texts: dict[int, str] = {}
        if token_budget is not None:  # count every possible piece once per turn (cached)
            await self._count(model, turn, _GAP_PROBE)
            for window in turn.windows:
                await self._count(model, turn, self._text(window, texts))
                positions = {index: p for p, index in enumerate(window.indices)}
                for score, index in zip(window.hit_scores, window.hit_indices, strict=False):
                    if index in positions:
                        await self._count(model, turn, self._text(_single(window, positions[index], score), texts))
        candidates = self._candidates(turn, char_budget, token_budget, texts)
        chosen: list[ContextWindow] = []
        body, tokens = "", 0
        for candidate in candidates:
            trial = sorted([*chosen, candidate], key=lambda w: w.start)
            trial_texts = [self._text(w, texts) for w in trial]
            trial_body = format_body(
                trial, include_metadata=self.include_metadata, show_dates=self.show_dates, texts=trial_texts
            )
            if char_budget is not None and len(trial_body) > char_budget:
                continue
            trial_tokens = 0
            if token_budget is not None:
                counted = [await self._count(model, turn, t) for t in trial_texts]
                trial_tokens = sum(counted) + (len(trial) - 1) * turn.tokens[_GAP_PROBE]
                if trial_tokens > token_budget:
                    continue
            chosen, body, tokens = trial, trial_body, trial_tokens
        chosen_ids = {id(w) for w in chosen}
        dropped = [w for w in candidates if id(w) not in chosen_ids]
        return chosen, dropped, body, (tokens if token_budget is not None and chosen else None)

    async def _view(self, context: InvokeModelContext, state: _AgentState) -> _View | None:
        """The messages for this call: the turn's message with its block, and kept blocks of earlier turns."""
        agent_messages = context.agent.messages
        if len(context.messages) != len(agent_messages):
            logger.debug("messages were added or removed by other middleware; nothing injected into this call")
            return None
        turn = state.turn
        messages = list(context.messages)
        kept_used, kept_extra = False, 0
        if state.kept and not state.without_kept:
            positions = {id(m): i for i, m in enumerate(agent_messages)}
            for key, (original, content, extra) in state.kept.items():
                i = positions.get(key)
                if i is not None and agent_messages[i] is original and messages[i].get("role") == "user":
                    messages[i] = {**messages[i], "content": list(content)}
                    kept_used, kept_extra = True, kept_extra + extra
        view = _View(messages, [], [], "", 0, None, kept_used, None, kept_extra)
        if turn is None or turn.without_context or not turn.windows:
            return view
        position = _position(agent_messages, turn.message)
        if position is None or messages[position].get("role") != "user":
            return view  # the turn's message left the context (reduced away): nothing to attach the block to
        chosen, dropped, body, tokens = await self._select(
            context.model, context.projected_input_tokens, turn, kept_extra
        )
        view.dropped = dropped
        if not chosen:
            return view
        text = render_context_block(
            chosen, turn.query, include_metadata=self.include_metadata, show_dates=self.show_dates
        )
        content = self._content_with_block(turn.message, messages[position], text)
        messages[position] = {**messages[position], "content": content}
        extra = 0
        if self.keep_injected_context:  # what keeping this block costs later calls, in tokens
            extra = max(
                0, await self._count(context.model, turn, text) - await self._count(context.model, turn, turn.query)
            )
        view.chosen, view.text, view.body_chars, view.body_tokens = chosen, text, len(body), tokens
        # What keep_injected_context keeps: the block and the user's own other blocks, not other middleware's.
        view.turn_content, view.extra_tokens = self._content_with_block(turn.message, turn.message, text), extra
        return view

    @staticmethod
    def _content_with_block(own: Message, sent: Message, text: str) -> list[ContentBlock]:
        """The turn's content for this call: the block (ending with the user's words) replaces the user's text.

        The user's other blocks (images, documents) follow, then anything other middleware appended.
        """
        own_content = list(own.get("content") or [])
        sent_content = list(sent.get("content") or [])
        count = len(own_content)
        if sent_content[:count] == own_content:
            rest = [b for b in sent_content[:count] if not _is_text_block(b)] + sent_content[count:]
        else:
            rest = [b for b in sent_content if not _is_text_block(b)]
        return [{"text": text}, *rest]
