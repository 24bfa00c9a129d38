"""The second development set: deterministic, long assistant answers, and evidence that holds by construction."""

import statistics

import pytest

from benchmarks.data.devset import (
    ALL_VALUES,
    CATEGORIES,
    CURRENT,
    STYLES,
    UPDATE_STYLES,
    build_conversation,
    build_devset,
    build_update_set,
)


def text_of(message):
    return message["content"][0]["text"]


@pytest.fixture(scope="module")
def devset():
    return build_devset()


def test_the_same_seed_builds_the_same_conversation_and_another_seed_another():
    first = build_conversation(STYLES[7], 5, "a")
    assert build_conversation(STYLES[7], 5, "a") == first
    assert build_conversation(STYLES[7], 6, "a").messages != first.messages


def test_conversations_are_long_assistant_heavy_and_in_time_order(devset):
    assert len(devset) == len(STYLES)
    assert sum(len(c.messages) for c in devset) > 3000
    for conversation in devset:
        roles = [m["role"] for m in conversation.messages]
        assert roles[::2] == ["user"] * len(roles[::2]) and roles[1::2] == ["assistant"] * len(roles[1::2])
        assert conversation.timestamps == sorted(conversation.timestamps)
        assistant = [len(text_of(m).split()) for m in conversation.messages if m["role"] == "assistant"]
        user = [len(text_of(m).split()) for m in conversation.messages if m["role"] == "user"]
        assert statistics.median(assistant) > 150 and max(assistant) > 300
        assert statistics.median(assistant) > 5 * statistics.median(user)
        days = {int(t // 86400) for t in conversation.timestamps}
        assert len(days) > 10, "sessions on separate days"


def test_every_category_is_asked_and_evidence_points_at_real_turns(devset):
    asked = {q.category for c in devset for q in c.questions}
    assert asked == set(CATEGORIES)
    for conversation in devset:
        texts = [q.text for q in conversation.questions]
        assert len(texts) == len(set(texts)), "questions are distinct within a conversation"
        for question in conversation.questions:
            assert question.evidence and all(0 <= i < len(conversation.messages) for i in question.evidence)
            if question.category == ALL_VALUES:
                assert len(question.evidence) >= 2


def test_a_changed_fact_is_stated_in_its_evidence_and_the_later_statement_comes_later(devset):
    kinds = set()
    for conversation in [*devset, *build_update_set()]:
        current = {q.text: q for q in conversation.questions if q.category == CURRENT}
        for update in conversation.updates:
            kinds.add(update.kind.split(":")[1])
            assert update.question in current
            assert set(current[update.question].evidence) == set(update.later)
            assert min(update.later) > max(update.earlier)
            assert update.value not in update.old_values
            assert update.value in text_of(conversation.messages[min(update.later)])
            for turn in update.earlier:
                said = text_of(conversation.messages[turn])
                assert any(old in said for old in update.old_values)
    assert len(kinds) >= 12, "versions, owners, dates, prices, addresses, venues... change"


def test_the_update_set_differs_from_the_development_set_in_seed_and_lengths():
    updates = build_update_set()
    assert len(updates) == len(UPDATE_STYLES)
    lengths = [len(c.messages) for c in updates]
    assert max(lengths) > 3 * min(lengths)
    assert sum(len(c.updates) for c in updates) >= 20
    dev_texts = {text_of(m) for c in build_devset() for m in c.messages if m["role"] == "user"}
    update_texts = [text_of(m) for c in updates for m in c.messages if m["role"] == "user"]
    assert sum(t in dev_texts for t in update_texts) < 0.5 * len(update_texts)
