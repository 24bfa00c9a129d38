"""The tolerant comparisons of ``tests.support.scores`` still fail on a real difference (issue 41)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from strands_semantic_memory.retrieval._recall import SearchHit
from tests.support.scores import SCORE_TOLERANCE, assert_ranks_like_brute_force, assert_same_hits

HITS = [
    SearchHit(index=3, score=0.8974743957072496, message={"role": "user", "content": [{"text": "a"}]}, similarity=0.61),
    SearchHit(index=7, score=0.5, message={"role": "user", "content": [{"text": "b"}]}, similarity=None),
]


def test_same_hits_accept_last_bit_differences_and_refuse_real_ones():
    rounded = [dataclasses.replace(HITS[0], score=0.8974743925780058, similarity=0.61 + 6e-8), HITS[1]]
    assert_same_hits(rounded, HITS)  # the difference issue 41 saw after re-embedding
    for changed in (
        [dataclasses.replace(HITS[0], score=HITS[0].score - 1e-4), HITS[1]],  # another score
        [dataclasses.replace(HITS[0], similarity=0.62), HITS[1]],  # another vector
        [HITS[0], dataclasses.replace(HITS[1], similarity=0.5)],  # a similarity where there was none
        [HITS[1], HITS[0]],  # another order
        [HITS[0], dataclasses.replace(HITS[1], message={"role": "user", "content": [{"text": "c"}]})],
    ):
        with pytest.raises(AssertionError):
            assert_same_hits(changed, HITS)


def test_a_ranking_like_brute_force_allows_near_ties_in_either_order_and_nothing_worse():
    rng = np.random.default_rng(0)
    vectors = {i: v / np.linalg.norm(v) for i, v in enumerate(rng.normal(size=(50, 8)))}
    query = vectors[0][None]
    order = sorted(vectors, key=lambda i: -float(vectors[i] @ query[0]))
    assert_ranks_like_brute_force(order[:5], vectors, query, 5, tolerance=SCORE_TOLERANCE)
    with pytest.raises(AssertionError):  # the sixth best in place of the fifth
        assert_ranks_like_brute_force([*order[:4], order[5]], vectors, query, 5, tolerance=SCORE_TOLERANCE)
    with pytest.raises(AssertionError):  # one missing
        assert_ranks_like_brute_force(order[:4], vectors, query, 5, tolerance=SCORE_TOLERANCE)
    tied = dict(vectors)
    tied[99] = vectors[order[1]] * (1 - 1e-9)  # a near tie with the second best: either order passes
    assert_ranks_like_brute_force([order[0], 99, order[1], order[2], order[3]], tied, query, 5, tolerance=1e-6)
    assert_ranks_like_brute_force([order[0], order[1], 99, order[2], order[3]], tied, query, 5, tolerance=1e-6)
