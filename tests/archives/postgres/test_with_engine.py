"""PostgresArchive through the engine, the manager and the hook.

Hostile messages, restores with another model, several processes, session state, a failing search.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.archives.postgres import SCHEMA_VERSION, PostgresArchive
from strands_semantic_memory.errors import EmbeddingModelMismatchError, StateError
from tests.support import REPO_ROOT
from tests.support.archives import new_user_id
from tests.support.conversations import (
    PLANTED_TURN,
    REFERENCE,
    TOPIC_TURNS,
    distractor_conversation,
    make_agent,
    text_message,
)
from tests.support.postgres import HOSTILE_TEXTS, pg_memory
from tests.support.scripted_model import ScriptedModel


def test_engine_archives_hostile_messages_and_forgets_them_for_good(pg_uri, embedder):
    user_id = new_user_id("engine")
    memory = pg_memory(pg_uri, embedder, user_id)
    hostile = [text_message("user", text) for text in HOSTILE_TEXTS.values() if len(text) < 10_000]
    twins = [
        dict(text_message("user", "first twin"), tracking_id="twin"),
        dict(text_message("user", "second"), tracking_id="twin"),
    ]
    indices = memory.add([*hostile, *twins, text_message("user", PLANTED_TURN)])
    assert indices == list(range(len(hostile) + 3)), "two messages with one tracking id are both archived"
    assert memory.add(twins) == indices[-3:-1], "archiving them again is a no-op"
    assert [m for _, m in memory.messages()][: len(hostile)] == hostile
    assert memory.forget(query=REFERENCE) == [indices[-1]]
    reopened = pg_memory(pg_uri, embedder, user_id)
    assert all(REFERENCE not in json.dumps(h.message) for h in reopened.search("booking reference", top_k=20))
    assert [m for _, m in reopened.messages()][: len(hostile)] == hostile


class RenamedModel:
    """The real bundled model under another model id: what a user_id sees when its embedding model changes."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = "renamed/" + inner.model_id
        self.dimension = inner.dimension

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)


def test_restoring_with_another_model_and_reembed_rebinds_the_user(pg_uri, embedder):
    """reembed=True on PostgreSQL drops the old vectors, embeds again and binds the new model."""
    user_id = new_user_id("reembed")
    old = pg_memory(pg_uri, embedder, user_id)
    old.add([text_message("user", PLANTED_TURN), *distractor_conversation(20)])
    state = old.to_state()
    renamed = RenamedModel(embedder)
    new = SemanticMemory(embedder=renamed, archive=PostgresArchive(pg_uri, user_id))
    with pytest.raises(EmbeddingModelMismatchError):
        new.load_state(state)
    new.load_state(state, reembed=True)
    stats = new.get_memory_usage_stats()
    assert stats["pending_embedding_count"] == 0 and len(new) == 21
    assert new.search("What was my booking reference?", top_k=1)[0].index == 0
    with pytest.raises(EmbeddingModelMismatchError):
        pg_memory(pg_uri, embedder, user_id).search("x")


def run_python(script: str, timeout: int = 300) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


WRITER = """
import json, sys
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.postgres import PostgresArchive
uri, user_id, worker = sys.argv[1], sys.argv[2], sys.argv[3]
memory = SemanticMemory(archive=PostgresArchive(uri, user_id))
indices = []
for batch in range(15):
    messages = [{"role": "user", "content": [{"text": f"worker {worker} batch {batch} message {i}"}]} for i in range(4)]
    indices += memory.add(messages)
print(json.dumps(indices))
"""


@pytest.mark.subprocess
def test_two_processes_archiving_concurrently_get_unique_contiguous_indices(pg_uri, embedder):
    user_id = new_user_id("concurrent")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, pg_uri, user_id, str(w)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(2)
    ]
    outputs = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr[-3000:]
        outputs.append(json.loads(stdout.strip().splitlines()[-1]))
    every = sorted(outputs[0] + outputs[1])
    assert every == list(range(120)), "no index handed out twice, none lost"
    memory = pg_memory(pg_uri, embedder, user_id)
    texts = {i: m["content"][0]["text"] for i, m in memory.messages()}
    assert len(texts) == 120 and len(set(texts.values())) == 120
    for worker, indices in enumerate(outputs):
        assert all(texts[i].startswith(f"worker {worker} ") for i in indices)
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == 0


@pytest.mark.subprocess
def test_new_process_finds_everything_after_restart(pg_uri, embedder):
    user_id = new_user_id("restart")
    memory = pg_memory(pg_uri, embedder, user_id)
    messages = distractor_conversation(200)
    messages.insert(120, text_message("assistant", PLANTED_TURN))
    memory.add(messages)
    output = run_python(f"""
        import json
        from strands_semantic_memory import SemanticMemory
        from strands_semantic_memory.archives.postgres import PostgresArchive
        memory = SemanticMemory(archive=PostgresArchive({pg_uri!r}, {user_id!r}))
        hit = memory.search("What was my booking reference?", top_k=1)[0]
        print(json.dumps({{"count": len(memory), "index": hit.index, "text": hit.message["content"][0]["text"]}}))
    """)
    answer = json.loads(output.strip().splitlines()[-1])
    assert answer == {"count": 201, "index": 120, "text": PLANTED_TURN}


def test_manager_state_only_references_the_user_and_a_new_worker_picks_it_up(pg_uri, embedder, tmp_path):
    from strands.session import FileSessionManager

    user_id = new_user_id("session")
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, archive=PostgresArchive(pg_uri, user_id), preserve_recent_messages=4
    )
    agent = make_agent(
        ScriptedModel(max_input_chars=1200),
        manager,
        session_manager=FileSessionManager(session_id="s", storage_dir=str(tmp_path)),
        agent_id="a",
    )
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    state = json.loads(manager.get_state()["semantic_memory"])
    assert state["archive"] == {"kind": "pgvector", "user_id": user_id, "schema_version": SCHEMA_VERSION}
    assert "records" not in state and "vectors" not in state
    model = ScriptedModel(max_input_chars=1600)
    worker = SemanticSummarizingConversationManager(
        embedder=embedder, archive=PostgresArchive(pg_uri, user_id), preserve_recent_messages=4
    )
    second = make_agent(
        model,
        worker,
        SemanticMemoryHook(),
        session_manager=FileSessionManager(session_id="s", storage_dir=str(tmp_path)),
        agent_id="a",
    )
    assert len(worker.memory) == len(manager.memory) > 0
    second("What was my booking reference?")
    assert REFERENCE in json.dumps(model.chat_requests[-1]["messages"])


def test_state_for_another_user_or_an_inprocess_archive_is_refused(pg_uri, embedder):
    memory = pg_memory(pg_uri, embedder)
    memory.add([text_message("user", "x")])
    other = pg_memory(pg_uri, embedder)
    with pytest.raises(StateError, match="references user"):
        other.load_state(memory.to_state())
    local = SemanticMemory(embedder=embedder)
    local.add([text_message("user", "y")])
    with pytest.raises(StateError, match="in-process archive"):
        other.load_state(local.to_state())


def test_search_failure_leaves_the_turn_unenriched_with_a_warning(pg_uri, embedder, caplog):
    store = PostgresArchive(pg_uri, new_user_id("search-down"))
    memory = SemanticMemory(embedder=embedder, archive=store)
    memory.add([text_message("user", PLANTED_TURN)])
    model = ScriptedModel()
    agent = make_agent(
        model, SemanticSummarizingConversationManager(embedder=embedder), SemanticMemoryHook(memory=memory)
    )
    store.close()
    store.dsn = "postgresql://nobody@127.0.0.1:9/none"
    with caplog.at_level("WARNING", logger="strands_semantic_memory.hook._hook"):
        agent("What was my booking reference?")
    assert REFERENCE not in json.dumps(model.chat_requests[-1]["messages"])
    assert "archive search failed" in caplog.text
