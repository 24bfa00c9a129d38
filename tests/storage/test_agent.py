"""SemanticStorage and BudgetSummarization in a real Agent with Strands' ContextManager and the hook: what was
summarized away comes back by meaning, a named user's earlier session comes back from the file, two sessions on one
unnamed storage never meet, and a call's own stash entries are never injected."""

from __future__ import annotations

import threading

import pytest
from strands import Agent
from strands._context_manager.methods.summarize import DEFAULT_SYSTEM_PROMPT
from strands.experimental.context_manager import ContextManager
from strands.session import SnapshotSessionManager

from strands_semantic_memory import SemanticMemoryHook
from strands_semantic_memory.budget import agent_budget, estimate_tokens, history_tokens
from strands_semantic_memory.engine._memory import speaker
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.formatting._block import ARCHIVE_BEGIN, ARCHIVE_END, QUESTION_PREFIX
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.messages._session import session_key
from strands_semantic_memory.storage import BudgetSummarization, SemanticStorage
from strands_semantic_memory.testing import ScriptedModel

WINDOW = 1000  # tokens: the history may take 450 of them, the memory 500
FACT = "My grandmother grew up in Lisbon, in a small flat above a bakery near the river."
QUESTION = "Which city was my grandma raised in?"  # a paraphrase: no content word of FACT
TOPICS = [
    f"Let's plan {topic}: draft a short checklist, list the open questions, and say who owns each step."
    for topic in ("the garden irrigation schedule", "the quarterly budget review", "the sourdough starter feeding",
                  "the database migration steps", "the bicycle repair parts", "the conference talk outline",
                  "the kitchen renovation quotes", "the chess opening repertoire", "the team dinner booking",
                  "the solar panel installation", "the invoice backlog triage", "the onboarding plan for new hires")
]  # fmt: skip
CHATTER = ["Can you suggest a name for a grey cat?", "How long should I boil an egg for a soft yolk?"]


def responder(messages, system_prompt, is_summary):
    if system_prompt == DEFAULT_SYSTEM_PROMPT:  # Strands' ContextManager asks for a summary
        return "The user planned several household and work items."
    return "Noted, I will keep that in mind for the plan."


def agent_for(storage, model, strategy=None, **kwargs):
    hook = SemanticMemoryHook(storage=storage)
    context_manager = ContextManager(strategies=[strategy or BudgetSummarization()])
    agent = Agent(model=model, context_manager=context_manager, storage=storage, plugins=[hook],
                  callback_handler=None, **kwargs)  # fmt: skip
    return agent, hook


def split(request) -> tuple[list, str, list[str]]:
    """A chat call as (the history before the turn's message, the user's own words, the injected block's lines)."""
    last = render_message(request["messages"][-1])
    if ARCHIVE_BEGIN not in last:
        return request["messages"][:-1], last, []
    lines = last.split("\n")
    block = lines[lines.index(ARCHIVE_BEGIN) + 1 : lines.index(ARCHIVE_END)]
    return request["messages"][:-1], last.rsplit(QUESTION_PREFIX, 1)[1], block


def chat_requests(model) -> list:
    return [r for r in model.requests if r["system_prompt"] != DEFAULT_SYSTEM_PROMPT]


def test_what_was_summarized_away_comes_back_by_meaning_and_never_what_the_call_holds(embedder):
    storage = SemanticStorage(embedder=embedder)
    model = ScriptedModel(responder, context_window_limit=WINDOW, max_input_chars=WINDOW * 4)
    strategy = BudgetSummarization()
    agent, hook = agent_for(storage, model, strategy)
    for turn in ["Hello, let's get organised today.", FACT, *TOPICS]:  # message 0: never summarized away
        agent(turn)
    in_context = "\n".join(render_message(m) for m in agent.messages)
    assert "Lisbon" not in in_context and "[Summarized:" in in_context, "the fact was summarized away"
    assert agent_budget(agent, None) is strategy.budget, "the hook spends the strategy's budget"
    for request in chat_requests(model):
        before, own, _ = split(request)
        assert history_tokens(before) + estimate_tokens(own) <= strategy.budget.history_limit(WINDOW)
    storage.memory.embed_pending()  # the stash's vectors land off the turns; a test waits for them

    agent(QUESTION)
    _, own, block = split(model.requests[-1])
    assert own == QUESTION and f"> {FACT}" in block, "the fact reaches the model by meaning"
    assert not any(QUESTION in line or TOPICS[-1] in line for line in block), "the call's own entries stay out"
    assert model.overflows == 0 and render_message(agent.messages[-2]) == QUESTION
    assert hook.last_enrichment is not None and hook.last_enrichment.passages
    storage.close()


def test_a_named_user_recalls_an_earlier_session_from_the_file_and_an_unnamed_one_does_not(embedder, tmp_path):
    for user, recalled in (("alice", True), (None, False)):
        path = tmp_path / f"{user}.db"
        first = SemanticStorage(archive_path=path, user_id=user, embedder=embedder)
        agent, _ = agent_for(first, ScriptedModel(responder, context_window_limit=100_000))
        for turn in [FACT, *CHATTER]:
            agent(turn)
        first.memory.embed_pending()
        first.close()
        second = SemanticStorage(archive_path=path, user_id=user, embedder=embedder)
        model = ScriptedModel(responder, context_window_limit=100_000)
        agent_for(second, model)[0](QUESTION)  # a new agent: a new Strands session
        assert (f"> {FACT}" in split(model.requests[-1])[2]) is recalled, user
        second.close()


def test_entries_keep_who_said_them_so_a_request_about_the_user_gets_their_own_statements(embedder, tmp_path):
    path = tmp_path / "erin.db"
    first = SemanticStorage(archive_path=path, user_id="erin", embedder=embedder)
    agent, _ = agent_for(first, ScriptedModel(responder, context_window_limit=100_000))
    agent("I have a MacBook Air M2 and it freezes when I export videos.")
    agent(CHATTER[0])
    first.memory.embed_pending()
    speakers = {first.memory.records(0)[i].index: speaker(first.memory.records(0)[i]) for i in range(4)}
    assert list(speakers.values()) == ["user", "assistant", "user", "assistant"]
    first.close()
    second = SemanticStorage(archive_path=path, user_id="erin", embedder=embedder)
    agent, hook = agent_for(second, ScriptedModel(responder, context_window_limit=100_000))
    agent("What video editing app would you recommend for my laptop?")
    said = hook.last_enrichment.statements
    assert said and said[0].sentences == ("I have a MacBook Air M2 and it freezes when I export videos.",)
    assert all(speaker(s.record) == "user" for s in said)  # never the assistant's words as the user's
    second.close()


def test_one_unnamed_storage_behind_two_agents_at_once_never_shows_one_session_to_the_other(embedder):
    storage = SemanticStorage(embedder=embedder)
    long_session = "s" * 300  # longer than an id the archive keeps as written: it is kept as its digest
    alice, alice_hook = agent_for(storage, ScriptedModel(context_window_limit=100_000),
                                  session_manager=SnapshotSessionManager(long_session))  # fmt: skip
    bob_model = ScriptedModel(context_window_limit=100_000)
    bob, bob_hook = agent_for(storage, bob_model)
    alice("My wifi password is tulip-42, the router is in the hall.")
    errors: list[BaseException] = []

    def talk(agent, turns):
        try:
            for turn in turns:
                agent(turn)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [
        threading.Thread(target=talk, args=(alice, ["And the guest network password is fern-7.", *CHATTER])),
        threading.Thread(target=talk, args=(bob, [*CHATTER, "What is the wifi password?"])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors
    seen_by_bob = "\n".join(render_message(m) for r in bob_model.requests for m in r["messages"])
    assert "tulip" not in seen_by_bob and "fern" not in seen_by_bob
    alices = [r for r in storage.memory.records() if "tulip" in r.text]
    assert alices and {r.session_id for r in alices} == {session_key(long_session)}, "her session, not none"
    storage.memory.embed_pending()
    question = "What is the wifi password?"
    assert not any("tulip" in r.text for p in bob_hook.preview(question, agent=bob).passages for r in p.records)
    assert any("tulip" in r.text for p in alice_hook.preview(question, agent=alice).passages for r in p.records)
    storage.close()


@pytest.mark.filterwarnings("ignore:context_window_limit is not set")  # Strands' warning: the point of the test
def test_without_a_declared_window_only_an_overflow_summarizes(embedder):
    storage = SemanticStorage(embedder=embedder)
    model = ScriptedModel(responder, max_input_chars=1500)
    agent, _ = agent_for(storage, model)
    for turn in TOPICS:
        agent(turn)
    summaries = len(model.requests) - len(chat_requests(model))
    assert model.overflows >= 1 and 1 <= summaries <= model.overflows, "one round per overflow, none before"
    assert "[Summarized:" in "\n".join(render_message(m) for m in agent.messages)
    storage.close()
    with pytest.raises(ConfigurationError, match=r"summary_ratio must be a number in \[0.1, 0.8\], got 0.05"):
        BudgetSummarization(summary_ratio=0.05)
    with pytest.raises(ConfigurationError, match="budget must be a ContextBudget"):
        BudgetSummarization(0.5)  # type: ignore[arg-type]
