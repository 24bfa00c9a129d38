"""The common pattern this library replaces, written here only to be measured side by side.

A numpy matrix grown with ``np.vstack`` on every add, a FAISS index rebuilt from that matrix on every add, eviction
with ``list.pop(0)`` (and a matching row deletion), and a restore that embeds every message again.
"""

from __future__ import annotations

import json
from typing import Any

import faiss
import numpy as np


class NaiveMemory:
    """Deliberately naive archive: correct results, costs that grow with the archive on every operation."""

    def __init__(self, embedder: Any, dimension: int, threads: int | None = 1) -> None:
        """Create an empty archive.

        Args:
            embedder: Embeds the queries (and every message again on restore).
            dimension: Vector length.
            threads: OpenMP threads of each FAISS search, set around the search exactly as the library's store
                does (default 1, the library's setting, so that only the algorithm differs); None leaves FAISS's
                default (all cores).
        """
        self.embedder = embedder
        self.dimension = dimension
        self.threads = threads
        self.texts: list[str] = []
        self.matrix = np.zeros((0, dimension), dtype=np.float32)
        self.index = faiss.IndexFlatIP(dimension)

    def bulk_load(self, texts: list[str], vectors: np.ndarray) -> None:
        """Reach a size quickly (not timed): what many single adds would have built."""
        self.texts = list(texts)
        self.matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        self._rebuild()

    def _rebuild(self) -> None:
        self.index = faiss.IndexFlatIP(self.dimension)
        if len(self.matrix):
            self.index.add(self.matrix)

    def add(self, text: str, vector: np.ndarray) -> None:
        """One archived message: grow the matrix and rebuild the index."""
        self.texts.append(text)
        self.matrix = np.vstack([self.matrix, vector.reshape(1, -1)])
        self._rebuild()

    def evict_oldest(self) -> None:
        """Drop the oldest message: pop(0), delete the row, rebuild."""
        self.texts.pop(0)
        self.matrix = np.delete(self.matrix, 0, axis=0)
        self._rebuild()

    def search(self, query: str, k: int) -> list[tuple[float, str]]:
        """Embed the query and search the flat index (on ``threads`` OpenMP threads)."""
        vector = self.embedder.embed_queries([query]).astype(np.float32)
        if self.threads is None:
            scores, ids = self.index.search(vector, k)
        else:
            previous = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(self.threads)
            try:
                scores, ids = self.index.search(vector, k)
            finally:
                faiss.omp_set_num_threads(previous)
        return [(float(s), self.texts[i]) for s, i in zip(scores[0], ids[0]) if i >= 0]

    def dump(self) -> str:
        """The usual save: the texts only (vectors are recomputed on load)."""
        return json.dumps({"texts": self.texts})

    @classmethod
    def restore(cls, payload: str, embedder: Any, dimension: int) -> NaiveMemory:
        """Restore by embedding every message again."""
        memory = cls(embedder, dimension)
        texts = json.loads(payload)["texts"]
        memory.bulk_load(texts, embedder.embed_documents(texts))
        return memory
