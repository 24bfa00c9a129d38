"""What is PostgreSQL's own: the shared pool's bound, forgotten users, other processes, bounded waits, restarts."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time
import uuid

import numpy as np
import pytest

psycopg = pytest.importorskip("psycopg")

from strands_semantic_memory.archives import PostgresArchive, Scope, SqliteArchive  # noqa: E402
from strands_semantic_memory.errors import ArchiveError, MissingDependencyError, StateError  # noqa: E402
from tests.support.records import copy_of, record, unit  # noqa: E402


@pytest.fixture
def database(pg_uri):
    """A database of its own (its connections and tables are this test's alone), dropped afterwards."""
    name = f"ssm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_uri, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield psycopg.conninfo.make_conninfo(pg_uri, dbname=name)
    with psycopg.connect(pg_uri, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def sql(dsn, statement, params=()):
    with psycopg.connect(dsn, autocommit=True) as connection:
        cursor = connection.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def connections(dsn):
    """Client connections to the database other than the one asking."""
    return sql(dsn, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
               "AND backend_type = 'client backend' AND pid <> pg_backend_pid()")[0][0]  # fmt: skip


def eventually(check, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)
    return check()


def test_sixty_users_from_eight_threads_share_one_pool_of_pool_size(database):
    archives = [PostgresArchive(database, f"user-{n}", pool_size=4) for n in range(60)]
    errors, most = [], [0]
    done = threading.Event()

    def watch():
        while not done.is_set():
            most[0] = max(most[0], connections(database))
            time.sleep(0.02)

    def serve(batch):
        try:
            for n, archive in batch:
                archive.add([record(f"user {n} keeps the code {n:04d}-PLUM", session=f"s-{n}")])
                found = archive.candidates(["plum"], None, 5, Scope())
                assert list(found.lexical) == [0] and archive.stats().count == 1
        except Exception as error:  # reported in the test's thread
            errors.append(error)

    watcher = threading.Thread(target=watch)
    watcher.start()
    threads = [threading.Thread(target=serve, args=(list(enumerate(archives))[k::8],)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    watcher.join()
    assert errors == [] and 1 <= most[0] <= 4, f"{most[0]} connections for 60 users"
    for archive in archives[:-1]:
        archive.close()
    assert connections(database) >= 1 and archives[-1].stats().count == 1, "the last archive still holds the pool"
    del archive, archives  # the last one dropped without close gives its reference back too
    gc.collect()
    assert eventually(lambda: connections(database) == 0), "the last reference closed the pool"


def test_forget_all_leaves_no_row_naming_the_user_and_still_refuses_copies(database):
    user = f"forget-me-{uuid.uuid4().hex}"
    archive, other = PostgresArchive(database, user), PostgresArchive(database, "someone-else")
    kept = [record("my address is 12 Rue des Lilas", session="s-1"), record("my phone is 555-0100")]
    archive.bind("model", 8)
    assert archive.add(kept) == [0, 1] and other.add([record("other's words")]) == [0]
    archive.set_vectors({0: unit(np.ones(8)), 1: unit(np.arange(8))})
    archive.forget([1])
    assert archive.forget_all() == 1
    columns = sql(database, "SELECT table_name, column_name FROM information_schema.columns "
                  "WHERE table_schema = current_schema() AND table_name LIKE 'ssm%%'")  # fmt: skip
    for table, column in columns:
        found = sql(database, f"SELECT count(*) FROM {table} WHERE strpos({column}::text, %s) > 0 "
                    f"OR position(convert_to(%s, 'UTF8') IN {column}::text::bytea) > 0", (user, user))  # fmt: skip
        assert found == [(0,)], f"{table}.{column} names the user"
    assert archive.add([copy_of(kept[0]), copy_of(kept[1])]) == [None, None]
    assert archive.add([record("a new start")]) == [2], "indices are never handed out twice"
    assert other.stats().count == 1
    archive.close()
    other.close()


def test_another_process_forgetting_or_deleting_the_user_never_wedges_this_one(pg_uri):
    user = f"shared-{uuid.uuid4().hex[:8]}"
    this = PostgresArchive(pg_uri, user, pool_size=2)
    elsewhere = PostgresArchive(pg_uri, user, pool_size=3)  # another pool: another process's connections
    this.bind("model", 8)
    this.add([record("one"), record("two")])
    assert elsewhere.forget_all() == 2
    assert this.stats().count == 0 and this.add([record("three")]) == [2]
    sql(pg_uri, "DELETE FROM ssm_users WHERE user_id = %s", (user,))  # the user's row, deleted behind it
    this.bind("model", 8)
    this.set_vectors({2: unit(np.ones(8))})
    stats = this.stats()
    assert (stats.count, stats.next_index, stats.dimension, stats.model_id) == (1, 3, 8, "model")
    assert elsewhere.get([2])[0].text == "three"
    this.close()
    elsewhere.close()


def test_schema_is_created_once_and_another_version_is_refused_and_left_as_it_is(database):
    made, errors = [], []

    def open_one(size):
        try:
            made.append(PostgresArchive(database, f"u{size}", pool_size=size))  # distinct pools: concurrent checks
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one, args=(size,)) for size in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(made) == 4
    assert sql(database, "SELECT value FROM ssm_meta WHERE key = 'schema'") == [("1",)]
    sql(database, "UPDATE ssm_meta SET value = '2' WHERE key = 'schema'")
    with pytest.raises(ArchiveError, match="schema '2'.*left as it is"):
        PostgresArchive(database, "late", pool_size=9)
    assert sql(database, "SELECT value FROM ssm_meta WHERE key = 'schema'") == [("2",)]
    for archive in made:
        archive.close()


def test_every_wait_has_a_bound_and_a_failed_call_changes_nothing(pg_uri):
    archive = PostgresArchive(pg_uri, f"bound-{uuid.uuid4().hex[:8]}", lock_timeout=0.5)
    archive.add([record("first")])
    with psycopg.connect(pg_uri) as blocker:
        blocker.execute("LOCK TABLE ssm_owners IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        with pytest.raises(ArchiveError, match="lock_timeout=0.5s"):
            archive.add([record("blocked")])
        assert time.monotonic() - started < 3
    assert archive.stats().count == 1 and archive.add([record("after")]) == [1], "no index was consumed"
    archive.close()
    started = time.monotonic()
    with pytest.raises(ArchiveError, match="cannot reach PostgreSQL"):
        PostgresArchive("postgresql://nobody@127.0.0.1:9/none", "down", connect_timeout=1, pool_timeout=1)
    assert time.monotonic() - started < 5


def test_dense_search_uses_the_hnsw_index_above_its_size_and_scans_exactly_when_it_comes_back_short(database):
    archive = PostgresArchive(database, "large", exact_search_below=50)
    vectors = unit(np.random.default_rng(0).normal(size=(300, 16)), 16)
    archive.add([record(f"message {n}", session="rare" if n in (7, 70) else f"s{n % 3}") for n in range(300)])
    archive.set_vectors({n: vectors[n : n + 1] for n in range(300)})
    query = unit(vectors[5] + 0.1, 16)[0]
    exact = sorted(range(300), key=lambda n: -float(vectors[n] @ query))[:5]
    assert list(archive.candidates([], query, 5, Scope()).dense) == exact  # exact; the index is built meanwhile
    index = "ssm_vectors_hnsw_16"
    assert eventually(lambda: sql(database, "SELECT bool_or(indisvalid) FROM pg_index i JOIN pg_class c ON "
                                  "c.oid = i.indexrelid WHERE c.relname = %s", (index,)) == [(True,)], 60)  # fmt: skip
    assert list(archive.candidates([], query, 5, Scope()).dense) == exact
    assert set(archive.candidates([], query, 5, Scope(sessions=frozenset({"rare"}))).dense) == {7, 70}
    archive.close()  # a closed connection reports its statistics
    assert eventually(lambda: sql(database, "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = %s",
                                  (index,))[0][0] >= 2)  # fmt: skip


def test_state_is_a_reference_without_the_password(pg_uri):
    dsn = pg_uri.replace("postgres:@", "postgres:hunter2@")  # the test server trusts local connections
    archive = PostgresArchive(dsn, "alice-state")
    state = archive.to_state()
    assert state["kind"] == "pgvector" and state["user_id"] == "alice-state" and "hunter2" not in state["dsn"]
    archive.load_state(state)
    for other in (SqliteArchive(user_id="alice-state").to_state(), {**state, "dsn": state["dsn"] + " dbname=other"},
                  {**state, "user_id": "bob"}):  # fmt: skip
        with pytest.raises(StateError):
            archive.load_state(other)
    archive.close()


def test_a_missing_driver_is_a_missing_dependency_error():
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from strands_semantic_memory import archives\n"
        "try:\n    archives.PostgresArchive\nexcept ImportError as error:\n    print(type(error).__name__, error)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith(MissingDependencyError.__name__) and "strands-semantic-memory[pgvector]" in out


# ---------------------------------------------------------------------- restarts, on a server of the test's own


def _postgres_processes(pgdata):
    import psutil

    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] == "postgres" and str(pgdata) in " ".join(process.info["cmdline"] or ()):
            found.append(process)
    return found


@pytest.fixture
def own_server(tmp_path):
    """A PostgreSQL of this test's own, stopped (``pg_ctl stop -m immediate``) whatever happens in the test.

    pgserver stops the server it started, by its first process id: a server restarted since has another and would
    outlive pytest, so the teardown stops it by its data folder and checks that none of its processes remains.
    """
    pgserver = pytest.importorskip("pgserver")
    from pgserver._commands import pg_ctl

    server = pgserver.get_server(str(tmp_path / "pg"), cleanup_mode=None)
    try:
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        yield server
    finally:
        children = []
        try:
            import psutil

            postmaster = int((server.pgdata / "postmaster.pid").read_text().split()[0])
            children = psutil.Process(postmaster).children(recursive=True)
        except Exception:  # not running: nothing to list
            pass
        try:
            pg_ctl(["-m", "immediate", "-w", "stop"], pgdata=server.pgdata, user=server.system_user, timeout=60)
        except subprocess.CalledProcessError:  # already stopped
            pass
        server.cleanup()
        assert eventually(lambda: not _postgres_processes(server.pgdata) and not any(c.is_running() for c in children))


def test_the_first_calls_after_a_restart_succeed_and_a_call_during_an_outage_changes_nothing(own_server):
    from pgserver._commands import pg_ctl

    archive = PostgresArchive(own_server.get_uri(), "restart", pool_size=3, pool_timeout=3.0)
    archive.add([record(f"before the restart {n}") for n in range(3)])
    threads = [threading.Thread(target=archive.candidates, args=(["restart"], None, 5, Scope())) for _ in range(6)]
    for thread in threads:  # several pooled connections, all about to be ended by the server
        thread.start()
    for thread in threads:
        thread.join()
    for round in range(2):
        pg_ctl(["-w", "-m", "fast", "restart"], pgdata=own_server.pgdata, user=own_server.system_user, timeout=60)
        assert archive.stats().count == 3 + round  # a read
        assert len(archive.candidates(["restart"], None, 10, Scope()).lexical) == 3 + round
        assert archive.add([record(f"after restart {round}")]) == [3 + round]  # a write
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=own_server.pgdata, user=own_server.system_user, timeout=60)
    started = time.monotonic()
    with pytest.raises(ArchiveError, match="cannot reach PostgreSQL"):
        archive.add([record("during the outage")])
    assert time.monotonic() - started < 3.0 + 2, "pool_timeout, and the statement that failed"
    own_server.ensure_postgres_running()
    assert archive.stats().count == 5 and archive.add([record("back")]) == [5], "the failed call changed nothing"
    archive.close()
