"""Comparing scores, similarities and vectors that two computations produced: equal within a stated tolerance.

Floating point rounds differently on different paths: a cosine computed by FAISS's SIMD loop or numpy's einsum, a
text embedded again in another batch, a vector stored as float16. Exact equality of such values fails on the last
bits (issue 41: ``0.8974743957072496 != 0.8974743925780058`` after re-embedding). What must be equal stays equal
(the indices found, the messages, the times); the floats are compared within a tolerance that a real difference
(another vector, another message, a wrong hit) exceeds by orders of magnitude.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

__all__ = ["FLOAT16_TOLERANCE", "SCORE_TOLERANCE", "assert_ranks_like_brute_force", "assert_same_hits"]

SCORE_TOLERANCE = 1e-6
"""For scores and cosines computed from float32 vectors on two paths: about 16 float32 ulps at 1.0. Measured: a
re-embedded archive's scores and similarities differed from the originals by at most 6e-8; a different vector or
message changes a cosine by 1e-3 or more."""

FLOAT16_TOLERANCE = 2e-3
"""For scores of vectors the approximate index keeps as float16 (the export of such vectors is checked with the
same bound)."""


def assert_same_hits(found: Sequence[Any], expected: Sequence[Any], *, tolerance: float = SCORE_TOLERANCE) -> None:
    """``found`` are ``expected`` (``SearchHit`` lists): the same messages in the same order, the scores and
    similarities within ``tolerance``."""
    assert [h.index for h in found] == [h.index for h in expected]
    for got, want in zip(found, expected, strict=True):
        assert (got.message, got.role, got.archived_at, got.said_at) == (
            want.message,
            want.role,
            want.archived_at,
            want.said_at,
        )
        assert got.score == pytest.approx(want.score, rel=0, abs=tolerance), got.index
        if want.similarity is None:
            assert got.similarity is None, got.index
        else:
            assert got.similarity == pytest.approx(want.similarity, rel=0, abs=tolerance), got.index


def assert_ranks_like_brute_force(
    found: Sequence[int], vectors: Mapping[int, np.ndarray], query: np.ndarray, k: int, *, tolerance: float
) -> None:
    """The ids ``found`` are a top ``k`` as an exact search ranks them: distinct, known, and the i-th scores within
    ``tolerance`` of the i-th best exact score (near ties may come in either order)."""
    assert len(found) == min(k, len(vectors)) and len(set(found)) == len(found), found
    exact = sorted((float(vector @ query[0]) for vector in vectors.values()), reverse=True)[:k]
    got = [float(vectors[i] @ query[0]) for i in found]
    np.testing.assert_allclose(got, exact, rtol=0, atol=tolerance)
