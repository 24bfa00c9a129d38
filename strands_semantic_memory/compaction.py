"""Compaction: how the conversation manager shrinks the active context without ever losing a message.

:class:`CompactingConversationManager` is Strands' ``SummarizingConversationManager`` with three additions, each
of which calls :meth:`~CompactingConversationManager._archive` for every message before it leaves the context:

* ``summary_format="structured"``: the summary is a pydantic state (:mod:`.session_state`) that each reduction
  merges into through Strands' structured output, instead of a prose summary that is re-summarized;
* ``hard_limit``: a share of the model's context window above which the oldest messages leave the context anyway
  when compaction fails or is not enough;
* ``on_summary_failure="drop_oldest"``: a failing summarizer drops the oldest messages instead of failing the turn.

:class:`~strands_semantic_memory.manager.SemanticSummarizingConversationManager` supplies the archive. What the
summarizer sees and how it is asked live in :mod:`.summarizer`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.agent.conversation_manager.compression.context_compression import adjust_split_point_for_tool_pairs
from strands.agent.conversation_manager.compression.pin_message import is_pinned, partition_pinned
from strands.hooks import BeforeModelCallEvent, HookRegistry
from strands.types.content import Message
from strands.types.exceptions import ContextWindowOverflowException
from typing_extensions import override

from .errors import ConfigurationError, SemanticMemoryError
from .session_state import SessionState, cited_sources, clean_state, state_message
from .summarizer import MessageFilter, merge_request, request_state, summary_view

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["CompactingConversationManager", "check_strands_compatibility", "drop_split"]

logger = logging.getLogger(__name__)

_HOOKED_METHODS = {
    "_generate_summary": ("messages", "agent"),
    "_summarize_oldest": ("agent",),
    "_adjust_split_point_for_tool_pairs": ("messages", "split_point"),
}


def check_strands_compatibility() -> None:
    """Fail loudly if Strands no longer has the private methods the manager overrides.

    Archiving happens in an override of ``SummarizingConversationManager._generate_summary``; if a Strands release
    renamed it, the override would silently never run and nothing would be archived.

    Raises:
        SemanticMemoryError: If a hooked method is missing or its parameters changed.
    """
    for name, parameters in _HOOKED_METHODS.items():
        method = getattr(SummarizingConversationManager, name, None)
        found = tuple(inspect.signature(method).parameters)[1:] if callable(method) else None
        if found != parameters:
            expected = f"{name}({', '.join(parameters)})"
            change = "is missing" if found is None else "now takes (" + ", ".join(found) + ")"
            raise SemanticMemoryError(
                f"strands' SummarizingConversationManager.{expected} {change}: this manager archives by overriding "
                "it, so it would silently stop archiving. Install a strands-agents version this release supports "
                "(see pyproject.toml) or upgrade strands-semantic-memory"
            )


def _valid_split(messages: list[Message], split: int) -> bool:
    try:
        return adjust_split_point_for_tool_pairs(messages, split) == split
    except ContextWindowOverflowException:
        return False


def drop_split(messages: Sequence[Message], count: int) -> int:
    """Where to cut so that about ``count`` of the oldest messages leave, keeping tool pairs and the current turn.

    Args:
        messages: The active conversation.
        count: How many of the oldest messages should leave (at least 1).

    Returns:
        A split point ``k`` (messages ``[0, k)`` leave): the smallest valid one at or after ``count``, or failing
        that the largest valid one before it; ``0`` if no message can leave. The last message always stays, with the
        tool use its result answers.
    """
    conversation, last = list(messages), len(messages) - 1
    if last < 1:
        return 0
    count = max(1, min(count, last))
    candidates: list[int] = [*range(count, last + 1), *range(count - 1, 0, -1)]
    for split in candidates:
        if _valid_split(conversation, split):
            return split
    return 0


def _validate(
    summary_format: str,
    summary_schema: type[BaseModel] | None,
    summary_filter: MessageFilter | None,
    hard_limit: float | None,
    on_summary_failure: str,
    threshold: float | None,
) -> None:
    """Raise ConfigurationError naming the first invalid compaction option."""
    if on_summary_failure not in ("raise", "drop_oldest"):
        raise ConfigurationError(f"on_summary_failure must be 'raise' or 'drop_oldest', got {on_summary_failure!r}")
    if summary_format not in ("text", "structured"):
        raise ConfigurationError(f"summary_format must be 'text' or 'structured', got {summary_format!r}")
    if summary_schema is not None and not (isinstance(summary_schema, type) and issubclass(summary_schema, BaseModel)):
        raise ConfigurationError(f"summary_schema must be a pydantic BaseModel class, got {summary_schema!r}")
    if summary_schema is not None and summary_format != "structured":
        raise ConfigurationError("summary_schema needs summary_format='structured'")
    if summary_filter is not None and not callable(summary_filter):
        raise ConfigurationError(f"summary_filter must be callable, got {summary_filter!r}")
    if hard_limit is not None and (isinstance(hard_limit, bool) or not 0 < hard_limit <= 1):
        raise ConfigurationError(f"hard_limit must be a share of the context window in (0, 1], got {hard_limit!r}")
    if hard_limit is not None and threshold is not None and hard_limit < threshold:
        raise ConfigurationError(
            f"hard_limit ({hard_limit}) must not be below the proactive compression threshold ({threshold})"
        )


class CompactingConversationManager(SummarizingConversationManager):
    """Strands' summarizing manager with structured summaries, a hard limit and a fallback that never wedges.

    Subclasses implement :meth:`_archive`; it receives every message before the message leaves the context.
    """

    def __init__(
        self,
        *,
        summary_format: str,
        summary_schema: type[BaseModel] | None,
        summary_filter: MessageFilter | None,
        hard_limit: float | None,
        on_summary_failure: str,
        **strands_options: Any,
    ) -> None:
        """Validate and keep the options (documented on the concrete manager); ``strands_options`` go to Strands.

        Raises:
            ConfigurationError: If an option is invalid (the message names it).
            SemanticMemoryError: If the installed Strands lacks the methods overridden here.
        """
        check_strands_compatibility()
        super().__init__(**strands_options)
        threshold = self._compression_threshold
        _validate(summary_format, summary_schema, summary_filter, hard_limit, on_summary_failure, threshold)
        self.summary_format = summary_format
        self.summary_schema: type[BaseModel] = summary_schema or SessionState
        self.summary_filter = summary_filter
        self.hard_limit = hard_limit
        self.on_summary_failure = on_summary_failure
        self._session_state: BaseModel | None = None
        self._pending_state: BaseModel | None = None
        self._dropped = 0
        self._summary_failures = 0

    def _archive(self, messages: list[Message]) -> list[int]:
        """Archive ``messages`` (idempotently) and return their archive indices, same order."""
        raise NotImplementedError

    @property
    def session_state(self) -> BaseModel | None:
        """The structured summary so far (``summary_format="structured"``), or None before the first reduction."""
        return self._session_state

    @property
    def summary_message(self) -> Message | None:
        """The summary message this manager put into the conversation (compare with ``is``), or None."""
        return self._summary_message

    @property
    def dropped_message_count(self) -> int:
        """Messages dropped from the active context without a summary (all of them archived first)."""
        return self._dropped

    # ------------------------------------------------------------------ Strands overrides

    @override
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Strands' hooks (proactive compression), plus the hard-limit check before each model call."""
        super().register_hooks(registry, **kwargs)
        if self.hard_limit is not None:
            registry.add_callback(BeforeModelCallEvent, self._enforce_hard_limit)

    @override
    def reduce_context(self, agent: Agent, e: Exception | None = None, **kwargs: Any) -> None:
        """Summarize as Strands does; with ``on_summary_failure="drop_oldest"``, a failed reactive summary drops.

        Raises:
            Exception: The summary's error during overflow recovery (``e`` set) with ``on_summary_failure="raise"``.
            ContextWindowOverflowException: If nothing could be dropped either.
        """
        try:
            self._summarize_oldest(agent)
            return
        except Exception as error:
            self._summary_failures += 1
            if e is None:  # proactive: best effort, as in Strands
                logger.warning("Proactive summarization failed, continuing: %s", error)
                return
            if self.on_summary_failure == "raise":
                logger.error("Summarization failed: %s", error)
                raise error from e
            logger.warning("error=<%s> | summarization failed, dropping the oldest messages instead", error)
            reason = error
        front = self._protected_front(agent.messages)
        want = max(1, int(len(agent.messages) * self.summary_ratio))
        if len(agent.messages) - front - want < self.preserve_recent_messages:
            want = max(1, len(agent.messages) - front - self.preserve_recent_messages)
        if not self._drop(agent, front + want):
            raise ContextWindowOverflowException(
                _explain(f"Cannot reduce the context: {reason}", agent, self.preserve_recent_messages)
            ) from e

    @override
    def _summarize_oldest(self, agent: Agent) -> None:
        """Run Strands' reduction; on failure undo its message count (nothing left the context) and explain."""
        removed_before = self.removed_message_count
        self._pending_state = None
        try:
            super()._summarize_oldest(agent)
        except ContextWindowOverflowException as error:
            self.removed_message_count = removed_before
            if str(error).startswith(("Cannot summarize", "Unable to trim")):
                raise ContextWindowOverflowException(
                    _explain(str(error), agent, self.preserve_recent_messages)
                ) from error
            raise
        except BaseException:
            self.removed_message_count = removed_before
            raise
        if self._pending_state is not None:  # committed only once Strands has replaced the messages
            self._session_state, self._pending_state = self._pending_state, None

    @override
    def _adjust_split_point_for_tool_pairs(self, messages: list[Message], split_point: int) -> int:
        """Strands' tool-pair adjustment, after making sure at least one message besides the summary leaves.

        Strands' ratio counts the previous summary, so on a short conversation the summary alone would be
        re-summarized (and overflow recovery would retry forever). When the split covers only the summary and
        pinned messages, it moves past the first real message, if the preserved recent messages allow it.
        """
        front = self._protected_front(messages)
        if split_point <= front < len(messages) - self.preserve_recent_messages:
            split_point = front + 1
        return super()._adjust_split_point_for_tool_pairs(messages, split_point)

    @override
    def _generate_summary(self, messages: list[Message], agent: Agent) -> Message:
        """Archive exactly the messages leaving the context, then summarize them (prose or structured).

        Args:
            messages: The messages leaving the active context (this manager's previous summary first, if any).
            agent: The agent.

        Returns:
            The summary message: Strands' own for ``"text"``, the rendered state for ``"structured"``.

        Raises:
            ContextWindowOverflowException: If only the previous summary would leave.
            Exception: If archiving or summarizing fails; the messages are then still in the conversation.
        """
        leaving = [m for m in messages if m is not self._summary_message]
        if not leaving:
            # Strands retries overflow recovery without a cap, so re-summarizing the summary would loop.
            raise ContextWindowOverflowException(
                "Cannot summarize: only the previous summary is outside the preserved recent messages"
            )
        indices = self._archive(leaving)
        seen = summary_view(leaving, self.summary_filter)
        if self.summary_format == "structured":
            return self._structured_summary(
                [leaving[i] for i in seen], [indices[i] for i in seen], agent, prose=self._previous_prose(messages)
            )
        seen_ids = {id(leaving[i]) for i in seen}
        if not seen_ids:  # the filter left nothing new: keep the previous summary, or say what happened
            previous = self._summary_message
            text = "(Earlier messages are archived; none were selected for the summary.)"
            return {"role": "user", "content": list(previous["content"]) if previous else [{"text": text}]}
        view = [m for m in messages if m is self._summary_message or id(m) in seen_ids]
        return super()._generate_summary(view, agent)

    # ------------------------------------------------------------------ structured summary

    def _previous_prose(self, messages: list[Message]) -> str | None:
        """A prose summary to migrate into the first state (restored from a text session), if any."""
        previous = self._summary_message
        if self._session_state is not None or previous is None or not any(m is previous for m in messages):
            return None
        return "\n".join(b["text"] for b in previous["content"] if isinstance(b.get("text"), str))

    def _structured_summary(
        self, seen: list[Message], indices: list[int], agent: Agent, *, prose: str | None
    ) -> Message:
        previous = self._session_state
        if previous is not None and not seen:
            state = previous  # nothing new reached the summarizer
        else:
            prompt = merge_request(self.summary_schema, previous, seen, indices, prior_summary=prose)
            state = request_state(
                self.summary_schema,
                prompt,
                model=None if self.summarization_agent is not None else agent.aux_model,
                agent=self.summarization_agent,
                system_prompt=self.summarization_system_prompt,
            )
            if isinstance(state, SessionState):
                allowed = (cited_sources(previous) if previous is not None else set()) | set(indices)
                state = clean_state(state, allowed)
        self._pending_state = state
        return state_message(state)

    # ------------------------------------------------------------------ hard limit and dropping

    async def _enforce_hard_limit(self, event: BeforeModelCallEvent) -> None:
        """Before a model call: above ``hard_limit``, compact, then drop the oldest messages (archived first)."""
        agent = event.agent
        window = agent.model.context_window_limit
        if self.hard_limit is None or not window:
            if self.hard_limit is not None:
                logger.warning("context_window_limit=<None> | hard_limit needs the model's context window; skipped")
            return
        budget = int(self.hard_limit * window)
        projected = event.projected_input_tokens
        if projected is not None and projected <= budget:
            return
        tokens = await _count_tokens(agent, agent.messages)
        if tokens <= budget:
            return
        threshold = self._compression_threshold
        if threshold is None or projected is None or projected / window < threshold:  # Strands did not just compact
            try:
                self._summarize_oldest(agent)
            except Exception as error:
                self._summary_failures += 1
                logger.warning("error=<%s> | compaction above the hard limit failed", error)
            tokens = await _count_tokens(agent, agent.messages)
            if tokens <= budget:
                return
        dropped = self._drop(agent, await _split_for(agent, tokens - budget, self._summary_message))
        tokens = await _count_tokens(agent, agent.messages)
        if tokens > budget:
            logger.warning(
                "tokens=<%d>, budget=<%d>, dropped=<%d> | still above the hard limit after dropping all but the "
                "current turn",
                tokens,
                budget,
                dropped,
            )

    def _protected_front(self, messages: list[Message]) -> int:
        front = 0
        while front < len(messages) and (messages[front] is self._summary_message or is_pinned(messages, front)):
            front += 1
        return front

    def _drop(self, agent: Agent, split: int) -> int:
        """Drop the unpinned messages before ``split`` (adjusted for tool pairs) from the context, archived first."""
        messages = agent.messages
        split = drop_split(messages, split)
        if split <= 0:
            return 0
        _, unpinned = partition_pinned(messages, 0, split)
        leaving = [m for m in unpinned if m is not self._summary_message]
        if not leaving:
            return 0
        self._archive(leaving)  # first: nothing is lost, even if the next step fails
        leaving_ids = {id(m) for m in leaving}
        agent.messages[:] = [m for m in messages if id(m) not in leaving_ids]
        self.removed_message_count += len(leaving)
        self._dropped += len(leaving)
        logger.warning(
            "dropped=<%d>, total_dropped=<%d> | oldest messages left the active context without a summary "
            "(they are archived)",
            len(leaving),
            self._dropped,
        )
        return len(leaving)


def _explain(reason: str, agent: Agent, preserve: int) -> str:
    """The overflow error's text: what did not fit, and the hook's budget as part of the cause (issue 17.11)."""
    budget = _hook_budget(agent)
    hook = "max_context_length" + (f"={budget}" if budget is not None else "")
    return (
        f"{reason} ({len(agent.messages)} messages in the active context, preserve_recent_messages={preserve}). "
        f"The preserved recent messages plus the context SemanticMemoryHook injects into the turn (its {hook} "
        "budget) do not fit the model's context window: lower preserve_recent_messages or the hook's "
        "max_context_length, use a model with a larger context window, or set on_summary_failure='drop_oldest'"
    )


async def _count_tokens(agent: Agent, messages: list[Message], *, full: bool = True) -> int:
    """The model's own token count (Strands' ``Model.count_tokens``) of ``messages``, with the prompt if ``full``."""
    if not full:
        return await agent.model.count_tokens(messages)
    return await agent.model.count_tokens(
        messages, tool_specs=agent.tool_registry.get_all_tool_specs(), system_prompt=agent.system_prompt
    )


async def _split_for(agent: Agent, excess: int, summary: Message | None) -> int:
    """How many of the oldest messages must leave so that ``excess`` tokens go (the summary and pinned stay)."""
    messages, split = agent.messages, 0
    for position, message in enumerate(messages):
        split = position + 1
        if message is not summary and not is_pinned(messages, position):
            excess -= await _count_tokens(agent, [message], full=False)
            if excess <= 0:
                break
    return split


def _hook_budget(agent: Agent) -> int | None:
    """The ``max_context_length`` of a SemanticMemoryHook registered on ``agent``, if one is found (best effort)."""
    try:
        from .hook import SemanticMemoryHook

        callbacks: list[Callable[..., Any]] = []
        for entries in getattr(agent.hooks, "_registered_callbacks", {}).values():
            callbacks.extend(getattr(entry, "callback", entry) for entry in entries)
        middleware = getattr(getattr(agent, "_middleware_registry", None), "_handlers", {})
        for handlers in middleware.values():
            callbacks.extend(getattr(handler, "handler", handler) for handler in handlers)
        for callback in callbacks:
            owner = getattr(callback, "__self__", None)
            if isinstance(owner, SemanticMemoryHook):
                budget = owner.max_context_length
                return budget if isinstance(budget, int) else None
    except Exception:  # only used to word an error message; never fail because of it
        logger.debug("could not look up the hook's budget", exc_info=True)
    return None
