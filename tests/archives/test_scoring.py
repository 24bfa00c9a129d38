"""The base score the archives share with the ranking (``archives._scoring``), against its formulas and oracles."""

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from strands_semantic_memory.archives._scoring import above_floor, normalized_by_best, weighted_fusion, within

indices = st.integers(0, 60)
scores = st.floats(0.0, 20.0, allow_nan=False)
cosines = st.floats(-1.0, 1.0, allow_nan=False)


@given(st.lists(scores, max_size=30))
@example([0.0, 2.0, 5e-324])  # a subnormal score divided by 2 rounds to 0: it ties with the zero, never passes it
@example([1.136479279895738, 0.8194704787238938, 0.8194704787238939])  # one ulp apart: one share after dividing
def test_normalized_by_best_scales_the_best_to_one_and_never_reverses_the_order(values):
    raw = np.asarray(values, dtype=np.float64)
    share = normalized_by_best(raw)
    if raw.size and raw.max() > 0:
        assert share.max() == 1.0 and np.all((share >= 0) & (share <= 1))
        # Division rounds, so two scores may share a value afterwards; a higher score never gets a lower one.
        higher = raw[:, None] > raw[None, :]
        assert not np.any(higher & (share[:, None] < share[None, :]))
    else:
        np.testing.assert_array_equal(share, raw)


@given(st.lists(cosines, max_size=30), cosines)
def test_above_floor_is_the_clipped_excess(values, floor):
    got = above_floor(np.asarray(values, dtype=np.float64), floor)
    assert got.tolist() == [max(v - floor, 0.0) for v in values]


@given(st.lists(st.tuples(cosines, st.floats(0.0, 1.0)), max_size=20), st.floats(0.0, 1.0), st.floats(0.5, 3.0))
def test_weighted_fusion_matches_its_formula(pairs, weight, power):
    dense = np.asarray([d for d, _ in pairs], dtype=np.float64)
    share = np.asarray([s for _, s in pairs], dtype=np.float64)
    got = weighted_fusion(dense, share, weight, power)
    expected = [weight * d + (1 - weight) * s**power for d, s in pairs]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@given(st.sets(indices, max_size=15), st.integers(0, 5))
def test_within_matches_a_set_oracle(around, distance):
    expected = sorted({i for a in around for i in range(a - distance, a + distance + 1) if i >= 0})
    assert within(sorted(around), distance).tolist() == expected
