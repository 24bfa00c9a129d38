"""SemanticSummarizingConversationManager: Strands' summarizing manager that archives what it summarizes away."""

from __future__ import annotations

import json
import logging
import os
import uuid
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.agent.conversation_manager.conversation_manager import ProactiveCompressionConfig
from strands.hooks import AfterInvocationEvent, AgentInitializedEvent, HookRegistry
from strands.types.content import Message
from typing_extensions import override

from strands_semantic_memory.archives import Archive
from strands_semantic_memory.budget import ContextBudget
from strands_semantic_memory.conversation_manager._compaction import (
    DEFAULT_STATE_BUDGET,
    CompactingConversationManager,
    check_strands_compatibility,
)
from strands_semantic_memory.conversation_manager._options import (
    DEFAULT_ARCHIVE_WHEN,
    ArchiveWhen,
    OnSummaryFailure,
    SummaryFormat,
    validate_archive_options,
)
from strands_semantic_memory.conversation_manager._structured_summary import (
    dump_structured_summary,
    load_structured_summary,
)
from strands_semantic_memory.conversation_manager._summarizer import MessageFilter
from strands_semantic_memory.embeddings import DEFAULT_MODEL, Embedder
from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.engine._options import (
    BUILT_MEMORY_EMBEDDING,
    DEFAULT_CONTEXT_RADIUS,
    DEFAULT_TOP_K,
    EmbeddingMode,
)
from strands_semantic_memory.errors import ConfigurationError, StateError
from strands_semantic_memory.messages._session import session_of
from strands_semantic_memory.retrieval._ranking_options import Retrieval
from strands_semantic_memory.retrieval._rerank import Reranker

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["STATE_KEY", "SemanticSummarizingConversationManager", "check_strands_compatibility"]

logger = logging.getLogger(__name__)

STATE_KEY = "semantic_memory"
"""Key of the archive in the manager's session state (a JSON string; see ``get_state``)."""

SESSION_STATE_KEY = "session_state"
"""Key of the structured summary in the manager's session state: ``{"schema": name, "data": {...}}``."""

FORGOTTEN_KEY = "forgotten_tracking_ids"
"""Key of the tracking ids of messages forgotten while in the active context (see ``forget_when_archived``)."""

LEARNED_WINDOW_KEY = "learned_context_window"
"""Key of the window learned from overflows of a model that declares none (see ``learned_window``)."""

_ARCHIVE_DEFAULTS: dict[str, Any] = {
    "message_context_radius": DEFAULT_CONTEXT_RADIUS,
    "semantic_search_top_k": DEFAULT_TOP_K,
    "semantic_search_min_score": None,
    "retrieval": "hybrid",
    "max_num_archived_messages": None,
    "max_memory_archived_messages": None,
    "embedding_model": DEFAULT_MODEL,
    "aws_region": None,
    "embedding_dimensions": None,
    "embedder": None,
    "archive": None,
    "reranker": None,
    "archive_path": None,
    "user_id": None,
    "clock": None,
    "embedding": BUILT_MEMORY_EMBEDDING,
}


class SemanticSummarizingConversationManager(CompactingConversationManager):
    """Summarizes old messages like Strands' ``SummarizingConversationManager``, and archives them verbatim first.

    Every message is archived into ``memory`` at the end of the invocation that added it, with the agent's session
    id (``archive_when="added"``, the default), so a new session of the same user finds what was said in this one
    (name the user: ``user_id=``, over a durable ``archive_path`` or a ``PostgresArchive``). On every reduction
    (reactive, after a ``ContextWindowOverflowException``, or proactive), the messages leaving the active context
    are archived **before** the summary is generated, so a failing summary call loses nothing (archiving is
    idempotent per message: a message is archived once). The manager's own previous summary is recognised by
    identity, never by fields found on a message, and never archived.

    ``summary_format="structured"`` keeps a ``StructuredSummary`` (or your
    ``summary_schema``) instead of a prose summary: each reduction merges the previous state with the leaving
    messages through Strands' structured output. ``hard_limit`` and ``on_summary_failure="drop_oldest"`` make sure a
    failing summarizer never wedges the conversation: the oldest messages then leave the context anyway, archived.

    With a Strands session manager, the archive and the structured summary are saved with the session and restored.

    A model that declares no ``context_window_limit`` shows its window when it overflows: the manager then bounds the
    structured summary and ``hard_limit`` by the request it refused (``learned_window``, saved with the session).
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
        summary_format: SummaryFormat = "text",
        summary_schema: type[BaseModel] | None = None,
        summary_filter: MessageFilter | None = None,
        hard_limit: float | None = None,
        on_summary_failure: OnSummaryFailure = "raise",
        state_budget: float = DEFAULT_STATE_BUDGET,
        message_context_radius: int = DEFAULT_CONTEXT_RADIUS,
        semantic_search_top_k: int = DEFAULT_TOP_K,
        semantic_search_min_score: float | None = None,
        retrieval: Retrieval = "hybrid",
        max_num_archived_messages: int | None = None,
        max_memory_archived_messages: int | None = None,
        embedding_model: str = DEFAULT_MODEL,
        aws_region: str | None = None,
        embedding_dimensions: int | None = None,
        embedder: Embedder | None = None,
        archive: Archive | None = None,
        reranker: Reranker | None = None,
        archive_path: str | os.PathLike[str] | None = None,
        user_id: str | None = None,
        clock: Callable[[], float] | None = None,
        embedding: EmbeddingMode = BUILT_MEMORY_EMBEDDING,
        memory: SemanticMemory | None = None,
        budget: ContextBudget | None = None,
        warm_up: bool = False,
        archive_when: ArchiveWhen = DEFAULT_ARCHIVE_WHEN,
    ) -> None:
        """Create the manager.

        Args:
            summary_ratio: Share of the messages summarized per reduction (0.1-0.8, as in Strands; a value outside
                is clamped into it, as Strands does, with a warning).
            preserve_recent_messages: Recent messages never summarized (Strands' default, 10).
            summarization_agent: Optional agent that writes the summary (Strands option): an ``Agent``, or any
                object with its interface, as Strands accepts.
            summarization_system_prompt: Optional system prompt for the summary (Strands option).
            pin_first: Messages at the start pinned in context (Strands option; a negative value is 0, as in
                Strands, with a warning).
            proactive_compression: Compress before overflow (Strands option; ``True`` compresses above 70 % of the
                model's context window, ``{"compression_threshold": 0.6}`` above 60 %).
            summary_format: ``"text"`` (Strands' prose summary) or ``"structured"`` (a structured summary, merged on
                each reduction; see ``structured_summary``).
            summary_schema: The pydantic model of the structured summary (default
                ``StructuredSummary``); needs ``summary_format="structured"``.
            summary_filter: ``filter(message) -> bool``: which leaving messages the summarizer sees (the archive
                gets all of them); both sides of a tool use/result pair are left out if either is.
            hard_limit: Share of the model's context window (0-1], checked before each model call: above it the
                manager compacts (unless proactive compression just did), and if that fails or is not enough, drops
                the oldest messages from the active context, archived first. None (default): no hard limit. For a
                model that declares no window, it applies from the first overflow, to the window that overflow
                showed (``learned_window``).
            on_summary_failure: ``"raise"`` (default, as Strands) or ``"drop_oldest"``: when the summary fails
                during overflow recovery, drop the oldest messages (archived first) instead of failing the turn.
            state_budget: Most of the model's context window the structured state may take (default 0.25, counted
                at 3 characters per token): a larger state loses its oldest items (their messages stay archived and
                the state message says where), checked after each merge and before each model call.
            message_context_radius: Neighbouring archived messages added on each side of a hit.
            semantic_search_top_k: Hits per search.
            semantic_search_min_score: Minimum cosine similarity of a hit (-1..1); None keeps all.
            retrieval: ``"hybrid"`` (BM25 + dense, fused; default), ``"dense"`` or ``"lexical"``.
            max_num_archived_messages: Archive at most this many messages (oldest evicted); None (default): no limit.
            max_memory_archived_messages: Archive at most this many estimated bytes; None (default): no limit.
            embedding_model: Local sentence-transformers model or ``"bedrock:<model id>"``.
            aws_region: Bedrock region.
            embedding_dimensions: Bedrock output dimension, where the model offers a choice.
            embedder: A ready embedder instead of ``embedding_model``.
            archive: Where the messages are kept, an ``Archive`` (``PostgresArchive(...)`` to share it between
                processes); default in process.
            reranker: An optional reranker (for example ``CrossEncoderReranker``).
            archive_path: A file for a durable archive on this machine (``SemanticMemory(archive_path=...)``);
                not together with ``archive``.
            user_id: Whose memory it is (``SemanticMemory(user_id=...)``). Naming the user turns on recall across
                sessions: the hook then searches every session of the user; without one, only the agent's session.
            clock: What "now" is for the archive (default ``time.time``): the time of a message without its own.
            embedding: ``"background"`` (default): a reduction archives the leaving messages (searchable lexically at
                once) and a background thread embeds them, so no document is embedded inside the user's turn.
                ``"inline"``: they are embedded before the reduction returns. A ready ``memory`` keeps its own option.
            memory: A ready ``SemanticMemory``; it cannot be combined with the archive options above.
            budget: How the model's window is shared between the history and what the memory brings back (default
                ``ContextBudget()``). When the model declares its ``context_window_limit``, the manager reduces
                the history before each model call that would leave less than the memory's share free; the
                ``SemanticMemoryHook`` of the same agent spends that share.
            warm_up: Load the embedding model in a background thread when the agent is built, so the first turn
                does not wait for it (``SemanticMemory.warm_up``). Default False: loaded on first use.
            archive_when: ``"added"`` (default): every message is archived at the end of the invocation that added
                it, with the agent's session id, so the memory holds whole sessions; ``"leaving"``: only when it
                leaves the active context (the memory then holds only what overflowed).

        Raises:
            ConfigurationError: If an option has the wrong type or is out of range (the message names the option
                and the value: a ``summary_ratio`` that is not a number, a ``preserve_recent_messages`` that is
                not an integer >= 0, a ``summarization_agent`` without an agent's interface, ...), or ``memory`` is
                given together with archive options. What Strands accepts is accepted.
            SemanticMemoryError: If the installed Strands lacks the methods this manager overrides.
        """
        validate_archive_options(
            message_context_radius=message_context_radius,
            semantic_search_top_k=semantic_search_top_k,
            semantic_search_min_score=semantic_search_min_score,
            memory=memory,
            archive_when=archive_when,
        )
        super().__init__(
            summary_ratio=summary_ratio,
            preserve_recent_messages=preserve_recent_messages,
            summarization_agent=summarization_agent,
            summarization_system_prompt=summarization_system_prompt,
            pin_first=pin_first,
            proactive_compression=proactive_compression,
            summary_format=summary_format,
            summary_schema=summary_schema,
            summary_filter=summary_filter,
            hard_limit=hard_limit,
            on_summary_failure=on_summary_failure,
            budget=budget,
            state_budget=state_budget,
        )
        self.memory: SemanticMemory = _build_memory(
            message_context_radius=message_context_radius,
            semantic_search_top_k=semantic_search_top_k,
            semantic_search_min_score=semantic_search_min_score,
            retrieval=retrieval,
            max_num_archived_messages=max_num_archived_messages,
            max_memory_archived_messages=max_memory_archived_messages,
            embedding_model=embedding_model,
            aws_region=aws_region,
            embedding_dimensions=embedding_dimensions,
            embedder=embedder,
            archive=archive,
            reranker=reranker,
            archive_path=archive_path,
            user_id=user_id,
            clock=clock,
            embedding=embedding,
            memory=memory,
        )
        self.archive_when: ArchiveWhen = archive_when
        self._warm_up = warm_up
        self._agent: weakref.ReferenceType[Any] | None = None
        self._session_id: str | None = None
        self._archived_ids: set[str] = set()
        self._state_cache: tuple[int, str] | None = None
        self._forgotten: set[str] = set()

    # ------------------------------------------------------------------ forgetting

    def forget_when_archived(self, tracking_ids: Iterable[str]) -> None:
        """Never archive these messages: they leave the active context deleted, not archived (nor summarized).

        ``conversation_forget`` calls this for messages still in the active conversation when the user asks to
        forget them (they are not in the archive yet, so forgetting there finds nothing), and for the active
        copies of forgotten archived messages. The ids are saved with the session (only ids, never the text).

        Args:
            tracking_ids: Strands ``tracking_id`` values of the messages.
        """
        self._forgotten.update(str(i) for i in tracking_ids if i)

    @override
    def is_forgotten(self, message: Message) -> bool:
        """Whether ``message`` was forgotten while in the active context (see ``forget_when_archived``)."""
        return bool(self._forgotten) and message.get("tracking_id") in self._forgotten

    @override
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """The compaction hooks, and with ``warm_up=True`` the model's load when the agent is built."""
        super().register_hooks(registry, **kwargs)
        registry.add_callback(AgentInitializedEvent, self._on_agent_initialized)
        registry.add_callback(AfterInvocationEvent, self._on_after_invocation)

    def _on_agent_initialized(self, event: AgentInitializedEvent) -> None:
        """Serve this agent only (the manager holds one conversation), and note its session."""
        held = self._agent() if self._agent is not None else None
        if held is not None and held is not event.agent:
            raise ConfigurationError(
                "this SemanticSummarizingConversationManager already serves another agent: a conversation manager "
                "holds one conversation, so give each agent its own (they may share a SemanticMemory: memory=...)"
            )
        self._agent = weakref.ref(event.agent)
        self._session_id = session_of(event.agent)
        if self._warm_up:
            self.memory.warm_up(wait=False)

    def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        """``archive_when="added"``: archive the messages the invocation added (those not archived yet)."""
        if self.archive_when != "added":
            return
        self._session_id = session_of(event.agent)
        self._find_own_summary(event.agent.messages)
        fresh = [
            m
            for m in event.agent.messages
            if m is not self._summary_message
            and not self.is_forgotten(m)
            and not (isinstance(m.get("tracking_id"), str) and m["tracking_id"] in self._archived_ids)
        ]
        if not fresh:
            return
        try:
            self._archive(fresh)
        except Exception as error:  # the reply is given; what failed is archived when it leaves the context
            logger.warning(
                "messages=<%d>, error=<%s> | archiving the invocation's messages failed; they are archived again "
                "when they leave the active context",
                len(fresh),
                error,
            )

    @override
    def _archive(self, messages: list[Message]) -> list[int]:
        """Archive ``messages`` with the agent's session id; each once, even if a reduction is retried."""
        for message in messages:
            if not message.get("tracking_id"):  # Strands' own id field; the archive is idempotent on it
                message["tracking_id"] = str(uuid.uuid4())
        indices = self.memory.add(messages, session_id=self._session_id)
        self._archived_ids.update(str(m["tracking_id"]) for m in messages)
        logger.debug("archived=<%d>, session_id=<%s> | messages archived", len(messages), self._session_id)
        return indices

    # ------------------------------------------------------------------ stats

    def get_memory_usage_stats(self) -> dict[str, Any]:
        """The archive's usage statistics, plus what left the active context and how.

        Returns:
            ``get_memory_usage_stats`` with ``summarized_message_count`` (left through a summary),
            ``dropped_message_count`` (left without one, archived), ``summary_failure_count`` and ``summary_format``.
        """
        stats = self.memory.get_memory_usage_stats()
        stats["summarized_message_count"] = self.removed_message_count - self._dropped
        stats["dropped_message_count"] = self._dropped
        stats["summary_failure_count"] = self._summary_failures
        stats["summary_format"] = self.summary_format
        return stats

    def get_memory_usage_summary(self) -> str:
        """A one-paragraph, human-readable account of the archive."""
        return _usage_summary(self.get_memory_usage_stats())

    # ------------------------------------------------------------------ session state

    @override
    def get_state(self) -> dict[str, Any]:
        """Strands' state plus the archive and the structured summary, for session managers.

        The archive is stored as one JSON string, re-serialized only when the archive changes. Strands compares
        and deep-copies this state on every added message; a string makes both O(1) however large the archive.
        """
        state = super().get_state()
        version = self.memory.version
        if self._state_cache is None or self._state_cache[0] != version:
            self._state_cache = (version, json.dumps(self.memory.to_state(), separators=(",", ":")))
        state[STATE_KEY] = self._state_cache[1]
        state["dropped_message_count"] = self._dropped
        if self._learned_window is not None:
            state[LEARNED_WINDOW_KEY] = self._learned_window
        if self._forgotten:
            state[FORGOTTEN_KEY] = sorted(self._forgotten)
        if self._summary_object is not None:
            state[SESSION_STATE_KEY] = dump_structured_summary(self._summary_object)
        return state

    @override
    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Restore Strands' state, the archive (without re-embedding), the structured summary and the learned window.

        A state saved by Strands' own ``SummarizingConversationManager`` is accepted (a drop-in swap keeps the
        session); its summary is prose, which the first structured reduction merges into the new state.

        Raises:
            StateError: If the state is another manager's, or the saved archive or session state is corrupt.
            EmbeddingModelMismatchError: If the archive was built with another embedding model than this manager's.
        """
        name = state.get("__name__")
        if name == SummarizingConversationManager.__name__:
            state = {**state, "__name__": type(self).__name__}
        elif name != type(self).__name__:
            raise StateError(f"the session's conversation manager state is a {name!r}'s, not a {type(self).__name__}")
        try:
            summary = self._parse_structured_summary(state.get(SESSION_STATE_KEY))
            forgotten = state.get(FORGOTTEN_KEY, [])
            if not isinstance(forgotten, list) or not all(isinstance(i, str) for i in forgotten):
                raise StateError(f"the session's {FORGOTTEN_KEY} must be a list of tracking ids")
            learned = state.get(LEARNED_WINDOW_KEY)
            if learned is not None and (isinstance(learned, bool) or not isinstance(learned, int) or learned < 1):
                raise StateError(f"the session's {LEARNED_WINDOW_KEY} must be a positive integer, got {learned!r}")
            payload = state.get(STATE_KEY)
            archive_state = json.loads(payload) if isinstance(payload, str) else payload
        except json.JSONDecodeError as error:
            raise StateError(f"the session's archive is not valid JSON: {error}") from error
        except RecursionError as error:
            raise StateError("the session's conversation manager state is nested too deeply") from error
        if archive_state is not None:  # first: it is checked whole, and refused before anything changes
            self.memory.load_state(archive_state)
            logger.info("messages=<%d> | archive restored from session", len(self.memory))
        restored = super().restore_from_session(state)
        self._summary_object = summary
        self._forgotten = set(forgotten)
        self._dropped = int(state.get("dropped_message_count") or 0)
        self._learned_window = learned
        return restored

    def _parse_structured_summary(self, payload: Any) -> BaseModel | None:
        if payload is None:
            return None
        if self.summary_format != "structured":
            logger.info("session_state ignored: summary_format is 'text' (the summary message still carries it)")
            return None
        return load_structured_summary(payload, self.summary_schema)


def _build_memory(*, memory: SemanticMemory | None, **options: Any) -> SemanticMemory:
    """The manager's archive from its options; they cannot be combined with a ready ``memory``."""
    given = sorted(name for name, value in options.items() if value != _ARCHIVE_DEFAULTS[name])
    if memory is not None:
        if given:
            raise ConfigurationError(
                f"memory= cannot be combined with archive options ({', '.join(given)}): set them on the "
                "SemanticMemory you pass, or leave out memory="
            )
        return memory
    kwargs: dict[str, Any] = {
        "embedding_model": options["embedding_model"],
        "top_k": options["semantic_search_top_k"],
        "context_radius": options["message_context_radius"],
        "min_score": options["semantic_search_min_score"],
        "retrieval": options["retrieval"],
        "max_num_archived_messages": options["max_num_archived_messages"],
        "max_memory_archived_messages": options["max_memory_archived_messages"],
        "embedder": options["embedder"],
        "archive": options["archive"],
        "reranker": options["reranker"],
        "aws_region": options["aws_region"],
        "embedding_dimensions": options["embedding_dimensions"],
        "archive_path": options["archive_path"],
        "user_id": options["user_id"],
        "clock": options["clock"],
        "embedding": options["embedding"],
    }
    return SemanticMemory(**kwargs)


def _human_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _usage_summary(stats: dict[str, Any]) -> str:
    lines = [
        f"{stats['message_count']} archived messages ({_human_bytes(stats['total_memory'])}: "
        f"{_human_bytes(stats['message_bytes'])} messages, {_human_bytes(stats['embedding_bytes'])} embeddings, "
        f"{_human_bytes(stats['bookkeeping_bytes'])} bookkeeping)",
        f"embedding model: {stats['embedding_model']}"
        + (f" ({stats['embedding_dimension']} dimensions)" if stats["embedding_dimension"] else ""),
    ]
    limits = []
    if stats["max_num_archived_messages"] is not None:
        limits.append(f"{stats['max_num_archived_messages']} messages")
    if stats["max_memory_archived_messages"] is not None:
        limits.append(f"{_human_bytes(stats['max_memory_archived_messages'])}")
    lines.append("limits: " + (", ".join(limits) if limits else "none") + f"; evicted so far: {stats['evicted_count']}")
    if stats["pending_embedding_count"]:
        error = stats["last_embedding_error"]
        lines.append(
            f"{stats['pending_embedding_count']} messages wait for their embedding"
            + (f" (last error: {error})" if error else "")
        )
    lines.append(
        f"left the active context: {stats['summarized_message_count']} summarized ({stats['summary_format']}), "
        f"{stats['dropped_message_count']} dropped without a summary (archived)"
    )
    return "\n".join(lines)
