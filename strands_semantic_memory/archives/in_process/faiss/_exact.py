"""The exact tier of the in-process vector store: a flat FAISS index with lazy removal."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.archives.in_process._types import Ids
from strands_semantic_memory.embeddings._base import Vectors

logger = logging.getLogger(__name__)


class ExactIndex:
    """``IndexIDMap(IndexFlatIP)``: results identical to a brute-force scan.

    Ids are looked up by position in FAISS's own id array (binary search, since the engine adds ids in ascending
    order), so there is no reverse id map: ``IndexIDMap2``'s costs 40-50 bytes per vector. Removal is lazy: removed
    ids go into a tombstone set that ``search`` excludes exactly (an id selector, so ``k`` is not inflated), and
    the index is compacted once tombstones exceed ``compact_ratio`` of it. Compacting a flat index moves every
    vector after the removed ones, so doing it on each eviction would make eviction at the limit cost O(archive
    size) per archived message.
    """

    def __init__(self, faiss: Any, dimension: int, compact_ratio: float, min_compact: int) -> None:
        """Create an empty index (``faiss``: the imported module; the options as in ``FaissIndex``)."""
        self._faiss = faiss
        self._dimension = dimension
        self._compact_ratio = compact_ratio
        self._min_compact = min_compact
        self._index: Any = faiss.IndexIDMap(faiss.IndexFlatIP(dimension))
        self._tombstones: set[int] = set()
        self._selector: Any = None  # excludes the tombstones at search; rebuilt when they change
        self._ascending = True  # ids in the index are in ascending order (the engine's order)
        self._order: npt.NDArray[np.int64] | None = None  # argsort of the ids when they are not ascending

    def __len__(self) -> int:
        """Number of live vectors."""
        return int(self._index.ntotal) - len(self._tombstones)

    @property
    def bytes_per_vector(self) -> int:
        """The vector (float32) and its int64 id."""
        return self._dimension * 4 + 8

    @property
    def nbytes(self) -> int:
        """Bytes held by vectors and ids, tombstoned ones included until compaction."""
        return int(self._index.ntotal) * self.bytes_per_vector

    def _ids(self) -> Ids:
        """A view of the index's ids by position (valid until the index changes)."""
        total = int(self._index.ntotal)
        if total == 0:
            return np.zeros(0, dtype=np.int64)
        view: Ids = self._faiss.rev_swig_ptr(self._index.id_map.data(), total)
        return view

    def _vectors(self) -> Vectors:
        """A view of the index's vectors by position (valid until the index changes)."""
        total = int(self._index.ntotal)
        if total == 0:
            return np.zeros((0, self._dimension), dtype=np.float32)
        inner = self._faiss.downcast_index(self._index.index)
        view: Vectors = self._faiss.rev_swig_ptr(inner.get_xb(), total * self._dimension)
        return view.reshape(total, self._dimension)

    def positions(self, ids: Ids) -> npt.NDArray[np.int64]:
        """Positions of ids in the index, -1 for ids it does not hold."""
        stored = self._ids()
        wanted = np.asarray(ids, dtype=np.int64)
        if not len(stored) or not len(wanted):
            return np.full(len(wanted), -1, dtype=np.int64)
        if self._ascending:
            found = np.searchsorted(stored, wanted)
            clipped = np.minimum(found, len(stored) - 1)
            return np.where(stored[clipped] == wanted, clipped, -1).astype(np.int64)
        if self._order is None:  # out-of-order adds (an embedding retried later): sort once until the next change
            self._order = np.argsort(stored, kind="stable").astype(np.int64)
        ordered = stored[self._order]
        found = np.minimum(np.searchsorted(ordered, wanted), len(ordered) - 1)
        return np.where(ordered[found] == wanted, self._order[found], -1).astype(np.int64)

    def add(self, ids: Ids, vectors: Vectors) -> None:
        """Add checked vectors under new ids."""
        stored = self._ids()
        if self._ascending and ((len(stored) and ids[0] <= stored[-1]) or (len(ids) > 1 and np.any(np.diff(ids) <= 0))):
            self._ascending = False
            logger.debug("ids=<%d> | ids added out of order, positional lookups now sort", len(ids))
        self._index.add_with_ids(vectors, ids)
        self._order = None

    def remove(self, ids: Ids) -> None:
        """Tombstone unique ids; unknown ones are ignored. Compacts once tombstones pass the ratio."""
        present = ids[self.positions(ids) >= 0]
        fresh = [i for i in present.tolist() if i not in self._tombstones]
        if not fresh:
            return
        self._tombstones.update(fresh)
        self._selector = None
        if len(self._tombstones) >= max(self._min_compact, self._compact_ratio * self._index.ntotal):
            self.compact()

    def compact(self) -> None:
        """Physically drop tombstoned vectors."""
        if not self._tombstones:
            return
        selector = self._faiss.IDSelectorBatch(np.fromiter(self._tombstones, dtype=np.int64))
        removed = self._index.remove_ids(selector)  # keeps the order of the remaining vectors
        logger.debug("removed=<%d> | compacted faiss index", removed)
        self._tombstones.clear()
        self._selector = None
        self._order = None

    def search(self, query: Vectors, k: int) -> tuple[npt.NDArray[np.float32], Ids]:
        """The ``k`` nearest live vectors of a checked query (``k`` at most the live count)."""
        params = None
        if self._tombstones:
            if self._selector is None:
                batch = self._faiss.IDSelectorBatch(np.fromiter(self._tombstones, dtype=np.int64))
                self._selector = (batch, self._faiss.IDSelectorNot(batch))  # keep batch alive beside its user
            params = self._faiss.SearchParameters(sel=self._selector[1])
        scores, ids = self._index.search(query, k, params=params)
        return scores, ids

    def fetch(self, ids: Ids) -> Vectors:
        """The vectors stored under live ids, same order.

        Raises:
            KeyError: If an id is not stored.
        """
        positions = self.positions(ids)
        if np.any(positions < 0):
            raise KeyError(f"vector ids not stored: {ids[positions < 0][:5].tolist()}")
        return np.array(self._vectors()[positions], dtype=np.float32)

    def export(self) -> tuple[Ids, Vectors]:
        """All live ids and vectors, ascending by id."""
        stored, vectors = self._ids(), self._vectors()
        keep = np.ones(len(stored), dtype=bool)
        if self._tombstones:
            keep &= ~np.isin(stored, np.fromiter(self._tombstones, dtype=np.int64))
        ids = np.array(stored[keep], dtype=np.int64)
        live = np.array(vectors[keep], dtype=np.float32)
        if not self._ascending:
            order = np.argsort(ids, kind="stable")
            ids, live = ids[order], live[order]
        return ids, live
