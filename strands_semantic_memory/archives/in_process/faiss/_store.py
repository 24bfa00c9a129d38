"""The default vector store: in-process FAISS, exact below a size threshold and approximate (IVF) above it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.archives.in_process._types import Ids
from strands_semantic_memory.archives.in_process.faiss._approximate import ApproximateIndex, Trained, valid_training
from strands_semantic_memory.archives.in_process.faiss._exact import ExactIndex
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import ConfigurationError, DimensionMismatchError, MissingDependencyError

logger = logging.getLogger(__name__)

DEFAULT_APPROXIMATE_ABOVE = 50_000
"""Vectors above which ``FaissIndex`` switches to its approximate index (see the class docstring)."""

_T = TypeVar("_T")


class FaissIndex:
    """Inner-product search over FAISS: exact up to ``approximate_above`` vectors, approximate (IVF) beyond.

    This class chooses the tier and switches between them; each tier is its own class.

    **Exact tier** (the default size of a conversation, ``ExactIndex``):
    ``IndexIDMap(IndexFlatIP)``. Results are identical to a brute-force scan (tests check this); no reverse id map;
    removal is lazy (tombstones, compacted past ``compact_ratio``).

    **Approximate tier**: exact search grows linearly (about 5 ms at 100k vectors on one idle core, 10 ms at 200k:
    at 100k that was most of a hook turn). Once the store holds more than ``approximate_above`` vectors (default
    50,000; at 100k the approximate search took 0.21 ms against 6.5 ms of CPU for exact search, recall@10 1.0 on
    the mixture data below) it trains an inverted-file index
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
    higher only on the Gaussian stress data. The switch is a one-time cost of about a second at 100k vectors (k-means on
    ``40 * nlist`` sampled vectors, then assigning every vector to its list), paid inside the ``add`` that
    crosses the threshold.

    Searches (and adds and removals, which assign inverted lists in the approximate tier) run on
    ``search_threads`` OpenMP threads (default 1). One query per user turn gains nothing from
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
            nlist: Inverted lists of the approximate index; default: a power of two near ``sqrt(vectors)``
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
            raise MissingDependencyError("FaissIndex", "faiss", "faiss") from error
        self._faiss: Any = faiss
        self._dimension = dimension
        self._compact_ratio = compact_ratio
        self._min_compact = min_compact
        self._search_threads = search_threads
        self._approximate_above = approximate_above
        self._nlist = nlist
        self._nprobe = nprobe
        self._seed = seed
        self._tier: ExactIndex | ApproximateIndex = self._exact()

    def _exact(self) -> ExactIndex:
        return ExactIndex(self._faiss, self._dimension, self._compact_ratio, self._min_compact)

    # ------------------------------------------------------------------ properties

    @property
    def dimension(self) -> int:
        """Vector length."""
        return self._dimension

    @property
    def approximate(self) -> bool:
        """True while the store searches its approximate (IVF) index."""
        return isinstance(self._tier, ApproximateIndex)

    def __len__(self) -> int:
        """Number of live vectors."""
        return len(self._tier)

    @property
    def bytes_per_vector(self) -> int:
        """What one more vector costs in the current tier.

        Exact: ``4 * dimension + 8`` (the float32 vector and its int64 id). Approximate: the float16 code, the id
        and its hash map entry (about 56 bytes), list centroids apart.
        """
        return self._tier.bytes_per_vector

    @property
    def nbytes(self) -> int:
        """Bytes held by vectors and ids (approximate tier: with the id hash map and the list centroids)."""
        return self._tier.nbytes

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

    # ------------------------------------------------------------------ writing

    def add(self, ids: Ids, vectors: Vectors) -> None:
        """Add vectors under new ids (switching to the approximate index when the store grows past its threshold)."""
        array = self._check(vectors)
        id_array = np.ascontiguousarray(ids, dtype=np.int64)
        if len(id_array) != len(array):
            raise ValueError(f"{len(id_array)} ids for {len(array)} vectors")
        if not len(id_array):
            return
        tier = self._tier
        self._threaded(lambda: tier.add(id_array, array))  # the approximate tier assigns lists with OpenMP
        if not self.approximate and self._approximate_above is not None and len(self) > self._approximate_above:
            ids_now, vectors_now = self._tier.export()
            self._tier = ApproximateIndex(
                self._faiss, ids_now, vectors_now, nlist=self._nlist, nprobe=self._nprobe, seed=self._seed
            )

    def load(self, ids: Ids, vectors: Vectors, trained: Trained | None = None) -> None:
        """Fill an empty store in bulk: as ``add``, or in the approximate tier from a stored training.

        With ``trained`` (the ``centroids`` and ``lists`` of an ``approximate_index``, saved earlier), the
        approximate index is rebuilt as it was, with no k-means and no list assignment: 100k vectors took 0.25 s
        instead of 1.5-2.5 s. The training is used only if it fits (dimension, configured ``nlist``, one list per
        vector) and the store would be approximate at this size (at least half its threshold); otherwise the
        vectors are added as by ``add``, which trains again above the threshold.

        Raises:
            ValueError: If the store is not empty or ids and vectors differ in number.
        """
        if len(self):
            raise ValueError("load fills an empty store")
        array = self._check(vectors)
        id_array = np.ascontiguousarray(ids, dtype=np.int64)
        if len(id_array) != len(array):
            raise ValueError(f"{len(id_array)} ids for {len(array)} vectors")
        if (
            trained is not None
            and self._approximate_above is not None
            and len(id_array) >= self._approximate_above // 2
        ):
            reason = valid_training(trained, len(id_array), self._dimension, self._nlist)
            if reason is None:
                self._tier = self._threaded(
                    lambda: ApproximateIndex(
                        self._faiss, id_array, array, nlist=None, nprobe=self._nprobe, seed=self._seed, trained=trained
                    )
                )
                return
            logger.info("reason=<%s> | stored training of the approximate index not used", reason)
        self.add(id_array, array)

    def remove(self, ids: Ids) -> None:
        """Remove ids; unknown ids are ignored (exact tier: lazily, see the class docstring)."""
        id_array = np.unique(np.asarray(ids, dtype=np.int64))
        if not len(id_array):
            return
        tier = self._tier
        self._threaded(lambda: tier.remove(id_array))
        if self.approximate and self._approximate_above is not None and len(self) < self._approximate_above // 2:
            ids_now, vectors_now = self._tier.export()
            self._tier = self._exact()
            self._tier.add(ids_now, vectors_now)  # export is ascending by id
            logger.info("vectors=<%d> | switched back to the exact index", len(ids_now))

    def compact(self) -> None:
        """Physically drop tombstoned vectors from the exact index (the approximate index removes at once)."""
        if isinstance(self._tier, ExactIndex):
            self._tier.compact()

    # ------------------------------------------------------------------ reading

    def search(self, query: Vectors, k: int) -> tuple[npt.NDArray[np.float32], Ids]:
        """The ``k`` nearest live vectors (exact in the exact tier)."""
        if k <= 0 or len(self) == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        array = self._check(query)
        tier, fetch = self._tier, min(k, len(self))
        scores, ids = self._threaded(lambda: tier.search(array, fetch))
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
        return self._tier.fetch(id_array)

    def export(self) -> tuple[Ids, Vectors]:
        """All live ids and vectors, ascending by id."""
        return self._tier.export()

    @property
    def approximate_index(self) -> ApproximateIndex | None:
        """The approximate tier, to save its training (``centroids``, ``lists``, ``assignments``); None if exact.

        The same object until the store trains again or returns to the exact tier, so a caller that saves the
        training can tell by identity whether it changed.
        """
        tier = self._tier
        return tier if isinstance(tier, ApproximateIndex) else None
