"""The vector store protocol: where the engine keeps vectors and how it finds the nearest ones."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..embeddings.base import Vectors

Ids = npt.NDArray[np.int64]


@runtime_checkable
class VectorStore(Protocol):
    """Keeps unit vectors under int64 ids and returns the nearest by inner product (= cosine similarity).

    The engine holds its own lock around every call, so implementations need not be thread-safe themselves.
    Ids are chosen by the engine (see :mod:`strands_semantic_memory.memory`); a store never renumbers them.
    """

    @property
    def dimension(self) -> int:
        """Length of the stored vectors."""
        ...

    def __len__(self) -> int:
        """Number of live vectors."""
        ...

    def add(self, ids: Ids, vectors: Vectors) -> None:
        """Add vectors under the given ids (ids not already present). Incremental: never rebuilds the index."""
        ...

    def remove(self, ids: Ids) -> None:
        """Remove vectors; unknown ids are ignored. A removed id is never returned by :meth:`search` again."""
        ...

    def search(self, query: Vectors, k: int) -> tuple[npt.NDArray[np.float32], Ids]:
        """The ``k`` nearest live vectors to one query.

        Args:
            query: Shape ``(1, dimension)``, unit length.
            k: How many to return at most.

        Returns:
            ``(scores, ids)``, best first, both of length ``min(k, len(self))``.
        """
        ...

    def fetch(self, ids: Ids) -> Vectors:
        """The stored vectors of the given live ids, same order (to score hits found by other means)."""
        ...

    def export(self) -> tuple[Ids, Vectors]:
        """All live ``(ids, vectors)``, for saving state without re-embedding."""
        ...

    @property
    def nbytes(self) -> int:
        """Approximate memory held by the live vectors and their ids."""
        ...
