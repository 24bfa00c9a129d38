"""Personal context's pure functions: statements are the user's own words, and which requests are about the user."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_semantic_memory.messages._profile import (
    MAX_STATEMENTS,
    personal_request,
    self_statements,
    statement_parts,
)


@given(st.text(max_size=400), st.one_of(st.none(), st.text(max_size=200)))
def test_statements_are_verbatim_substrings_never_invented(text: str, after: str | None) -> None:
    found = self_statements(text, after)
    assert len(found) <= MAX_STATEMENTS
    assert all(sentence and sentence in text for sentence in found)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_parts_of_a_statement_are_its_own_words(sentence: str) -> None:
    parts = statement_parts(sentence)
    assert parts[0] == sentence and len(parts) == len(set(parts))
    for part in parts[1:]:  # clauses and "my X" phrases: the sentence's own words, nothing added
        assert all(w.lower().strip(".,!?;:") in sentence.lower() for w in part.split())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I have an iPhone 13 Pro and the battery drains fast.",
            ["I have an iPhone 13 Pro and the battery drains fast."],
        ),
        ("Quick question. my daughter is allergic to nuts!", ["my daughter is allergic to nuts!"]),
        ("tbh i'm lactose intolerant lol", ["tbh i'm lactose intolerant lol"]),
        ("What is the capital of France?", []),
        ("I'm not sure.", []),  # says nothing about the user
    ],
)
def test_what_counts_as_a_statement(text: str, expected: list[str]) -> None:
    assert self_statements(text) == expected


def test_a_short_reply_to_a_question_about_the_user_is_a_statement_only_after_that_question() -> None:
    assert self_statements("A 2019 Subaru Outback.", "What do you drive?") == ["A 2019 Subaru Outback."]
    assert self_statements("A 2019 Subaru Outback.", "Which car won the 2019 rally?") == []
    assert self_statements("A 2019 Subaru Outback.") == []


@pytest.mark.parametrize(
    ("query", "personal"),
    [
        ("Can you suggest some useful accessories for my phone?", True),
        ("What should I cook this weekend?", True),
        ("Plan a trip for us in May.", True),
        ("Suggest a snack I could pack for a picnic.", True),
        ("What is the capital of France?", False),
        ("How do I boil an egg?", False),
        ("Give me a list of ideas.", False),
        ("Recommend a book.", False),
    ],
)
def test_which_requests_depend_on_the_user(query: str, personal: bool) -> None:
    assert personal_request(query) is personal


def test_questions_state_nothing_and_contracted_wishes_are_personal() -> None:
    assert self_statements("What is my locker code?") == []
    assert self_statements("My locker is on Harwick Street. What is its code?") == ["My locker is on Harwick Street."]
    assert personal_request("I'd like a new case for the phone.") and personal_request("We'd like garden ideas.")
