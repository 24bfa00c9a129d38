"""MemoryStats: what ``SemanticMemory.stats()`` reports, typed; ``as_dict()`` is the dict users already read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strands_semantic_memory.archives._protocol import ArchiveStats
    from strands_semantic_memory.embeddings._checked import CheckedEmbedder
    from strands_semantic_memory.engine._options import MemoryOptions
    from strands_semantic_memory.engine.embedding import EmbeddingQueue
    from strands_semantic_memory.retrieval._ranking_options import Retrieval


@dataclass(frozen=True)
class MemoryStats:
    """Usage statistics of one memory (bytes are estimates; see ``_codec``).

    Attributes:
        message_count: Live archived messages.
        total_memory: Estimated bytes of the archive.
        message_bytes: Bytes of the archived messages themselves.
        embedding_bytes: Bytes of their vectors.
        bookkeeping_bytes: The rest (ids, lexical postings, record overhead).
        vector_count: Stored vectors (a long message has several).
        embedding_dimension: Vector length, once known.
        embedding_model: The embedder's model id.
        retrieval: The retrieval mode.
        archive: The archive's class name.
        pending_embedding_count: Messages waiting for their vectors.
        last_embedding_error: The last embedding failure, until an embedding succeeds again.
        evicted_count: Messages evicted by the limits so far.
        forgotten_count: Messages deleted on request so far.
        archived_total: Messages ever archived (the next archive index).
        oldest_index: Oldest live index.
        newest_index: Newest live index.
        max_num_archived_messages: The count limit.
        max_memory_archived_messages: The byte limit.
        memory_utilization: ``total_memory / max_memory_archived_messages``, or None without a byte limit.
        searches: Searches run.
        query_cache_hits: Searches whose query embedding came from the cache.
        embedding_failures: Failed embedding calls.
        degraded: Why searches are lexical only and archived messages wait for their vectors (the embedding model
            is unavailable; a warning was logged once); None while the model works or was not needed yet.
        unembedded_at_last_search: Pending messages the last search matched by their words only (with
            ``embedding="background"`` a search embeds the 32 newest pending messages itself; those beyond, rejected
            ones waiting for their retry, and all of them while the embedder fails, are not); 0 when it scored
            every pending message by meaning, or nothing was pending.
    """

    message_count: int
    total_memory: int
    message_bytes: int
    embedding_bytes: int
    bookkeeping_bytes: int
    vector_count: int
    embedding_dimension: int | None
    embedding_model: str
    retrieval: Retrieval
    archive: str
    pending_embedding_count: int
    last_embedding_error: str | None
    evicted_count: int
    forgotten_count: int
    archived_total: int
    oldest_index: int | None
    newest_index: int | None
    max_num_archived_messages: int | None
    max_memory_archived_messages: int | None
    memory_utilization: float | None
    searches: int
    query_cache_hits: int
    embedding_failures: int
    degraded: str | None = None
    unembedded_at_last_search: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The statistics as a plain dict (the shape of ``get_memory_usage_stats()``)."""
        return dataclasses.asdict(self)


def build_stats(
    stats: ArchiveStats,
    options: MemoryOptions,
    embedding_model: str,
    archive: str,
    queue: EmbeddingQueue,
    checked: CheckedEmbedder,
    searches: int,
) -> MemoryStats:
    """Combine an archive's own figures with the engine's counters and options."""
    embedding_bytes = stats.vector_count * (stats.dimension or 0) * 4
    limit = options.max_memory_archived_messages
    return MemoryStats(
        message_count=stats.message_count,
        total_memory=stats.total_bytes,
        message_bytes=stats.message_bytes,
        embedding_bytes=embedding_bytes,
        bookkeeping_bytes=stats.total_bytes - stats.message_bytes - embedding_bytes,
        vector_count=stats.vector_count,
        embedding_dimension=stats.dimension,
        embedding_model=embedding_model,
        retrieval=options.retrieval,
        archive=archive,
        pending_embedding_count=stats.pending_count,
        last_embedding_error=queue.last_error,
        evicted_count=stats.evicted_count,
        forgotten_count=stats.forgotten_count,
        archived_total=stats.archived_total,
        oldest_index=stats.oldest_index,
        newest_index=stats.newest_index,
        max_num_archived_messages=options.max_num_archived_messages,
        max_memory_archived_messages=limit,
        memory_utilization=stats.total_bytes / limit if limit else None,
        searches=searches,
        query_cache_hits=checked.cache_hits,
        embedding_failures=queue.failures,
        degraded=checked.unavailable,
        unembedded_at_last_search=queue.last_search_unembedded,
    )
