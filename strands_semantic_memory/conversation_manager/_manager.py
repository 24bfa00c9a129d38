"""SemanticSummarizingConversationManager: Strands' summarizing manager over an archive that forgets nothing.

Every message is archived verbatim the moment it is added (Strands' ``MessageAddedEvent``, off the event loop
through ``asyncio.to_thread``), with the agent's session, so a later session of the same user finds it; messages
that reach the context another way (a restored session, ``Agent(messages=...)``) are archived at the end of the
invocation. A message leaving the context is archived again before its summary is asked for (idempotent: it is
found, not copied), so a failing summary loses nothing, and a forgotten message is neither archived nor summarized.
When the model declares its window, the history is kept below the budget's share before every model call (the
reduction runs in a worker thread, never on the event loop), so the memory's share is free for the hook.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.agent.conversation_manager.compression.context_compression import adjust_split_point_for_tool_pairs
from strands.agent.conversation_manager.compression.pin_message import is_pinned, partition_pinned
from strands.agent.conversation_manager.conversation_manager import ProactiveCompressionConfig
from strands.hooks import (
    AfterInvocationEvent,
    AgentInitializedEvent,
    BeforeModelCallEvent,
    HookRegistry,
    MessageAddedEvent,
)
from strands.types.content import Message
from strands.types.exceptions import ContextWindowOverflowException
from typing_extensions import override

from strands_semantic_memory.archives import Archive
from strands_semantic_memory.budget import ContextBudget, history_tokens, model_window
from strands_semantic_memory.conversation_manager import _structured
from strands_semantic_memory.embeddings import DEFAULT_MODEL, Embedder
from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.errors import ConfigurationError, StateError
from strands_semantic_memory.messages._session import session_of

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["SemanticSummarizingConversationManager"]

logger = logging.getLogger(__name__)

STATE_KEY = "semantic_memory"
SUMMARY_KEY = "structured_summary"
ArchiveWhen = Literal["added", "leaving"]
OnSummaryFailure = Literal["raise", "drop_oldest"]
SummaryFormat = Literal["text", "structured"]


class SemanticSummarizingConversationManager(SummarizingConversationManager):
    """Summarizes old messages like Strands' ``SummarizingConversationManager``, after archiving every one verbatim.

    The archive is ``memory`` (a ``SemanticMemory``); name the user (``user_id=``) over a durable ``archive_path`` or
    a ``PostgresArchive`` and a new session of that user recalls this one through ``SemanticMemoryHook``. With a
    Strands session manager, the in-process archive and the structured summary are saved with the session.

    Example:
        ```python
        from strands import Agent
        from strands_semantic_memory import SemanticSummarizingConversationManager
        from strands_semantic_memory.testing import ScriptedModel

        manager = SemanticSummarizingConversationManager()
        agent = Agent(model=ScriptedModel(), conversation_manager=manager)
        agent("My booking reference is BK-7731-QZ.")
        manager.memory.embed_pending()
        assert manager.memory.search("booking reference")[0].index == 0
        ```
    """

    def __init__(
        self,
        summary_ratio: float = 0.3,
        preserve_recent_messages: int = 10,
        summarization_agent: Agent | None = None,
        summarization_system_prompt: str | None = None,
        *,
        pin_first: int | None = None,
        proactive_compression: bool | ProactiveCompressionConfig | None = None,
        memory: SemanticMemory | None = None,
        archive_path: str | os.PathLike[str] | None = None,
        archive: Archive | None = None,
        user_id: str | None = None,
        clock: Callable[[], float] | None = None,
        embedding_model: str = DEFAULT_MODEL,
        embedder: Embedder | None = None,
        budget: ContextBudget | None = None,
        archive_when: ArchiveWhen = "added",
        summary_format: SummaryFormat = "text",
        summary_schema: type[BaseModel] | None = None,
        hard_limit: float | None = None,
        on_summary_failure: OnSummaryFailure = "raise",
    ) -> None:
        """Create the manager.

        Args:
            summary_ratio: Share of the messages summarized per reduction (Strands' option and range, 0.1-0.8).
            preserve_recent_messages: Recent messages never summarized (Strands' option).
            summarization_agent: An agent that writes the summary (Strands' option).
            summarization_system_prompt: The summary's system prompt (Strands' option).
            pin_first: Messages at the start kept in context (Strands' option).
            proactive_compression: Compress before an overflow (Strands' option).
            memory: A ready ``SemanticMemory`` (not together with the archive options below).
            archive_path: A durable SQLite file for the archive (its folder must exist).
            archive: A ready ``Archive`` (``PostgresArchive(dsn, user_id)`` for many workers).
            user_id: Whose memory it is; naming the user turns on recall across that user's sessions.
            clock: What "now" is for the archive (default ``time.time``).
            embedding_model: The embedding model (default: the bundled all-MiniLM-L6-v2; ``"bedrock:<id>"``).
            embedder: A ready ``Embedder`` instead.
            budget: How the model's window is shared with the memory (default ``ContextBudget()``): when the model
                declares ``context_window_limit``, the history is reduced before each call that would leave less
                than the memory's share free.
            archive_when: ``"added"`` (default): every message is archived as it is added; ``"leaving"``: only when it
                leaves the active context (the memory then holds only what overflowed).
            summary_format: ``"text"`` (Strands' prose summary) or ``"structured"`` (a structured summary merged on
                each reduction, whose facts name the archived messages they came from).
            summary_schema: The pydantic model of the structured summary (default ``StructuredSummary``).
            hard_limit: A share of the window (0-1] checked before each call: above it the oldest messages leave the
                context (archived), summarized if that works, dropped otherwise.
            on_summary_failure: ``"raise"`` (as Strands) or ``"drop_oldest"``: a failed summary during overflow
                recovery drops the oldest messages (archived) instead of failing the turn.

        Raises:
            ConfigurationError: If an option is invalid (the message names it), or ``memory`` is combined with archive
                options.
        """
        super().__init__(
            summary_ratio=summary_ratio,
            preserve_recent_messages=preserve_recent_messages,
            summarization_agent=summarization_agent,
            summarization_system_prompt=summarization_system_prompt,
            pin_first=pin_first,
            proactive_compression=proactive_compression,
        )
        if archive_when not in ("added", "leaving"):
            raise ConfigurationError(f"archive_when must be 'added' or 'leaving', got {archive_when!r}")
        if on_summary_failure not in ("raise", "drop_oldest"):
            raise ConfigurationError(f"on_summary_failure must be 'raise' or 'drop_oldest', got {on_summary_failure!r}")
        if summary_format not in ("text", "structured"):
            raise ConfigurationError(f"summary_format must be 'text' or 'structured', got {summary_format!r}")
        if summary_schema is not None and summary_format != "structured":
            raise ConfigurationError("summary_schema needs summary_format='structured'")
        if hard_limit is not None and not (isinstance(hard_limit, (int, float)) and 0 < hard_limit <= 1):
            raise ConfigurationError(f"hard_limit must be a share of the window in (0, 1], got {hard_limit!r}")
        if budget is not None and not isinstance(budget, ContextBudget):
            raise ConfigurationError(f"budget must be a ContextBudget, got {type(budget).__name__}")
        given = [n for n, v in (("archive_path", archive_path), ("archive", archive), ("user_id", user_id),
                                ("clock", clock), ("embedder", embedder)) if v is not None]  # fmt: skip
        if memory is not None:
            if given or embedding_model != DEFAULT_MODEL:
                raise ConfigurationError(f"memory= cannot be combined with {given or ['embedding_model']}")
            if not isinstance(memory, SemanticMemory):
                raise ConfigurationError(f"memory must be a SemanticMemory, got {type(memory).__name__}")
        self.memory: SemanticMemory = (
            memory
            if memory is not None
            else SemanticMemory(
                embedding_model,
                embedder=embedder,
                archive=archive,
                archive_path=archive_path,
                user_id=user_id,
                clock=clock,
                embedding="background",
            )
        )
        self.budget = budget or ContextBudget()
        self.archive_when: ArchiveWhen = archive_when
        self.summary_format, self.hard_limit, self.on_summary_failure = summary_format, hard_limit, on_summary_failure
        self.summary_schema: type[BaseModel] = summary_schema or _structured.StructuredSummary
        self.structured_summary: BaseModel | None = None
        self.dropped_message_count = 0
        self._agent: weakref.ReferenceType[Any] | None = None
        self._archived: set[str] = set()  # tracking ids archived (or refused as forgotten) through this manager
        self._state_cache: tuple[int, str] | None = None

    @property
    def summary_message(self) -> Message | None:
        """The summary message this manager put into the conversation (recognised by identity), or None."""
        return self._summary_message

    # ------------------------------------------------------------------ archiving

    @override
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Strands' hooks, plus archiving as messages are added and the memory's headroom before each call."""
        super().register_hooks(registry, **kwargs)
        registry.add_callback(AgentInitializedEvent, self._on_initialized)
        registry.add_callback(MessageAddedEvent, self._on_message_added)
        registry.add_callback(AfterInvocationEvent, self._on_after_invocation)
        registry.add_callback(BeforeModelCallEvent, self._keep_headroom)

    @override
    async def _on_before_model_call_threshold(self, event: BeforeModelCallEvent) -> None:  # type: ignore[override]
        """Strands' proactive compression, in a worker thread: a summary never runs on the event loop."""
        await asyncio.to_thread(super()._on_before_model_call_threshold, event)

    def _on_initialized(self, event: AgentInitializedEvent) -> None:
        held = None if self._agent is None else self._agent()
        if held is not None and held is not event.agent:
            raise ConfigurationError(
                "this SemanticSummarizingConversationManager already serves another agent: give each agent its own "
                "(they may share a SemanticMemory: memory=...)"
            )
        self._agent = weakref.ref(event.agent)

    def archive(self, messages: list[Message], agent: Any) -> list[int | None]:
        """Archive messages with ``agent``'s session (blocking; idempotent): their indices, None where forgotten."""
        fresh = [m for m in messages if m is not self._summary_message]
        if not fresh:
            return []
        indices = self.memory.add(fresh, session_id=session_of(agent))
        self._archived.update(str(m.get("tracking_id")) for m in fresh if m.get("tracking_id"))
        return indices

    async def _on_message_added(self, event: MessageAddedEvent) -> None:
        if self.archive_when == "added" and event.message is not self._summary_message:
            try:
                await asyncio.to_thread(self.archive, [event.message], event.agent)
            except Exception as error:  # the turn goes on; the message is archived again at the invocation's end
                logger.warning("error=<%s> | archiving an added message failed; retried after the turn", error)

    async def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        """Archive what reached the context without being added (a restored session, ``Agent(messages=...)``)."""
        if self.archive_when != "added":
            return
        self._find_own_summary(event.agent.messages)
        missing = [m for m in event.agent.messages if str(m.get("tracking_id")) not in self._archived]
        if missing:
            try:
                await asyncio.to_thread(self.archive, missing, event.agent)
            except Exception as error:  # kept in context; archived before it leaves
                logger.warning("messages=<%d>, error=<%s> | archiving failed; retried later", len(missing), error)

    def _find_own_summary(self, messages: list[Message]) -> None:
        """After a restore that copied the messages (``Agent.load_snapshot``), the summary's copy is the summary."""
        summary = self._summary_message
        if summary is None or any(m is summary for m in messages):
            return
        for message in messages:
            if message.get("tracking_id") == summary.get("tracking_id") and message.get("content") == summary.get(
                "content"
            ):
                self._summary_message = message
                return

    # ------------------------------------------------------------------ reducing

    @override
    def _generate_summary(self, messages: list[Message], agent: Agent) -> Message:
        """Archive exactly the messages leaving the context, then summarize those not forgotten."""
        leaving = [m for m in messages if m is not self._summary_message]
        if not leaving:  # Strands retries overflow recovery without a cap: re-summarizing the summary would loop
            raise ContextWindowOverflowException("Cannot summarize: only the previous summary would leave the context")
        indices = self.archive(leaving, agent)
        kept = [(m, i) for m, i in zip(leaving, indices, strict=True) if i is not None]
        if self.summary_format == "structured":
            merged = _structured.merge(self, [m for m, _ in kept], [i for _, i in kept if i is not None], agent)
            self.structured_summary = merged
            return _structured.summary_message(merged)
        seen = _whole_tool_pairs([m for m in messages if m is self._summary_message or any(m is k for k, _ in kept)])
        if not any(m is not self._summary_message for m in seen):
            return {"role": "user", "content": [{"text": "(Earlier messages are archived; none could be summarized.)"}]}
        return super()._generate_summary(seen, agent)

    @override
    def _summarize_oldest(self, agent: Agent) -> None:
        """Strands' reduction; on failure its count of removed messages is put back (nothing left the context)."""
        self._find_own_summary(agent.messages)
        before = self.removed_message_count
        summary = self.structured_summary
        try:
            super()._summarize_oldest(agent)
        except BaseException:
            self.removed_message_count, self.structured_summary = before, summary
            raise

    @override
    def _adjust_split_point_for_tool_pairs(self, messages: list[Message], split_point: int) -> int:
        """Strands' adjustment, after making sure a message besides the summary and pinned ones leaves."""
        front = self._front(messages)
        if split_point <= front < len(messages) - self.preserve_recent_messages:
            split_point = front + 1
        return super()._adjust_split_point_for_tool_pairs(messages, split_point)

    @override
    def reduce_context(self, agent: Agent, e: Exception | None = None, **kwargs: Any) -> None:
        """Summarize as Strands does; with ``on_summary_failure="drop_oldest"`` a failed reactive summary drops."""
        try:
            self._summarize_oldest(agent)
            return
        except Exception as error:
            if e is None:  # proactive: best effort, as in Strands
                logger.warning("error=<%s> | proactive summarization failed, continuing", error)
                return
            if self.on_summary_failure == "raise":
                logger.error("Summarization failed: %s", error)  # Strands' own wording
                raise error from e
            reason = error
        front = self._front(agent.messages)
        count = max(1, min(int(len(agent.messages) * self.summary_ratio),
                           len(agent.messages) - front - self.preserve_recent_messages))  # fmt: skip
        if not self._drop(agent, front + count):
            raise ContextWindowOverflowException(f"Cannot reduce the context: {reason}") from e

    def can_reduce(self, agent: Agent) -> bool:
        """Whether a reduction now would move a message out of the context (the hook asks before shrinking its own)."""
        messages = agent.messages
        count = min(max(1, int(len(messages) * self.summary_ratio)), len(messages) - self.preserve_recent_messages)
        try:
            count = self._adjust_split_point_for_tool_pairs(messages, count) if count > 0 else 0
        except ContextWindowOverflowException:
            return False
        return count > 0 and any(m is not self._summary_message for m in partition_pinned(messages, 0, count)[1])

    async def _keep_headroom(self, event: BeforeModelCallEvent) -> None:
        """Before a model call: keep the history under the budget's limit (and ``hard_limit``), in a worker thread."""
        if model_window(event.agent.model) is not None and event.agent.messages:
            await asyncio.to_thread(self._reduce_to, event.agent)

    def _reduce_to(self, agent: Agent) -> None:
        window = model_window(agent.model)
        if window is None:
            return
        limit = self.budget.history_limit(window)
        if self.hard_limit is not None:
            limit = min(limit, int(self.hard_limit * window))
        while history_tokens(agent.messages, agent.system_prompt) > limit and self.can_reduce(agent):
            try:
                self._summarize_oldest(agent)
            except Exception as error:
                logger.warning("error=<%s> | reduction to keep room for the memory failed", error)
                if self.hard_limit is None or not self._drop(agent, self._front(agent.messages) + 1):
                    return

    def _front(self, messages: list[Message]) -> int:
        front = 0
        while front < len(messages) and (messages[front] is self._summary_message or is_pinned(messages, front)):
            front += 1
        return front

    def _drop(self, agent: Agent, split: int) -> int:
        """Drop the unpinned messages before ``split`` (tool pairs kept whole) from the context, archived first."""
        messages = agent.messages
        last = len(messages) - 1
        valid = [s for s in [*range(min(split, last), last + 1), *range(min(split, last) - 1, 0, -1)] if s > 0]
        for candidate in valid:
            try:
                if adjust_split_point_for_tool_pairs(messages, candidate) == candidate:
                    split = candidate
                    break
            except ContextWindowOverflowException:
                continue
        else:
            return 0
        leaving = [m for m in partition_pinned(messages, 0, split)[1] if m is not self._summary_message]
        if not leaving:
            return 0
        self.archive(leaving, agent)  # first: nothing is lost if the next step fails
        gone = {id(m) for m in leaving}
        agent.messages[:] = [m for m in messages if id(m) not in gone]
        self.removed_message_count += len(leaving)
        self.dropped_message_count += len(leaving)
        logger.warning("dropped=<%d> | oldest messages left the context without a summary (archived)", len(leaving))
        return len(leaving)

    # ------------------------------------------------------------------ state and stats

    def get_memory_usage_summary(self) -> str:
        """A short human-readable account of the archive and of what left the context."""
        stats = self.memory.stats()
        return (
            f"{stats.count} archived messages ({stats.nbytes / 1024:.1f} KiB), {stats.pending} waiting for their "
            f"vectors; model {stats.model_id}; {self.removed_message_count} left the context "
            f"({self.dropped_message_count} dropped without a summary, all archived)"
        )

    @override
    def get_state(self) -> dict[str, Any]:
        """Strands' state plus the archive (one JSON string, made again only when it changed) and the summary."""
        state = super().get_state()
        version = self.memory.version
        if self._state_cache is None or self._state_cache[0] != version:
            self._state_cache = (version, json.dumps(self.memory.to_state(), separators=(",", ":")))
        state[STATE_KEY] = self._state_cache[1]
        state["dropped_message_count"] = self.dropped_message_count
        if self.structured_summary is not None:
            state[SUMMARY_KEY] = self.structured_summary.model_dump(mode="json")
        return state

    @override
    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Restore Strands' state, the archive (without embedding again) and the structured summary.

        A state saved by Strands' own ``SummarizingConversationManager`` is accepted (a drop-in swap keeps the
        session).

        Raises:
            StateError: If the state is another manager's, or the saved archive is corrupt; nothing changed.
        """
        name = state.get("__name__")
        if name == SummarizingConversationManager.__name__:
            state = {**state, "__name__": type(self).__name__}
        elif name != type(self).__name__:
            raise StateError(f"the session's manager state belongs to {name!r}, not to {type(self).__name__}")
        try:
            payload = state.get(STATE_KEY)
            archived = json.loads(payload) if isinstance(payload, str) else payload
            summary = state.get(SUMMARY_KEY)
            structured = None if summary is None else self.summary_schema.model_validate(summary)
        except (ValueError, RecursionError) as error:
            raise StateError(f"the session's conversation manager state is corrupt: {type(error).__name__}") from error
        if archived is not None:
            self.memory.load_state(archived)
        restored = super().restore_from_session(state)
        self.structured_summary = structured
        self.dropped_message_count = int(state.get("dropped_message_count") or 0)
        return restored


def _whole_tool_pairs(messages: list[Message]) -> list[Message]:
    """``messages`` without a tool call whose result is not among them, or a result whose call is not.

    A forgotten tool call (or result) is left out of the summary; its partner alone is a request providers refuse.
    A message left without content goes too.
    """
    blocks = [b for m in messages for b in m.get("content") or [] if isinstance(b, dict)]
    calls = [{b[k].get("toolUseId") for b in blocks if k in b} for k in ("toolUse", "toolResult")]
    paired = calls[0] & calls[1]
    whole: list[Message] = []
    for message in messages:
        content = [
            b for b in message.get("content") or []
            if not any(k in b and b[k].get("toolUseId") not in paired for k in ("toolUse", "toolResult"))
        ]  # fmt: skip
        if len(content) == len(message.get("content") or []):
            whole.append(message)
        elif content:
            whole.append({**message, "content": content})
    return whole
