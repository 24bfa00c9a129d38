"""The embedder protocol: what the engine needs from an embedding model, and the check of what it returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.errors import DimensionMismatchError, EmbeddingError

__all__ = ["Embedder", "Vectors", "checked_vectors"]

Vectors = npt.NDArray[np.float32]
"""A 2-D float32 array, one row per text."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    Documents (archived messages) and queries are separate calls, because several models embed them differently
    (instruction prefixes, Cohere's ``input_type``). Vectors need not be normalized: the engine normalizes every row.
    Calls come from the embedder's worker: its query lane and its document lane may call at the same time.
    """

    @property
    def model_id(self) -> str:
        """A stable name of the model, stored with an archive so it is never searched with another model."""
        ...

    @property
    def dimension(self) -> int:
        """Length of the vectors (may load the model)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors of texts to archive: shape ``(len(texts), dimension)``."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries: shape ``(len(texts), dimension)``."""
        ...


def checked_vectors(vectors: npt.ArrayLike, count: int, dimension: int) -> Vectors:
    """``vectors`` as unit float32 rows, checked: one finite row of ``dimension`` numbers per text.

    Raises:
        DimensionMismatchError: If the rows have another length.
        EmbeddingError: If the shape or a value is wrong (a NaN, an infinity).
    """
    array = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    if array.ndim != 2 or array.shape[0] != count:
        raise EmbeddingError(f"the embedder returned an array of shape {array.shape} for {count} texts")
    if array.shape[1] != dimension:
        raise DimensionMismatchError(dimension, array.shape[1])
    if not np.isfinite(array).all():
        raise EmbeddingError("the embedder returned a vector that is not finite")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    np.divide(array, norms, out=array, where=norms > 0)
    return np.ascontiguousarray(array)
