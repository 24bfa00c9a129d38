import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_semantic_memory.retrieval._windows import expand_and_merge, pack_by_budget, window_score


def test_example_ranges():
    ranges = expand_and_merge([5, 20, 8], radius=2, lowest=0, highest=30)
    assert [(r.start, r.end, r.hit_indices) for r in ranges] == [(3, 10, (5, 8)), (18, 22, (20,))]


def test_adjacent_ranges_merge():
    # 3..5 and 6..8 touch: one passage.
    assert [(r.start, r.end) for r in expand_and_merge([4, 7], 1, 0, 100)] == [(3, 8)]


def test_clipped_to_archive_bounds():
    assert [(r.start, r.end) for r in expand_and_merge([10, 12], 5, 9, 13)] == [(9, 13)]


def test_hits_outside_archive_are_ignored():
    assert expand_and_merge([1, 50], 2, 5, 40) == []


def test_negative_radius_is_rejected():
    with pytest.raises(ValueError, match="radius"):
        expand_and_merge([1], -1, 0, 5)


@given(
    hits=st.lists(st.integers(0, 200), max_size=30),
    radius=st.integers(0, 10),
    lowest=st.integers(0, 50),
    span=st.integers(0, 200),
)
def test_merge_equals_union_of_widened_hits(hits, radius, lowest, span):
    highest = lowest + span
    ranges = expand_and_merge(hits, radius, lowest, highest)
    covered = set()
    for r in ranges:
        covered.update(range(r.start, r.end + 1))
    expected = set()
    for h in hits:
        if lowest <= h <= highest:
            expected.update(range(max(lowest, h - radius), min(highest, h + radius) + 1))
    assert covered == expected
    # Sorted, disjoint and never adjacent (adjacent ranges would have been merged).
    for a, b in zip(ranges, ranges[1:]):
        assert a.end + 1 < b.start
    # Every in-bounds hit lands in exactly one range, in its own range's hit list.
    in_bounds = sorted({h for h in hits if lowest <= h <= highest})
    assert sorted(h for r in ranges for h in r.hit_indices) == in_bounds
    for r in ranges:
        assert all(r.start <= h <= r.end for h in r.hit_indices)


def test_window_score_rewards_more_hits():
    assert window_score([0.5, 0.4]) > window_score([0.5])
    assert window_score([0.5]) == pytest.approx(0.5)


@given(st.lists(st.integers(1, 50), max_size=20), st.integers(0, 200))
def test_pack_by_budget_never_exceeds_and_keeps_order(sizes, budget):
    items = list(range(len(sizes)))
    chosen = pack_by_budget(items, sizes, budget)
    assert sum(sizes[i] for i in chosen) <= budget
    assert chosen == sorted(chosen)
    # Greedy: any item left out did not fit at the moment it was considered.
    used = 0
    for i in items:
        if i in chosen:
            used += sizes[i]
        else:
            assert used + sizes[i] > budget


def test_pack_by_budget_without_limit_keeps_everything():
    assert pack_by_budget(["a", "b"], [10**9, 10**9], None) == ["a", "b"]
