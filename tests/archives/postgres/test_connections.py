"""Bounded waits: lock and statement timeouts on every connection, an unreachable database named clearly."""

import threading
import time

import psycopg
import pytest

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.errors import ArchiveError
from tests.support.archives import new_namespace
from tests.support.conversations import PLANTED_TURN, TOPIC_TURNS, make_agent, text_message
from tests.support.postgres import make_record
from tests.support.scripted_model import ScriptedModel


def wait_for_lock_waiter(uri, namespace, seconds=20.0):
    deadline = time.monotonic() + seconds
    with psycopg.connect(uri, autocommit=True) as watcher:
        while time.monotonic() < deadline:
            (waiting,) = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                ("%FOR UPDATE%",),
            ).fetchone()
            if waiting:
                return
            time.sleep(0.02)
    raise AssertionError(f"no writer of {namespace} ever waited for the lock")


def test_a_blocked_writer_fails_after_lock_timeout_while_a_search_returns(make_archive, pg_uri):
    """A writer waits at most lock_timeout, commits nothing, and never blocks searches."""
    store = make_archive(lock_timeout=4.0)
    store.add([make_record("first message about the harbour")])
    blocker = psycopg.connect(pg_uri)
    blocker.execute("SELECT 1 FROM ssm_namespaces WHERE namespace = %s FOR UPDATE", (store.namespace,))
    outcome = {}

    def write():
        try:
            outcome["indices"] = store.add([make_record("blocked message")])
        except ArchiveError as error:
            outcome["error"] = error

    writer = threading.Thread(target=write)
    writer.start()
    try:
        wait_for_lock_waiter(pg_uri, store.namespace)
        found = store.candidates(None, "harbour", 0, 5)
        records = store.get([0])
        assert writer.is_alive(), "the search returned while the writer was still waiting"
        assert list(found.lexical) == [0] and records[0].index == 0
        writer.join(60)
    finally:
        blocker.rollback()
        blocker.close()
    assert "lock_timeout" in str(outcome["error"]) and "nothing was committed" in str(outcome["error"])
    assert len(store) == 1
    assert store.add([make_record("after the lock")]) == [1], "no index was consumed by the failed call"


def test_reads_are_bounded_too_and_timeouts_are_set_on_every_connection(make_archive, pg_uri):
    connection = psycopg.connect(pg_uri, autocommit=True)
    store = make_archive(connection=connection, lock_timeout=0.3, statement_timeout=7.5)
    assert not store.thread_safe, "a single given connection serializes calls"
    store.add([make_record("x")])
    assert connection.execute("SHOW lock_timeout").fetchone() == ("300ms",)
    assert connection.execute("SHOW statement_timeout").fetchone() == ("7500ms",)
    assert connection.execute("SHOW jit").fetchone() == ("off",), "no JIT compilation of millisecond statements"
    pooled = make_archive(namespace=store.namespace, lock_timeout=0.3)
    with psycopg.connect(pg_uri) as blocker:
        blocker.execute("LOCK TABLE ssm_archive IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(ArchiveError, match="lock_timeout"):
            pooled.candidates(None, "x", 0, 5)
        blocker.rollback()
    assert list(pooled.candidates(None, "x", 0, 5).lexical) == [0]
    with pooled._connections.read("checking") as pooled_connection:
        assert pooled_connection.execute("SHOW jit").fetchone() == ("off",)


def unreachable_store() -> PostgresArchive:
    return PostgresArchive("postgresql://nobody@127.0.0.1:9/none", new_namespace("down"), connect_timeout=2)


def test_unreachable_database_is_a_clear_error_and_the_conversation_keeps_its_messages(embedder):
    memory = SemanticMemory(embedder=embedder, archive=unreachable_store())
    with pytest.raises(ArchiveError, match="cannot connect to PostgreSQL"):
        memory.add([text_message("user", "kept")])
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, archive=unreachable_store(), preserve_recent_messages=4
    )
    agent = make_agent(ScriptedModel(max_input_chars=1200), manager)
    with pytest.raises(ArchiveError):
        for turn in [PLANTED_TURN, *TOPIC_TURNS]:
            agent(turn)
    assert agent.messages[0]["content"][0]["text"] == PLANTED_TURN, "nothing left the conversation"
    assert manager.removed_message_count == 0
