"""Persistence through Strands' FileSessionManager: a second agent, and a new process, get the archive back."""

import json
import subprocess
import sys
import textwrap

import pytest
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.session import FileSessionManager

from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.conversation_manager._structured_summary import STATE_OPEN, read_state_block
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


@pytest.mark.subprocess
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
    assert first_manager.structured_summary is not None
    saved = first_manager.structured_summary

    second, manager, model = structured_session(embedder, tmp_path)
    assert manager.structured_summary == saved
    assert type(manager.structured_summary) is type(saved)
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
    assert "locker: LK-4417-QV" in [fact.text for fact in manager.structured_summary.facts]


def test_restore_refuses_a_state_made_with_another_schema(embedder, tmp_path):
    from pydantic import BaseModel

    first, first_manager, _ = structured_session(embedder, tmp_path)
    for turn in [FACT_TURN, *TOPIC_TURNS]:
        first(turn)
    assert first_manager.structured_summary is not None

    class Notes(BaseModel):
        lines: list[str] = []

    with pytest.raises(StateError, match="'StructuredSummary'.*'Notes'"):
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
    assert manager.structured_summary is not None


def deeply_nested(depth: int = 100_000):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_deeply_nested_session_payloads_are_state_errors_and_change_nothing(embedder):
    from strands_semantic_memory.conversation_manager.semantic_summarizing_conversation_manager import (
        SESSION_STATE_KEY,
        STATE_KEY,
    )

    manager = SemanticSummarizingConversationManager(embedder=embedder, summary_format="structured")
    manager.memory.add([{"role": "user", "content": [{"text": "kept before the restore"}]}])
    state = manager.get_state()
    archive = json.loads(state[STATE_KEY])
    deep_message = {"role": "user", "content": [{"text": "x", "nested": deeply_nested()}]}  # the archive as an object
    broken = [
        {**state, STATE_KEY: "[" * 100_000 + "]" * 100_000},  # the archive as saved: a JSON string
        {**state, STATE_KEY: {**archive, "records": [{**archive["records"][0], "message": deep_message}]}},
        {**state, SESSION_STATE_KEY: {"schema": "StructuredSummary", "data": {"facts": deeply_nested()}}},
        {**state, SESSION_STATE_KEY: {"schema": "StructuredSummary", "data": {"narrative": deeply_nested()}}},
    ]
    for payload in broken:
        with pytest.raises(StateError, match="nested too deeply|does not validate"):
            manager.restore_from_session(payload)
        assert [m["content"][0]["text"] for _, m in manager.memory.messages()] == ["kept before the restore"]


# ------------------------------------------------------------------ a session never redirects or empties the archive


def files_of(path):
    """The bytes of an archive file and its journal, to show that nothing was written."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.glob(path.name + "*"))}


def spoken(manager):
    return [m["content"][0]["text"] for _, m in manager.memory.messages()]


def test_a_session_naming_another_archive_file_is_refused_and_nothing_is_written(embedder, tmp_path):
    theirs, ours = tmp_path / "theirs" / "archive.sqlite3", tmp_path / "ours" / "archive.sqlite3"
    theirs.parent.mkdir(), ours.parent.mkdir()
    other = SemanticSummarizingConversationManager(embedder=embedder, archive_path=theirs)
    other.memory.add([{"role": "user", "content": [{"text": "another user's secret"}]}])
    session = other.get_state()
    other.memory.archive.close()
    manager = SemanticSummarizingConversationManager(embedder=embedder, archive_path=ours)
    manager.memory.add([{"role": "user", "content": [{"text": "our own message"}]}])
    before = files_of(theirs), files_of(ours)
    with pytest.raises(StateError, match="another archive"):
        manager.restore_from_session(session)
    assert (files_of(theirs), files_of(ours)) == before
    assert manager.memory.archive.path == str(ours)
    assert spoken(manager) == ["our own message"]
    manager.memory.add([{"role": "user", "content": [{"text": "still ours"}]}])
    assert spoken(manager) == ["our own message", "still ours"]
    in_process = SemanticSummarizingConversationManager(embedder=embedder)
    with pytest.raises(StateError, match="references the archive file .* archive_path"):
        in_process.restore_from_session(session)


def test_a_session_naming_another_namespace_is_refused(embedder, pg_uri):
    from strands_semantic_memory.archives.postgres import PostgresArchive
    from tests.support.archives import new_user_id

    theirs, ours = new_user_id("theirs"), new_user_id("ours")
    other = SemanticSummarizingConversationManager(embedder=embedder, archive=PostgresArchive(pg_uri, theirs))
    other.memory.add([{"role": "user", "content": [{"text": "another user's secret"}]}])
    manager = SemanticSummarizingConversationManager(embedder=embedder, archive=PostgresArchive(pg_uri, ours))
    manager.memory.add([{"role": "user", "content": [{"text": "our own message"}]}])
    with pytest.raises(StateError, match="references user"):
        manager.restore_from_session(other.get_state())
    assert spoken(manager) == ["our own message"] and spoken(other) == ["another user's secret"]


def in_process_session(embedder, count):
    """The manager state a session saved when the archive was in process (its JSON inside)."""
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    manager.memory.add([{"role": "user", "content": [{"text": f"session message {n}"}]} for n in range(count)])
    return manager.get_state()


def durable_manager(kind, embedder, tmp_path, request):
    if kind == "sqlite":
        return SemanticSummarizingConversationManager(embedder=embedder, archive_path=tmp_path / "archive.sqlite3")
    from strands_semantic_memory.archives.postgres import PostgresArchive
    from tests.support.archives import new_user_id

    store = PostgresArchive(request.getfixturevalue("pg_uri"), new_user_id("restore"))
    return SemanticSummarizingConversationManager(embedder=embedder, archive=store)


@pytest.mark.parametrize("kind", ["sqlite", "pgvector"])
def test_a_restore_never_deletes_archived_messages(embedder, tmp_path, request, kind):
    manager = durable_manager(kind, embedder, tmp_path, request)
    manager.memory.add([{"role": "user", "content": [{"text": f"durable message {n}"}]} for n in range(50)])
    with pytest.raises(StateError):
        manager.restore_from_session(in_process_session(embedder, 3))
    assert spoken(manager) == [f"durable message {n}" for n in range(50)]


def test_an_in_process_session_moves_into_an_empty_archive_file_once(embedder, tmp_path):
    session = in_process_session(embedder, 3)
    path = tmp_path / "archive.sqlite3"
    manager = SemanticSummarizingConversationManager(embedder=embedder, archive_path=path)
    manager.restore_from_session(session)
    assert spoken(manager) == [f"session message {n}" for n in range(3)]
    manager.restore_from_session(session)  # the same session again (a restart before it was saved): no change
    assert spoken(manager) == [f"session message {n}" for n in range(3)]
    manager.memory.add([{"role": "user", "content": [{"text": "after the move"}]}])
    manager.restore_from_session(session)  # the file holds all of it and more: nothing to add, nothing deleted
    assert spoken(manager) == [*(f"session message {n}" for n in range(3)), "after the move"]
