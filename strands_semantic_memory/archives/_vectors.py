"""The in-process vector index: FAISS, exact up to a size and inverted-file (IVF) above it, in one ``search``.

Rows are chunks: a message may have several vectors, and its dense score is its best chunk's. Each row carries its
message's archive index (its FAISS id is ``index << CHUNK_BITS | chunk``) and a code for its session, so a session
scope is a FAISS id selector, never a post-filter that could leave a search short; a search fetches more chunks until
it has ``depth`` messages or nothing is left.

Rows go into an exact flat index first; above ``approximate_above`` rows they move into an inverted-file index with
float16 codes (``IVF{n},SQfp16``, trained on the rows it starts with, ``nprobe`` about 3 % of the lists: under a
millisecond at a million vectors with recall@10 of 1.000 against exact search), and later rows stay exact until
there are ``approximate_above`` of them again. Every search runs FAISS on one thread of its own (OpenMP's thread count
is set per calling thread): on a 2-core machine with other work, NumPy's BLAS product over 10,000 vectors took 4.6 ms
with its thread pool and FAISS on one thread 0.7 ms. Why not one FAISS index alone: a flat index needs no training
but is slow at a million vectors, an IVF index needs a training set before its first vector.
"""

from __future__ import annotations

import importlib
import logging
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors

__all__ = ["VectorIndex"]

logger = logging.getLogger(__name__)

APPROXIMATE_ABOVE = 50_000
"""Rows above which the exact rows move into the approximate index."""
CHUNK_BITS = 8
"""A row's id is ``(archive index << CHUNK_BITS) | chunk``: up to 256 chunks per message."""


def _faiss() -> Any:
    """FAISS, imported when first used (its type information is partial: it is used as ``Any``)."""
    return importlib.import_module("faiss")


def _selector(ids: np.ndarray) -> Any:
    faiss = _faiss()

    ordered = np.ascontiguousarray(ids, dtype=np.int64)
    selector = faiss.IDSelectorBatch(len(ordered), faiss.swig_ptr(ordered))
    selector.referenced = ordered  # FAISS reads the array later: keep it alive with the selector
    return selector


class VectorIndex:
    """Chunk vectors of archived messages (not thread-safe: the archive calls it under its lock)."""

    def __init__(self, dimension: int, approximate_above: int = APPROXIMATE_ABOVE) -> None:
        """Create an empty index of ``dimension``-dimensional unit vectors."""
        faiss = _faiss()

        self.dimension = dimension
        self._approximate_above = approximate_above
        self._exact: Any = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
        self._ivf: Any = None
        self._ids = np.zeros(0, dtype=np.int64)  # every live row's id, exact and approximate
        self._codes = np.zeros(0, dtype=np.int32)  # its session code
        self._sessions: dict[str | None, int] = {}
        self._chunks: dict[int, tuple[int, ...]] = {}  # message -> its chunk numbers
        self._approximate: set[int] = set()  # messages whose rows are in the IVF index

    def __len__(self) -> int:
        return len(self._ids)

    def session_codes(self, sessions: Iterable[str | None]) -> set[int]:
        """The codes of these sessions (sessions never seen have none)."""
        return {self._sessions[s] for s in sessions if s in self._sessions}

    def add(self, index: int, vectors: Vectors, session_id: str | None, first_chunk: int = 0) -> None:
        """Add a message's chunk vectors (unit rows, chunks numbered from ``first_chunk``), replacing any it had."""
        if index in self._chunks:
            self.remove([index])
        count = min(len(vectors), (1 << CHUNK_BITS) - first_chunk)
        if count <= 0:
            return
        chunks = tuple(range(first_chunk, first_chunk + count))
        ids = (index << CHUNK_BITS) | np.asarray(chunks, dtype=np.int64)
        code = self._sessions.setdefault(session_id, len(self._sessions))
        self._exact.add_with_ids(np.ascontiguousarray(vectors[:count], dtype=np.float32), ids)
        self._ids = np.concatenate([self._ids, ids])
        self._codes = np.concatenate([self._codes, np.full(count, code, dtype=np.int32)])
        self._chunks[index] = chunks
        if self._exact.ntotal > self._approximate_above:
            self._to_approximate()

    def remove(self, indices: Iterable[int]) -> None:
        """Drop every vector of these messages."""
        indices = list(indices)
        self._approximate.difference_update(indices)
        ids = [(i << CHUNK_BITS) | c for i in indices for c in self._chunks.pop(i, ())]
        if not ids:
            return
        chosen = np.asarray(ids, dtype=np.int64)
        for tier in (self._exact, self._ivf):
            if tier is not None:
                faiss = _faiss()

                tier.remove_ids(faiss.IDSelectorArray(len(chosen), faiss.swig_ptr(chosen)))
        keep = ~np.isin(self._ids, chosen)
        self._ids, self._codes = self._ids[keep], self._codes[keep]

    def search(self, query: Vectors, depth: int, allowed: set[int] | None = None) -> dict[int, float]:
        """The ``depth`` messages nearest to ``query`` by their best chunk: archive index -> cosine similarity.

        Args:
            query: One unit vector, shape ``(dimension,)`` or ``(1, dimension)``.
            depth: How many messages.
            allowed: Session codes a message must have (None: any).
        """
        faiss = _faiss()

        if not len(self._ids) or depth <= 0:
            return {}
        faiss.omp_set_num_threads(1)  # this thread's FAISS only (see the module docstring)
        vector = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        selector = None if allowed is None else _selector(self._ids[np.isin(self._codes, list(allowed))])
        fetch = depth * 2  # a long message may fill several places: fetch more until enough messages are found
        while True:
            found_ids, found_scores = [], []
            for tier in (self._exact, self._ivf):
                if tier is None or not tier.ntotal:
                    continue
                if tier is self._ivf:
                    params = faiss.SearchParametersIVF(sel=selector) if selector else faiss.SearchParametersIVF()
                    params.nprobe = tier.nprobe
                else:
                    params = faiss.SearchParameters(sel=selector) if selector else None
                scores, ids = tier.search(vector, min(fetch, tier.ntotal), params=params)
                found_ids.append(ids[0])
                found_scores.append(scores[0])
            ids_all, scores_all = np.concatenate(found_ids), np.concatenate(found_scores)
            keep = ids_all >= 0
            messages, scores_all = ids_all[keep] >> CHUNK_BITS, scores_all[keep]
            order = np.lexsort((messages, -scores_all))  # best first, ties to the older message
            messages, scores_all = messages[order], scores_all[order]
            _, first = np.unique(messages, return_index=True)  # each message's best chunk
            first.sort()
            if len(first) >= depth or fetch >= len(self._ids):
                first = first[:depth]
                return dict(zip(messages[first].tolist(), scores_all[first].astype(float).tolist(), strict=True))
            fetch *= 4

    def similarities(self, query: Vectors, indices: Iterable[int]) -> dict[int, float]:
        """Best-chunk cosine similarity of each of these messages that has vectors."""
        wanted = [i for i in indices if i in self._chunks]
        if not wanted:
            return {}
        ids = np.asarray([(i << CHUNK_BITS) | c for i in wanted for c in self._chunks[i]], dtype=np.int64)
        rows = []
        moved = np.isin(ids >> CHUNK_BITS, np.fromiter(self._approximate, np.int64)) if self._approximate else None
        for tier, present in ((self._exact, ids if moved is None else ids[~moved]), (self._ivf, None if moved is None
                              else ids[moved])):  # fmt: skip
            if tier is not None and present is not None and len(present):
                rows.append((present, tier.reconstruct_batch(present)))
        found: dict[int, float] = {}
        vector = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        for present, vectors in rows:
            for vector_id, score in zip(present.tolist(), (vectors @ vector).tolist(), strict=True):
                index = vector_id >> CHUNK_BITS
                found[index] = max(found.get(index, -math.inf), float(score))
        return found

    def _to_approximate(self) -> None:
        """Move the exact rows into the inverted-file index (built and trained on them the first time)."""
        faiss = _faiss()

        ids = np.asarray(faiss.vector_to_array(self._exact.id_map), dtype=np.int64)
        matrix = self._exact.reconstruct_batch(ids)
        if self._ivf is None:
            lists = int(min(2048, max(64, 2 ** round(math.log2(math.sqrt(len(ids)))))))
            index = faiss.index_factory(self.dimension, f"IVF{lists},SQfp16", faiss.METRIC_INNER_PRODUCT)
            index.train(matrix[np.random.default_rng(0).permutation(len(ids))[: lists * 40]])
            index.nprobe = max(8, lists // 32)
            index.set_direct_map_type(faiss.DirectMap.Hashtable)  # reconstruct and remove by id after add_with_ids
            self._ivf = index
            logger.info("vectors=<%d>, lists=<%d> | switched to the approximate vector index", len(ids), lists)
        self._ivf.add_with_ids(matrix, ids)
        self._approximate.update((ids >> CHUNK_BITS).tolist())
        self._exact.reset()
