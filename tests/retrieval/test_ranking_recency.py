"""Order and recency in the ranking: later-first among near-equal candidates, the recency prior and the context
floor, as pure functions against brute-force oracles, and their place in ``rank``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_semantic_memory.archives._protocol import Candidates
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.retrieval._ranking import (
    RankingOptions,
    later_first,
    nth_best,
    rank,
    spread_to_neighbours,
)

positions = st.lists(st.integers(0, 500), min_size=2, max_size=40, unique=True)
strengths = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def scored(draw):
    indices = np.asarray(draw(positions), dtype=np.int64)
    scores = np.asarray(
        draw(st.lists(st.floats(-2.0, 5.0, allow_nan=False), min_size=len(indices), max_size=len(indices)))
    )
    return indices, scores


@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan"), True, "0.1"])
def test_prefer_later_outside_0_to_1_is_refused_by_name(value):
    with pytest.raises(ConfigurationError, match="prefer_later"):
        RankingOptions(prefer_later=value)


@pytest.mark.parametrize("value", [-1, 2.5, True, None])
def test_context_floor_must_be_a_count(value):
    with pytest.raises(ConfigurationError, match="context_floor"):
        RankingOptions(context_floor=value)


def later_first_oracle(indices, scores, tolerance):
    """Newest to oldest: a message takes the lowest new score of the later messages that follow it."""
    new = dict(zip(indices.tolist(), scores.tolist(), strict=True))
    original = dict(new)
    for a in sorted(new, reverse=True):
        near = [b for b in new if original[a] > 0 and original[a] / (1 + tolerance) <= original[b] < original[a]]
        new[a] = min([original[a], *(new[b] for b in near if b > a)])
    return np.asarray([new[i] for i in indices.tolist()])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(scored(), strengths)
def test_later_first_matches_its_oracle_and_only_lowers_scores(case, tolerance):
    indices, scores = case
    new = later_first(indices, scores, tolerance)
    assert np.allclose(new, later_first_oracle(indices, scores, tolerance))
    assert np.all(new <= scores)
    assert np.array_equal(later_first(indices, scores, 0.0), scores)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(scored(), st.floats(0.01, 1.0))
def test_every_near_equal_later_message_ranks_first(case, tolerance):
    indices, scores = case
    new = later_first(indices, scores, tolerance)
    order = np.lexsort((-indices, -new))  # ties go to the later message
    place = {int(indices[i]): rank for rank, i in enumerate(order)}
    for a in range(len(indices)):
        followed = False
        for b in range(len(indices)):
            if indices[b] > indices[a] and scores[a] > 0 and scores[a] / (1 + tolerance) <= scores[b]:
                followed = followed or scores[b] < scores[a]
                assert place[int(indices[b])] < place[int(indices[a])]  # a better later message stays first too
        if not followed:
            assert new[a] == scores[a], "a message no later one comes near keeps its score"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.dictionaries(st.integers(0, 40), st.floats(0.0, 3.0, allow_nan=False), min_size=1, max_size=30),
    st.lists(
        st.tuples(st.sampled_from([-3, -2, -1, 1, 2, 3]), st.floats(0.0, 1.0)), max_size=6, unique_by=lambda p: p[0]
    ),
    st.integers(0, 12),
)
def test_the_context_floor_lifts_by_the_part_above_the_nth_best(base, weights, n):
    keys = np.asarray(sorted(base), dtype=np.int64)
    values = np.asarray([base[k] for k in keys.tolist()])
    floor = nth_best(values, n)
    assert floor == (sorted(values, reverse=True)[n - 1] if 0 < n <= len(values) else 0.0)
    targets = np.arange(0, 45, dtype=np.int64)
    got = spread_to_neighbours(keys, values, weights, targets, floor)
    for target, score in zip(targets.tolist(), got.tolist(), strict=True):
        expected = base.get(target, 0.0) + sum(
            w * max(base.get(target + o, 0.0) - floor, 0.0) for o, w in weights if target + o in base
        )
        assert score == pytest.approx(expected)


def test_rank_puts_a_near_equal_later_candidate_first_only_when_asked():
    candidates = Candidates(dense={3: 0.6, 40: 0.55, 20: 0.1}, lexical={}, similarity={3: 0.6, 40: 0.55, 20: 0.1})
    alone = {"neighbour_weights": (), "neighbour_hits": 0, "dense_floor": False}
    plain = rank(candidates, mode="dense", want=3, options=RankingOptions(**alone))
    assert [i for i, _, _ in plain] == [3, 40, 20]
    later = rank(candidates, mode="dense", want=3, options=RankingOptions(**alone, prefer_later=0.1))
    assert [i for i, _, _ in later] == [40, 3, 20]
    far = rank(candidates, mode="dense", want=3, options=RankingOptions(**alone, prefer_later=0.05))
    assert [i for i, _, _ in far] == [3, 40, 20]  # 0.55 is not within 5 % of 0.6


# ------------------------------------------------------------------ changed facts, real model


@pytest.fixture(scope="module")
def changed_facts(embedder):
    """Each changed fact of the knowledge-update test set (``benchmarks.data.devset``: conversations of 70 to 270
    messages, 29 changes of versions, owners, dates, prices, addresses, venues...), searched for with the default
    ranking and with ``prefer_later=0.25``."""
    from benchmarks.data.devset import build_update_set
    from strands_semantic_memory import SemanticMemory

    rows = []
    for conversation in build_update_set():
        memory = SemanticMemory(embedder=embedder)
        memory.add(conversation.messages, timestamps=conversation.timestamps)
        for update in conversation.updates:
            memory.configure(ranking={})
            plain = memory.search(update.question, top_k=50)
            memory.configure(ranking={"prefer_later": 0.25})
            rows.append((update, plain, memory.search(update.question, top_k=50)))
    return rows


def best(hits, turns):
    """The best rank among ``hits`` of any of ``turns``, and its score (None when none is a hit)."""
    found = [(rank, hit.score) for rank, hit in enumerate(hits) if hit.index in turns]
    return min(found) if found else None


def test_the_later_statement_ranks_first_when_both_statements_match_about_equally(changed_facts):
    near = 0
    for update, plain, preferring in changed_facts:
        later, earlier = best(plain, update.later), best(plain, update.earlier)
        if later is None or earlier is None or later[1] * 1.25 < earlier[1]:
            continue
        near += 1
        later_now, earlier_now = best(preferring, update.later), best(preferring, update.earlier)
        assert later_now is not None, f"{update.kind}: {update.question}"
        assert earlier_now is None or later_now[0] < earlier_now[0], f"{update.kind}: {update.question}"
    assert near >= 10


def test_preferring_later_statements_puts_more_current_values_first(changed_facts):
    def later_first(column):
        pairs = [(best(row[column], u.later), best(row[column], u.earlier)) for row in changed_facts for u in [row[0]]]
        both = [(a[0], b[0]) for a, b in pairs if a is not None and b is not None]
        return sum(a < b for a, b in both), len(both)

    plain_first, plain_both = later_first(1)
    preferring_first, preferring_both = later_first(2)
    assert preferring_first >= plain_first + 5
    # Not every time: the two statements of a change often match a question unequally (see ``later_first``).
    assert preferring_first / preferring_both > 0.5 > plain_first / plain_both
