"""The manager: every message archived as it is added, forgotten means forgotten, sessions, reductions."""

from __future__ import annotations

import pytest
from strands import Agent
from strands.session import SnapshotSessionManager
from strands.session.file_session_manager import FileSessionManager
from strands.storage import InMemoryStorage

from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.testing import ScriptedModel


def build(embedder, tmp_path, session_id="s1", **options):
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, archive_path=tmp_path / "alice.db", user_id="alice", preserve_recent_messages=2, **options
    )
    session = FileSessionManager(session_id=session_id, storage_dir=str(tmp_path / "sessions"))
    agent = Agent(model=ScriptedModel(), conversation_manager=manager, session_manager=session,
                  plugins=[SemanticMemoryHook(inject_when="always")], callback_handler=None)  # fmt: skip
    return agent, manager


def texts(manager) -> list[str]:
    return [r.text for r in manager.memory.records()]


def test_every_message_is_archived_once_as_it_is_added_with_its_session(embedder, tmp_path):
    agent, manager = build(embedder, tmp_path)
    agent("My locker code is 4417-PLUM.")
    agent("Thanks.")
    records = manager.memory.records()
    assert [r.role for r in records] == ["user", "assistant", "user", "assistant"]
    assert {r.session_id for r in records} == {"s1"}
    manager.reduce_context(agent)  # what leaves was archived already: nothing is archived twice
    assert len(manager.memory.records()) == 4


def test_a_forgotten_message_is_never_archived_again_from_a_live_or_resumed_session(embedder, tmp_path):
    agent, manager = build(embedder, tmp_path)
    agent("My bank PIN is 9911, please remember it.")
    agent("Explain stacks.")
    manager.memory.forget(query="9911")  # by the application (the command line does the same)
    agent("Explain queues.")  # the live context still holds the PIN's message
    manager.reduce_context(agent)
    assert not any("9911" in t for t in texts(manager))
    manager.memory.close()
    resumed, again = build(embedder, tmp_path)  # the old session restored from its files
    resumed("Explain heaps.")
    assert not any("9911" in t for t in texts(again))
    resumed("What is my bank PIN?")
    assert "9911" not in str(resumed.model.chat_requests[-1]["messages"][-1])  # nor injected
    summary = again.summary_message
    assert summary is None or "9911" not in str(summary)  # nor summarized


def test_a_new_session_of_the_named_user_recalls_the_old_one(embedder, tmp_path):
    agent, manager = build(embedder, tmp_path)
    agent("My storage locker code is 4417-PLUM.")
    manager.memory.close()
    later, _ = build(embedder, tmp_path, session_id="s2")
    later("What is my storage locker code?")
    assert "4417-PLUM" in str(later.model.chat_requests[-1]["messages"])


def test_a_summary_failure_loses_nothing_and_drop_oldest_keeps_the_turn_going(embedder, tmp_path):
    def replies(messages, system_prompt, is_summary):
        if is_summary:
            raise RuntimeError("the summarizer is down")
        return "Noted."

    model = ScriptedModel(replies)
    manager = SemanticSummarizingConversationManager(embedder=embedder, preserve_recent_messages=2,
                                                     on_summary_failure="drop_oldest")  # fmt: skip
    agent = Agent(model=model, conversation_manager=manager, callback_handler=None)
    for turn in ("one", "two", "three", "four"):
        agent(f"Turn {turn}.")
    before = len(agent.messages)
    manager.reduce_context(agent, e=RuntimeError("overflow"))
    assert len(agent.messages) < before and manager.dropped_message_count > 0
    assert len(manager.memory.records()) == 8  # every message stays archived


def test_a_manager_serves_one_agent_and_memory_excludes_archive_options(embedder):
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    first = Agent(model=ScriptedModel(), conversation_manager=manager, callback_handler=None)
    with pytest.raises(ConfigurationError, match="another agent"):
        Agent(model=ScriptedModel(), conversation_manager=manager, callback_handler=None)
    with pytest.raises(ConfigurationError, match="cannot be combined"):
        SemanticSummarizingConversationManager(memory=manager.memory, user_id="x")
    assert first.conversation_manager is manager


def test_sessions_with_ids_too_long_to_keep_never_see_each_other_without_a_user(embedder, tmp_path):
    from strands_semantic_memory import SemanticMemory

    memory = SemanticMemory(embedder=embedder, archive_path=tmp_path / "shared.db")  # no user: sessions apart
    agents = []
    for session_id in ("a" * 300, "a" * 299 + "b"):  # the same first 256 characters
        manager = SemanticSummarizingConversationManager(memory=memory)
        session = SnapshotSessionManager(session_id, storage=InMemoryStorage())  # a file name could not hold the id
        agents.append(Agent(model=ScriptedModel(), conversation_manager=manager, session_manager=session,
                            plugins=[SemanticMemoryHook(inject_when="always")], callback_handler=None))  # fmt: skip
    alice, bob = agents
    alice("My secret word is PELICAN-42.")
    memory.embed_pending()
    bob("What is the secret word?")
    assert "PELICAN-42" not in str(bob.model.chat_requests[-1])
    alice("What is my secret word again?")
    assert "PELICAN-42" in str(alice.model.chat_requests[-1]["messages"])
    memory.close()
