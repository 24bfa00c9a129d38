"""ContextBudget: the shares of a model's window, and the local token estimate both the manager and the hook use."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_semantic_memory.budget import ContextBudget, estimate_tokens, history_tokens, tokens_for_length
from strands_semantic_memory.errors import ConfigurationError

shares = st.floats(0.0, 0.45, allow_nan=False)


@given(
    memory=shares,
    reply=shares,
    window=st.integers(1, 2_000_000),
    used=st.one_of(st.none(), st.integers(0, 10**7)),
    cap=st.one_of(st.none(), st.integers(1, 10**6)),
)
def test_history_memory_and_reply_never_add_up_to_more_than_the_window(memory, reply, window, used, cap):
    budget = ContextBudget(memory_share=memory, reply_share=reply, max_memory_tokens=cap)
    history = budget.history_limit(window)
    spent = budget.memory_tokens(window, used)
    memory_part, reply_part = math.floor(window * memory + 1e-9), math.floor(window * reply + 1e-9)
    if cap is not None:
        memory_part = min(memory_part, cap)  # what the cap leaves goes to the history
    assert 0 <= spent <= memory_part
    assert cap is None or spent <= cap
    assert history + memory_part + reply_part == window
    if used is not None:
        # the memory never takes more than the room the call leaves, less the reply's share
        assert used + spent <= max(used, window - reply_part)


def test_the_history_keeps_below_its_share_so_the_memory_fits():
    budget = ContextBudget(memory_share=0.3, reply_share=0.05)
    assert budget.history_limit(8000) == 5200
    assert budget.memory_tokens(8000) == 2400
    assert budget.memory_tokens(8000, used=5200) == 2400
    assert budget.memory_tokens(8000, used=7000) == 600  # a long current turn leaves less room
    assert budget.memory_tokens(8000, used=9000) == 0
    assert budget.memory_tokens(None) == budget.fallback_memory_tokens


def test_a_large_window_gives_the_memory_at_most_its_cap_and_the_history_keeps_its_share():
    budget = ContextBudget()
    assert budget.memory_tokens(8000) == 4000  # below the cap: half the window
    assert budget.memory_tokens(200_000) == 8000  # not 100,000 tokens of archived context in every call
    assert budget.history_limit(200_000) == 182_000  # the room the cap leaves goes to the history
    assert budget.history_limit(8000) == 3600
    uncapped = ContextBudget(max_memory_tokens=None)
    assert uncapped.memory_tokens(200_000) == 100_000 and uncapped.history_limit(200_000) == 90_000
    assert ContextBudget(max_memory_tokens=500).memory_tokens(None) == 500  # the cap bounds the fallback too
    assert ContextBudget(max_memory_tokens=3000).memory_tokens(8000, used=7000) == 600  # the room still caps it


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"memory_share": -0.1}, "memory_share"),
        ({"memory_share": 0.95}, "memory_share"),
        ({"memory_share": "0.3"}, "memory_share"),
        ({"memory_share": True}, "memory_share"),
        ({"reply_share": 0.6}, "reply_share"),
        ({"memory_share": 0.8, "reply_share": 0.2}, "memory_share \\+ reply_share"),
        ({"fallback_memory_tokens": 0}, "fallback_memory_tokens"),
        ({"fallback_memory_tokens": 2.5}, "fallback_memory_tokens"),
        ({"max_memory_tokens": 0}, "max_memory_tokens"),
        ({"max_memory_tokens": 1.5}, "max_memory_tokens"),
        ({"max_memory_tokens": True}, "max_memory_tokens"),
    ],
)
def test_bad_shares_are_refused_with_the_options_name(options, name):
    with pytest.raises(ConfigurationError, match=name):
        ContextBudget(**options)


def test_the_estimate_counts_text_and_the_system_prompt_at_four_characters_per_token():
    assert estimate_tokens("") == 0 and estimate_tokens("abcde") == 2
    messages = [{"role": "user", "content": [{"text": "a" * 40}]}, {"role": "assistant", "content": [{"text": "b"}]}]
    assert history_tokens(messages) == 10 + 1
    assert history_tokens(messages, "s" * 8) == 13


@given(st.text(max_size=200))
def test_the_estimate_needs_only_the_length(text):
    assert estimate_tokens(text) == tokens_for_length(len(text)) == math.ceil(len(text) / 4)
