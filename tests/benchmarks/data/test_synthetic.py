"""The synthetic retrieval set and the filler turns: reproducible from a seed, evidence where it says."""

from benchmarks.data.conversations import TOPICS, filler_messages
from benchmarks.data.synthetic import build_dataset


def test_dataset_is_reproducible_and_its_evidence_is_where_it_says():
    first, second = build_dataset(21, per_kind=4), build_dataset(21, per_kind=4)
    assert first.messages == second.messages and first.questions == second.questions
    assert build_dataset(22, per_kind=4).messages != first.messages
    for question in first.questions:
        for position in question.evidence:
            assert first.messages[position]["role"] == "user"
        if question.kind == "multi_turn":
            assert question.evidence[1] - question.evidence[0] <= 6, "a few turns apart"


def test_filler_alternates_roles_from_a_seed_and_talks_about_the_shared_topics():
    messages = filler_messages(9, seed=4)
    assert messages == filler_messages(9, seed=4) != filler_messages(9, seed=5)
    assert [m["role"] for m in messages] == ["user", "assistant"] * 4 + ["user"]
    assert all(any(topic in m["content"][0]["text"] for topic in TOPICS) for m in messages[::2])
