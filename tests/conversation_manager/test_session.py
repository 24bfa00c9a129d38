"""Persistence through Strands' FileSessionManager: a second agent, and a new process, get the archive back."""

import json
import subprocess
import sys
import textwrap

import pytest
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.session import FileSessionManager

from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.conversation_manager._session_state import STATE_OPEN, read_state_block
from strands_semantic_memory.errors import StateError
from strands_semantic_memory.messages._text import render_message
from tests.support import REPO_ROOT
from tests.support.conversations import PLANTED_TURN, REFERENCE, TOPIC_TURNS, make_agent
from tests.support.embedders import CountingEmbedder
from tests.support.scripted_model import ScriptedModel
from tests.support.structured_model import StructuredScriptedModel

ROOT = REPO_ROOT


def first_session(embedder, storage_dir):
    model = ScriptedModel(max_input_chars=1200)
    # inline: every vector exists when the session is saved (in the background, the last ones could still be pending)
    manager = SemanticSummarizingConversationManager(embedder=embedder, preserve_recent_messages=4, embedding="inline")
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
    manager.memory.embed_pending()
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
        from tests.support.scripted_model import ScriptedModel

        manager = SemanticSummarizingConversationManager(preserve_recent_messages=4)
        session = FileSessionManager(session_id="conv-1", storage_dir={str(tmp_path)!r})
        agent = Agent(model=ScriptedModel(), conversation_manager=manager, session_manager=session,
                      agent_id="assistant", callback_handler=None)
        hits = manager.memory.search("What was my booking reference?", top_k=3)
        print(json.dumps({{"count": len(manager.memory), "hits": [hit.message for hit in hits]}}))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["count"] == len(first_manager.memory)
    # The scripted reply echoes the start of the turn, so the echo may rank first: the original is in the top three.
    assert PLANTED_TURN in [hit["content"][0]["text"] for hit in answer["hits"]]


def test_corrupt_session_archive_is_a_clear_error(embedder, tmp_path):

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


# ------------------------------------------------------------------ structured compaction (issue 14)

FACT_TURN = "FACT locker: LK-4417-QV\nPlease remember my locker code exactly."


def structured_session(embedder, storage_dir, **kwargs):
    model = StructuredScriptedModel(max_input_chars=1200)
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, preserve_recent_messages=4, summary_format="structured", **kwargs
    )
    session = FileSessionManager(session_id="conv-s", storage_dir=str(storage_dir))
    agent = make_agent(model, manager, session_manager=session, agent_id="assistant")
    return agent, manager, model


def test_session_restore_brings_the_structured_state_back(embedder, tmp_path):
    first, first_manager, _ = structured_session(embedder, tmp_path)
    for turn in [FACT_TURN, *TOPIC_TURNS]:
        first(turn)
    assert first_manager.session_state is not None
    saved = first_manager.session_state

    second, manager, model = structured_session(embedder, tmp_path)
    assert manager.session_state == saved
    assert type(manager.session_state) is type(saved)
    assert second.messages[0] is manager.summary_message, "the restored state message is recognised as ours"
    assert STATE_OPEN in render_message(second.messages[0])
    archived_before = len(manager.memory)
    for turn in TOPIC_TURNS:
        second(turn)
    # The first merge after the restore received the restored state; the state message was never archived.
    head = render_message(model.state_requests[0]["messages"][0])
    assert {"text": "locker: LK-4417-QV", "sources": [0]} in read_state_block(head)["facts"]
    assert len(manager.memory) > archived_before
    assert not any(STATE_OPEN in render_message(m) for _, m in manager.memory.messages())
    assert "locker: LK-4417-QV" in [fact.text for fact in manager.session_state.facts]


def test_restore_refuses_a_state_made_with_another_schema(embedder, tmp_path):
    from pydantic import BaseModel

    first, first_manager, _ = structured_session(embedder, tmp_path)
    for turn in [FACT_TURN, *TOPIC_TURNS]:
        first(turn)
    assert first_manager.session_state is not None

    class Notes(BaseModel):
        lines: list[str] = []

    with pytest.raises(StateError, match="'SessionState'.*'Notes'"):
        structured_session(embedder, tmp_path, summary_schema=Notes)


def test_restore_refuses_another_managers_state_and_accepts_strands_summarizing(embedder, tmp_path):
    # A session written by Strands' own SummarizingConversationManager: a drop-in swap keeps it.
    model = ScriptedModel(max_input_chars=1200)
    session = FileSessionManager(session_id="conv-t", storage_dir=str(tmp_path))
    agent = make_agent(
        model, SummarizingConversationManager(preserve_recent_messages=4), session_manager=session, agent_id="assistant"
    )
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    strands_messages = [render_message(m) for m in agent.messages]

    manager = SemanticSummarizingConversationManager(embedder=embedder, preserve_recent_messages=4)
    swapped = make_agent(
        ScriptedModel(max_input_chars=1200),
        manager,
        session_manager=FileSessionManager(session_id="conv-t", storage_dir=str(tmp_path)),
        agent_id="assistant",
    )
    assert [render_message(m) for m in swapped.messages] == strands_messages
    assert swapped.messages[0] is manager.summary_message

    state = manager.get_state() | {"__name__": "SlidingWindowConversationManager"}
    with pytest.raises(StateError, match="SlidingWindowConversationManager"):
        SemanticSummarizingConversationManager(embedder=embedder).restore_from_session(state)


def test_structured_manager_builds_its_first_state_from_a_restored_prose_summary(embedder, tmp_path):
    model = ScriptedModel(max_input_chars=1200)
    session = FileSessionManager(session_id="conv-p", storage_dir=str(tmp_path))
    agent = make_agent(
        model, SummarizingConversationManager(preserve_recent_messages=4), session_manager=session, agent_id="assistant"
    )
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    prose = render_message(agent.messages[0])

    structured_model = StructuredScriptedModel(max_input_chars=1200)
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, preserve_recent_messages=4, summary_format="structured"
    )
    second = make_agent(
        structured_model,
        manager,
        session_manager=FileSessionManager(session_id="conv-p", storage_dir=str(tmp_path)),
        agent_id="assistant",
    )
    for turn in TOPIC_TURNS:
        second(turn)
    head = render_message(structured_model.state_requests[0]["messages"][0])
    assert "summarized in prose" in head and prose in head, "the prose summary is merged, not lost"
    assert not any(prose == render_message(m) for _, m in manager.memory.messages()), "nor archived"
    assert manager.session_state is not None
