"""The default vector store: an in-process FAISS index with ids, added to incrementally."""

from __future__ import annotations

import logging

import numpy as np
import numpy.typing as npt

from ..embeddings.base import Vectors
from ..errors import ConfigurationError, DimensionMismatchError, MissingDependencyError
from .base import Ids

logger = logging.getLogger(__name__)


class FaissVectorStore:
    """Exact inner-product search over ``IndexIDMap2(IndexFlatIP)``.

    Exact search keeps results identical to a brute-force scan (tests check this) and is fast enough on CPU
    for the archive sizes a conversation reaches (see ``docs/benchmarks.md``).

    Removal is lazy: removed ids go into a tombstone set that :meth:`search` filters out exactly, and the
    index is compacted once tombstones exceed ``compact_ratio`` of it. Compacting a flat index moves every
    vector after the removed ones, so doing it on each eviction would make eviction at the limit cost
    O(archive size) per archived message.

    Searches run on ``search_threads`` OpenMP threads (default 1). One query per user turn gains nothing from
    more, and on a small machine FAISS's idle OpenMP threads keep spinning and slow down the embedding model that
    shares the cores: measured on 2 cores at 100k vectors, FAISS 21 ms -> 5 ms and query embedding 19 ms -> 10 ms.
    The caller's own OpenMP setting is restored after each search.
    """

    def __init__(
        self, dimension: int, *, compact_ratio: float = 0.1, min_compact: int = 256, search_threads: int | None = 1
    ) -> None:
        """Create an empty store.

        Args:
            dimension: Vector length.
            compact_ratio: Compact when tombstones exceed this fraction of stored vectors.
            min_compact: ... and there are at least this many.
            search_threads: OpenMP threads per search; None leaves FAISS's default (all cores).

        Raises:
            ConfigurationError: If ``dimension`` is not positive.
            MissingDependencyError: If faiss is not installed.
        """
        if dimension <= 0:
            raise ConfigurationError(f"dimension must be > 0, got {dimension}")
        try:
            import faiss
        except ImportError as error:  # faiss-cpu is a core dependency; this guards broken installs
            raise MissingDependencyError("FaissVectorStore", "faiss", "faiss") from error
        self._faiss = faiss
        self._dimension = dimension
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
        self._tombstones: set[int] = set()
        self._compact_ratio = compact_ratio
        self._min_compact = min_compact
        self._search_threads = search_threads

    @property
    def dimension(self) -> int:
        """Vector length."""
        return self._dimension

    def __len__(self) -> int:
        """Number of live vectors."""
        return int(self._index.ntotal) - len(self._tombstones)

    def _check(self, vectors: Vectors) -> Vectors:
        array = np.ascontiguousarray(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape[1] != self._dimension:
            raise DimensionMismatchError(self._dimension, int(array.shape[-1]) if array.ndim else 0)
        return array

    def add(self, ids: Ids, vectors: Vectors) -> None:
        """Add vectors under new ids."""
        array = self._check(vectors)
        id_array = np.ascontiguousarray(ids, dtype=np.int64)
        if len(id_array) != len(array):
            raise ValueError(f"{len(id_array)} ids for {len(array)} vectors")
        if len(id_array):
            self._index.add_with_ids(array, id_array)

    def remove(self, ids: Ids) -> None:
        """Remove ids (lazily; see the class docstring)."""
        self._tombstones.update(int(i) for i in ids)
        if len(self._tombstones) >= max(self._min_compact, self._compact_ratio * self._index.ntotal):
            self.compact()

    def compact(self) -> None:
        """Physically drop tombstoned vectors from the index."""
        if not self._tombstones:
            return
        selector = self._faiss.IDSelectorBatch(np.fromiter(self._tombstones, dtype=np.int64))
        removed = self._index.remove_ids(selector)
        logger.debug("removed=<%d> | compacted faiss index", removed)
        self._tombstones.clear()

    def search(self, query: Vectors, k: int) -> tuple[npt.NDArray[np.float32], Ids]:
        """The ``k`` nearest live vectors (exact)."""
        live = len(self)
        if k <= 0 or live == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        array = self._check(query)
        fetch = min(int(self._index.ntotal), k + len(self._tombstones))
        if self._search_threads is None:
            scores, ids = self._index.search(array, fetch)
        else:
            previous = self._faiss.omp_get_max_threads()
            self._faiss.omp_set_num_threads(self._search_threads)
            try:
                scores, ids = self._index.search(array, fetch)
            finally:
                self._faiss.omp_set_num_threads(previous)
        scores, ids = scores[0], ids[0]
        keep = ids >= 0
        if self._tombstones:
            keep &= ~np.isin(ids, np.fromiter(self._tombstones, dtype=np.int64))
        return scores[keep][:k].astype(np.float32), ids[keep][:k].astype(np.int64)

    def fetch(self, ids: Ids) -> Vectors:
        """The vectors stored under live ids, same order."""
        if not len(ids):
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.vstack([self._index.reconstruct(int(i)) for i in ids]).astype(np.float32)

    def export(self) -> tuple[Ids, Vectors]:
        """All live ids and vectors, in insertion order."""
        total = int(self._index.ntotal)
        if total == 0:
            return np.zeros(0, dtype=np.int64), np.zeros((0, self._dimension), dtype=np.float32)
        ids = self._faiss.vector_to_array(self._index.id_map).astype(np.int64)
        vectors = self._index.index.reconstruct_n(0, total)
        if self._tombstones:
            keep = ~np.isin(ids, np.fromiter(self._tombstones, dtype=np.int64))
            ids, vectors = ids[keep], vectors[keep]
        return ids, np.ascontiguousarray(vectors, dtype=np.float32)

    @property
    def nbytes(self) -> int:
        """Bytes held by vectors (4 per dimension), ids (8) and the reverse id map (about 16 per entry)."""
        return int(self._index.ntotal) * (self._dimension * 4 + 8 + 16)
