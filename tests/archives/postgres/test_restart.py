"""PostgreSQL restarting under a live store: the first calls afterwards succeed, on connections made anew.

The server here is a PostgreSQL of its own (from the pgserver package, as ``pg_uri``'s), restarted with ``pg_ctl``
while the store's pool holds connections to the old server process.
"""

from __future__ import annotations

import concurrent.futures

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.postgres import PostgresArchive
from tests.support.archives import new_user_id
from tests.support.conversations import distractor_conversation, text_message


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pgserver = pytest.importorskip("pgserver")
    try:
        started = pgserver.get_server(str(tmp_path_factory.mktemp("pgrestart")), cleanup_mode="stop")
        started.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    except Exception as error:  # pragma: no cover - depends on the machine
        pytest.skip(f"PostgreSQL with pgvector could not start here: {error}")
    yield started
    del started


def restart(server) -> None:
    """Restart the server (fast shutdown: every session is terminated), waiting until it accepts connections."""
    from pgserver._commands import pg_ctl

    pg_ctl(["-w", "-m", "fast", "restart"], pgdata=server.pgdata, user=server.system_user, timeout=60)


def test_the_first_calls_after_a_restart_succeed(server, embedder):
    store = PostgresArchive(server.get_uri(), new_user_id("restart"), pool_size=3, connect_timeout=20)
    memory = SemanticMemory(embedder=embedder, archive=store)
    memory.add(distractor_conversation(10))
    with concurrent.futures.ThreadPoolExecutor(3) as pool:  # several pooled connections, all about to go stale
        list(pool.map(lambda n: memory.search(f"meeting {n}"), range(6)))
    for round in range(3):
        restart(server)
        assert len(memory) == 10 + round  # a read
        assert memory.search("meeting on Thursday")  # the search statement
        memory.add([text_message("user", f"after restart {round}")])  # a write
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            assert all(pool.map(lambda n: memory.search(f"update {n}"), range(6)))
    assert [m["content"][0]["text"] for _, m in memory.messages()][-3:] == [f"after restart {n}" for n in range(3)]
    store.close()
