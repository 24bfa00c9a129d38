import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_semantic_memory.retrieval._passages import (
    Passage,
    expand_and_merge,
    pack_passages,
    passage_score,
    subset_passage,
)
from tests.support.passages import reference_pack_passages, reference_subset_passage


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


def test_passage_score_rewards_more_hits():
    assert passage_score([0.5, 0.4]) > passage_score([0.5])
    assert passage_score([0.5]) == pytest.approx(0.5)


def _passage(start: int, length: int, hits: dict[int, float]) -> Passage:
    indices = list(range(start, start + length))
    chosen = sorted(i for i in hits if start <= i < start + length)
    return Passage(
        start=start,
        end=start + length - 1,
        messages=[{"role": "user", "content": [{"text": f"m{i}"}]} for i in indices],
        hit_indices=chosen,
        score=max((hits[i] for i in chosen), default=0.0),
        indices=indices,
        hit_scores=[hits[i] for i in chosen],
    )


@st.composite
def retrieved(draw):
    """Disjoint passages of 1-7 messages with 1-3 hits each, and a size per archive index."""
    passages, start = [], 0
    for _ in range(draw(st.integers(0, 5))):
        start += draw(st.integers(0, 4))
        length = draw(st.integers(1, 7))
        positions = draw(st.sets(st.integers(0, length - 1), min_size=1, max_size=3))
        hits = {start + p: draw(st.floats(0.01, 1.0)) for p in positions}
        passages.append(_passage(start, length, hits))
        start += length + 1
    sizes = {i: draw(st.integers(1, 40)) for w in passages for i in w.indices}
    return passages, sizes


def _units(passages):
    return {(w.start, i) for w in passages for i in w.indices}


@given(retrieved(), st.integers(0, 300), st.integers(0, 10))
def test_packing_fits_the_budget_and_neighbours_stay_beside_their_passage(data, budget, gap):
    passages, sizes = data
    chosen, dropped = pack_passages(passages, lambda w, p: (sizes[w.indices[p]],), [budget], gap=(gap,))
    total = sum(sizes[i] for w in chosen for i in w.indices) + gap * max(0, len(chosen) - 1)
    assert total <= budget
    # every chosen run holds a hit: a neighbour never appears without its passage's hit
    assert all(w.hit_indices for w in chosen)
    # chosen and dropped runs partition the messages, and runs are in conversation order
    shown = [i for w in chosen for i in w.indices]
    assert shown == sorted(shown)
    left_out = [i for w in dropped for i in w.indices]
    assert sorted(shown + left_out) == sorted(i for w in passages for i in w.indices)


@given(retrieved(), st.integers(0, 300))
def test_hits_come_before_neighbours(data, budget):
    passages, sizes = data
    chosen, _ = pack_passages(passages, lambda w, p: (sizes[w.indices[p]],), [budget], gap=(0,))
    shown = {i for w in chosen for i in w.indices}
    neighbours_shown = any(i not in w.hit_indices for w in chosen for i in w.indices)
    if neighbours_shown:
        # no hit was left out that would have fitted on its own before any neighbour was taken
        hits_shown = sum(sizes[i] for w in passages for i in w.hit_indices if i in shown)
        for w in passages:
            for i in w.hit_indices:
                if i not in shown:
                    assert hits_shown + sizes[i] > budget


def test_packing_without_limits_keeps_everything_and_skip_leaves_out():
    passages = [_passage(0, 5, {2: 0.9}), _passage(10, 3, {11: 0.5})]
    chosen, dropped = pack_passages(passages, lambda w, p: (10**9,), [None], gap=(1,))
    assert [(w.start, w.end) for w in chosen] == [(0, 4), (10, 12)] and dropped == []
    chosen, _ = pack_passages(passages, lambda w, p: (1,), [None], gap=(0,), skip=lambda w, p: w.indices[p] == 3)
    # 3 is skipped: the run stops before it, and 4 is no longer beside the passage
    assert [(w.start, w.end) for w in chosen] == [(0, 2), (10, 12)]


def test_a_tight_budget_takes_the_best_hits_alone():
    passages = [_passage(0, 5, {2: 0.4}), _passage(10, 5, {12: 0.9})]
    chosen, dropped = pack_passages(passages, lambda w, p: (10,), [15], gap=(5,))
    assert [(w.start, w.end) for w in chosen] == [(12, 12)]
    assert [w.hit_indices for w in chosen] == [[12]] and chosen[0].score == 0.9
    assert dropped[0].start == 10  # the more relevant passage's left-out messages are listed first


@st.composite
def packing_case(draw):
    """Disjoint passages (indices with holes, tied scores, roles and times aligned or not), sizes in 1-3 units,
    budgets (some unlimited), a gap and messages to skip."""
    passages, start = [], 0
    for _ in range(draw(st.integers(0, 6))):
        start += draw(st.integers(0, 4))
        indices = sorted(start + o for o in draw(st.sets(st.integers(0, 9), min_size=1, max_size=7)))
        hits = sorted(draw(st.sets(st.sampled_from(indices), min_size=1, max_size=3)))
        scores = [draw(st.one_of(st.sampled_from([0.25, 0.5]), st.floats(0.01, 1.0))) for _ in hits]
        length = len(indices)
        passages.append(
            Passage(
                start=indices[0],
                end=indices[-1],
                messages=[{"role": "user", "content": [{"text": f"m{i}"}], "tracking_id": f"t{i}"} for i in indices],
                hit_indices=hits,
                score=draw(st.sampled_from([max(scores), 0.5, max(scores) + 0.1])),
                indices=indices,
                hit_scores=scores,
                roles=draw(st.sampled_from([["user"] * length, []])),
                timestamps=draw(st.sampled_from([[float(i) for i in indices], []])),
            )
        )
        start = indices[-1] + 2
    units = draw(st.integers(1, 3))
    every = [i for w in passages for i in w.indices]
    sizes = {i: tuple(draw(st.integers(0, 40)) for _ in range(units)) for i in every}
    budgets = [draw(st.one_of(st.none(), st.integers(0, 250))) for _ in range(units)]
    gap = tuple(draw(st.integers(0, 12)) for _ in range(units))
    skipped = draw(st.sets(st.sampled_from(every))) if every else set()
    return passages, sizes, budgets, gap, skipped


@given(packing_case())
def test_packing_chooses_and_leaves_out_exactly_what_the_plain_rule_does(case):
    passages, sizes, budgets, gap, skipped = case

    def size(passage, position):
        return sizes[passage.indices[position]]

    def skip(passage, position):
        return passage.indices[position] in skipped

    for skip_rule in (None, skip):
        found = pack_passages(passages, size, budgets, gap=gap, skip=skip_rule)
        assert found == reference_pack_passages(passages, size, budgets, gap=gap, skip=skip_rule)


@given(packing_case(), st.data())
def test_a_subset_is_the_same_passage_from_a_list_of_positions_or_a_run(case, data):
    passages = case[0]
    if not passages:
        return
    passage = data.draw(st.sampled_from(passages))
    count = len(passage.indices)
    positions = sorted(data.draw(st.sets(st.integers(0, count - 1), min_size=1)))
    score = data.draw(st.one_of(st.none(), st.floats(0, 1)))
    assert subset_passage(passage, positions, score=score) == reference_subset_passage(passage, positions, score)
    low = data.draw(st.integers(0, count - 1))
    high = data.draw(st.integers(low + 1, count))
    run = range(low, high)
    assert subset_passage(passage, run, score=score) == reference_subset_passage(passage, list(run), score)
    unaligned = Passage(
        start=passage.start,
        end=passage.end,
        messages=passage.messages[:-1],
        hit_indices=passage.hit_indices,
        score=passage.score,
        indices=passage.indices,
        hit_scores=passage.hit_scores,
        roles=passage.roles[:-1],
        timestamps=passage.timestamps,
    )
    assert subset_passage(unaligned, run) == reference_subset_passage(unaligned, list(run))
    assert subset_passage(unaligned, positions) == reference_subset_passage(unaligned, positions)


def test_at_equal_distance_the_more_relevant_passages_neighbour_comes_first():
    weak, strong = _passage(0, 3, {1: 0.9}), _passage(10, 3, {11: 0.3})
    strong = subset_passage(strong, range(3), score=2.0)  # a passage with many candidates inside ranks higher
    for passages in ([weak, strong], [strong, weak]):
        chosen, _ = pack_passages(passages, lambda w, p: (10,), [30], gap=(0,))
        assert sorted(i for w in chosen for i in w.indices) == [1, 10, 11]
        assert chosen == reference_pack_passages(passages, lambda w, p: (10,), [30], gap=(0,))[0]
