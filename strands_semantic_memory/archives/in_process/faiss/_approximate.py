"""The approximate tier of the in-process vector store: an inverted-file index with float16 vectors."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.archives.in_process._types import Ids
from strands_semantic_memory.embeddings._base import Vectors

logger = logging.getLogger(__name__)

HASH_MAP_BYTES = 56
"""Bytes per vector of the IVF index's id hash map (its direct map, for fetching and removing by id)."""


TRAINING_POINTS_PER_LIST = 40
"""k-means sample per inverted list (see ``choose_nlist``); FAISS warns on stderr below 39."""


def choose_nlist(count: int) -> int:
    """A power of two near ``sqrt(count)`` inverted lists, between 64 and 2048.

    Few lists keep the switch (and a reopen above the threshold without a stored training) short: at 100k vectors
    256 lists trained on 32 points each in 8 iterations took 0.7 s with adding every vector, against 2.5 s for 512
    lists on 64 points in 10, at the same recall@10 (1.000 on the benchmark's mixture data).
    """
    target = math.sqrt(max(count, 1))
    return int(min(2048, max(64, 2 ** round(math.log2(target)))))


@dataclass(frozen=True)
class Trained:
    """A stored training of the approximate index, to rebuild it without k-means or list assignment.

    Attributes:
        centroids: The lists' centroids, ``(nlist, dimension)`` float32 (``centroids``).
        lists: The list of each vector given with it, in the same order (``lists``).
    """

    centroids: Vectors
    lists: npt.NDArray[np.int64]


def valid_training(trained: Trained, count: int, dimension: int, nlist: int | None) -> str | None:
    """Why a stored training cannot rebuild an index of ``count`` vectors (None: it can).

    Args:
        trained: The stored training.
        count: Vectors to add.
        dimension: Their length.
        nlist: The inverted lists the store is configured for (None: any).
    """
    centroids, lists = trained.centroids, trained.lists
    if centroids.ndim != 2 or centroids.shape[1] != dimension or not len(centroids):
        return f"centroids of shape {centroids.shape} for vectors of dimension {dimension}"
    if nlist is not None and len(centroids) != nlist:
        return f"{len(centroids)} lists where {nlist} are configured"
    if lists.shape != (count,):
        return f"{len(lists)} list numbers for {count} vectors"
    if count and (int(lists.min()) < 0 or int(lists.max()) >= len(centroids)):
        return "list numbers out of range"
    if not np.all(np.isfinite(centroids)):
        return "centroids that are not finite"
    return None


class ApproximateIndex:
    """``IndexIVFScalarQuantizer`` (spherical k-means lists, vectors as float16), trained once on a sample.

    ``nprobe`` lists are scanned per search. A filtered search only sees the probed lists.
    """

    def __init__(
        self,
        faiss: Any,
        ids: Ids,
        vectors: Vectors,
        *,
        nlist: int | None,
        nprobe: int | None,
        seed: int,
        trained: Trained | None = None,
    ) -> None:
        """Train on a seeded sample of ``vectors`` (or take a stored training) and add them all under ``ids``.

        Args:
            faiss: The imported faiss module.
            ids: Their ids.
            vectors: Unit vectors, one row per id.
            nlist: Inverted lists; default ``choose_nlist`` (ignored with ``trained``).
            nprobe: Lists scanned per search; default ``max(8, nlist // 32)`` (about 3% of the vectors).
            seed: Seed of the k-means sample and initialization (the index is reproducible).
            trained: The centroids of an earlier training of this index and the list each of ``vectors`` was
                assigned to then (``centroids``, ``lists``): nothing is trained or assigned again, so the
                index is the one that was saved. The caller checks them (``valid_training``).
        """
        self._faiss = faiss
        dimension = int(vectors.shape[1])
        self._dimension = dimension
        lists = len(trained.centroids) if trained is not None else nlist or choose_nlist(len(ids))
        self._quantizer: Any = faiss.IndexFlatIP(dimension)
        index: Any = faiss.IndexIVFScalarQuantizer(
            self._quantizer, dimension, lists, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        index.nprobe = nprobe or max(8, lists // 32)
        if trained is not None:
            self._centroids: Vectors = np.ascontiguousarray(trained.centroids, dtype=np.float32)
            self._quantizer.add(self._centroids)
            index.is_trained = True  # the float16 quantizer has no parameters: the centroids are the training
            index.set_direct_map_type(faiss.DirectMap.Hashtable)
            assigned = np.ascontiguousarray(trained.lists, dtype=np.int64)
            index.add_core(len(ids), faiss.swig_ptr(vectors), faiss.swig_ptr(ids), faiss.swig_ptr(assigned))
            self._index = index
            logger.debug(
                "vectors=<%d>, nlist=<%d> | approximate index restored from its stored training", len(ids), lists
            )
            return
        index.cp.spherical = True  # unit vectors compared by inner product: centroids on the sphere
        index.cp.niter = 8
        index.cp.max_points_per_centroid = TRAINING_POINTS_PER_LIST
        index.cp.seed = seed
        sample_size = min(len(ids), TRAINING_POINTS_PER_LIST * lists)
        rng = np.random.default_rng(seed)
        index.train(vectors[np.sort(rng.choice(len(ids), size=sample_size, replace=False))])
        self._centroids = np.array(faiss.rev_swig_ptr(self._quantizer.get_xb(), lists * dimension)).reshape(
            lists, dimension
        )
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # reconstruct (fetch) and removal by id
        index.add_with_ids(vectors, ids)
        self._index = index
        logger.info(
            "vectors=<%d>, nlist=<%d>, nprobe=<%d> | switched to the approximate index", len(ids), lists, index.nprobe
        )

    @property
    def centroids(self) -> Vectors:
        """The lists' centroids, ``(nlist, dimension)``: the training. The same array for the index's life."""
        return self._centroids

    def lists(self, ids: Ids) -> npt.NDArray[np.int64]:
        """The inverted list each stored id is in (what ``Trained`` takes back), same order.

        Raises:
            KeyError: If an id is not stored.
        """
        direct_map = self._index.direct_map
        try:
            return np.array([direct_map.get(int(i)) >> 32 for i in ids], dtype=np.int64)
        except RuntimeError as error:
            raise KeyError(f"vector ids not stored: {error}") from error

    def _list_ids(self) -> list[tuple[int, Ids]]:
        """``(list number, the ids in it)`` of every non-empty inverted list."""
        invlists = self._index.invlists
        return [
            (number, np.array(self._faiss.rev_swig_ptr(invlists.get_ids(number), size), dtype=np.int64))
            for number in range(int(self._index.nlist))
            if (size := invlists.list_size(number))
        ]

    def assignments(self) -> tuple[Ids, npt.NDArray[np.int64]]:
        """Every stored id, ascending, and the inverted list it is in."""
        parts = self._list_ids()
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        all_ids = np.concatenate([ids for _, ids in parts])
        all_lists = np.concatenate([np.full(len(ids), number, dtype=np.int64) for number, ids in parts])
        order = np.argsort(all_ids, kind="stable")
        return all_ids[order], all_lists[order]

    def __len__(self) -> int:
        """Number of vectors."""
        return int(self._index.ntotal)

    @property
    def bytes_per_vector(self) -> int:
        """float16 code, int64 id and its hash map entry (the centroids are counted apart, in ``nbytes``)."""
        return int(self._index.code_size) + 8 + HASH_MAP_BYTES

    @property
    def nbytes(self) -> int:
        """Bytes of codes, ids, the hash map and the list centroids.

        The lists grow by doubling, so the process holds up to a quarter more (measured at 1M vectors of 384
        dimensions: 826 bytes counted here, 1,053 bytes of process memory).
        """
        return len(self) * self.bytes_per_vector + int(self._index.nlist) * self._dimension * 4

    def add(self, ids: Ids, vectors: Vectors) -> None:
        """Add checked vectors under new ids."""
        self._index.add_with_ids(vectors, ids)

    def remove(self, ids: Ids) -> None:
        """Remove ids at once; unknown ones are ignored."""
        self._index.remove_ids(self._faiss.IDSelectorArray(ids))

    def search(self, query: Vectors, k: int) -> tuple[npt.NDArray[np.float32], Ids]:
        """The ``k`` nearest vectors among the probed lists (-1 ids where fewer were found)."""
        scores, ids = self._index.search(query, min(k, len(self)))
        return scores, ids

    def fetch(self, ids: Ids) -> Vectors:
        """The vectors stored under ids (float16 decoded), same order.

        Raises:
            KeyError: If an id is not stored.
        """
        try:
            vectors: Vectors = self._index.reconstruct_batch(ids)
        except RuntimeError as error:
            raise KeyError(f"vector ids not stored: {error}") from error
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def export(self) -> tuple[Ids, Vectors]:
        """All ids and vectors, ascending by id."""
        parts = [ids for _, ids in self._list_ids()]
        ids = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
        return ids, self.fetch(ids) if len(ids) else np.zeros((0, self._dimension), dtype=np.float32)
