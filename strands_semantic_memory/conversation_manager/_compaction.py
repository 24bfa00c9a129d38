"""Compaction: how the conversation manager shrinks the active context without ever losing a message.

``CompactingConversationManager`` is Strands' ``SummarizingConversationManager`` with three additions, each
of which calls ``_archive`` for every message before it leaves the context:

* ``summary_format="structured"``: the summary is a pydantic object (``structured_summary``) that each reduction
  merges into through Strands' structured output, instead of a prose summary that is re-summarized;
* ``hard_limit``: a share of the model's context window above which the oldest messages leave the context anyway
  when compaction fails or is not enough;
* ``on_summary_failure="drop_oldest"``: a failing summarizer drops the oldest messages instead of failing the turn;
* ``state_budget``: the structured state never takes more than this share of the model's context window (its oldest
  items give way, their messages stay archived), so a state the model made too large cannot wedge the conversation.

A model that does not declare its window still shows it: a request it refused with an overflow was larger than the
window. The manager keeps the smallest such size (``learned_window``, saved with the session) and bounds the state and
``hard_limit`` by it.

``SemanticSummarizingConversationManager`` supplies the archive. What the summarizer sees, how it is asked, and
merging into the structured summary: ``_summarizer``; the Strands compatibility and option checks: ``_options``;
the structured summary's schema, rendering, trimming and saving: ``_structured_summary``; where to cut when
messages are dropped, and the overflow error's wording: ``_drop_policy``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.agent.conversation_manager.compression.pin_message import is_pinned, partition_pinned
from strands.hooks import BeforeModelCallEvent, HookRegistry
from strands.types.content import Message, _ensure_tracking_id
from strands.types.exceptions import ContextWindowOverflowException
from typing_extensions import override

from strands_semantic_memory.budget import ContextBudget, history_tokens, model_window
from strands_semantic_memory.conversation_manager._drop_policy import (
    count_tokens,
    drop_split,
    explain_overflow,
    split_for,
)
from strands_semantic_memory.conversation_manager._options import (
    OnSummaryFailure,
    SummaryFormat,
    check_strands_compatibility,
    validate_compaction_options,
    validate_strands_options,
)
from strands_semantic_memory.conversation_manager._structured_summary import (
    StructuredSummary,
    state_json,
    state_message,
    trim_state,
)
from strands_semantic_memory.conversation_manager._summarizer import (
    MessageFilter,
    _run_sync,
    merge_into_state,
    previous_prose,
    summary_view,
)
from strands_semantic_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["CompactingConversationManager", "check_strands_compatibility", "drop_split"]

logger = logging.getLogger(__name__)

DEFAULT_STATE_BUDGET = 0.25
"""Default ``state_budget``: the structured state takes at most a quarter of the model's context window."""

CHARS_PER_TOKEN = 3
"""Characters counted per token of the state budget (compact JSON runs 3 to 4 per token; 3 errs on the safe side)."""

UNKNOWN_WINDOW = 200_000
"""The context window assumed for a model that does not say (Strands' own default)."""


class CompactingConversationManager(SummarizingConversationManager):
    """Strands' summarizing manager with structured summaries, a hard limit and a fallback that never wedges.

    Subclasses implement ``_archive``; it receives every message before the message leaves the context.
    """

    def __init__(
        self,
        *,
        summary_format: SummaryFormat,
        summary_schema: type[BaseModel] | None,
        summary_filter: MessageFilter | None,
        hard_limit: float | None,
        on_summary_failure: OnSummaryFailure,
        budget: ContextBudget | None = None,
        state_budget: float = DEFAULT_STATE_BUDGET,
        **strands_options: Any,
    ) -> None:
        """Validate and keep the options (documented on the concrete manager); ``strands_options`` go to Strands.

        Raises:
            ConfigurationError: If an option is invalid (the message names it).
            SemanticMemoryError: If the installed Strands lacks the methods overridden here.
        """
        check_strands_compatibility()
        validate_strands_options(**strands_options)
        super().__init__(**strands_options)
        threshold = self._compression_threshold
        validate_compaction_options(
            summary_format, summary_schema, summary_filter, hard_limit, on_summary_failure, threshold, state_budget
        )
        self.state_budget = float(state_budget)
        self.summary_format = summary_format
        self.summary_schema: type[BaseModel] = summary_schema or StructuredSummary
        self.summary_filter = summary_filter
        self.hard_limit = hard_limit
        self.on_summary_failure = on_summary_failure
        if budget is not None and not isinstance(budget, ContextBudget):
            raise ConfigurationError(f"budget must be a ContextBudget, got {type(budget).__name__}")
        self.budget = budget or ContextBudget()
        self._summary_object: BaseModel | None = None
        self._pending_state: BaseModel | None = None
        self._dropped = 0
        self._summary_failures = 0
        self._learned_window: int | None = None
        self._hard_limit_skipped = False

    def _archive(self, messages: list[Message]) -> list[int]:
        """Archive ``messages`` (idempotently) and return their archive indices, same order."""
        raise NotImplementedError

    def _find_own_summary(self, messages: list[Message]) -> None:
        """After a restore that copied the messages (``Agent.load_snapshot``), point at the summary's copy.

        The summary is recognised by identity; a restore that deep-copies the conversation leaves the manager holding
        the original, so the copy with the same tracking id and the same content becomes the summary.
        """
        summary = self._summary_message
        if summary is None or any(m is summary for m in messages):
            return
        for message in messages:
            if message.get("tracking_id") == summary.get("tracking_id") and message.get("content") == summary.get(
                "content"
            ):
                self._summary_message = message
                return

    def is_forgotten(self, message: Message) -> bool:
        """Whether ``message`` was forgotten on request while in the active context: it leaves it unarchived."""
        return False

    @property
    def structured_summary(self) -> BaseModel | None:
        """The structured summary so far (``summary_format="structured"``), or None before the first reduction."""
        return self._summary_object

    @property
    def summary_message(self) -> Message | None:
        """The summary message this manager put into the conversation (compare with ``is``), or None."""
        return self._summary_message

    @property
    def learned_window(self) -> int | None:
        """The window learned from overflows when the model declares none, in the model's tokens (None: none seen).

        One less than the smallest request the model refused with an overflow, counted with ``Model.count_tokens``;
        the state budget and ``hard_limit`` use it in place of the missing ``context_window_limit``.
        """
        return self._learned_window

    @property
    def dropped_message_count(self) -> int:
        """Messages dropped from the active context without a summary (all of them archived first)."""
        return self._dropped

    # ------------------------------------------------------------------ Strands overrides

    @override
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Strands' hooks, plus the headroom check and the hard-limit check before each model call."""
        super().register_hooks(registry, **kwargs)
        registry.add_callback(BeforeModelCallEvent, self._keep_headroom)
        if self.summary_format == "structured":
            registry.add_callback(BeforeModelCallEvent, self._fit_state_before_call)
        if self.hard_limit is not None:
            registry.add_callback(BeforeModelCallEvent, self._enforce_hard_limit)

    @override
    def reduce_context(self, agent: Agent, e: Exception | None = None, **kwargs: Any) -> None:
        """Summarize as Strands does; with ``on_summary_failure="drop_oldest"``, a failed reactive summary drops.

        On an overflow from a model that declares no window, the size of the refused request first bounds the window
        (``learned_window``), and a structured state larger than its share of it is trimmed.

        Raises:
            Exception: The summary's error during overflow recovery (``e`` set) with ``on_summary_failure="raise"``.
            ContextWindowOverflowException: If nothing could be dropped either, nor the state trimmed.
        """
        self._find_own_summary(agent.messages)
        if isinstance(e, ContextWindowOverflowException):
            self._learn_window(agent)
        fitted = self._fit_state(agent)
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
        if not self._drop(agent, front + want) and not fitted:
            raise ContextWindowOverflowException(
                explain_overflow(f"Cannot reduce the context: {reason}", agent, self.preserve_recent_messages)
            ) from e

    @override
    def _summarize_oldest(self, agent: Agent) -> None:
        """Run Strands' reduction; on failure undo its message count (nothing left the context) and explain."""
        removed_before = self.removed_message_count
        self._pending_state = None
        self._fit_state(agent)  # the merge prompt carries the previous state: it must fit too
        try:
            super()._summarize_oldest(agent)
        except ContextWindowOverflowException as error:
            self.removed_message_count = removed_before
            if str(error).startswith(("Cannot summarize", "Unable to trim")):
                raise ContextWindowOverflowException(
                    explain_overflow(str(error), agent, self.preserve_recent_messages)
                ) from error
            raise
        except BaseException:
            self.removed_message_count = removed_before
            raise
        if self._pending_state is not None:  # committed only once Strands has replaced the messages
            self._summary_object, self._pending_state = self._pending_state, None

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
        kept = [m for m in leaving if not self.is_forgotten(m)]  # forgotten ones are neither archived nor summarized
        index_of = dict(zip([id(m) for m in kept], self._archive(kept), strict=True))
        seen = summary_view(leaving, self._summarizer_sees)
        if self.summary_format == "structured":
            return self._merge_structured(
                [leaving[i] for i in seen],
                [index_of[id(leaving[i])] for i in seen],
                agent,
                prose=self._previous_prose(messages),
            )
        seen_ids = {id(leaving[i]) for i in seen}
        if not seen_ids:  # the filter left nothing new: keep the previous summary, or say what happened
            previous = self._summary_message
            text = "(Earlier messages are archived; none were selected for the summary.)"
            return {"role": "user", "content": list(previous["content"]) if previous else [{"text": text}]}
        view = [m for m in messages if m is self._summary_message or id(m) in seen_ids]
        return super()._generate_summary(view, agent)

    def _summarizer_sees(self, message: Message) -> bool:
        """The user's ``summary_filter``, and never a forgotten message (tool pairs are kept whole around it)."""
        if self.is_forgotten(message):
            return False
        return self.summary_filter is None or bool(self.summary_filter(message))

    # ------------------------------------------------------------------ structured summary

    def _previous_prose(self, messages: list[Message]) -> str | None:
        """A prose summary to migrate into the first state (restored from a text session), if any."""
        return previous_prose(self._summary_message, self._summary_object, messages)

    def _merge_structured(self, seen: list[Message], indices: list[int], agent: Agent, *, prose: str | None) -> Message:
        state = merge_into_state(
            self.summary_schema,
            self._summary_object,
            seen,
            indices,
            agent,
            prose=prose,
            summarization_agent=self.summarization_agent,
            system_prompt=self.summarization_system_prompt,
        )
        state, report = trim_state(state, self._state_chars(agent))
        if report.items:
            logger.warning(
                "left_out=<%d>, budget_chars=<%d> | the merged state exceeded state_budget; its oldest items were "
                "left out (their messages are archived)",
                report.items,
                self._state_chars(agent),
            )
        self._pending_state = state
        return state_message(state, report.note())

    # ------------------------------------------------------------------ the state's budget

    def _state_chars(self, agent: Agent) -> int:
        """The budget of the state's JSON, in characters: ``state_budget`` of the model's context window.

        The window is the declared one, else the one learned from overflows, else ``UNKNOWN_WINDOW``. The message
        around the state (a header, a note of what was left out, the delimiters) adds at most 600 characters.
        """
        window = model_window(agent.model) or self._learned_window or UNKNOWN_WINDOW
        return int(self.state_budget * window * CHARS_PER_TOKEN)

    def _learn_window(self, agent: Agent) -> None:
        """After an overflow of a model that declares no window: the refused request bounds the window.

        The request is counted as the hard limit counts (``Model.count_tokens`` of the messages, tools and system
        prompt); what a hook added to the call is not in ``agent.messages``, so the bound errs on the small side.
        """
        if model_window(agent.model) is not None:
            return
        try:
            tokens = int(_run_sync(lambda: count_tokens(agent, agent.messages)))
        except Exception as error:  # counting is best effort: the reduction goes ahead without it
            logger.debug("error=<%s> | could not count the request that overflowed", error)
            return
        if tokens > 1 and (self._learned_window is None or tokens - 1 < self._learned_window):
            self._learned_window = tokens - 1
            logger.warning(
                "learned_window=<%d> | the model overflowed and declares no context_window_limit: its window is "
                "taken as below the request it refused, for the structured state and hard_limit (declare "
                "context_window_limit in the model's config to avoid the overflow)",
                self._learned_window,
            )

    def _fit_state(self, agent: Agent) -> bool:
        """Trim the current state to its budget (a restored session's, say) and put it in the conversation.

        Returns:
            Whether the state message became smaller.
        """
        state = self._summary_object
        if state is None:  # nothing to fit: the window is not read (a text summary never needs it)
            return False
        budget = self._state_chars(agent)
        if len(state_json(state)) <= budget:
            return False
        trimmed, report = trim_state(state, budget)
        if trimmed is state:
            logger.error("budget_chars=<%d> | the structured state exceeds state_budget and cannot be trimmed", budget)
            return False
        message = state_message(trimmed, report.note())
        _ensure_tracking_id(message)  # a new message in the conversation carries a durable id, as Strands' summary
        previous = self._summary_message
        agent.messages[:] = [message if m is previous else m for m in agent.messages]
        self._summary_message, self._summary_object = message, trimmed
        logger.warning(
            "left_out=<%d>, budget_chars=<%d> | the structured state exceeded state_budget; its oldest items were "
            "left out (their messages are archived)",
            report.items,
            budget,
        )
        return True

    def _fit_state_before_call(self, event: BeforeModelCallEvent) -> None:
        self._fit_state(event.agent)

    # ------------------------------------------------------------------ headroom for the memory

    def can_reduce(self, agent: Agent) -> bool:
        """Whether a reduction now would move at least one message out of the active context.

        The same checks as the reduction itself (the recent messages and pinned messages stay, tool pairs are not
        split), without changing anything. The hook asks this before it gives up injected context on an overflow.
        """
        messages = agent.messages
        count = min(max(1, int(len(messages) * self.summary_ratio)), len(messages) - self.preserve_recent_messages)
        if count <= 0:
            return False
        try:
            count = self._adjust_split_point_for_tool_pairs(messages, count)
        except ContextWindowOverflowException:
            return False
        if count <= 0:
            return False
        _, unpinned = partition_pinned(messages, 0, count)
        return any(m is not self._summary_message for m in unpinned)

    def _keep_headroom(self, event: BeforeModelCallEvent) -> None:
        """Before a model call: above ``budget.history_limit`` of the window, reduce (archiving first).

        The memory's share of the window is then free for the hook. Best effort, like Strands' proactive
        compression: a failing summary is logged (and counted) and the call goes ahead; the hook reduces the
        history again, or its own context, if the call overflows.
        """
        agent = event.agent
        window = model_window(agent.model)
        if window is None:
            return
        limit = self.budget.history_limit(window)
        # Estimated here, not taken from Strands' projection: that one starts from the provider's reported usage of
        # the previous call (which held that call's injected context, or nothing if a provider reports no usage).
        tokens = history_tokens(agent.messages, agent.system_prompt)
        reductions = 0
        while tokens > limit and self.can_reduce(agent):
            try:
                self._summarize_oldest(agent)
            except Exception as error:
                self._summary_failures += 1
                logger.warning("error=<%s> | reduction to keep room for the memory failed; the call goes ahead", error)
                return
            reductions += 1
            tokens = history_tokens(agent.messages, agent.system_prompt)
        if reductions:
            logger.debug(
                "reductions=<%d>, tokens=<%d>, limit=<%d> | history reduced to keep the memory's share free",
                reductions,
                tokens,
                limit,
            )

    # ------------------------------------------------------------------ hard limit and dropping

    async def _enforce_hard_limit(self, event: BeforeModelCallEvent) -> None:
        """Before a model call: above ``hard_limit``, compact, then drop the oldest messages (archived first)."""
        agent = event.agent
        window = model_window(agent.model) or self._learned_window
        if self.hard_limit is None or not window:
            if self.hard_limit is not None and not self._hard_limit_skipped:
                self._hard_limit_skipped = True  # once: this runs before every model call
                logger.warning(
                    "context_window_limit=<None> | hard_limit needs the model's context window; skipped until an "
                    "overflow shows it"
                )
            return
        budget = int(self.hard_limit * window)
        projected = event.projected_input_tokens
        if projected is not None and projected <= budget:
            return
        tokens = await count_tokens(agent, agent.messages)
        if tokens <= budget:
            return
        threshold = self._compression_threshold
        if threshold is None or projected is None or projected / window < threshold:  # Strands did not just compact
            try:
                self._summarize_oldest(agent)
            except Exception as error:
                self._summary_failures += 1
                logger.warning("error=<%s> | compaction above the hard limit failed", error)
            tokens = await count_tokens(agent, agent.messages)
            if tokens <= budget:
                return
        dropped = self._drop(agent, await split_for(agent, tokens - budget, self._summary_message))
        tokens = await count_tokens(agent, agent.messages)
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
        self._archive([m for m in leaving if not self.is_forgotten(m)])  # first: nothing is lost if the next step fails
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
