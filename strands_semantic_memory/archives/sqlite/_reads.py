"""Reads answered by an in-process archive: the part of the store protocol a durable store only forwards."""

from __future__ import annotations

from collections.abc import Sequence

from strands_semantic_memory.archives._protocol import Candidates, ContextRequest, SearchFilter, StoredRecord
from strands_semantic_memory.archives.in_process._archive import InMemoryArchive
from strands_semantic_memory.embeddings._base import Vectors


class InProcessReads:
    """The reads of the store protocol, forwarded to ``self._memory``.

    ``self._memory`` is the ``InMemoryArchive`` a durable store keeps
    in step with its file; the forwarding is written once here, so the durable store holds only what differs.
    """

    _memory: InMemoryArchive

    def __len__(self) -> int:
        """Number of live archived messages."""
        return len(self._memory)

    @property
    def thread_safe(self) -> bool:
        """False: the engine's lock serializes calls."""
        return False

    def has_pending(self) -> bool:
        """Whether any message waits for its vectors."""
        return self._memory.has_pending()

    def pending(self, exclude: set[int], limit: int | None = None) -> list[tuple[int, str]]:
        """Messages waiting for vectors, oldest first."""
        return self._memory.pending(exclude, limit)

    def candidates(
        self,
        vector: Vectors | None,
        query: str,
        dense_k: int,
        lexical_k: int,
        search_filter: SearchFilter | None = None,
        *,
        context: ContextRequest | None = None,
    ) -> Candidates:
        """Dense and lexical candidates, their similarities and the neighbours asked for (see the protocol)."""
        return self._memory.candidates(vector, query, dense_k, lexical_k, search_filter, context=context)

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each message's best chunk."""
        return self._memory.similarities(vector, indices)

    def get(self, indices: Sequence[int]) -> dict[int, StoredRecord]:
        """Live records by index."""
        return self._memory.get(indices)

    def find_keys(self, keys: Sequence[str]) -> dict[str, int]:
        """The live index of each record whose idempotency key is among ``keys``."""
        return self._memory.find_keys(keys)

    def find_text(self, needle: str) -> list[int]:
        """Live indices whose searchable text contains ``needle`` (case-insensitive)."""
        return self._memory.find_text(needle)

    def bounds(self) -> tuple[int, int] | None:
        """Oldest and newest live index."""
        return self._memory.bounds()
