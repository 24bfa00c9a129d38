"""The ranking's pure parts against brute-force oracles, and the whole ranking on a real archive and the real model."""

import time

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from strands_semantic_memory.archives._protocol import Candidates, NewRecord
from strands_semantic_memory.archives._scoring import lookup
from strands_semantic_memory.archives.in_process._archive import InMemoryArchive
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._codec import encode_message
from strands_semantic_memory.retrieval._ranking import (
    DEFAULT_NEIGHBOUR_WEIGHTS,
    RankingOptions,
    candidate_depth,
    context_indices,
    rank,
    reciprocal_rank_fusion,
    spread_to_neighbours,
)

ALONE = RankingOptions(neighbour_weights=(), neighbour_hits=0, dense_floor=False, lexical_power=1.0)
"""Each message scored on its own: plain weighted fusion, the reference for the other options."""

indices = st.integers(0, 60)
scores = st.floats(0.0, 20.0, allow_nan=False)
cosines = st.floats(-1.0, 1.0, allow_nan=False)


@st.composite
def candidate_sets(draw):
    dense = draw(st.dictionaries(indices, cosines, max_size=20))
    lexical = draw(st.dictionaries(indices, scores, max_size=20))
    extra = draw(st.dictionaries(indices, cosines, max_size=20))  # neighbours' similarities, added by the engine
    similarity = {**extra, **dense}
    return Candidates(dense=dense, lexical=lexical, similarity=similarity)


# ------------------------------------------------------------------ options


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("fusion", "borda"),
        ("dense_weight", 1.5),
        ("dense_weight", True),
        ("lexical_power", 0),
        ("dense_floor", "yes"),
        ("rrf_k", 0),
        ("min_depth", 0),
        ("context_factor", 0),
        ("neighbour_hits", -1),
        ("neighbour_weights", ((0, 0.5),)),
        ("neighbour_weights", ((-1, -0.5),)),
        ("neighbour_weights", ((-1, 0.5), (-1, 0.2))),
        ("neighbour_weights", ((-1, float("nan")),)),
        ("neighbour_weights", (1, 2, 3)),
    ],
)
def test_invalid_options_are_refused_by_name(field, value):
    with pytest.raises(ConfigurationError, match=field):
        RankingOptions(**{field: value})


def test_default_options_reach_and_depth():
    options = RankingOptions()
    assert options.widest == 2
    assert options.reach == 3  # neighbours one step away are ranked, and they need their own neighbours' scores
    assert RankingOptions(neighbour_weights=()).reach == 0
    assert candidate_depth(3, options) == options.min_depth
    assert candidate_depth(80, options) == 240
    # the turn before a message counts more than the turn after, and nearer turns more than farther ones
    weights = dict(DEFAULT_NEIGHBOUR_WEIGHTS)
    assert weights[-1] > weights[1] and weights[-1] > weights[-2] and weights[1] > weights[2]
    assert RankingOptions(neighbour_weights=[[-1, 0.5]]).neighbour_weights == ((-1, 0.5),)  # JSON-shaped input


# ------------------------------------------------------------------ components


@given(
    st.dictionaries(indices, scores, max_size=25),
    st.lists(st.tuples(st.integers(-4, 4).filter(bool), st.floats(0.0, 1.0)), max_size=4, unique_by=lambda p: p[0]),
    st.lists(indices, max_size=25),
)
def test_spread_to_neighbours_matches_a_dictionary_oracle(base, weights, targets):
    keys = np.asarray(sorted(base), dtype=np.int64)
    values = np.asarray([base[k] for k in keys.tolist()], dtype=np.float64)
    got = spread_to_neighbours(keys, values, weights, np.asarray(targets, dtype=np.int64))
    expected = [base.get(t, 0.0) + sum(w * base.get(t + o, 0.0) for o, w in weights) for t in targets]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(
        lookup(keys, values, np.asarray(targets, dtype=np.int64)), [base.get(t, 0.0) for t in targets]
    )


@settings(max_examples=60)
@given(candidate_sets(), st.integers(1, 10), st.sampled_from(["hybrid", "dense", "lexical"]))
def test_context_indices_are_the_unknown_neighbours_of_the_strongest_candidates(candidates, want, mode):
    options = RankingOptions(context_factor=1)
    needed = context_indices(candidates, mode=mode, want=want, options=options)
    assert needed == sorted(set(needed))
    assert not set(needed) & set(candidates.similarity)
    found = {"hybrid": {**candidates.dense, **candidates.lexical}, "dense": candidates.dense}.get(
        mode, candidates.lexical
    )
    everything = {i for c in found for i in range(c - options.reach, c + options.reach + 1) if i >= 0}
    assert set(needed) <= everything - set(candidates.similarity)
    if len(found) <= want:  # every candidate is among the strongest: all of their neighbourhoods are asked for
        assert set(needed) == everything - set(candidates.similarity)
    assert context_indices(candidates, mode=mode, want=want, options=RankingOptions(neighbour_weights=())) == []


# ------------------------------------------------------------------ rank


@settings(max_examples=80)
@given(candidate_sets(), st.integers(1, 30), st.sampled_from(["hybrid", "dense", "lexical"]))
def test_rank_returns_distinct_known_messages_best_first(candidates, want, mode):
    ranked = rank(candidates, mode=mode, want=want, options=RankingOptions())
    got = [i for i, _, _ in ranked]
    assert len(got) == len(set(got)) <= want
    assert [s for _, s, _ in ranked] == sorted((s for _, s, _ in ranked), reverse=True)
    found = {"hybrid": {**candidates.dense, **candidates.lexical}, "dense": candidates.dense}.get(
        mode, candidates.lexical
    )
    neighbours = {i for c in found for i in (c - 1, c + 1)}
    assert set(got) <= set(found) | (neighbours & set(candidates.similarity))
    assert all(sim == candidates.similarity.get(i) for i, _, sim in ranked)
    # the first k of a longer list are the list for k (what lets callers ask for a pool and cut it)
    longer = rank(candidates, mode=mode, want=want + 7, options=RankingOptions())
    assert longer[: len(ranked)] == ranked


@settings(max_examples=80)
@given(candidate_sets(), st.floats(0.0, 1.0))
def test_rank_without_context_is_plain_weighted_fusion(candidates, weight):
    assume(candidates.dense or candidates.lexical)
    options = RankingOptions(
        dense_weight=weight, neighbour_weights=(), neighbour_hits=0, dense_floor=False, lexical_power=1.0
    )
    best = max(candidates.lexical.values(), default=0.0)
    dense = {**candidates.dense, **candidates.similarity}
    expected = {
        i: weight * dense.get(i, 0.0) + (1 - weight) * (candidates.lexical.get(i, 0.0) / best if best > 0 else 0.0)
        for i in {**candidates.dense, **candidates.lexical}
    }
    ranked = rank(candidates, mode="hybrid", want=100, options=options)
    assert sorted(i for i, _, _ in ranked) == sorted(expected)
    assert all(s == pytest.approx(expected[i], abs=1e-12) for i, s, _ in ranked)


@settings(max_examples=60)
@given(candidate_sets(), st.integers(1, 1000), st.sampled_from(["hybrid", "dense", "lexical"]))
def test_rank_only_depends_on_relative_positions(candidates, shift, mode):
    def moved(scores):
        return {i + shift: s for i, s in scores.items()}

    shifted = Candidates(moved(candidates.dense), moved(candidates.lexical), moved(candidates.similarity))
    # indices near 0 lose neighbours that shifting would give them: compare only away from the archive start
    assume(all(i >= 8 for i in {**candidates.dense, **candidates.lexical, **candidates.similarity}))
    here = rank(candidates, mode=mode, want=40, options=RankingOptions())
    there = rank(shifted, mode=mode, want=40, options=RankingOptions())
    assert [(i + shift, pytest.approx(s)) for i, s, _ in here] == [(i, s) for i, s, _ in there]


def test_a_passage_outranks_an_isolated_match_of_the_same_strength():
    similarity = {10: 0.6, 11: 0.5, 12: 0.5, 40: 0.6, 39: 0.1, 41: 0.1, 70: 0.2}
    dense = {10: 0.6, 40: 0.6, 11: 0.5, 12: 0.5, 70: 0.2}
    candidates = Candidates(dense=dense, lexical={}, similarity=similarity)
    ranked = [i for i, _, _ in rank(candidates, mode="hybrid", want=4, options=RankingOptions())]
    assert ranked.index(10) < ranked.index(40)
    alone = [i for i, _, _ in rank(candidates, mode="hybrid", want=4, options=ALONE)]
    assert alone[:2] == [10, 40]  # scored alone they tie, and the older one comes first


def test_the_reply_after_a_match_outranks_the_turn_before_it():
    # 20 asks what the question asks; 19 and 21 are equally unrelated to the query on their own
    similarity = {19: 0.2, 20: 0.7, 21: 0.2}
    candidates = Candidates(dense={20: 0.7}, lexical={20: 5.0}, similarity=similarity)
    ranked = [i for i, _, _ in rank(candidates, mode="hybrid", want=3, options=RankingOptions())]
    assert ranked == [20, 21, 19]


def test_neighbours_enter_only_when_eligible():
    candidates = Candidates(dense={5: 0.8}, lexical={}, similarity={4: 0.3, 5: 0.8, 6: 0.3})
    options = RankingOptions()
    assert {i for i, _, _ in rank(candidates, mode="dense", want=5, options=options)} == {4, 5, 6}
    assert {i for i, _, _ in rank(candidates, mode="dense", want=5, options=options, eligible={6})} == {5, 6}
    assert {i for i, _, _ in rank(candidates, mode="dense", want=5, options=RankingOptions(neighbour_hits=0))} == {5}


def test_modes_use_their_own_signal():
    candidates = Candidates(dense={1: 0.9, 2: 0.2}, lexical={2: 9.0, 3: 1.0}, similarity={1: 0.9, 2: 0.2, 3: 0.1})
    solo = RankingOptions(neighbour_weights=(), neighbour_hits=0)
    assert [i for i, _, _ in rank(candidates, mode="dense", want=5, options=solo)] == [1, 2]
    assert [i for i, _, _ in rank(candidates, mode="lexical", want=5, options=solo)] == [2, 3]
    assert [i for i, _, _ in rank(candidates, mode="hybrid", want=5, options=solo)][:1] == [2]
    with pytest.raises(ConfigurationError, match="mode"):
        rank(candidates, mode="sparse", want=5, options=solo)
    assert rank(Candidates({}, {}, {}), mode="hybrid", want=5, options=RankingOptions()) == []


def test_the_dense_floor_keeps_the_background_similarity_from_adding_up():
    # every message has the background similarity of unrelated text; the first one matches the query. Counted raw,
    # a mid-archive message collects six neighbours' background and beats it; above the floor, background is 0.
    dense = {i: 0.3 for i in range(30)} | {0: 0.45}
    candidates = Candidates(dense=dict(dense), lexical={}, similarity=dict(dense))
    assert rank(candidates, mode="dense", want=1, options=RankingOptions())[0][0] == 0
    assert rank(candidates, mode="dense", want=1, options=RankingOptions(dense_floor=False))[0][0] != 0


def test_rrf_fusion_keeps_the_previous_behaviour():
    candidates = Candidates(
        dense={1: 0.9, 2: 0.8, 3: 0.1}, lexical={3: 7.0, 2: 6.0}, similarity={1: 0.9, 2: 0.8, 3: 0.1}
    )
    options = RankingOptions(fusion="rrf", rrf_k=10)
    fused = reciprocal_rank_fusion([candidates.dense, candidates.lexical], 10)
    ranked = rank(candidates, mode="hybrid", want=3, options=options)
    assert [(i, s) for i, s, _ in ranked] == sorted(fused.items(), key=lambda item: (-item[1], item[0]))
    assert context_indices(candidates, mode="hybrid", want=3, options=options) == []


# ------------------------------------------------------------------ on a real archive with the real model


def _archive(texts: list[str], embedder) -> InMemoryArchive:
    store = InMemoryArchive()
    now = time.time()
    records = []
    for n, text in enumerate(texts):
        message = {"role": "user" if n % 2 == 0 else "assistant", "content": [{"text": text}]}
        records.append(NewRecord(encode_message(message), message["role"], None, text, f"k{n}", now))
    indices = store.add(records)
    vectors = embedder.embed_documents(texts)
    store.set_vectors({i: vectors[n : n + 1] for n, i in enumerate(indices)})
    return store


def _search(store: InMemoryArchive, embedder, query: str, want: int, options: RankingOptions) -> list[int]:
    vector = embedder.embed_queries([query])
    depth = candidate_depth(want, options)
    candidates = store.candidates(vector, query, dense_k=depth, lexical_k=depth)
    needed = context_indices(candidates, mode="hybrid", want=want, options=options)
    similarity = {**candidates.similarity, **store.similarities(vector, needed)}
    ranked = rank(
        Candidates(candidates.dense, candidates.lexical, similarity), mode="hybrid", want=want, options=options
    )
    return [i for i, _, _ in ranked]


def test_an_answer_that_shares_no_word_with_the_question_is_found_through_the_turn_it_answers(embedder):
    filler = [
        "Did you watch the match last night?",
        "Yes, the second half was great.",
        "I am baking bread this weekend.",
        "Sounds tasty, send me a picture.",
        "My sister moves to Lisbon in March.",
        "Lisbon is lovely in spring.",
    ]
    texts = (
        filler * 3
        + [
            "Which adoption agencies did you contact for the paperwork?",
            "Two of them: Brightpath and Little Harbor. Both replied within a week.",
        ]
        + filler * 3
    )
    store = _archive(texts, embedder)
    answer = len(filler) * 3 + 1
    question = "Which adoption agencies did Caroline research?"
    with_context = _search(store, embedder, question, 3, RankingOptions())
    alone = _search(store, embedder, question, 3, ALONE)
    assert answer in with_context
    assert answer not in alone  # on its own the reply shares no word and little meaning with the question
