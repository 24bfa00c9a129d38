"""SemanticSummarizingConversationManager: Strands' summarizing manager that archives what it summarizes away."""

from __future__ import annotations

import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from strands.agent.conversation_manager import SummarizingConversationManager
from strands.agent.conversation_manager.conversation_manager import ProactiveCompressionConfig
from strands.types.content import Message
from strands.types.exceptions import ContextWindowOverflowException

from .embeddings import DEFAULT_MODEL, Embedder
from .errors import StateError
from .memory import SemanticMemory
from .rendering import is_summary, original_message, set_marker
from .rerank import Reranker
from .stores import ArchiveStore, VectorStore

if TYPE_CHECKING:
    from strands.agent.agent import Agent

logger = logging.getLogger(__name__)

STATE_KEY = "semantic_memory"
"""Key of the archive in the manager's session state (a JSON string; see :meth:`get_state`)."""


class SemanticSummarizingConversationManager(SummarizingConversationManager):
    """Summarizes old messages like Strands' ``SummarizingConversationManager``, and archives them verbatim first.

    On every reduction (reactive, after a ``ContextWindowOverflowException``, or proactive), the messages leaving
    the active context are archived into :attr:`memory` **before** the summary is generated, so a failing
    summary call loses nothing: the messages stay in the conversation and are already archived (archiving is
    idempotent per message, so the retry does not archive them twice). The summary is produced by Strands' own
    path (the model called directly, or your ``summarization_agent``), never by calling the agent.

    What is archived is the user's and the model's own content: the previous summary is never archived, and
    context injected by :class:`~strands_semantic_memory.hook.SemanticMemoryHook` is removed first (also from
    what the summarizer sees).

    With a Strands session manager, the archive is saved in this manager's session state and restored without
    re-embedding.
    """

    def __init__(
        self,
        summary_ratio: float = 0.3,
        preserve_recent_messages: int = 8,
        summarization_agent: Agent | None = None,
        summarization_system_prompt: str | None = None,
        *,
        pin_first: int | None = None,
        proactive_compression: bool | ProactiveCompressionConfig | None = None,
        message_context_radius: int = 2,
        semantic_search_top_k: int = 3,
        semantic_search_min_score: float | None = None,
        retrieval: str = "hybrid",
        max_num_archived_messages: int | None = 1000,
        max_memory_archived_messages: int | None = 50 * 1024 * 1024,
        embedding_model: str = DEFAULT_MODEL,
        aws_region: str | None = None,
        embedding_dimensions: int | None = None,
        embedder: Embedder | None = None,
        store: ArchiveStore | VectorStore | None = None,
        reranker: Reranker | None = None,
        memory: SemanticMemory | None = None,
    ) -> None:
        """Create the manager.

        Args:
            summary_ratio: Share of the messages summarized per reduction (0.1-0.8, as in Strands).
            preserve_recent_messages: Recent messages never summarized.
            summarization_agent: Optional agent that writes the summary (Strands option).
            summarization_system_prompt: Optional system prompt for the summary (Strands option).
            pin_first: Messages at the start pinned in context (Strands option).
            proactive_compression: Compress before overflow (Strands option; ``True`` or
                ``{"compression_threshold": 0.7}``).
            message_context_radius: Neighbouring archived messages added on each side of a hit.
            semantic_search_top_k: Hits per search.
            semantic_search_min_score: Minimum cosine similarity of a hit (-1..1), in every retrieval mode; None
                keeps all.
            retrieval: ``"hybrid"`` (BM25 + dense, fused; default), ``"dense"`` or ``"lexical"``.
            max_num_archived_messages: Archive at most this many messages (oldest evicted); None: no limit.
            max_memory_archived_messages: Archive at most this many estimated bytes; None: no limit.
            embedding_model: Local sentence-transformers model or ``"bedrock:<model id>"``.
            aws_region: Bedrock region.
            embedding_dimensions: Bedrock output dimension, where the model offers a choice.
            embedder: A ready embedder instead of ``embedding_model``.
            store: Where the archive lives: ``PgVectorStore(dsn=..., namespace=...)`` to share it between
                processes, or a vector store for the in-process archive (default: in process, FAISS).
            reranker: An optional reranker (for example ``CrossEncoderReranker``).
            memory: A ready :class:`SemanticMemory`; when given, the archive options above are ignored.
        """
        super().__init__(
            summary_ratio=summary_ratio,
            preserve_recent_messages=preserve_recent_messages,
            summarization_agent=summarization_agent,
            summarization_system_prompt=summarization_system_prompt,
            pin_first=pin_first,
            proactive_compression=proactive_compression,
        )
        self.memory: SemanticMemory = memory or SemanticMemory(
            embedding_model=embedding_model,
            top_k=semantic_search_top_k,
            context_radius=message_context_radius,
            min_score=semantic_search_min_score,
            retrieval=retrieval,
            max_num_archived_messages=max_num_archived_messages,
            max_memory_archived_messages=max_memory_archived_messages,
            embedder=embedder,
            store=store,
            reranker=reranker,
            aws_region=aws_region,
            embedding_dimensions=embedding_dimensions,
        )
        self._state_cache: tuple[int, str] | None = None

    def _summarize_oldest(self, agent: Agent) -> None:
        """Run Strands' reduction, undoing its message count if it fails (nothing left the context then)."""
        removed_before = self.removed_message_count
        try:
            super()._summarize_oldest(agent)
        except BaseException:
            self.removed_message_count = removed_before
            raise

    def _generate_summary(self, messages: list[Message], agent: Agent) -> Message:
        """Archive the messages leaving the context, then summarize them.

        Args:
            messages: The messages leaving the active context (the previous summary first, if any).
            agent: The agent.

        Returns:
            The summary message, marked as a summary so it is never archived.

        Raises:
            Exception: If archiving or summarizing fails; the messages are then still in the conversation.
        """
        for message in messages:
            if not message.get("tracking_id"):  # archive each message once, even if this reduction is retried
                message["tracking_id"] = str(uuid.uuid4())
        # The user's and the model's own words: no previous summary, no injected context.
        clean = {id(m): original_message(m) for m in messages if m is not self._summary_message and not is_summary(m)}
        if not clean:
            # Only the previous summary would be summarized again: nothing leaves the context, and Strands retries
            # overflow recovery without a cap, so re-summarizing the summary would loop. Say so instead.
            raise ContextWindowOverflowException(
                "Cannot summarize: only the previous summary is outside the preserved recent messages; "
                "lower preserve_recent_messages or raise the model's context window"
            )
        self.memory.archive(list(clean.values()))
        logger.debug("archived=<%d> | messages archived before summarization", len(clean))
        summary_input = [clean.get(id(m), m) for m in messages]
        summary = super()._generate_summary(summary_input, agent)
        set_marker(summary, kind="summary")
        return summary

    # ------------------------------------------------------------------ stats

    def get_memory_usage_stats(self) -> dict[str, Any]:
        """The archive's usage statistics, plus how many messages left the active context.

        Returns:
            :meth:`SemanticMemory.get_memory_usage_stats` with ``summarized_message_count`` added.
        """
        stats = self.memory.get_memory_usage_stats()
        stats["summarized_message_count"] = self.removed_message_count
        return stats

    def get_memory_usage_summary(self) -> str:
        """A one-paragraph, human-readable account of the archive."""
        stats = self.get_memory_usage_stats()
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
        lines.append(
            "limits: " + (", ".join(limits) if limits else "none") + f"; evicted so far: {stats['evicted_count']}"
        )
        if stats["pending_embedding_count"]:
            lines.append(
                f"{stats['pending_embedding_count']} messages wait for their embedding "
                f"(last error: {stats['last_embedding_error']})"
            )
        lines.append(f"summarized away from the active context: {stats['summarized_message_count']}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ session state

    def get_state(self) -> dict[str, Any]:
        """Strands' state plus the archive, for session managers.

        The archive is stored as one JSON string, re-serialized only when the archive changes. Strands compares
        and deep-copies this state on every added message; a string makes both O(1) however large the archive.
        """
        state = super().get_state()
        version = self.memory.version
        if self._state_cache is None or self._state_cache[0] != version:
            self._state_cache = (version, json.dumps(self.memory.to_state(), separators=(",", ":")))
        state[STATE_KEY] = self._state_cache[1]
        return state

    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Restore Strands' state and the archive (without re-embedding).

        Raises:
            StateError: If the saved archive is corrupt.
            EmbeddingModelMismatchError: If it was built with another embedding model than this manager's.
        """
        restored = super().restore_from_session(state)
        payload = state.get(STATE_KEY)
        if payload is not None:
            try:
                archive_state = json.loads(payload) if isinstance(payload, str) else payload
            except json.JSONDecodeError as error:
                raise StateError(f"the session's archive is not valid JSON: {error}") from error
            self.memory.load_state(archive_state)
            logger.info("messages=<%d> | archive restored from session", len(self.memory))
        return restored


def _human_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
