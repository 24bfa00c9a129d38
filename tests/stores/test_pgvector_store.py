"""PgVectorStore against a real PostgreSQL + pgvector (started by the tests from the pgserver package)."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from strands_semantic_memory import (
    EmbeddingModelMismatchError,
    SemanticMemory,
    SemanticMemoryHook,
    SemanticSummarizingConversationManager,
    StateError,
    StoreError,
)
from strands_semantic_memory.stores.pgvector_store import SCHEMA_VERSION, PgVectorStore
from tests.conftest import (
    PLANTED_TURN,
    REFERENCE,
    TOPIC_TURNS,
    distractor_conversation,
    make_agent,
    new_namespace,
    text_message,
)
from tests.scripted_model import ScriptedModel

ROOT = Path(__file__).resolve().parents[2]


def pg_memory(pg_uri, embedder, namespace=None, **kwargs):
    return SemanticMemory(embedder=embedder, store=PgVectorStore(pg_uri, namespace or new_namespace()), **kwargs)


def test_namespaces_are_isolated(pg_uri, embedder):
    a = pg_memory(pg_uri, embedder, max_num_archived_messages=50)
    b = pg_memory(pg_uri, embedder)
    a.archive(distractor_conversation(80, seed=1))
    b.archive([text_message("user", PLANTED_TURN)])
    assert len(a) == 50 and len(b) == 1
    assert all(REFERENCE not in json.dumps(h.message) for h in a.search("booking reference", top_k=50))
    assert b.search("booking reference")[0].message["content"][0]["text"] == PLANTED_TURN
    assert list(b.indices) == [0], "b's indices are its own, unaffected by a's eviction"
    assert b.get_memory_usage_stats()["evicted_count"] == 0


def run_python(script: str, timeout: int = 300) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


WRITER = """
import json, sys
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.stores.pgvector_store import PgVectorStore
uri, namespace, worker = sys.argv[1], sys.argv[2], sys.argv[3]
memory = SemanticMemory(store=PgVectorStore(uri, namespace))
indices = []
for batch in range(15):
    messages = [{"role": "user", "content": [{"text": f"worker {worker} batch {batch} message {i}"}]} for i in range(4)]
    indices += memory.archive(messages)
print(json.dumps(indices))
"""


def test_two_processes_archiving_concurrently_get_unique_contiguous_indices(pg_uri, embedder):
    namespace = new_namespace("concurrent")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, pg_uri, namespace, str(w)],
            cwd=ROOT,
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
    memory = pg_memory(pg_uri, embedder, namespace)
    texts = {i: m["content"][0]["text"] for i, m in memory.messages()}
    assert len(texts) == 120 and len(set(texts.values())) == 120
    for worker, indices in enumerate(outputs):
        assert all(texts[i].startswith(f"worker {worker} ") for i in indices)
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == 0


def test_new_process_finds_everything_after_restart(pg_uri, embedder):
    namespace = new_namespace("restart")
    memory = pg_memory(pg_uri, embedder, namespace)
    messages = distractor_conversation(200)
    messages.insert(120, text_message("assistant", PLANTED_TURN))
    memory.archive(messages)
    output = run_python(f"""
        import json
        from strands_semantic_memory import SemanticMemory
        from strands_semantic_memory.stores.pgvector_store import PgVectorStore
        memory = SemanticMemory(store=PgVectorStore({pg_uri!r}, {namespace!r}))
        hit = memory.search("What was my booking reference?", top_k=1)[0]
        print(json.dumps({{"count": len(memory), "index": hit.index, "text": hit.message["content"][0]["text"]}}))
    """)
    answer = json.loads(output.strip().splitlines()[-1])
    assert answer == {"count": 201, "index": 120, "text": PLANTED_TURN}


def test_manager_state_only_references_the_namespace_and_a_new_worker_picks_it_up(pg_uri, embedder, tmp_path):
    from strands.session import FileSessionManager

    namespace = new_namespace("session")
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, store=PgVectorStore(pg_uri, namespace), preserve_recent_messages=4
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
    assert state["store"] == {"kind": "pgvector", "namespace": namespace, "schema_version": SCHEMA_VERSION}
    assert "records" not in state and "vectors" not in state
    model = ScriptedModel(max_input_chars=1600)
    worker = SemanticSummarizingConversationManager(
        embedder=embedder, store=PgVectorStore(pg_uri, namespace), preserve_recent_messages=4
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
    assert REFERENCE in model.chat_requests[-1]["messages"][-1]["content"][0]["text"]


def test_state_for_another_namespace_or_an_inprocess_archive_is_refused(pg_uri, embedder):
    memory = pg_memory(pg_uri, embedder)
    memory.archive([text_message("user", "x")])
    other = pg_memory(pg_uri, embedder)
    with pytest.raises(StateError, match="references namespace"):
        other.load_state(memory.to_state())
    local = SemanticMemory(embedder=embedder)
    local.archive([text_message("user", "y")])
    with pytest.raises(StateError, match="in-process archive"):
        other.load_state(local.to_state())


def test_namespace_built_with_another_model_is_refused(pg_uri, embedder):
    namespace = new_namespace("model")
    pg_memory(pg_uri, embedder, namespace).archive([text_message("user", "x")])
    with pytest.raises(EmbeddingModelMismatchError):
        SemanticMemory(
            embedding_model="bedrock:amazon.titan-embed-text-v2:0", store=PgVectorStore(pg_uri, namespace)
        ).search("x")


def unreachable_store() -> PgVectorStore:
    return PgVectorStore("postgresql://nobody@127.0.0.1:9/none", new_namespace("down"), connect_timeout=2)


def test_unreachable_database_is_a_clear_error_and_the_conversation_keeps_its_messages(embedder):
    memory = SemanticMemory(embedder=embedder, store=unreachable_store())
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
        memory.archive([text_message("user", "kept")])
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, store=unreachable_store(), preserve_recent_messages=4
    )
    agent = make_agent(ScriptedModel(max_input_chars=1200), manager)
    with pytest.raises(StoreError):
        for turn in [PLANTED_TURN, *TOPIC_TURNS]:
            agent(turn)
    assert agent.messages[0]["content"][0]["text"] == PLANTED_TURN, "nothing left the conversation"
    assert manager.removed_message_count == 0


def test_search_failure_leaves_the_turn_unenriched_with_a_warning(pg_uri, embedder, caplog):
    store = PgVectorStore(pg_uri, new_namespace("search-down"))
    memory = SemanticMemory(embedder=embedder, store=store)
    memory.archive([text_message("user", PLANTED_TURN)])
    model = ScriptedModel()
    agent = make_agent(
        model, SemanticSummarizingConversationManager(embedder=embedder), SemanticMemoryHook(memory=memory)
    )
    store.close()
    store.dsn = "postgresql://nobody@127.0.0.1:9/none"
    with caplog.at_level("WARNING", logger="strands_semantic_memory.hook"):
        agent("What was my booking reference?")
    assert model.chat_requests[-1]["messages"][-1]["content"] == [{"text": "What was my booking reference?"}]
    assert "archive search failed" in caplog.text


def test_schema_is_created_once_and_versioned(pg_uri):
    first = PgVectorStore(pg_uri, new_namespace())
    second = PgVectorStore(pg_uri, new_namespace())
    assert len(first) == 0 and len(second) == 0
    with first._transaction() as connection:
        assert connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone() == (
            str(SCHEMA_VERSION),
        )
