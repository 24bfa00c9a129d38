"""The archive store protocol: where the engine keeps archived messages, their vectors and their lexical index.

:class:`~strands_semantic_memory.memory.SemanticMemory` does the work that is the same everywhere (validating,
rendering, embedding, fusing rankings, building windows); an archive store keeps the data and answers the
primitive questions. Two implementations:

- :class:`~strands_semantic_memory.stores.in_memory.InMemoryArchive` (default): records in the process, vectors in
  a :class:`~strands_semantic_memory.stores.base.VectorStore` (FAISS), BM25 in a
  :class:`~strands_semantic_memory.lexical.LexicalIndex`; saved through ``to_state``.
- :class:`~strands_semantic_memory.stores.pgvector_store.PgVectorStore`: one PostgreSQL table per embedding
  dimension, shared by processes; the database is the persistence.

Contract shared by both (and checked by the shared test suite, parametrized by store): indices are handed out in
archive order, never reused, and the live ones form one contiguous run; eviction removes the oldest first, and
removes a message's vectors and lexical entries with it; a message with a known Strands ``tracking_id`` is not
archived twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..embeddings.base import Vectors


@dataclass(frozen=True)
class NewRecord:
    """A message to archive, already encoded and rendered.

    Attributes:
        data: The message as compact JSON (see :func:`~strands_semantic_memory.archive.encode_message`).
        role: The message's role.
        tracking_id: Its Strands tracking id, if any.
        text: Its searchable text (see :mod:`~strands_semantic_memory.rendering`); empty means nothing to embed.
    """

    data: bytes
    role: str
    tracking_id: str | None
    text: str


@dataclass(frozen=True)
class StoreStats:
    """What a store reports about itself (bytes as defined in :mod:`~strands_semantic_memory.archive`)."""

    message_count: int
    total_bytes: int
    message_bytes: int
    vector_count: int
    dimension: int | None
    pending_count: int
    evicted_count: int
    archived_total: int
    oldest_index: int | None
    newest_index: int | None


@runtime_checkable
class ArchiveStore(Protocol):
    """Keeps the archive. The engine serializes calls from one process with its own lock."""

    shared: bool
    """True when the archive lives outside the process (saved state then only references it)."""

    def __len__(self) -> int:
        """Number of archived messages."""
        ...

    @property
    def dimension(self) -> int | None:
        """Vector length, once known."""
        ...

    def add(self, records: Sequence[NewRecord]) -> list[int]:
        """Archive records in order; a record whose ``tracking_id`` is already archived gets its existing index.

        Returns:
            The archive index of each record, same order.
        """
        ...

    def has_pending(self) -> bool:
        """Whether any message waits for its vectors (checked before every search, so it must be cheap)."""
        ...

    def pending(self, exclude: set[int]) -> list[tuple[int, str]]:
        """``(index, text)`` of messages waiting for vectors, oldest first, leaving out ``exclude``."""
        ...

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store each message's chunk vectors (possibly none) and mark it embedded; evicted ones are skipped.

        Returns:
            How many messages were updated.
        """
        ...

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict the oldest messages while a limit is exceeded (never the last one for the byte limit).

        Returns:
            The evicted indices.
        """
        ...

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest messages; returns their indices."""
        ...

    def dense_search(self, vector: Vectors, k: int) -> dict[int, float]:
        """The ``k`` messages whose best chunk is nearest to the unit query vector: index -> cosine similarity."""
        ...

    def lexical_search(self, query: str, k: int) -> dict[int, float]:
        """The ``k`` best lexical matches: index -> score (higher is better)."""
        ...

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each given message's best chunk (messages without vectors left out)."""
        ...

    def get(self, indices: Sequence[int]) -> dict[int, bytes]:
        """The encoded messages of the given live indices (missing ones left out)."""
        ...

    def bounds(self) -> tuple[int, int] | None:
        """``(oldest, newest)`` live index, or None when empty."""
        ...

    def stats(self) -> StoreStats:
        """Counts and bytes."""
        ...

    def export_state(self, model_id: str) -> dict[str, Any]:
        """What ``SemanticMemory.to_state`` saves for this store (JSON types only, versioned)."""
        ...

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Restore from :meth:`export_state` output without embedding; ``reembed`` marks every message pending."""
        ...
