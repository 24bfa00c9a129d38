"""Persistence through Strands' FileSessionManager: a second agent, and a new process, get the archive back."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from strands.session import FileSessionManager

from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.rendering import render_message
from tests.conftest import PLANTED_TURN, REFERENCE, TOPIC_TURNS, CountingEmbedder, make_agent
from tests.scripted_model import ScriptedModel

ROOT = Path(__file__).resolve().parents[1]


def first_session(embedder, storage_dir):
    model = ScriptedModel(max_input_chars=1200)
    manager = SemanticSummarizingConversationManager(embedder=embedder, preserve_recent_messages=4)
    session = FileSessionManager(session_id="conv-1", storage_dir=str(storage_dir))
    agent = make_agent(model, manager, session_manager=session, agent_id="assistant")
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert len(manager.memory) > 0
    return agent, manager


def test_second_agent_restores_archive_without_reembedding(embedder, tmp_path):
    first, first_manager = first_session(embedder, tmp_path)
    counting = CountingEmbedder(embedder)
    model = ScriptedModel(max_input_chars=1600)  # room for the enriched question
    manager = SemanticSummarizingConversationManager(embedder=counting, preserve_recent_messages=4)
    session = FileSessionManager(session_id="conv-1", storage_dir=str(tmp_path))
    second = make_agent(model, manager, SemanticMemoryHook(), session_manager=session, agent_id="assistant")
    assert counting.document_calls == 0
    assert manager.memory.messages() == first_manager.memory.messages()
    assert [render_message(m) for m in second.messages] == [render_message(m) for m in first.messages]
    restored = len(manager.memory)
    second("What was my booking reference?")
    # Only messages archived after the restore (if this turn overflowed again) were embedded; none restored.
    assert counting.documents_embedded == len(manager.memory) - restored
    assert REFERENCE in render_message(model.chat_requests[-1]["messages"][-1])


def test_new_process_restores_archive(embedder, tmp_path):
    _, first_manager = first_session(embedder, tmp_path)
    script = textwrap.dedent(
        f"""
        import json
        from strands import Agent
        from strands.session import FileSessionManager
        from strands_semantic_memory import SemanticSummarizingConversationManager
        from tests.scripted_model import ScriptedModel

        manager = SemanticSummarizingConversationManager(preserve_recent_messages=4)
        session = FileSessionManager(session_id="conv-1", storage_dir={str(tmp_path)!r})
        agent = Agent(model=ScriptedModel(), conversation_manager=manager, session_manager=session,
                      agent_id="assistant", callback_handler=None)
        hits = manager.memory.search("What was my booking reference?", top_k=1)
        print(json.dumps({{"count": len(manager.memory), "hit": hits[0].message}}))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["count"] == len(first_manager.memory)
    assert answer["hit"]["content"][0]["text"] == PLANTED_TURN


def test_corrupt_session_archive_is_a_clear_error(embedder, tmp_path):
    import pytest

    from strands_semantic_memory import StateError

    first_session(embedder, tmp_path)
    agent_file = next(tmp_path.rglob("agent.json"))
    data = json.loads(agent_file.read_text())
    data["conversation_manager_state"]["semantic_memory"] = '{"format": "strands-semantic-memory/archive", "version": 1'
    agent_file.write_text(json.dumps(data))
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    with pytest.raises(StateError, match="not valid JSON"):
        make_agent(
            ScriptedModel(),
            manager,
            session_manager=FileSessionManager(session_id="conv-1", storage_dir=str(tmp_path)),
            agent_id="assistant",
        )
