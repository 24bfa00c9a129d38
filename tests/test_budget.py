"""ContextBudget: the shares of a model's window, and the local token estimate both the manager and the hook use."""

from __future__ import annotations

import logging
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_semantic_memory.budget import (
    DEFAULT_BUDGET,
    MAX_DECLARED_WINDOW,
    ContextBudget,
    agent_budget,
    estimate_tokens,
    history_tokens,
    model_window,
    share_budget,
    tokens_for_length,
)
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.storage import BudgetSummarization
from tests.support.scripted_model import ScriptedModel

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
    # the share, or the cap where the call leaves more room than the share (an empty history)
    assert 0 <= spent <= (memory_part if cap is None or used is None else max(memory_part, cap))
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
    assert budget.max_memory_tokens == 2500
    assert budget.memory_tokens(4000) == 2000  # below the cap: half the window
    assert budget.memory_tokens(8000) == 2500  # the cap
    assert budget.memory_tokens(200_000) == 2500  # not 100,000 tokens of archived context in every call
    assert budget.history_limit(200_000) == 187_500  # the room the cap leaves goes to the history
    assert budget.history_limit(8000) == 5100
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


# ---------------------------------------------------------------------------------------------- model_window


class _Declares:
    """A model that declares ``context_window_limit`` as given (the attribute Strands' models have)."""

    def __init__(self, limit):
        self.context_window_limit = limit


odd_windows = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),  # 2.5, 8000.0, NaN, inf: not whole token counts
    st.integers(max_value=0),  # 0, -5
    st.integers(min_value=MAX_DECLARED_WINDOW + 1, max_value=10**400),  # larger than the shares can be computed with
    st.booleans(),  # True is an int, and no window
    st.text(max_size=12),  # "8000"
    st.lists(st.integers(), max_size=2),
)


@given(window=st.integers(1, MAX_DECLARED_WINDOW))
def test_a_whole_positive_window_is_read_as_declared(window):
    assert model_window(_Declares(window)) == window


class _Records(logging.Handler):
    """The budget module's log records while the block runs (hypothesis runs many examples in one test)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    def __enter__(self):
        logging.getLogger("strands_semantic_memory.budget").addHandler(self)
        return self

    def __exit__(self, *exc):
        logging.getLogger("strands_semantic_memory.budget").removeHandler(self)


@given(limit=odd_windows)
def test_any_other_window_counts_as_undeclared_and_is_named_once_per_model(limit):
    model = _Declares(limit)
    with _Records() as log:
        assert model_window(model) is None
        assert model_window(model) is None, "read again: still undeclared"
        assert [r.levelname for r in log.records] == ["WARNING"], "one warning per model and value"
        assert "context_window_limit=<" in log.records[0].getMessage()
        assert model_window(_Declares(limit)) is None
        assert len(log.records) == 2, "another model with the same value is named again"


def test_the_odd_value_is_named_in_the_warning(caplog):
    with caplog.at_level("WARNING", logger="strands_semantic_memory.budget"):
        for limit in ("8000", -5, True, 2.5, float("nan"), float("inf"), 10**400):
            assert model_window(_Declares(limit)) is None
    shown = [r.getMessage() for r in caplog.records]
    for name in ("'8000'", "<-5>", "<True>", "<2.5>", "<nan>", "<inf>", "an int of 401 digits"):
        assert any(name in message for message in shown), name


def test_no_window_is_undeclared_without_a_warning(caplog):
    with caplog.at_level("WARNING", logger="strands_semantic_memory.budget"):
        assert model_window(_Declares(None)) is None
        assert model_window(object()) is None, "a model without the attribute declares nothing"
        assert model_window(None) is None
    assert caplog.records == []


def test_a_strands_model_config_is_read_through_its_property():
    model = ScriptedModel(context_window_limit=8000)
    assert model_window(model) == 8000
    model.update_config(context_window_limit="8000")
    assert model_window(model) is None


# ---------------------------------------------------------------------------------------------- agent_budget


class _Manager:
    def __init__(self, budget):
        self.budget = budget


class _Agent:
    def __init__(self, manager=None):
        self.conversation_manager = manager


def test_the_budget_is_the_callers_then_the_managers_then_the_strategys_then_the_default():
    own, managed, strategy = ContextBudget(memory_share=0.2), ContextBudget(memory_share=0.3), ContextBudget(0.4)
    agent = _Agent(_Manager(managed))
    assert agent_budget(agent, own) is own
    assert agent_budget(agent, None) is managed
    plain = _Agent(_Manager("not a budget"))  # Strands' own managers have no ContextBudget
    assert agent_budget(plain, None) is DEFAULT_BUDGET
    share_budget(plain, strategy)  # what BudgetSummarization.init does for its agent
    assert agent_budget(plain, None) is strategy
    assert agent_budget(_Agent(_Manager(managed)), None) is managed, "the manager's comes before a strategy's"
    assert agent_budget(None, None) is DEFAULT_BUDGET
    share_budget(5, strategy)  # an object that cannot be weakly referenced: nothing is recorded, nothing raises
    assert agent_budget(5, None) is DEFAULT_BUDGET


def test_a_budget_summarization_in_the_agents_context_manager_shares_its_budget():
    from strands import Agent
    from strands.experimental.context_manager import ContextManager

    budget = ContextBudget(memory_share=0.35)
    agent = Agent(
        model=ScriptedModel(context_window_limit=8000),
        context_manager=ContextManager(strategies=[BudgetSummarization(budget)]),
        callback_handler=None,
    )
    agent("Hello.")
    assert agent_budget(agent, None) is budget
    assert agent_budget(agent, DEFAULT_BUDGET) is DEFAULT_BUDGET


def test_a_call_whose_history_leaves_room_may_spend_the_cap_and_a_full_history_keeps_the_share():
    budget = ContextBudget()  # share 0.5, reply 0.05, cap 2,500
    assert budget.memory_tokens(4000, used=100) == 2500  # a new session: the window is mostly free
    assert budget.memory_tokens(4000, used=budget.history_limit(4000)) == 2000  # the history fills its part
    assert budget.memory_tokens(4000, used=3500) == 300  # the room still bounds it
    assert ContextBudget(max_memory_tokens=None).memory_tokens(4000, used=100) == 2000  # no cap: the share
