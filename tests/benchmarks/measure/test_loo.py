"""Leave-one-out selection against hand-computed folds, and a small measurement end to end (with the disk cache).

The disk-cached embedder itself is tested in ``tests/testing/test_disk_cached_embedder.py``.
"""

import numpy as np
import pytest

from benchmarks.data.devset import STYLES, build_conversation
from benchmarks.measure.loo import (
    Candidate,
    Dataset,
    best_rank,
    fold_of,
    leave_one_out,
    measure,
    objective,
    pooled,
    pooled_held_out,
    update_summary,
)
from strands_semantic_memory.testing import DiskCachedEmbedder


class Named:
    def __init__(self, name):
        self.name = name
        self.messages = []
        self.questions = []


def rows(*recalls):
    """One question per value, the same recall at every k."""
    return [[r] * 4 for r in recalls]


A = Dataset("a", [Named(f"a{i}") for i in range(5)])
B = Dataset("b", [Named(f"b{i}") for i in range(10)])


def scores_where(best_everywhere, fitted_to):
    """``steady`` is 0.6 everywhere; ``fitted`` is 0.9 on one conversation of ``a`` and 0.5 elsewhere."""
    steady = {"a": {c.name: rows(0.6) for c in A.conversations}, "b": {c.name: rows(0.6) for c in B.conversations}}
    fitted = {
        "a": {c.name: rows(0.9 if c.name == fitted_to else 0.5) for c in A.conversations},
        "b": {c.name: rows(0.5) for c in B.conversations},
    }
    return {"steady": steady, "fitted": fitted} if best_everywhere else {"fitted": fitted, "steady": steady}


def test_folds_pair_one_conversation_of_each_five_with_two_of_each_ten():
    where = fold_of([A, B], 5)
    assert [where[("a", f"a{i}")] for i in range(5)] == [0, 1, 2, 3, 4]
    assert [where[("b", f"b{i}")] for i in range(10)] == [0, 1, 2, 3, 4] * 2


def test_objective_weights_the_datasets_equally_and_the_questions_within_one():
    scores = {"a": {"a0": rows(1.0, 0.0, 0.0, 0.0)}, "b": {"b0": rows(1.0)}}
    assert pooled(scores["a"], ["a0"]) == [25.0] * 4
    assert objective(scores, {"a": ["a0"], "b": ["b0"]}) == pytest.approx((25 + 100) / 2)


@pytest.mark.parametrize("listed_first", [True, False])
def test_a_candidate_fitted_to_one_conversation_is_not_chosen_where_it_is_left_out(listed_first):
    scores = scores_where(listed_first, fitted_to="a2")
    folds = leave_one_out(scores, [A, B], reference="steady")
    # On its training folds the fitted candidate gains on a2 (0.9 vs 0.6) but loses on the others: the steady one
    # wins every fold, and the left-out scores are the left-out conversations' own.
    assert [f.chosen for f in folds] == ["steady"] * 5
    assert folds[2].held_out == {"a": pytest.approx([60.0] * 4), "b": pytest.approx([60.0] * 4)}
    estimate = pooled_held_out(scores, [A, B], folds, 5)
    assert estimate == {"a": pytest.approx([60.0] * 4), "b": pytest.approx([60.0] * 4)}


def test_only_the_listed_candidates_are_chosen_from_and_the_reference_is_scored_beside():
    scores = scores_where(True, fitted_to="a2")
    folds = leave_one_out(scores, [A, B], reference="steady", among=["fitted"])
    assert {f.chosen for f in folds} == {"fitted"}
    assert folds[2].held_out["a"] == pytest.approx([90.0] * 4)
    assert folds[2].reference["a"] == pytest.approx([60.0] * 4)


def test_update_order_counts_only_changes_whose_two_statements_were_found():
    hits = [7, 3, 9, 1]
    assert best_rank(hits, [9, 1]) == 2 and best_rank(hits, [4]) == -1
    orders = {"d": {"c": [(0, 2), (3, 1), (-1, 0), (2, -1)]}}
    assert update_summary(orders) == (4, 2, 1)


def test_measure_scores_every_question_through_the_public_api(embedder, tmp_path):
    conversation = build_conversation(STYLES[7], 3, "tiny")
    short = type(conversation)(
        conversation.name,
        conversation.style,
        conversation.messages[:40],
        conversation.timestamps[:40],
        [q for q in conversation.questions if max(q.evidence) < 40],
        [u for u in conversation.updates if max(u.later) < 40],
    )
    cached = DiskCachedEmbedder(embedder, tmp_path)
    candidates = [Candidate("default"), Candidate("lexical", {"retrieval": "lexical"}, bm25=(1.2, 0.75))]
    measured = measure([Dataset("dev", [short])], candidates, cached, log=False)
    for name in ("default", "lexical"):
        recalls = np.asarray(measured.scores[name]["dev"]["tiny"])
        assert recalls.shape == (len(short.questions), 4)
        assert np.all(np.diff(recalls, axis=1) >= 0), "recall grows with k"
    assert np.mean(measured.scores["default"]["dev"]["tiny"]) > 0.5, "the evidence is found"
    assert len(measured.orders["default"]["dev"]["tiny"]) == len(short.updates)
