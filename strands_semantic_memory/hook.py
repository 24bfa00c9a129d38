"""SemanticMemoryHook: bring relevant archived exchanges back into each new user turn."""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strands.hooks import AfterInvocationEvent, AgentInitializedEvent, HookProvider, HookRegistry, MessageAddedEvent
from strands.types.content import ContentBlock, Message

from .errors import ConfigurationError
from .memory import SemanticMemory
from .rendering import (
    CONTEXT_BEGIN,
    CONTEXT_END,
    CONTEXT_HEADER,
    QUESTION_PREFIX,
    is_enriched,
    is_summary,
    render_message,
    restore_original_content,
    set_marker,
)
from .windows import ContextWindow, pack_by_budget

if TYPE_CHECKING:
    from strands.agent.agent import Agent

logger = logging.getLogger(__name__)


@dataclass
class Enrichment:
    """What the hook did for one user turn (kept as :attr:`SemanticMemoryHook.last_enrichment`).

    Attributes:
        query: The user's words that were searched for.
        windows: The windows injected, in conversation order.
        dropped_windows: Windows found but left out to respect ``max_context_length``.
        text: The full enriched text that replaced the user's text.
        elapsed_ms: Time spent searching and formatting.
    """

    query: str
    windows: list[ContextWindow] = field(default_factory=list)
    dropped_windows: list[ContextWindow] = field(default_factory=list)
    text: str = ""
    elapsed_ms: float = 0.0


def _user_text(message: Message) -> str | None:
    """The text of a user turn the hook should act on, or None (tool results, summaries, non-text turns)."""
    if message.get("role") != "user" or is_summary(message) or is_enriched(message):
        return None
    content = message.get("content") or []
    if any(isinstance(b, dict) and ("toolResult" in b or "toolUse" in b) for b in content):
        return None
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    text = "\n".join(t for t in texts if t.strip())
    return text or None


class SemanticMemoryHook(HookProvider):
    """Enriches each new user turn with the archived exchanges most relevant to it.

    The hook searches the archive of ``agent.conversation_manager`` (a
    :class:`~strands_semantic_memory.manager.SemanticSummarizingConversationManager`), or the ``memory`` you pass,
    and rewrites the user's text as::

        Based on our previous conversation, these earlier exchanges may be relevant:
        ---Previous Context---
        [Message 5, user]: Tell me about Python decorators
        [Message 6, assistant]: Python decorators are functions that modify...
        ---End Previous Context---
        Current question: What was the exact decorator syntax you showed earlier?

    The user's own content is kept in the message's metadata (never sent to the model) and, unless
    ``keep_injected_context`` is set, put back when the invocation ends, so injected context never snowballs
    into history, summaries or the archive.
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
    ) -> None:
        """Create the hook.

        Args:
            enabled: When False the hook leaves every turn untouched (can be flipped at run time).
            max_context_length: Maximum characters of injected context (the lines between the markers). Whole
                windows are dropped, least relevant first, to fit; a window too long on its own is reduced to
                its hit messages, each on its own; a message is never cut. None: no limit.
            include_metadata: Prefix each injected message with ``[Message N, role]``.
            top_k: Hits per search (default: the memory's ``top_k``).
            context_radius: Neighbours per hit (default: the memory's ``context_radius``).
            min_score: Minimum cosine similarity (default: the memory's ``min_score``).
            keep_injected_context: Leave the enriched text in the agent's history after the invocation.
            memory: Search this memory instead of the agent's conversation manager's.

        Raises:
            ConfigurationError: If ``max_context_length`` is not positive.
        """
        if max_context_length is not None and max_context_length < 1:
            raise ConfigurationError(f"max_context_length must be >= 1 or None, got {max_context_length}")
        self.enabled = enabled
        self.max_context_length = max_context_length
        self.include_metadata = include_metadata
        self.top_k = top_k
        self.context_radius = context_radius
        self.min_score = min_score
        self.keep_injected_context = keep_injected_context
        self.memory = memory
        self.last_enrichment: Enrichment | None = None

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the callbacks (see the class docstring)."""
        registry.add_callback(AgentInitializedEvent, self._on_agent_initialized)
        registry.add_callback(MessageAddedEvent, self._on_message_added)
        registry.add_callback(AfterInvocationEvent, self._on_after_invocation)

    # ------------------------------------------------------------------ callbacks

    def _memory_for(self, agent: Agent) -> SemanticMemory:
        if self.memory is not None:
            return self.memory
        memory = getattr(agent.conversation_manager, "memory", None)
        if not isinstance(memory, SemanticMemory):
            raise ConfigurationError(
                "SemanticMemoryHook needs an archive to search, but the agent's conversation manager is a "
                f"{type(agent.conversation_manager).__name__}. Create the agent with "
                "conversation_manager=SemanticSummarizingConversationManager(...), or pass "
                "SemanticMemoryHook(memory=...)"
            )
        return memory

    def _on_agent_initialized(self, event: AgentInitializedEvent) -> None:
        self._memory_for(event.agent)  # fail at construction, with the explanation, not on the first turn

    def _on_message_added(self, event: MessageAddedEvent) -> None:
        if not self.enabled:
            return
        message = event.message
        query = _user_text(message)
        if query is None:
            return
        memory = self._memory_for(event.agent)
        started = time.perf_counter()
        try:
            if len(memory) == 0:
                return
            windows = memory.retrieve(
                query, top_k=self.top_k, context_radius=self.context_radius, min_score=self.min_score
            )
        except Exception as error:  # a failing embedding service or database must not break the conversation
            logger.warning("error=<%s> | archive search failed; the user turn is sent without earlier context", error)
            return
        enrichment = self.enrich(message, query, windows)
        enrichment.elapsed_ms = (time.perf_counter() - started) * 1000
        self.last_enrichment = enrichment
        if enrichment.windows:
            logger.debug(
                "windows=<%d>, chars=<%d>, ms=<%.1f> | user turn enriched with archived context",
                len(enrichment.windows),
                len(enrichment.text),
                enrichment.elapsed_ms,
            )

    def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        if self.keep_injected_context:
            return
        for message in event.agent.messages:
            if is_enriched(message):
                restore_original_content(message)

    # ------------------------------------------------------------------ formatting

    def format_message(self, index: int, message: Message) -> str:
        """One injected line: ``[Message N, role]: text`` (or just the text without metadata)."""
        text = render_message(message) or "[no text]"
        return f"[Message {index}, {message.get('role', '?')}]: {text}" if self.include_metadata else text

    def format_window(self, window: ContextWindow) -> str:
        """The injected lines of one window."""
        return "\n".join(self.format_message(i, m) for i, m in zip(window.indices, window.messages, strict=True))

    def select_windows(self, windows: list[ContextWindow]) -> tuple[list[ContextWindow], list[ContextWindow]]:
        """Fit windows into ``max_context_length``, most relevant first, whole messages only.

        Args:
            windows: Retrieved windows.

        Returns:
            ``(chosen in conversation order, left out)``.
        """
        ranked = sorted(windows, key=lambda w: (-w.score, w.start))
        candidates: list[ContextWindow] = []
        for window in ranked:
            if self.max_context_length is None or len(self.format_window(window)) <= self.max_context_length:
                candidates.append(window)
                continue
            # Too long on its own: fall back to its hit messages, each a window of one whole message, best first.
            by_index = dict(zip(window.indices, window.messages, strict=True))
            hits = sorted(zip(window.hit_scores, window.hit_indices, strict=True), key=lambda p: (-p[0], p[1]))
            candidates.extend(
                ContextWindow(
                    start=i, end=i, messages=[by_index[i]], hit_indices=[i], score=s, indices=[i], hit_scores=[s]
                )
                for s, i in hits
                if i in by_index
            )
        sizes = [len(self.format_window(w)) + 1 for w in candidates]  # +1: the newline joining windows
        budget = None if self.max_context_length is None else self.max_context_length + 1
        chosen = pack_by_budget(candidates, sizes, budget)
        chosen_ids = {id(w) for w in chosen}
        dropped = [w for w in candidates if id(w) not in chosen_ids]
        return sorted(chosen, key=lambda w: w.start), dropped

    def enrich(self, message: Message, query: str, windows: list[ContextWindow]) -> Enrichment:
        """Rewrite a user message in place with the given windows (no-op when none fit).

        Args:
            message: The user message (modified in place).
            query: The user's text.
            windows: Retrieved windows.

        Returns:
            What was injected.
        """
        chosen, dropped = self.select_windows(windows)
        enrichment = Enrichment(query=query, windows=chosen, dropped_windows=dropped)
        if not chosen:
            return enrichment
        context = "\n".join(self.format_window(w) for w in chosen)
        text = f"{CONTEXT_HEADER}\n{CONTEXT_BEGIN}\n{context}\n{CONTEXT_END}\n{QUESTION_PREFIX}{query}"
        original: list[ContentBlock] = copy.deepcopy(message["content"])
        others = [b for b in message["content"] if not (isinstance(b, dict) and "text" in b)]
        message["content"] = [{"text": text}, *others]
        set_marker(message, original_content=original)
        enrichment.text = text
        return enrichment
