"""The default archive: records in the process, vectors in FAISS, BM25 beside them."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from strands_semantic_memory._validation import check_identifier
from strands_semantic_memory.archives._protocol import (
    ArchiveStats,
    Candidates,
    ContextRequest,
    NewRecord,
    SearchFilter,
    StoredRecord,
)
from strands_semantic_memory.archives._scoring import strongest
from strands_semantic_memory.archives._state import SavedArchive, check_user, dump_state, load_state
from strands_semantic_memory.archives.in_process._columns import Columns, columns_of_saved, fill, to_saved
from strands_semantic_memory.archives.in_process._records import RecordTable, TextOf, default_text_of
from strands_semantic_memory.archives.in_process._search import (
    dense_hits,
    lexical_hits,
    neighbour_context,
    similarities,
)
from strands_semantic_memory.archives.in_process.bm25._index import LexicalIndex
from strands_semantic_memory.archives.in_process.faiss._approximate import ApproximateIndex
from strands_semantic_memory.archives.in_process.faiss._store import FaissIndex
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import DimensionMismatchError
from strands_semantic_memory.messages._codec import key_number, vector_id

logger = logging.getLogger(__name__)

Counted = tuple[Mapping[str, int], int]
"""A text's ``count_terms``."""


class InMemoryArchive:
    """Archived records in a column table addressed by archive index, vectors in FAISS, BM25 beside them.

    The records live in a ``RecordTable`` (typed columns, no object per message); searching is in
    ``in_memory_search``, saving and restoring in ``in_memory_state``. Vector ids encode the archive index
    (``vector_id``), so removing a message removes exactly its vectors. Not
    thread-safe on its own: the engine holds its lock around every call.
    """

    def __init__(self, *, user_id: str | None = None, text_of: TextOf = default_text_of) -> None:
        """Create an empty archive.

        Args:
            user_id: Whose memory it is (None: a user not named); see ``check_identifier``.
            text_of: The searchable text of an archived message's bytes (re-derived when embedding and
                restoring, so the text is never stored twice).

        Raises:
            ConfigurationError: If ``user_id`` is not a valid id.
        """
        self._user_id = check_identifier("user_id", user_id)
        self._text_of = text_of
        self._vectors: FaissIndex | None = None
        self._lexical = LexicalIndex()
        self._table = RecordTable()

    # ------------------------------------------------------------------ protocol properties

    def __len__(self) -> int:
        """Number of live archived messages."""
        return self._table.live

    @property
    def user_id(self) -> str | None:
        """Whose memory this archive is (None: a user not named)."""
        return self._user_id

    @property
    def dimension(self) -> int | None:
        """Vector length, once the first vectors arrived."""
        return self._vectors.dimension if self._vectors is not None else None

    @property
    def vector_store(self) -> FaissIndex | None:
        """The FAISS store (None before the first vectors)."""
        return self._vectors

    @property
    def approximate_index(self) -> ApproximateIndex | None:
        """The vector store's approximate tier (None while exact); the durable archive saves its training."""
        return self._vectors.approximate_index if self._vectors is not None else None

    @property
    def persistent(self) -> bool:
        """False: the archive is saved through ``SemanticMemory.to_state``."""
        return False

    @property
    def thread_safe(self) -> bool:
        """False: the engine's lock serializes calls."""
        return False

    def bind(self, model_id: str) -> None:
        """Nothing to record: the model is checked when state is restored."""

    def close(self) -> None:
        """Nothing to release."""

    @property
    def text_of(self) -> TextOf:
        """The searchable text of an archived message's bytes."""
        return self._text_of

    @property
    def _base(self) -> int:
        """Archive index of the record table's first slot (tests check that the evicted prefix is trimmed)."""
        return self._table.base

    def _vector_bytes(self) -> int:
        return self._vectors.bytes_per_vector if self._vectors is not None else 0

    # ------------------------------------------------------------------ writing

    def add(self, records: Sequence[NewRecord], counted: Sequence[Counted] | None = None) -> list[int]:
        """Archive records (see ``Archive``).

        Args:
            records: The records, in order.
            counted: Each record's ``count_terms``, if the caller has them.
        """
        table, indices = self._table, []
        for n, new in enumerate(records):
            key = key_number(new.key)
            if key is not None and key in table.by_key:
                indices.append(table.by_key[key])
                continue
            terms = self._lexical.add(table.next_index, new.text, counted[n] if counted is not None else None)
            index = table.append(new.data, new.role, key, new.archived_at, new.said_at, new.session_id, terms)
            if new.text.strip():
                table.pending.add(index)
            indices.append(index)
        return indices

    def has_pending(self) -> bool:
        """Whether any message waits for its vectors."""
        return bool(self._table.pending)

    def pending(self, exclude: set[int], limit: int | None = None) -> list[tuple[int, str]]:
        """Messages waiting for vectors, oldest first."""
        waiting = sorted(self._table.pending - exclude)
        if limit is not None:
            waiting = waiting[:limit]
        return [(i, self._text_of(self._table.stored(i).data)) for i in waiting]

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store chunk vectors of pending messages (removed ones skipped)."""
        live = [i for i in vectors if i in self._table.pending]  # pending implies live: removal clears it
        rows = [(i, n) for i in live for n in range(len(vectors[i]))]
        if rows:
            matrix = np.vstack([vectors[i] for i in live if len(vectors[i])])
            if self._vectors is None:
                self._vectors = FaissIndex(int(matrix.shape[1]))
            elif matrix.shape[1] != self._vectors.dimension:
                raise DimensionMismatchError(self._vectors.dimension, int(matrix.shape[1]))
            self._vectors.add(np.array([vector_id(i, n) for i, n in rows], dtype=np.int64), matrix)
        for index in live:
            self._table.set_vector_count(index, len(vectors[index]))
        return len(live)

    # ------------------------------------------------------------------ removal

    def _drop_vectors(self, removed: list[tuple[int, int]]) -> None:
        ids = [vector_id(i, n) for i, count in removed for n in range(count)]
        if ids and self._vectors is not None:
            self._vectors.remove(np.array(ids, dtype=np.int64))

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest live messages."""
        table, removed = self._table, list[tuple[int, int]]()
        while len(removed) < count and table.live:
            index = table.oldest
            removed.append((index, table.remove(index)))
            table.advance_oldest()
        if removed:
            table.evicted_count += len(removed)
            self._lexical.evict_before(table.oldest)
            self._drop_vectors(removed)
        return [i for i, _ in removed]

    def forget(self, indices: Sequence[int]) -> list[int]:
        """Delete the given live messages for good."""
        table = self._table
        targets = sorted({i for i in indices if i in table})
        if not targets:
            return []
        texts = {i: self._text_of(table.stored(i).data) for i in targets}
        removed = [(i, table.remove(i)) for i in targets]
        self._lexical.remove(targets, texts=texts)
        self._drop_vectors(removed)
        table.forgotten_count += len(targets)
        table.advance_oldest()
        if not table.live:
            self._lexical.evict_before(table.next_index)
        return targets

    def forget_all(self) -> int:
        """Delete every message, its vectors and terms: the record table, lexical index and vector store are new.

        The counters go on (the next message gets the index it would have got), so an index is never reused.
        """
        table = self._table
        removed = table.live
        fresh = RecordTable(base=table.next_index)
        fresh.evicted_count = table.evicted_count
        fresh.forgotten_count = table.forgotten_count + removed
        self._table, self._lexical, self._vectors = fresh, LexicalIndex(), None
        return removed

    def find_keys(self, keys: Sequence[str]) -> dict[str, int]:
        """The live index of each record whose idempotency key is among ``keys``."""
        found = {}
        for key in keys:
            number = key_number(key)
            index = self._table.by_key.get(number) if number is not None else None
            if index is not None:
                found[key] = index
        return found

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict oldest-first while a limit is exceeded (one message is always kept for the byte limit)."""
        table = self._table
        excess = table.live - max_count if max_count is not None and table.live > max_count else 0
        if max_bytes is not None:
            vector_bytes = self._vector_bytes()
            total, index, removed = table.total_bytes(vector_bytes), table.oldest, 0
            while removed < excess or (total > max_bytes and table.live - removed > 1):
                if index in table:
                    total -= table.nbytes(index, vector_bytes)
                    removed += 1
                index += 1
            excess = removed
        return self.evict_oldest(excess) if excess else []

    # ------------------------------------------------------------------ reading

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
        """Dense and lexical candidates, the similarity of each, and the neighbours asked for (see the protocol)."""
        table = self._table
        dense = dense_hits(table, self._vectors, vector, dense_k, search_filter) if vector is not None else {}
        lexical = lexical_hits(table, self._lexical, query, lexical_k, search_filter)
        similarity = dict(dense)
        if vector is not None:
            similarity.update(self.similarities(vector, [i for i in lexical if i not in dense]))
        around = None
        if context is not None:
            leading = strongest(dense, lexical, similarity, context)
            found = dense.keys() | lexical.keys()
            around = neighbour_context(table, self._vectors, vector, leading, context, search_filter, found)
        return Candidates(dense=dense, lexical=lexical, similarity=similarity, context=around)

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each message's best chunk."""
        return similarities(self._table, self._vectors, vector, indices)

    def get(self, indices: Sequence[int]) -> dict[int, StoredRecord]:
        """Live records by index."""
        return {i: self._table.stored(i) for i in indices if i in self._table}

    def find_text(self, needle: str) -> list[int]:
        """Live indices whose searchable text contains ``needle`` (case-insensitive)."""
        wanted, table = needle.casefold(), self._table
        return [i for i in table.live_indices() if wanted in self._text_of(table.stored(i).data).casefold()]

    def bounds(self) -> tuple[int, int] | None:
        """Oldest and newest live index."""
        return self._table.bounds()

    def stats(self) -> ArchiveStats:
        """Counts and bytes (bytes as defined in ``_codec``)."""
        table, bounds = self._table, self._table.bounds()
        return ArchiveStats(
            message_count=table.live,
            total_bytes=table.total_bytes(self._vector_bytes()),
            message_bytes=table.message_bytes,
            vector_count=table.vector_count,
            dimension=self.dimension,
            pending_count=len(table.pending),
            evicted_count=table.evicted_count,
            archived_total=table.next_index,
            oldest_index=bounds[0] if bounds else None,
            newest_index=bounds[1] if bounds else None,
            forgotten_count=table.forgotten_count,
        )

    # ------------------------------------------------------------------ state

    def saved_archive(self, model_id: str) -> SavedArchive:
        """The archive as a ``SavedArchive`` (vectors included)."""
        ids, vectors = self._vectors.export() if self._vectors is not None else (None, None)
        return to_saved(self._table, model_id, self.dimension, ids, vectors, self._user_id)

    def export_state(self, model_id: str) -> dict[str, Any]:
        """The full archive, vectors included (see ``_state``)."""
        return dump_state(self.saved_archive(model_id))

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Replace the content with a saved archive; everything is validated before anything changes.

        A state saved for another named user is refused; an archive whose user is not named takes the state's.

        Raises:
            StateError: If the state is corrupt or inconsistent, or another user's.
        """
        self.load_saved(load_state(state), reembed)

    def load_saved(self, saved: SavedArchive, reembed: bool) -> None:
        """Replace the content with a decoded archive (validated and built aside, then swapped in).

        Raises:
            StateError: If the archive is inconsistent, or another user's.
        """
        check_user(saved.user_id, self._user_id, "this archive")
        self.load_columns(columns_of_saved(saved, reembed, self._text_of))
        if self._user_id is None:
            self._user_id = saved.user_id

    def load_columns(self, columns: Columns) -> None:
        """Replace the content with records given as columns, in bulk (validated and built aside, then swapped in).

        Raises:
            StateError: If the columns are inconsistent.
        """
        table, lexical, vectors = fill(columns)
        self._table, self._lexical, self._vectors = table, lexical, vectors
        logger.debug("messages=<%d>, vectors=<%d> | archive restored", len(self), len(columns.vector_ids))
