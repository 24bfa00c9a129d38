"""The default vector store: in-process FAISS, exact below a size threshold and approximate (IVF) above it."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..embeddings.base import Vectors
from ..errors import ConfigurationError, DimensionMismatchError, MissingDependencyError
from .base import Ids

logger = logging.getLogger(__name__)

DEFAULT_APPROXIMATE_ABOVE = 200_000
"""Vectors above which :class:`FaissVectorStore` switches to its approximate index (see the class docstring)."""

_T = TypeVar("_T")


class FaissVectorStore:
    """Inner-product search over FAISS: exact up to ``approximate_above`` vectors, approximate (IVF) beyond.

    **Exact tier** (the default size of a conversation): ``IndexIDMap(IndexFlatIP)``. Results are identical to a
    brute-force scan (tests check this). Ids are looked up by position in FAISS's own id array (binary search,
    since the engine adds ids in ascending order), so there is no reverse id map: ``IndexIDMap2``'s costs 40-50
    bytes per vector. Removal is lazy: removed ids go into a tombstone set that :meth:`search` excludes exactly
    (an id selector, so ``k`` is not inflated), and the index is compacted once tombstones exceed
    ``compact_ratio`` of it. Compacting a flat index moves every vector after the removed ones, so doing it on each
    eviction would make eviction at the limit cost O(archive size) per archived message.

    **Approximate tier**: exact search grows linearly (about 5 ms at 100k vectors on one idle core, 10 ms at 200k).
    Once the store holds more than ``approximate_above`` vectors it trains an inverted-file index
    (``IndexIVFScalarQuantizer``, spherical k-means, vectors kept as float16) on a sample of its vectors and moves
    them into it; it moves back to the exact tier when it shrinks below half the threshold. ``nprobe`` lists
    (about 3% of the vectors) are scanned per search. Measured on 2 shared cores (``benchmarks/scale.py``, vectors
    drawn like the bundled model's embeddings, real query embeddings): at 1M vectors a search costs 2.8 ms of CPU
    with recall@10 of 0.991 against exact search, and a 384-dimension vector takes 1.05 KB of process memory
    instead of 1.55 KB. float16 changes a cosine by about 1e-4, far below what reorders neighbours. Data without
    neighbourhoods (one Gaussian) is much harder: raise ``nprobe`` there. A filtered search (roles, dates) only
    sees the probed lists, so a very selective filter can miss matches that exact search would find.

    IVF was chosen over HNSW, measured at 200k vectors: HNSW (M=32) took 242 s to build against 9-27 s for IVF
    (training and adding), cannot remove vectors (eviction would need tombstones and rebuilds of minutes at 1M),
    costs 130-270 bytes of graph per vector, and adds about 1 ms per vector; at equal search time its recall was
    higher only on the Gaussian stress data. The switch is a one-time cost of a few seconds (k-means on
    ``64 * nlist`` sampled vectors, then assigning every vector to its list), paid inside the :meth:`add` that
    crosses the threshold.

    Searches run on ``search_threads`` OpenMP threads (default 1). One query per user turn gains nothing from
    more, and on a small machine FAISS's idle OpenMP threads keep spinning and slow down the embedding model that
    shares the cores: measured on 2 cores at 100k vectors, FAISS 21 ms -> 5 ms and query embedding 19 ms -> 10 ms.
    The caller's own OpenMP setting is restored after each search.
    """

    def __init__(
        self,
        dimension: int,
        *,
        compact_ratio: float = 0.1,
        min_compact: int = 256,
        search_threads: int | None = 1,
        approximate_above: int | None = DEFAULT_APPROXIMATE_ABOVE,
        nlist: int | None = None,
        nprobe: int | None = None,
        seed: int = 0,
    ) -> None:
        """Create an empty store.

        Args:
            dimension: Vector length.
            compact_ratio: Exact tier: compact when tombstones exceed this fraction of stored vectors.
            min_compact: ... and there are at least this many.
            search_threads: OpenMP threads per search; None leaves FAISS's default (all cores).
            approximate_above: Switch to the approximate index above this many vectors; None: always exact.
            nlist: Inverted lists of the approximate index; default: a power of two near ``2 * sqrt(vectors)``
                at the switch, between 64 and 2048.
            nprobe: Lists scanned per approximate search; default ``max(8, nlist // 32)`` (about 3% of the vectors).
            seed: Seed of the k-means sample and initialization (the approximate index is reproducible).

        Raises:
            ConfigurationError: If ``dimension`` or a size option is not positive.
            MissingDependencyError: If faiss is not installed.
        """
        if dimension <= 0:
            raise ConfigurationError(f"dimension must be > 0, got {dimension}")
        if approximate_above is not None and approximate_above <= 0:
            raise ConfigurationError(f"approximate_above must be > 0 or None, got {approximate_above}")
        if nlist is not None and nlist <= 0:
            raise ConfigurationError(f"nlist must be > 0, got {nlist}")
        if nprobe is not None and nprobe <= 0:
            raise ConfigurationError(f"nprobe must be > 0, got {nprobe}")
        try:
            import faiss
        except ImportError as error:  # faiss-cpu is a core dependency; this guards broken installs
            raise MissingDependencyError("FaissVectorStore", "faiss", "faiss") from error
        self._faiss: Any = faiss
        self._dimension = dimension
        self._compact_ratio = compact_ratio
        self._min_compact = min_compact
        self._search_threads = search_threads
        self._approximate_above = approximate_above
        self._nlist = nlist
        self._nprobe = nprobe
        self._seed = seed
        # Exact tier.
        self._flat: Any = faiss.IndexIDMap(faiss.IndexFlatIP(dimension))
        self._tombstones: set[int] = set()
        self._selector: Any = None  # excludes the tombstones at search; rebuilt when they change
        self._ascending = True  # ids in the flat index are in ascending order (the engine's order)
        self._order: npt.NDArray[np.int64] | None = None  # argsort of the ids when they are not ascending
        # Approximate tier.
        self._ivf: Any = None
        self._quantizer: Any = None

    # ------------------------------------------------------------------ properties

    @property
    def dimension(self) -> int:
        """Vector length."""
        return self._dimension

    @property
    def approximate(self) -> bool:
        """True while the store searches its approximate (IVF) index."""
        return self._ivf is not None

    def __len__(self) -> int:
        """Number of live vectors."""
        if self._ivf is not None:
            return int(self._ivf.ntotal)
        return int(self._flat.ntotal) - len(self._tombstones)

    @property
    def nbytes(self) -> int:
        """Bytes held by vectors and ids.

        Exact: ``4 * dimension + 8`` per vector. Approximate: float16 codes, ids, the id hash map (about 56 bytes
        per vector) and the list centroids; the lists grow by doubling, so the process holds up to a quarter more
        (measured at 1M vectors of 384 dimensions: 826 bytes counted here, 1,053 bytes of process memory).
        """
        if self._ivf is not None:
            per_vector = int(self._ivf.code_size) + 8 + 56
            return int(self._ivf.ntotal) * per_vector + int(self._ivf.nlist) * self._dimension * 4
        return int(self._flat.ntotal) * (self._dimension * 4 + 8)

    # ------------------------------------------------------------------ helpers

    def _check(self, vectors: Vectors) -> Vectors:
        array = np.ascontiguousarray(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape[1] != self._dimension:
            raise DimensionMismatchError(self._dimension, int(array.shape[-1]) if array.ndim else 0)
        return array

    def _threaded(self, call: Callable[[], _T]) -> _T:
        if self._search_threads is None:
            return call()
        previous = self._faiss.omp_get_max_threads()
        self._faiss.omp_set_num_threads(self._search_threads)
        try:
            return call()
        finally:
            self._faiss.omp_set_num_threads(previous)

    def _flat_ids(self) -> Ids:
        """A view of the flat index's ids by position (valid until the index changes)."""
        total = int(self._flat.ntotal)
        if total == 0:
            return np.zeros(0, dtype=np.int64)
        view: Ids = self._faiss.rev_swig_ptr(self._flat.id_map.data(), total)
        return view

    def _flat_vectors(self) -> Vectors:
        """A view of the flat index's vectors by position (valid until the index changes)."""
        total = int(self._flat.ntotal)
        if total == 0:
            return np.zeros((0, self._dimension), dtype=np.float32)
        inner = self._faiss.downcast_index(self._flat.index)
        view: Vectors = self._faiss.rev_swig_ptr(inner.get_xb(), total * self._dimension)
        return view.reshape(total, self._dimension)

    def _positions(self, ids: Ids) -> npt.NDArray[np.int64]:
        """Positions of ids in the flat index, -1 for ids it does not hold."""
        stored = self._flat_ids()
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

    # ------------------------------------------------------------------ writing

    def add(self, ids: Ids, vectors: Vectors) -> None:
        """Add vectors under new ids (switching to the approximate index when the store grows past its threshold)."""
        array = self._check(vectors)
        id_array = np.ascontiguousarray(ids, dtype=np.int64)
        if len(id_array) != len(array):
            raise ValueError(f"{len(id_array)} ids for {len(array)} vectors")
        if not len(id_array):
            return
        if self._ivf is not None:
            self._ivf.add_with_ids(array, id_array)
            return
        stored = self._flat_ids()
        if self._ascending and (
            (len(stored) and id_array[0] <= stored[-1]) or (len(id_array) > 1 and np.any(np.diff(id_array) <= 0))
        ):
            self._ascending = False
            logger.debug("ids=<%d> | ids added out of order, positional lookups now sort", len(id_array))
        self._flat.add_with_ids(array, id_array)
        self._order = None
        if self._approximate_above is not None and len(self) > self._approximate_above:
            self._to_approximate()

    def remove(self, ids: Ids) -> None:
        """Remove ids; unknown ids are ignored (exact tier: lazily, see the class docstring)."""
        id_array = np.unique(np.asarray(ids, dtype=np.int64))
        if not len(id_array):
            return
        if self._ivf is not None:
            self._ivf.remove_ids(self._faiss.IDSelectorArray(id_array))
            if self._approximate_above is not None and len(self) < self._approximate_above // 2:
                self._to_exact()
            return
        present = id_array[self._positions(id_array) >= 0]
        fresh = [i for i in present.tolist() if i not in self._tombstones]
        if not fresh:
            return
        self._tombstones.update(fresh)
        self._selector = None
        if len(self._tombstones) >= max(self._min_compact, self._compact_ratio * self._flat.ntotal):
            self.compact()

    def compact(self) -> None:
        """Physically drop tombstoned vectors from the exact index (the approximate index removes at once)."""
        if not self._tombstones:
            return
        selector = self._faiss.IDSelectorBatch(np.fromiter(self._tombstones, dtype=np.int64))
        removed = self._flat.remove_ids(selector)  # keeps the order of the remaining vectors
        logger.debug("removed=<%d> | compacted faiss index", removed)
        self._tombstones.clear()
        self._selector = None
        self._order = None

    # ------------------------------------------------------------------ switching tiers

    def _choose_nlist(self, count: int) -> int:
        if self._nlist is not None:
            return self._nlist
        target = 2 * math.sqrt(max(count, 1))
        return int(min(2048, max(64, 2 ** round(math.log2(target)))))

    def _to_approximate(self) -> None:
        """Move every live vector into a freshly trained IVF index."""
        faiss = self._faiss
        ids, vectors = self.export()
        nlist = self._choose_nlist(len(ids))
        quantizer = faiss.IndexFlatIP(self._dimension)
        index = faiss.IndexIVFScalarQuantizer(
            quantizer, self._dimension, nlist, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        index.cp.spherical = True  # unit vectors compared by inner product: centroids on the sphere
        index.cp.niter = 10
        index.cp.max_points_per_centroid = 64
        index.cp.seed = self._seed
        sample_size = min(len(ids), 64 * nlist)
        rng = np.random.default_rng(self._seed)
        sample = vectors[np.sort(rng.choice(len(ids), size=sample_size, replace=False))]
        index.train(sample)
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # reconstruct (fetch) and removal by id
        index.nprobe = self._nprobe or max(8, nlist // 32)
        index.add_with_ids(vectors, ids)
        self._quantizer, self._ivf = quantizer, index
        self._flat = faiss.IndexIDMap(faiss.IndexFlatIP(self._dimension))
        self._tombstones.clear()
        self._selector = None
        self._ascending, self._order = True, None
        logger.info(
            "vectors=<%d>, nlist=<%d>, nprobe=<%d> | switched to the approximate index", len(ids), nlist, index.nprobe
        )

    def _to_exact(self) -> None:
        """Move every live vector back into an exact flat index."""
        ids, vectors = self.export()
        self._ivf = self._quantizer = None
        self._flat = self._faiss.IndexIDMap(self._faiss.IndexFlatIP(self._dimension))
        self._tombstones.clear()
        self._selector = None
        self._ascending, self._order = True, None
        self._flat.add_with_ids(vectors, ids)  # export is ascending by id
        logger.info("vectors=<%d> | switched back to the exact index", len(ids))

    # ------------------------------------------------------------------ reading

    def search(self, query: Vectors, k: int) -> tuple[npt.NDArray[np.float32], Ids]:
        """The ``k`` nearest live vectors (exact in the exact tier)."""
        if k <= 0 or len(self) == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        array = self._check(query)
        if self._ivf is not None:
            index, params, fetch = self._ivf, None, min(k, int(self._ivf.ntotal))
        else:
            index, fetch = self._flat, min(k, len(self))
            params = None
            if self._tombstones:
                if self._selector is None:
                    batch = self._faiss.IDSelectorBatch(np.fromiter(self._tombstones, dtype=np.int64))
                    self._selector = (batch, self._faiss.IDSelectorNot(batch))  # keep batch alive beside its user
                params = self._faiss.SearchParameters(sel=self._selector[1])
        scores, ids = self._threaded(lambda: index.search(array, fetch, params=params))
        scores, ids = scores[0], ids[0]
        keep = ids >= 0
        return scores[keep].astype(np.float32), ids[keep].astype(np.int64)

    def fetch(self, ids: Ids) -> Vectors:
        """The vectors stored under live ids, same order.

        Raises:
            KeyError: If an id is not stored.
        """
        id_array = np.asarray(ids, dtype=np.int64)
        if not len(id_array):
            return np.zeros((0, self._dimension), dtype=np.float32)
        if self._ivf is not None:
            try:
                vectors: Vectors = self._ivf.reconstruct_batch(id_array)
            except RuntimeError as error:
                raise KeyError(f"vector ids not stored: {error}") from error
            return np.ascontiguousarray(vectors, dtype=np.float32)
        positions = self._positions(id_array)
        if np.any(positions < 0):
            raise KeyError(f"vector ids not stored: {id_array[positions < 0][:5].tolist()}")
        return np.array(self._flat_vectors()[positions], dtype=np.float32)

    def export(self) -> tuple[Ids, Vectors]:
        """All live ids and vectors, ascending by id."""
        if self._ivf is not None:
            invlists = self._ivf.invlists
            parts = [
                np.array(self._faiss.rev_swig_ptr(invlists.get_ids(i), size), dtype=np.int64)
                for i in range(int(self._ivf.nlist))
                if (size := invlists.list_size(i))
            ]
            ids = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
            return ids, self.fetch(ids)
        stored, vectors = self._flat_ids(), self._flat_vectors()
        keep = np.ones(len(stored), dtype=bool)
        if self._tombstones:
            keep &= ~np.isin(stored, np.fromiter(self._tombstones, dtype=np.int64))
        ids = np.array(stored[keep], dtype=np.int64)
        live = np.array(vectors[keep], dtype=np.float32)
        if not self._ascending:
            order = np.argsort(ids, kind="stable")
            ids, live = ids[order], live[order]
        return ids, live
