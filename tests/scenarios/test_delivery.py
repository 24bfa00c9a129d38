"""Delivery through a real Agent whose window is full: what the memory finds reaches the model, within the window.

The scripted model declares its window (``context_window_limit``, tokens at four characters) and refuses any call
whose input is longer, as providers do. The manager and the hook share one ``ContextBudget``.
"""

from __future__ import annotations

from strands.agent.conversation_manager import SlidingWindowConversationManager

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.budget import ContextBudget, history_tokens
from strands_semantic_memory.formatting._block import CONTEXT_HEADER, QUESTION_PREFIX
from strands_semantic_memory.messages import render_message
from tests.support.conversations import PLANTED_TURN, REFERENCE, distractor_conversation, make_agent
from tests.support.scripted_model import ScriptedModel

WINDOW = 4000  # characters: the model's context_window_limit is 1000 tokens
QUESTION = "What was my booking reference again?"


def call_input(request) -> str:
    return "\n".join([request["system_prompt"] or "", *(render_message(m) for m in request["messages"])])


def full_conversation(embedder, hook, *, budget=None):
    """Plant the reference, then talk until it has long left the window; every call's input is recorded."""
    model = ScriptedModel(max_input_chars=WINDOW, context_window_limit=WINDOW // 4)
    manager = SemanticSummarizingConversationManager(embedder=embedder, preserve_recent_messages=4, budget=budget)
    agent = make_agent(model, manager, hook)
    agent(PLANTED_TURN)
    for message in distractor_conversation(60)[::2]:
        agent(render_message(message))
    assert REFERENCE not in "\n".join(render_message(m) for m in agent.messages), "summarized away"
    return agent, model, manager


def test_the_fact_reaches_the_model_in_a_full_window_without_an_overflow(embedder):
    hook = SemanticMemoryHook()
    agent, model, manager = full_conversation(embedder, hook)
    assert model.overflows == 0, "the manager reduces before the window is full: no call overflowed"
    overflows = model.overflows
    agent(QUESTION)
    answering = model.chat_requests[-1]
    assert REFERENCE in call_input(answering) and model.overflows == overflows
    assert len(call_input(answering)) <= WINDOW
    assert hook.last_enrichment.overflow_retries == 0 and not hook.last_enrichment.error


def without_block(message: dict) -> dict:
    """The user's message as the user wrote it (the hook's block, if any, removed)."""
    text = render_message(message)
    if text.startswith(CONTEXT_HEADER):
        text = text.rsplit("\n" + QUESTION_PREFIX, 1)[1]
    return {"role": message["role"], "content": [{"text": text}]}


def test_the_history_stays_below_its_share_so_the_memorys_share_is_free(embedder):
    budget = ContextBudget(memory_share=0.4)
    _, model, manager = full_conversation(embedder, SemanticMemoryHook(), budget=budget)
    assert manager.removed_message_count > 0
    limit = budget.history_limit(WINDOW // 4)
    for request in model.chat_requests:
        history = [*request["messages"][:-1], without_block(request["messages"][-1])]
        assert history_tokens(history, request["system_prompt"]) <= limit


def test_tokens_go_to_what_the_model_does_not_already_see(embedder):
    """A message that is archived and still in the active context is not injected again."""
    memory = SemanticMemory(embedder=embedder, context_radius=0)
    model = ScriptedModel()
    agent = make_agent(model, SlidingWindowConversationManager(), SemanticMemoryHook(memory=memory))
    agent(PLANTED_TURN)  # in the active context, and archived below (as a MemoryStore archives what it is given)
    memory.add([agent.messages[0]])
    agent(QUESTION)
    assert model.chat_requests[-1]["messages"][-1]["content"][0]["text"] == QUESTION, "nothing new to inject"
    assert memory.record(0).message["tracking_id"] == agent.messages[0]["tracking_id"]


def test_hits_reach_the_model_before_their_neighbours_when_the_budget_is_tight(embedder):
    memory = SemanticMemory(embedder=embedder, context_radius=3)
    messages = distractor_conversation(20)
    messages.insert(10, {"role": "user", "content": [{"text": PLANTED_TURN}]})
    memory.add(messages)
    tight = len(PLANTED_TURN) + 60  # room for the hit, not for its passage
    hook = SemanticMemoryHook(memory=memory, max_context_length=tight)
    model = ScriptedModel()
    make_agent(model, SlidingWindowConversationManager(), hook)(QUESTION)
    chosen = hook.last_enrichment.passages
    assert [w.indices for w in chosen] == [[10]] and REFERENCE in hook.last_enrichment.text
    assert hook.last_enrichment.left_out, "its neighbours were found and left out"
