"""Bounded waits: lock and statement timeouts on every connection, an unreachable database named clearly."""

import threading
import time

import psycopg
import pytest

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.errors import ArchiveError
from tests.support.archives import new_user_id
from tests.support.conversations import PLANTED_TURN, TOPIC_TURNS, make_agent, text_message
from tests.support.postgres import make_record
from tests.support.scripted_model import ScriptedModel


def wait_for_lock_waiter(uri, user_id, seconds=20.0):
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
    raise AssertionError(f"no writer of {user_id} ever waited for the lock")


def test_a_blocked_writer_fails_after_lock_timeout_while_a_search_returns(make_archive, pg_uri):
    """A writer waits at most lock_timeout, commits nothing, and never blocks searches."""
    store = make_archive(lock_timeout=4.0)
    store.add([make_record("first message about the harbour")])
    blocker = psycopg.connect(pg_uri)
    blocker.execute("SELECT 1 FROM ssm_users WHERE user_id = %s FOR UPDATE", (store.user_id,))
    outcome = {}

    def write():
        try:
            outcome["indices"] = store.add([make_record("blocked message")])
        except ArchiveError as error:
            outcome["error"] = error

    writer = threading.Thread(target=write)
    writer.start()
    try:
        wait_for_lock_waiter(pg_uri, store.user_id)
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
    pooled = make_archive(user_id=store.user_id, lock_timeout=0.3)
    with psycopg.connect(pg_uri) as blocker:
        blocker.execute("LOCK TABLE ssm_archive IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(ArchiveError, match="lock_timeout"):
            pooled.candidates(None, "x", 0, 5)
        blocker.rollback()
    assert list(pooled.candidates(None, "x", 0, 5).lexical) == [0]
    with pooled._connections.read("checking") as pooled_connection:
        assert pooled_connection.execute("SHOW jit").fetchone() == ("off",)


def unreachable_store() -> PostgresArchive:
    return PostgresArchive("postgresql://nobody@127.0.0.1:9/none", new_user_id("down"), connect_timeout=2)


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


def client_connections(uri: str) -> int:
    """Client connections to ``uri``'s database other than the one asking."""
    with psycopg.connect(uri, autocommit=True) as watcher:
        (count,) = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(count)


def test_many_users_archives_share_one_pool_and_the_last_close_closes_it(fresh_database, embedder):
    """One archive per user per request: 60 users' memories open at once, used from 8 threads, hold no more
    connections than one pool's ``pool_size``; the pool closes with the last archive."""
    from strands_semantic_memory.archives.postgres._connections import open_pools

    memories = [
        SemanticMemory(embedder=embedder, archive=PostgresArchive(fresh_database, f"user-{n}", pool_size=4))
        for n in range(60)
    ]
    errors = []

    def serve(batch):
        try:
            for n, memory in batch:
                memory.add([text_message("user", f"user {n} keeps the code {n:04d}-PLUM")], session_id=f"s-{n}")
                hits = memory.search(f"code {n:04d}-PLUM", top_k=1)
                assert hits[0].message["content"][0]["text"].startswith(f"user {n} ")
        except Exception as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=serve, args=(list(enumerate(memories))[k::8],)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    open_now = client_connections(fresh_database)
    assert 1 <= open_now <= 4, f"{open_now} connections for 60 users"
    pools = {id(m.archive._connections._shared) for m in memories}
    assert len(pools) == 1 and memories[0].archive._connections._shared.references == 60, "one pool for all"
    assert 60 in open_pools().values()
    for memory in memories[:-1]:
        memory.close()
    assert client_connections(fresh_database) >= 1, "the last archive still holds the pool"
    assert memories[-1].search("code 0059-PLUM", top_k=1)
    memories[-1].close()
    deadline = time.monotonic() + 10
    while client_connections(fresh_database) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client_connections(fresh_database) == 0, "the last close closed the pool's connections"


def test_an_archive_dropped_without_close_gives_its_pool_reference_back(fresh_database):
    import gc

    kept = PostgresArchive(fresh_database, "kept-user", pool_size=2)
    kept.add([make_record("kept")])
    dropped = PostgresArchive(fresh_database, "dropped-user", pool_size=2)
    dropped.add([make_record("dropped")])
    shared = kept._connections._shared
    assert shared is not None and shared is dropped._connections._shared and shared.references == 2
    del dropped
    gc.collect()
    assert shared.references == 1
    kept.close()
    assert shared.references == 0 and kept._connections._shared is None
