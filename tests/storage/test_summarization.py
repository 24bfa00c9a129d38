"""BudgetSummarization in a real Agent with Strands' ContextManager, SemanticStorage and the hook: the history stays
within the budget's share, the injected context within the memory's, every call within the window, and a fact
summarized away reaches the model by meaning."""

from __future__ import annotations

import pytest
from strands import Agent
from strands.experimental.context_manager import ContextManager

from strands_semantic_memory import SemanticMemoryHook
from strands_semantic_memory.budget import ContextBudget, estimate_tokens, history_tokens
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.formatting._block import ARCHIVE_BEGIN, ARCHIVE_END, QUESTION_PREFIX
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.storage import BudgetSummarization
from tests.support.context_manager import FACT, QUESTION, SUMMARY_PROMPT_START, planning_turns
from tests.support.scripted_model import ScriptedModel

WINDOW = 1000  # tokens: 4,000 characters
TOPICS = planning_turns(3)


def responder(messages, system_prompt, is_summary):
    if is_context_summary(system_prompt):
        return "The user planned several household and work items."
    return "Noted, I will keep that in mind for the plan."


def is_context_summary(system_prompt) -> bool:
    return (system_prompt or "").startswith(SUMMARY_PROMPT_START)


def build(make_storage, strategy, *, max_input_chars=WINDOW * 4, window=WINDOW, hook_budget=None):
    storage = make_storage()
    model = ScriptedModel(responder, max_input_chars=max_input_chars, context_window_limit=window)
    hook = SemanticMemoryHook(storage=storage, budget=hook_budget)
    agent = Agent(
        model=model,
        context_manager=ContextManager(strategies=[strategy]),
        storage=storage,
        plugins=[hook],
        callback_handler=None,
    )
    return agent, hook, model


def play(agent, hook) -> None:
    """The conversation; between turns the storage's vectors land (its thread embeds off the turn; waited for here)."""
    for turn in ["Hello, let's get organised today.", FACT, *TOPICS]:  # message 0: never summarized away
        agent(turn)
        hook.memory.embed_pending()


def split(request) -> tuple[list[dict], str, str]:
    """A chat request as (the history before the turn's message, the user's own words, the injected block)."""
    messages = request["messages"]
    last = render_message(messages[-1])
    if ARCHIVE_BEGIN not in last:
        return messages[:-1], last, ""
    lines = last.split("\n")
    block = "\n".join(lines[lines.index(ARCHIVE_BEGIN) + 1 : lines.index(ARCHIVE_END)])
    return messages[:-1], last.rsplit(QUESTION_PREFIX, 1)[1], block


def chat_requests(model) -> list[dict]:
    return [r for r in model.requests if not is_context_summary(r["system_prompt"])]


def test_history_memory_and_call_fit_the_window_and_a_summarized_fact_comes_back(make_storage):
    budget = ContextBudget()
    agent, hook, model = build(make_storage, BudgetSummarization())
    play(agent, hook)
    agent(QUESTION)

    history = "\n".join(render_message(m) for m in agent.messages)
    assert "Lisbon" not in history and "[Summarized:" in history, "the fact was summarized away"
    assert model.overflows == 0
    injected_turns = 0
    for request in chat_requests(model):
        before, own, block = split(request)
        used = history_tokens(before) + estimate_tokens(own)
        assert used <= budget.history_limit(WINDOW)
        assert estimate_tokens(block) <= budget.memory_tokens(WINDOW, used)  # the share, or the cap in free room
        assert sum(len(render_message(m)) for m in request["messages"]) <= WINDOW * 4
        injected_turns += bool(block)
    assert injected_turns > len(TOPICS) // 2, "the hook had room on most turns"

    before, own, block = split(model.requests[-1])
    assert own == QUESTION
    assert f"> {FACT}" in block.split("\n"), "the fact reaches the model by meaning"
    assert not any(FACT in render_message(m) for m in before)
    assert not any(QUESTION in line for line in block.split("\n")), "nothing the call holds comes back twice"
    assert render_message(agent.messages[-2]) == QUESTION, "the history keeps the user's own words"


def test_the_hook_spends_the_strategys_budget(make_storage):
    budget = ContextBudget(memory_share=0.2)
    agent, hook, model = build(make_storage, BudgetSummarization(budget))
    play(agent, hook)
    agent(QUESTION)

    calls = [split(r) for r in chat_requests(model)]
    assert any(block for _, _, block in calls)
    for before, own, block in calls:
        assert estimate_tokens(block) <= budget.memory_tokens(WINDOW, history_tokens(before) + estimate_tokens(own))
    largest_history = max(history_tokens(split(r)[0]) for r in chat_requests(model))
    assert largest_history > ContextBudget().history_limit(WINDOW), "the history may take what the memory leaves"
    before, own, _ = calls[-1]
    last = budget.memory_tokens(WINDOW, history_tokens(before) + estimate_tokens(own))
    assert hook.last_enrichment is not None and hook.last_enrichment.tokens <= last


def test_fewer_summary_calls_and_a_longer_history_than_strands_preset_with_the_hook(make_storage):
    ours, ours_hook, ours_model = build(make_storage, BudgetSummarization())
    preset, preset_hook, preset_model = build(make_storage, "proactive_summarization")
    play(ours, ours_hook)
    play(preset, preset_hook)

    def summaries(model) -> int:
        return sum(is_context_summary(r["system_prompt"]) for r in model.requests)

    def mean_history(model) -> float:
        sizes = [history_tokens(split(r)[0]) for r in chat_requests(model)[len(TOPICS) // 2 :]]
        return sum(sizes) / len(sizes)

    # The preset measures the previous call's reported input, which held that call's injected context.
    assert 0 < summaries(ours_model) < summaries(preset_model)
    assert mean_history(ours_model) > mean_history(preset_model)


def test_without_a_declared_window_only_an_overflow_summarizes(make_storage):
    agent, hook, model = build(make_storage, BudgetSummarization(), max_input_chars=3000, window=None)
    play(agent, hook)
    assert model.overflows >= 1
    history = "\n".join(render_message(m) for m in agent.messages)
    assert "[Summarized:" in history
    summary_calls = sum(is_context_summary(r["system_prompt"]) for r in model.requests)
    assert summary_calls <= model.overflows, "one round per overflow, none before"
    assert render_message(agent.messages[-1]) == "Noted, I will keep that in mind for the plan."


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"budget": 0.5}, "budget must be a ContextBudget"),
        ({"summary_ratio": 0.05}, "summary_ratio must be a number in [0.1, 0.8], got 0.05"),
        ({"summary_ratio": True}, "summary_ratio must be a number"),
    ],
)
def test_bad_options_are_refused(arguments, message):
    with pytest.raises(ConfigurationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        BudgetSummarization(**arguments)
