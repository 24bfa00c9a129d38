"""The default archive store: records in the process, vectors in FAISS, BM25 beside them."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..archive import ArchivedRecord, decode_message, message_index, vector_id
from ..embeddings.base import Vectors
from ..errors import DimensionMismatchError, StateError
from ..lexical import LexicalIndex
from ..rendering import render_message
from ..state import SavedArchive, SavedRecord, dump_state, load_state
from .archive_store import NewRecord, StoreStats
from .base import VectorStore
from .faiss_store import FaissVectorStore

logger = logging.getLogger(__name__)


class InMemoryArchive:
    """Archived records in a list addressed by archive index, vectors in a :class:`VectorStore`, BM25 beside them.

    Indices are contiguous and evicted oldest-first, so record ``i`` lives at ``self._records[i - self._base]``;
    evicted slots are cleared at once and the list is trimmed in batches (no per-record key objects, which a dict
    would need). Vector ids encode the archive index (:func:`~strands_semantic_memory.archive.vector_id`), so
    evicting a message removes exactly its vectors. Not thread-safe on its own: the engine holds its lock around
    every call.
    """

    shared = False

    def __init__(self, vector_store: VectorStore | None = None) -> None:
        """Create an empty archive.

        Args:
            vector_store: Where vectors go; default: a :class:`FaissVectorStore` created with the first vectors.
        """
        self.vector_store = vector_store
        self._lexical = LexicalIndex()
        self._records: list[ArchivedRecord | None] = []
        self._base = 0  # archive index of self._records[0]
        self._oldest = 0
        self._next_index = 0
        self._by_tracking_id: dict[str, int] = {}
        self._pending: set[int] = set()
        self._total_bytes = 0
        self._message_bytes = 0
        self._vector_count = 0
        self._evicted_count = 0

    def __len__(self) -> int:
        """Number of archived messages."""
        return self._next_index - self._oldest

    def _record(self, index: int) -> ArchivedRecord | None:
        if self._oldest <= index < self._next_index:
            return self._records[index - self._base]
        return None

    def _nbytes(self, record: ArchivedRecord) -> int:
        return record.nbytes(self.dimension or 0)

    @property
    def dimension(self) -> int | None:
        """Vector length, once the first vectors arrived."""
        return self.vector_store.dimension if self.vector_store is not None else None

    # ------------------------------------------------------------------ writing

    def add(self, records: Sequence[NewRecord]) -> list[int]:
        """Archive records (see :class:`~strands_semantic_memory.stores.archive_store.ArchiveStore`)."""
        indices: list[int] = []
        for new in records:
            if new.tracking_id is not None and new.tracking_id in self._by_tracking_id:
                indices.append(self._by_tracking_id[new.tracking_id])
                continue
            index = self._next_index
            self._next_index += 1
            terms = self._lexical.add(index, new.text)
            has_text = bool(new.text.strip())
            record = ArchivedRecord(
                data=new.data,
                role=new.role,
                tracking_id=new.tracking_id,
                vector_count=0,
                pending=has_text,
                lexical_terms=terms,
            )
            self._records.append(record)
            self._total_bytes += self._nbytes(record)
            self._message_bytes += len(record.data)
            if new.tracking_id is not None:
                self._by_tracking_id[new.tracking_id] = index
            if has_text:
                self._pending.add(index)
            indices.append(index)
        return indices

    def has_pending(self) -> bool:
        """Whether any message waits for its vectors."""
        return bool(self._pending)

    def pending(self, exclude: set[int]) -> list[tuple[int, str]]:
        """Messages waiting for vectors, oldest first."""
        return [(i, render_message(self._records[i - self._base].message)) for i in sorted(self._pending - exclude)]  # type: ignore[union-attr]

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store chunk vectors of pending messages (evicted ones skipped)."""
        live = [i for i in vectors if i in self._pending]  # pending implies live: eviction clears it
        rows = [(i, n) for i in live for n in range(len(vectors[i]))]
        if rows:
            matrix = np.vstack([vectors[i] for i in live if len(vectors[i])])
            if self.vector_store is None:
                self.vector_store = FaissVectorStore(int(matrix.shape[1]))
            elif matrix.shape[1] != self.vector_store.dimension:
                raise DimensionMismatchError(self.vector_store.dimension, int(matrix.shape[1]))
            self.vector_store.add(np.array([vector_id(i, n) for i, n in rows], dtype=np.int64), matrix)
        for index in live:
            record = self._records[index - self._base]
            assert record is not None
            self._total_bytes -= self._nbytes(record)
            record.vector_count = len(vectors[index])
            self._vector_count += record.vector_count
            record.pending = False
            self._total_bytes += self._nbytes(record)
            self._pending.discard(index)
        return len(live)

    # ------------------------------------------------------------------ eviction

    def _evict(self, count: int) -> list[int]:
        evicted: list[tuple[int, int]] = []
        for _ in range(min(count, len(self))):
            index = self._oldest
            record = self._records[index - self._base]
            assert record is not None
            self._records[index - self._base] = None  # release it now; the slot is trimmed in batches
            self._oldest += 1
            self._total_bytes -= self._nbytes(record)
            self._message_bytes -= len(record.data)
            self._vector_count -= record.vector_count
            self._pending.discard(index)
            if record.tracking_id is not None:
                self._by_tracking_id.pop(record.tracking_id, None)
            evicted.append((index, record.vector_count))
        dead = self._oldest - self._base
        if dead and dead >= max(1024, len(self)):
            del self._records[:dead]
            self._base = self._oldest
        if evicted:
            self._evicted_count += len(evicted)
            self._lexical.evict_before(self._oldest)
            ids = [vector_id(i, n) for i, count in evicted for n in range(count)]
            if ids and self.vector_store is not None:
                self.vector_store.remove(np.array(ids, dtype=np.int64))
        return [i for i, _ in evicted]

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest messages."""
        return self._evict(count)

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict oldest-first while a limit is exceeded (one message is always kept for the byte limit)."""
        excess = 0
        if max_count is not None and len(self) > max_count:
            excess = len(self) - max_count
        if max_bytes is not None:
            total, index = self._total_bytes, self._oldest
            for _ in range(excess):
                total -= self._nbytes(self._records[index - self._base])  # type: ignore[arg-type]
                index += 1
            while total > max_bytes and len(self) - excess > 1:
                total -= self._nbytes(self._records[index - self._base])  # type: ignore[arg-type]
                index += 1
                excess += 1
        return self._evict(excess)

    # ------------------------------------------------------------------ reading

    def dense_search(self, vector: Vectors, k: int) -> dict[int, float]:
        """Nearest messages by their best chunk."""
        store = self.vector_store
        if store is None or len(store) == 0 or k <= 0:
            return {}
        best: dict[int, float] = {}
        fetch = k
        while True:
            scores, ids = store.search(vector, fetch)
            best.clear()
            for score, vid in zip(scores.tolist(), ids.tolist(), strict=True):
                index = message_index(vid)
                if self._oldest <= index < self._next_index and index not in best:
                    best[index] = float(score)
            if len(best) >= k or len(ids) < fetch:
                return best
            fetch *= 2  # several chunks of one message matched; look further for distinct messages

    def lexical_search(self, query: str, k: int) -> dict[int, float]:
        """BM25 matches."""
        scores, ids = self._lexical.search(query, k)
        return {
            i: s for i, s in zip(ids.tolist(), scores.tolist(), strict=True) if self._oldest <= i < self._next_index
        }

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each message's best chunk."""
        owners = [(i, n) for i in indices if (r := self._record(i)) is not None for n in range(r.vector_count)]
        if self.vector_store is None or not owners:
            return {}
        vectors = self.vector_store.fetch(np.array([vector_id(i, n) for i, n in owners], dtype=np.int64))
        result: dict[int, float] = {}
        for (index, _), score in zip(owners, (vectors @ vector[0]).tolist(), strict=True):
            result[index] = max(result.get(index, -1.0), float(score))
        return result

    def get(self, indices: Sequence[int]) -> dict[int, bytes]:
        """Encoded messages by index."""
        return {i: r.data for i in indices if (r := self._record(i)) is not None}

    def bounds(self) -> tuple[int, int] | None:
        """Oldest and newest live index."""
        return (self._oldest, self._next_index - 1) if len(self) else None

    def stats(self) -> StoreStats:
        """Counts and bytes."""
        count = len(self)
        return StoreStats(
            message_count=count,
            total_bytes=self._total_bytes,
            message_bytes=self._message_bytes,
            vector_count=self._vector_count,
            dimension=self.dimension,
            pending_count=len(self._pending),
            evicted_count=self._evicted_count,
            archived_total=self._next_index,
            oldest_index=self._oldest if count else None,
            newest_index=self._oldest + count - 1 if count else None,
        )

    # ------------------------------------------------------------------ state

    def export_state(self, model_id: str) -> dict[str, Any]:
        """The full archive, vectors included (see :mod:`~strands_semantic_memory.state`)."""
        if self.vector_store is not None:
            ids, vectors = self.vector_store.export()
        else:
            ids, vectors = np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        return dump_state(
            SavedArchive(
                model_id=model_id,
                dimension=self.dimension,
                next_index=self._next_index,
                evicted_count=self._evicted_count,
                records=[
                    SavedRecord(index=i, data=r.data, vectors=r.vector_count, pending=r.pending)
                    for i in range(self._oldest, self._next_index)
                    if (r := self._records[i - self._base]) is not None
                ],
                vector_ids=ids,
                vectors=vectors,
            )
        )

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Replace the content with a saved archive (validated first; nothing changes if it is invalid).

        Args:
            state: What :meth:`export_state` produced.
            reembed: Drop the saved vectors and mark every message with text pending.

        Raises:
            StateError: If the state is corrupt or inconsistent.
        """
        saved = load_state(state)
        counts: dict[int, int] = {}
        for vid in saved.vector_ids.tolist():
            counts[message_index(vid)] = counts.get(message_index(vid), 0) + 1
        if len(set(saved.vector_ids.tolist())) != len(saved.vector_ids):
            raise StateError("saved state has duplicate vector ids")
        expected = list(range(saved.records[0].index, saved.records[-1].index + 1)) if saved.records else []
        if [r.index for r in saved.records] != expected:
            raise StateError("saved state records are not one contiguous run of indices")
        lexical = LexicalIndex()  # rebuilt from the messages: tokenizing is cheap, and no embedder is called
        records: list[ArchivedRecord | None] = []
        for raw in saved.records:
            if counts.get(raw.index, 0) != raw.vectors:
                raise StateError(
                    f"saved state record {raw.index} claims {raw.vectors} vectors but {counts.get(raw.index, 0)} "
                    "are stored"
                )
            message = decode_message(raw.data)
            text = render_message(message)
            terms = lexical.add(raw.index, text)
            vectors = 0 if reembed else raw.vectors
            records.append(
                ArchivedRecord(
                    data=raw.data,
                    role=str(message.get("role")),
                    tracking_id=message.get("tracking_id") or None,
                    vector_count=vectors,
                    pending=bool(text.strip()) if reembed else raw.pending,
                    lexical_terms=terms,
                )
            )
        if set(counts) - {r.index for r in saved.records}:
            raise StateError("saved state has vectors for messages that are not in it")
        store: VectorStore | None = None
        if not reembed and saved.dimension is not None and len(saved.vector_ids):
            store = FaissVectorStore(saved.dimension)
            store.add(saved.vector_ids, saved.vectors)  # saved as stored: already unit length
        self.vector_store = store
        self._lexical = lexical
        self._records = records
        self._oldest = self._base = saved.records[0].index if saved.records else saved.next_index
        if saved.records and saved.records[-1].index + 1 != saved.next_index:
            raise StateError("saved state's next_index does not follow its newest record")
        self._next_index = saved.next_index
        live = [(raw.index, r) for raw, r in zip(saved.records, records, strict=True) if r is not None]
        self._by_tracking_id = {r.tracking_id: i for i, r in live if r.tracking_id}
        self._pending = {i for i, r in live if r.pending}
        self._total_bytes = sum(self._nbytes(r) for _, r in live)
        self._message_bytes = sum(len(r.data) for _, r in live)
        self._vector_count = sum(r.vector_count for _, r in live)
        self._evicted_count = saved.evicted_count
        logger.debug("messages=<%d>, vectors=<%d> | archive restored", len(records), len(saved.vector_ids))
