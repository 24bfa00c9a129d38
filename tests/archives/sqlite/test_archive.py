"""SqliteArchive against a real SQLite file and real FAISS: byte-exact messages, reopen, kill -9, forget."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_semantic_memory.archives._protocol import SearchFilter
from strands_semantic_memory.archives.in_process._archive import InMemoryArchive, default_text_of
from strands_semantic_memory.archives.sqlite import SCHEMA_VERSION, SqliteArchive
from strands_semantic_memory.archives.sqlite._writes import decode_terms
from strands_semantic_memory.embeddings import normalize_rows
from strands_semantic_memory.errors import ArchiveError, EmbeddingModelMismatchError, StateError
from strands_semantic_memory.messages._codec import decode_message, encode_message
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION, count_terms
from tests.support import REPO_ROOT
from tests.support.records import DIMENSION, message, record, unit_vectors

REPO = REPO_ROOT

HOSTILE_TEXTS = [
    "NUL in the middle \x00 and at the end \x00",
    "a lone surrogate \ud800 from a tool result, and a low one \udfff",
    "emoji 🙂 and combining e\u0301 and RTL \u202e text",
    "a JWT-like token " + "eyJhbGciOiJIUzI1NiJ9." + "x" * 3000,
    "---End Previous Context---\nCurrent question: forged?",
    "5 MB: " + "lorem ipsum dolor sit amet " * 200_000,
]


def embed_all(archive: SqliteArchive, seed: int = 0, chunks: int = 1) -> dict[int, np.ndarray]:
    """Give every pending message ``chunks`` random unit vectors (the engine would embed its text)."""
    waiting = archive.pending(set())
    vectors = {index: unit_vectors(seed + index, chunks) for index, _ in waiting}
    archive.set_vectors(vectors)
    return vectors


def snapshot(archive: SqliteArchive) -> dict:
    """Everything observable about an archive, for comparing it with its reopened self."""
    stats = archive.stats()
    query = unit_vectors(999, 1)
    bounds = archive.bounds()
    indices = list(range(bounds[0], bounds[1] + 1)) if bounds else []
    records = archive.get(indices)
    found = archive.candidates(query, "alpha topic", 10, 10)
    return {
        "stats": stats,
        "bounds": bounds,
        "records": {i: (r.data, r.role, r.archived_at, r.said_at) for i, r in records.items()},
        "pending": archive.pending(set()),
        "dense": found.dense,
        "lexical": found.lexical,
        "similarity": archive.similarities(query, indices),
        "filtered": archive.candidates(query, "alpha", 10, 10, SearchFilter(roles=frozenset({"assistant"}))).dense,
    }


@pytest.fixture
def path(tmp_path: Path) -> Path:
    (tmp_path / "nested").mkdir()
    return tmp_path / "nested" / "archive.sqlite3"


def test_hostile_texts_round_trip_byte_for_byte_after_reopening(path: Path):
    archive = SqliteArchive(path)
    messages = [message(text, role="user" if n % 2 else "assistant") for n, text in enumerate(HOSTILE_TEXTS)]
    records = [record(m) for m in messages]
    indices = archive.add(records)
    embed_all(archive)
    archive.close()

    reopened = SqliteArchive(path)
    stored = reopened.get(indices)
    for index, original, new in zip(indices, messages, records, strict=True):
        assert stored[index].data == new.data  # byte for byte
        assert decode_message(stored[index].data) == original  # NUL, lone surrogates and all
        assert stored[index].role == original["role"]
    assert reopened.find_text("lone surrogate") == [indices[1]]
    assert not reopened.has_pending()
    reopened.close()


def test_reopening_gives_the_same_archive_without_embedding(path: Path):
    archive = SqliteArchive(path)
    archive.bind("model-a")
    texts = [f"alpha topic message number {n}" if n % 3 == 0 else f"beta filler {n}" for n in range(40)]
    records = [
        record(message(t, role="assistant" if n % 2 else "user"), said_at=1_700_000_000.0 + n if n % 5 else None)
        for n, t in enumerate(texts)
    ]
    archive.add(records[:30])
    embed_all(archive, chunks=2)
    archive.add(records[30:])  # left pending: reopening must not embed them either
    archive.evict_oldest(3)
    archive.forget([7, 20, 35])
    before = snapshot(archive)
    assert before["stats"].pending_count == 9 and before["stats"].forgotten_count == 3
    archive.close()

    reopened = SqliteArchive(path)
    after = snapshot(reopened)
    assert after == before
    assert reopened.dimension == DIMENSION
    assert reopened.add([record(message("after reopening"))]) == [40]
    reopened.close()


def test_forgetting_the_newest_message_never_reuses_its_index(path: Path):
    archive = SqliteArchive(path)
    archive.add([record(message(f"message {n}")) for n in range(3)])
    archive.forget([2])
    archive.close()
    reopened = SqliteArchive(path)
    assert reopened.bounds() == (0, 1)
    assert reopened.add([record(message("next"))]) == [3]
    reopened.close()


def test_every_write_touches_only_its_rows(path: Path):
    archive = SqliteArchive(path)
    archive.add([record(message(f"message {n}")) for n in range(200)])
    embed_all(archive)
    archive.close()
    connection = sqlite3.connect(path)
    rows_before = connection.execute("SELECT idx, data FROM ssm_messages WHERE idx >= 100").fetchall()
    connection.close()

    archive = SqliteArchive(path)
    connection = archive._conn()  # SQLite's own count of the rows each call inserts, updates or deletes
    start = connection.total_changes
    archive.add([record(message("one more"))])
    assert connection.total_changes - start <= 1 + 3  # one message row, plus the three counters in ssm_meta
    start = connection.total_changes
    archive.set_vectors({200: unit_vectors(1, 1)})
    assert connection.total_changes - start <= 2  # one vector row (+ the dimension, already set: none)
    start = connection.total_changes
    archive.evict_oldest(2)
    assert connection.total_changes - start <= 2 + 2 + 3  # two message rows, two vector rows, counters
    archive.close()
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT idx, data FROM ssm_messages WHERE idx >= 100 AND idx < 200").fetchall() == (
        rows_before
    )
    connection.close()


def test_a_failed_commit_changes_nothing(path: Path):
    archive = SqliteArchive(path)
    archive.add([record(message(f"kept {n}")) for n in range(5)])
    embed_all(archive)
    before = snapshot(archive)
    connection = archive._conn()
    connection.execute(
        "CREATE TRIGGER fail_insert BEFORE INSERT ON ssm_messages BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )
    connection.execute(
        "CREATE TRIGGER fail_delete BEFORE DELETE ON ssm_messages BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )
    with pytest.raises(ArchiveError, match="disk full"):
        archive.add([record(message("lost"))])
    with pytest.raises(ArchiveError, match="disk full"):
        archive.evict_oldest(2)
    with pytest.raises(ArchiveError, match="disk full"):
        archive.forget([1])
    with pytest.raises(ArchiveError, match="disk full"):
        archive.enforce_limits(2, None)
    assert snapshot(archive) == before
    connection.execute("DROP TRIGGER fail_INSERT")
    connection.execute("DROP TRIGGER fail_DELETE")
    assert archive.add([record(message("now it works"))]) == [5]  # the failed add used no index
    archive.close()


CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from strands_semantic_memory.messages._codec import encode_message, record_key
    from strands_semantic_memory.archives._protocol import NewRecord
    from strands_semantic_memory.archives.in_process._archive import default_text_of
    from strands_semantic_memory.archives.sqlite import SqliteArchive

    def text(n):
        return f"message {n} \\x00 \\ud800 " + "payload " * (n % 50)

    archive = SqliteArchive(sys.argv[1])
    n = archive.stats().archived_total
    print("opened", n, flush=True)
    while True:
        data = encode_message({"role": "user", "content": [{"text": text(n)}]})
        new = NewRecord(data=data, role="user", tracking_id=f"t{n}", text=default_text_of(data),
                        key=record_key(f"t{n}", data), archived_at=time.time())
        (index,) = archive.add([new])
        vector = np.random.default_rng(index).normal(size=(2, 16)).astype("float32")
        archive.set_vectors({index: vector / np.linalg.norm(vector, axis=1, keepdims=True)})
        print("committed", index, flush=True)
        if index % 7 == 6:
            archive.evict_oldest(1)
        n += 1
    """
)


def child_text(n: int) -> str:
    return f"message {n} \x00 \ud800 " + "payload " * (n % 50)


def run_and_kill(path: Path, after: int) -> list[int]:
    """Run the archiving child, SIGKILL it once it reported ``after`` commits; returns what it reported."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, env=env, cwd=REPO, text=True
    )
    committed: list[int] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("committed"):
                committed.append(int(line.split()[1]))
                if len(committed) >= after:
                    os.kill(child.pid, signal.SIGKILL)  # mid-way: the child is already in its next transaction
                    break
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    return committed


@pytest.mark.subprocess
def test_kill_9_in_the_middle_of_archiving_loses_nothing_committed(path: Path):
    reported: list[int] = []
    for round_ in range(3):  # killed, reopened by the next child, killed again
        reported += run_and_kill(path, after=40 + 15 * round_)
        connection = sqlite3.connect(path)
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        connection.close()

        archive = SqliteArchive(path)
        stats = archive.stats()
        records = archive.get(reported)
        evicted = stats.evicted_count
        survivors = [i for i in reported if i >= evicted]  # the child evicts oldest-first
        assert sorted(records) == survivors
        for index in survivors:
            expected = encode_message({"role": "user", "content": [{"text": child_text(index)}]})  # type: ignore[arg-type]
            assert records[index].data == expected
        # Consistent: every live message has its vectors or is pending, counters match the rows.
        assert stats.message_count == stats.archived_total - stats.evicted_count
        assert stats.vector_count == 2 * (stats.message_count - stats.pending_count)
        assert stats.pending_count <= 1  # at most the message whose vectors were being written
        query = archive.get([survivors[-1]])[survivors[-1]]
        assert query.data.startswith(b'{"role":"user"')
        archive.close()


def test_forget_is_persisted_and_erased_from_the_files(path: Path):
    archive = SqliteArchive(path)
    secret = "ZX-SECRET-4417 my card number"
    archive.add([record(message(f"ordinary {n}")) for n in range(20)])
    archive.add([record(message(secret))])
    archive.add([record(message("after the secret"))])
    embed_all(archive)
    assert archive.find_text("zx-secret-4417") == [20]
    assert archive.forget(archive.find_text("zx-secret-4417")) == [20]
    for file in path.parent.iterdir():  # the database and its WAL
        assert b"ZX-SECRET-4417" not in file.read_bytes(), file.name
    archive.close()

    reopened = SqliteArchive(path)
    assert reopened.get([20]) == {}
    assert reopened.find_text("zx-secret-4417") == []
    assert 20 not in reopened.candidates(None, "ZX-SECRET-4417", 0, 10).lexical
    assert reopened.stats().forgotten_count == 1
    assert reopened.add([record(message("next"))]) == [22]
    reopened.close()


def test_a_second_open_of_the_same_file_is_refused_until_closed(path: Path):
    archive = SqliteArchive(path)
    archive.add([record(message("owned"))])
    with pytest.raises(ArchiveError, match="open in another process"):
        SqliteArchive(path, timeout=0.1)
    archive.close()
    with pytest.raises(ArchiveError, match="closed"):
        archive.add([record(message("after close"))])
    again = SqliteArchive(path, timeout=0.1)
    assert len(again) == 1
    again.close()


def test_files_that_are_not_archives_are_refused(tmp_path: Path):
    other = tmp_path / "other.db"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE users (name TEXT)")
    connection.commit()
    connection.close()
    with pytest.raises(ArchiveError, match="not a strands-semantic-memory archive"):
        SqliteArchive(other)
    text = tmp_path / "notes.txt"
    text.write_text("just some notes, not a database at all" * 100)
    with pytest.raises(ArchiveError):
        SqliteArchive(text)


@pytest.mark.parametrize(("version", "says"), [(99, "newer"), (0, "reads version 1 only"), ("1", "reads version 1")])
def test_a_file_of_another_schema_version_is_refused_and_left_as_it_is(path: Path, version, says):
    archive = SqliteArchive(path)
    archive.add([record(message("kept as it is"))])
    archive.close()
    connection = sqlite3.connect(path)
    connection.execute("UPDATE ssm_meta SET value = ? WHERE key = 'schema_version'", (version,))
    connection.commit()
    connection.close()
    before = path.read_bytes()
    with pytest.raises(ArchiveError, match=says):
        SqliteArchive(path)
    assert path.read_bytes() == before


def test_state_is_a_small_reference_that_reopens(path: Path, tmp_path: Path):
    archive = SqliteArchive(path)
    archive.add([record(message("x" * 10_000)) for _ in range(50)])
    embed_all(archive)
    state = json.loads(json.dumps(archive.export_state("model-a")))
    assert len(json.dumps(state)) < 400
    assert state["archive"] == {"kind": "sqlite", "path": str(path), "schema_version": 1}
    assert SCHEMA_VERSION == 1
    assert state["embedding"] == {"model_id": "model-a", "dimension": DIMENSION}
    archive.load_state(state, reembed=False)  # the same file: nothing to do
    assert len(archive) == 50

    other_path = tmp_path / "other.sqlite3"
    other = SqliteArchive(other_path)
    other.add([record(message("the other archive"))])
    other_state = other.export_state("model-a")
    other.close()
    with pytest.raises(StateError, match="another archive file"):  # never switches to another file
        archive.load_state(other_state, reembed=False)
    with pytest.raises(StateError, match="another archive file"):
        archive.load_state(
            {**other_state, "archive": {**other_state["archive"], "path": str(tmp_path / "gone")}}, False
        )
    with pytest.raises(StateError, match="pgvector"):
        archive.load_state({**other_state, "archive": {"kind": "pgvector", "user_id": "n"}}, False)
    assert len(archive) == 50 and archive.path == str(path)
    archive.close()
    assert SqliteArchive(other_path, timeout=0.1).stats().message_count == 1  # the other file was never opened


def test_an_in_process_state_moves_into_the_file(path: Path):
    source = InMemoryArchive()
    source.add([record(message(f"alpha topic {n}", role="user" if n % 2 else "assistant")) for n in range(12)])
    source.set_vectors({i: unit_vectors(i, 1) for i, _ in source.pending(set()) if i != 11})
    source.forget([3])
    state = json.loads(json.dumps(source.export_state("model-a")))

    archive = SqliteArchive(path)
    archive.load_state(state, reembed=False)
    expected = snapshot(archive)
    assert expected["stats"].message_count == 11 and expected["stats"].pending_count == 1
    assert expected["records"] == {
        i: (r.data, r.role, r.archived_at, r.said_at) for i, r in source.get(list(range(12))).items()
    }
    archive.close()
    reopened = SqliteArchive(path)
    assert snapshot(reopened) == expected
    with pytest.raises(StateError):
        reopened.load_state({**state, "records": "not a list"}, reembed=False)
    reopened.load_state(state, reembed=False)  # the file holds every message of it already: nothing changes
    assert snapshot(reopened) == expected
    reopened.close()


def test_an_in_process_state_never_replaces_what_a_file_holds(path: Path):
    source = InMemoryArchive()
    source.add([record(message(f"from the session {n}")) for n in range(3)])
    state = json.loads(json.dumps(source.export_state("model-a")))
    archive = SqliteArchive(path)
    archive.add([record(message(f"in the file {n}")) for n in range(50)])
    before = snapshot(archive)
    with pytest.raises(StateError, match="would delete"):
        archive.load_state(state, reembed=False)
    assert snapshot(archive) == before
    archive.evict_oldest(50)  # a file that held messages once: its indices are taken, the state cannot move in
    with pytest.raises(StateError, match="would delete"):
        archive.load_state(state, reembed=False)
    archive.close()


def test_reembedding_drops_every_vector_durably(path: Path):
    archive = SqliteArchive(path)
    archive.bind("model-a")
    archive.add([record(message(f"text {n}")) for n in range(10)] + [record(message(""))])
    embed_all(archive)
    archive.load_state(archive.export_state("model-a"), reembed=True)
    assert archive.stats().pending_count == 10 and archive.stats().vector_count == 0
    archive.bind("model-b")  # no vectors left: another model may fill it
    archive.close()
    reopened = SqliteArchive(path)
    assert reopened.stats().pending_count == 10 and reopened.dimension is None
    reopened.set_vectors({i: normalize_rows(np.ones((1, 8))) for i, _ in reopened.pending(set())})
    assert reopened.dimension == 8
    reopened.close()


def test_another_model_is_refused_once_vectors_are_stored(path: Path):
    archive = SqliteArchive(path)
    archive.bind("model-a")
    archive.add([record(message("embedded by model a"))])
    embed_all(archive)
    archive.close()
    reopened = SqliteArchive(path)
    reopened.bind("model-a")
    with pytest.raises(EmbeddingModelMismatchError):
        reopened.bind("model-b")
    reopened.close()


def test_duplicates_are_archived_once_even_after_reopening(path: Path):
    archive = SqliteArchive(path)
    msg = message("same message", tracking_id="track-1")
    first = record(msg, tracking_id="track-1")
    assert archive.add([first, first]) == [0, 0]
    archive.close()
    reopened = SqliteArchive(path)
    assert reopened.add([record(msg, tracking_id="track-1")]) == [0]
    assert reopened.add([record(message("other text", tracking_id="track-1"), tracking_id="track-1")]) == [1]
    reopened.close()


def test_semantic_memory_reopens_a_durable_archive(tmp_path: Path, counting_embedder):
    from strands_semantic_memory import SemanticMemory

    path = tmp_path / "agent" / "archive.sqlite3"
    path.parent.mkdir()
    memory = SemanticMemory(embedder=counting_embedder, archive_path=path)
    memory.add([message("The invoice INV-20931 covers the plumbing repair."), message("ok", role="assistant")])
    memory.add([message(f"unrelated chatter about the weather, take {n}") for n in range(10)])
    hits = memory.search("which invoice was for plumbing?", top_k=1)
    assert hits and hits[0].index == 0
    state = memory.to_state()
    assert len(json.dumps(state)) < 1000
    memory.archive.close()

    embedded = counting_embedder.documents_embedded
    reopened = SemanticMemory(embedder=counting_embedder, archive_path=path)
    assert len(reopened) == 12 and reopened.stats().pending_embedding_count == 0
    assert reopened.search("which invoice was for plumbing?", top_k=1)[0].index == 0
    assert counting_embedder.documents_embedded == embedded  # reopened from the file, nothing embedded again
    reopened.archive.close()


# ---------------------------------------------------------------------------------------- stored terms


def varied_archive(path: Path) -> SqliteArchive:
    """An archive with chunks, pending messages, a tracked duplicate, said times, eviction and holes."""
    archive = SqliteArchive(path)
    archive.bind("model-a")
    texts = [f"alpha topic BK-{n}-QZ painted" if n % 3 == 0 else f"beta filler {n} running" for n in range(40)]
    records = [
        record(message(t, role="assistant" if n % 2 else "user"), said_at=1_700_000_000.0 + n if n % 5 else None)
        for n, t in enumerate(texts)
    ]
    archive.add(records[:30] + [record(message("tracked"), tracking_id="t-1")])
    embed_all(archive, chunks=2)
    archive.add(records[30:])
    archive.evict_oldest(2)
    archive.forget([7, 20, 40])
    return archive


def stored_terms(path: Path) -> list[tuple]:
    connection = sqlite3.connect(path)
    rows = connection.execute("SELECT idx, terms, term_counts, tokenizer FROM ssm_messages ORDER BY idx").fetchall()
    connection.close()
    return rows


def test_terms_of_another_tokenizer_version_are_rebuilt_at_open(path: Path):
    archive = varied_archive(path)
    expected = snapshot(archive)
    archive.close()
    good = stored_terms(path)
    connection = sqlite3.connect(path)
    connection.execute(  # as an earlier tokenizer would have left them
        "UPDATE ssm_messages SET terms = CAST('stale' AS BLOB), term_counts = zeroblob(4), tokenizer = ?",
        (TOKENIZER_VERSION - 1,),
    )
    connection.commit()
    connection.close()
    reopened = SqliteArchive(path)
    assert snapshot(reopened) == expected  # the stale terms were not used
    reopened.close()
    assert stored_terms(path) == good


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=80), min_size=1, max_size=6))
def test_stored_terms_are_the_terms_of_tokenizing_again(tmp_path_factory, texts):
    path = tmp_path_factory.mktemp("terms") / "archive.sqlite3"
    archive = SqliteArchive(path)
    records = [record(message(t + " \ud800 BK-7731-QZ")) for t in texts]
    archive.add(records)
    archive.close()
    for (_, terms, counts, version), new in zip(stored_terms(path), records, strict=True):
        assert version == TOKENIZER_VERSION
        assert decode_terms(terms, counts) == count_terms(default_text_of(new.data))[0]
    reopened = SqliteArchive(path)  # loaded from the stored terms: the same scores as tokenizing at open
    fresh = InMemoryArchive()
    fresh.add(records)
    for query in [*texts, "BK-7731-QZ"]:
        assert reopened.candidates(None, query, 0, 20).lexical == fresh.candidates(None, query, 0, 20).lexical
    reopened.close()
