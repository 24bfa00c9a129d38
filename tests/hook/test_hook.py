"""SemanticMemoryHook through a real Agent: what reaches the model, what never changes, overflows, budgets."""

from __future__ import annotations

import json

import pytest
from strands import Agent
from strands.session.file_session_manager import FileSessionManager

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.testing import ScriptedModel
from tests.support.faults import text


def agent_with(embedder, model=None, **hook_options):
    manager = SemanticSummarizingConversationManager(embedder=embedder, preserve_recent_messages=2)
    hook = SemanticMemoryHook(**hook_options)
    agent = Agent(model=model or ScriptedModel(), conversation_manager=manager, plugins=[hook], callback_handler=None)
    return agent, hook


def sent(agent) -> str:
    return json.dumps(agent.model.chat_requests[-1]["messages"])


def chat(agent, *turns: str) -> None:
    for turn in turns:
        agent(turn)
    agent.conversation_manager.memory.embed_pending()


TOPICS = [f"Explain {topic} in one paragraph." for topic in ("stacks", "queues", "heaps", "tries", "graphs")]


def test_an_earlier_fact_reaches_the_model_quoted_and_history_keeps_the_users_words(embedder):
    agent, hook = agent_with(embedder)
    chat(agent, "My booking reference is BK-7731-QZ.", *TOPICS)
    agent.conversation_manager.reduce_context(agent)
    agent("What was my booking reference?")
    enrichment = hook.last_enrichment
    assert "> My booking reference is BK-7731-QZ." in enrichment.text and "BK-7731-QZ" in sent(agent)
    assert agent.messages[-2]["content"] == [{"text": "What was my booking reference?"}]  # history as sent
    archived = [r.text for r in agent.conversation_manager.memory.records()]
    assert not any("[archive]" in t for t in archived)  # the injected block is never archived


def test_held_messages_are_not_injected_again(embedder):
    agent, hook = agent_with(embedder)
    chat(agent, "My booking reference is BK-7731-QZ.")
    agent("What was my booking reference?")
    assert "BK-7731-QZ" not in (hook.last_enrichment.text or "")  # it is still in the call's history


def test_unrelated_prompts_get_nothing_and_always_gets_its_budget(embedder):
    agent, hook = agent_with(embedder)
    chat(agent, "My booking reference is BK-7731-QZ.", *TOPICS)
    agent.conversation_manager.reduce_context(agent)
    agent("What is 12 times 34?")
    assert hook.last_enrichment.relevance == "unrelated" and hook.last_enrichment.text == ""
    always, hook2 = agent_with(embedder, inject_when="always")
    chat(always, "My booking reference is BK-7731-QZ.", *TOPICS)
    always.conversation_manager.reduce_context(always)
    always("What is 12 times 34?")
    assert hook2.last_enrichment.relevance == "always" and hook2.last_enrichment.passages


def test_max_context_tokens_bounds_the_block(embedder):
    agent, hook = agent_with(embedder, max_context_tokens=30, inject_when="always")
    chat(agent, *[f"Fact {i}: the code of vault {i} is {1000 + i}." for i in range(12)])
    agent.conversation_manager.reduce_context(agent)
    agent("What are the vault codes?")
    assert 0 < hook.last_enrichment.tokens <= 30


def test_the_block_fits_the_models_window(embedder):
    model = ScriptedModel(context_window_limit=600, max_input_chars=2400)  # refuses calls above its window
    agent, hook = agent_with(embedder, model=model, inject_when="always")
    chat(agent, *[f"Note {i}: " + "the quarterly figures look fine " * 8 for i in range(10)])
    agent("Summarize the notes about quarterly figures.")
    assert hook.last_enrichment.overflow_retries == 0


def test_an_overflow_with_nothing_to_reduce_retries_with_less_then_none(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add([text("user", f"Fact {i}: the code of vault {i} is {1000 + i}.") for i in range(30)])
    hook = SemanticMemoryHook(memory=memory, inject_when="always")
    model = ScriptedModel(max_input_chars=400)  # refuses any call larger than this (an overflow)
    agent = Agent(model=model, plugins=[hook], callback_handler=None)
    agent("What are the vault codes?")
    assert hook.last_enrichment.overflow_retries >= 1
    assert len(model.chat_requests[-1]["messages"][-1]["content"][0]["text"]) <= 400


def test_tool_loops_reuse_the_turns_block_and_tool_results_are_not_searched(embedder):
    from strands_semantic_memory.testing import ToolCall

    memory = SemanticMemory(embedder=embedder)
    memory.add([text("user", "The launch code is ZEBRA-9.")])

    def lookup(query: str) -> str:
        """Look something up."""
        return "nothing found"

    from strands import tool

    model = ScriptedModel([ToolCall("lookup", {"query": "launch"}), "done"])
    hook = SemanticMemoryHook(memory=memory, inject_when="always")
    agent = Agent(model=model, tools=[tool(lookup)], plugins=[hook], callback_handler=None)
    agent("What is the launch code?")
    blocks = [r["messages"][0]["content"][0]["text"] for r in model.chat_requests]
    assert len(blocks) == 2 and blocks[0] == blocks[1] and "ZEBRA-9" in blocks[0]


def test_the_session_persists_the_users_message_exactly_as_sent(embedder, tmp_path):
    session = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    agent = Agent(model=ScriptedModel(), conversation_manager=manager, session_manager=session,
                  plugins=[SemanticMemoryHook(inject_when="always")], callback_handler=None)  # fmt: skip
    chat(agent, "My booking reference is BK-7731-QZ.", "Thanks!")
    agent("What was my booking reference?")
    saved = json.dumps([m.to_message() for m in session.list_messages(session.session_id, agent.agent_id)])
    assert "Current question" not in saved and "What was my booking reference?" in saved


def test_a_hook_serves_many_agents_and_keeps_them_apart(embedder):
    hook = SemanticMemoryHook(inject_when="always")
    agents = []
    for secret in ("APPLE-1", "PEAR-2"):
        manager = SemanticSummarizingConversationManager(embedder=embedder, preserve_recent_messages=2)
        agent = Agent(model=ScriptedModel(), conversation_manager=manager, plugins=[hook], callback_handler=None)
        chat(agent, f"My secret word is {secret}.", *TOPICS)
        agent.conversation_manager.reduce_context(agent)
        agents.append(agent)
    for agent, secret, other in ((agents[0], "APPLE-1", "PEAR-2"), (agents[1], "PEAR-2", "APPLE-1")):
        agent("What is my secret word?")
        assert secret in hook.enrichment(agent).text and other not in sent(agent)
    with pytest.raises(ConfigurationError, match="several agents"):
        _ = hook.last_enrichment


def test_a_request_about_the_user_gets_their_own_statements_across_sessions(embedder, tmp_path):
    def session():
        manager = SemanticSummarizingConversationManager(
            embedder=embedder, archive_path=tmp_path / "bob.db", user_id="bob"
        )
        hook = SemanticMemoryHook()
        return Agent(model=ScriptedModel(), conversation_manager=manager, plugins=[hook], callback_handler=None), hook

    first, _ = session()
    chat(first, "Quick question about wifi routers. I have an iPhone 13 Pro and it keeps dropping wifi.", *TOPICS[:2])
    first.conversation_manager.memory.close()
    second, hook = session()
    second("Can you suggest some useful accessories for my phone?")
    said = hook.last_enrichment.statements
    assert [s.sentences for s in said][:1] == [("I have an iPhone 13 Pro and it keeps dropping wifi.",)]
    assert "Quick question" not in hook.last_enrichment.text  # the statement, not its whole message
    second("What is the capital of France?")
    assert hook.last_enrichment.text == ""


def test_options_are_checked():
    with pytest.raises(ConfigurationError):
        SemanticMemoryHook(top_k=0)
    with pytest.raises(ConfigurationError):
        SemanticMemoryHook(inject_when="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="no memory to search"):
        Agent(model=ScriptedModel(), plugins=[SemanticMemoryHook()], callback_handler=None)
