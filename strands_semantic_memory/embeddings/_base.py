"""The embedder protocol: what the engine needs from an embedding model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
"""A 2-D float32 array, one row per text."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    Documents (archived messages) and queries (user turns) are separate calls, because several models embed
    them differently (instruction prefixes, Cohere's ``input_type``).

    Implementations batch internally and may return unnormalized vectors; the engine normalizes every vector
    before it reaches an index.
    """

    @property
    def model_id(self) -> str:
        """A stable name of the model, stored with an archive so it is never searched with another model."""
        ...

    @property
    def dimension(self) -> int:
        """Length of the vectors. May load the model on first access."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts to be archived.

        Args:
            texts: Non-empty strings.

        Returns:
            An array of shape ``(len(texts), dimension)``.
        """
        ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed search queries.

        Args:
            texts: Non-empty strings.

        Returns:
            An array of shape ``(len(texts), dimension)``.
        """
        ...


def normalize_rows(vectors: npt.ArrayLike) -> Vectors:
    """L2-normalize each row so inner product equals cosine similarity; all-zero rows stay zero.

    Args:
        vectors: A 2-D array-like of numbers.

    Returns:
        A new contiguous float32 array.
    """
    array = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    np.divide(array, norms, out=array, where=norms > 0)
    return np.ascontiguousarray(array)
