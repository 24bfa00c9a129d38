"""Writes: idempotent and bulk adds, planner statistics and the full-text pending list, forgetting and eviction,
concurrent writers, atomicity."""

import threading

import numpy as np
import psycopg
import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.errors import DimensionMismatchError
from tests.support.archives import new_user_id
from tests.support.conversations import REFERENCE, text_message
from tests.support.postgres import embed, make_record


def test_add_is_idempotent_on_the_key_and_keeps_different_messages_with_one_tracking_id(make_archive):
    """The store recognises a message archived before by its key, not by its tracking id."""
    store = make_archive()
    first = make_record("the first message", tracking_id="same-id")
    other = make_record("a different message reusing the id", tracking_id="same-id")
    assert store.add([first, other, first]) == [0, 1, 0], "a repeat inside one batch gets the first index"
    assert store.add([first, other]) == [0, 1], "a retried batch archives nothing again"
    untracked = make_record("ok")
    assert store.add([untracked, make_record("ok")]) == [2, 3], "without a tracking id, every message is new"
    assert len(store) == 4 and store.stats().archived_total == 4


def test_bulk_add_uses_copy_and_keeps_order_and_idempotency(make_archive):
    """A large batch is one COPY per slice, in one transaction."""
    store = make_archive()
    records = [make_record(f"bulk message {i} about topic {i % 13}", tracking_id=f"b{i}") for i in range(1200)]
    assert store.add(records) == list(range(1200))
    assert store.add(records[:300] + [make_record("one more", tracking_id="b-new")]) == [*range(300), 1200]
    got = store.get([0, 599, 1199])
    assert [got[i].data for i in (0, 599, 1199)] == [records[i].data for i in (0, 599, 1199)]
    assert store.stats().pending_count == 1201


def test_a_bulk_add_refreshes_the_planner_statistics(make_archive, fresh_database):
    """Autovacuum analyzes after its nap; until then the planner took the table for empty and the vector writes
    after a bulk load scanned it whole (a 100k load: 64 s instead of 19 s). A large batch analyzes at once."""
    store = make_archive(fresh_database)
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        store.add([make_record("seed the schema", tracking_id="seed")])
        (before,) = connection.execute("SELECT reltuples FROM pg_class WHERE relname = 'ssm_archive'").fetchone()
        store.add([make_record(f"bulk message {i}", tracking_id=f"s{i}") for i in range(1500)])
        (after,) = connection.execute("SELECT reltuples FROM pg_class WHERE relname = 'ssm_archive'").fetchone()
    assert before < 1 and after >= 1500


def test_the_full_text_index_keeps_a_short_pending_list_and_a_bulk_add_flushes_it(make_archive, fresh_database):
    """Every full-text search scans GIN's pending list linearly (4 MB by default: a lexical match at 100k
    took 46-73 ms instead of 18). The index is created with a 64 kB limit, and a bulk add leaves nothing pending."""
    store = make_archive(fresh_database)
    store.add([make_record("seed the schema", tracking_id="seed")])
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        options = "SELECT reloptions FROM pg_class WHERE relname = 'ssm_archive_tsv'"
        assert connection.execute(options).fetchone()[0] == ["gin_pending_list_limit=64"]
        store.add([make_record(f"bulk message {i} about kites and kestrels", tracking_id=f"b{i}") for i in range(1500)])
        (left,) = connection.execute("SELECT gin_clean_pending_list('ssm_archive_tsv'::regclass)").fetchone()
        assert left == 0, "the bulk add flushed the pending list"
    assert len(store.candidates(None, "kestrels", 0, 2000).lexical) == 1500


def test_forget_deletes_every_row_for_good_also_after_reopening(make_archive, embedder, pg_uri):
    """forget(indices) deletes the message, its text, lexical entry and vectors."""
    store = make_archive()
    texts = [f"ordinary message {i} about the garden" for i in range(6)]
    texts[2] = f"secret: my booking reference is {REFERENCE}"
    texts[4] = "another secret with " + "long chunked words " * 50
    store.add([make_record(t, tracking_id=f"f{i}") for i, t in enumerate(texts)])
    vectors = embed(embedder, texts)
    vectors[4] = np.vstack([vectors[4], vectors[4]])  # a second chunk row
    store.set_vectors(vectors)
    assert store.forget([2, 4, 99]) == [2, 4]
    assert store.forget([2]) == [], "already gone"
    query = embedder.embed_queries([f"booking reference {REFERENCE}"])
    for view in (store, make_archive(user_id=store.user_id)):
        found = view.candidates(query, f"secret booking reference {REFERENCE}", 10, 10)
        assert not {2, 4} & (set(found.dense) | set(found.lexical) | set(found.similarity))
        assert view.get([2, 4]) == {} and view.similarities(query, [2, 4]) == {}
        assert view.find_text("secret") == [] and view.find_text(REFERENCE) == []
        stats = view.stats()
        assert (len(view), stats.message_count, stats.forgotten_count, stats.vector_count) == (4, 4, 2, 4)
        assert view.bounds() == (0, 5)
    with psycopg.connect(pg_uri) as connection:
        (rows,) = connection.execute(
            "SELECT count(*) FROM ssm_archive WHERE user_id = %s AND idx IN (2, 4)", (store.user_id,)
        ).fetchone()
    assert rows == 0, "no row of the forgotten messages is left, vectors included"
    assert store.add([make_record(texts[2], tracking_id="f2")]) == [6], "a forgotten key is not live: new index"


def test_forget_by_text_finds_case_insensitive_substrings(make_archive):
    store = make_archive()
    store.add([make_record(t) for t in ["Call Émile at NOON", "nothing here", "émile again", "noon"]])
    assert store.find_text("ÉMILE") == [0, 2]
    assert store.find_text("call émile at noon") == [0]
    assert store.find_text("100% match") == []


FOLDING_TEXTS = ["Die Straße ist lang", "STRASSE gesperrt", "ΣΊΣΥΦΟΣ", "σίσυφος rolls", "the ﬁle is here", "nothing"]


@pytest.mark.parametrize("kind", ["in_memory", "pgvector"])
def test_forget_by_text_folds_case_like_str_casefold_on_every_store(kind, pg_uri, embedder):
    """forget(query=) matches the same messages in process and on PostgreSQL (``lower()`` did not fold
    ß to ss, final sigma to sigma, or the ﬁ ligature)."""
    store = PostgresArchive(pg_uri, new_user_id("fold")) if kind == "pgvector" else None
    memory = SemanticMemory(embedder=embedder, **({"archive": store} if store is not None else {}))
    try:
        memory.add([text_message("user", t) for t in FOLDING_TEXTS])
        for needle, expected in [("strasse", [0, 1]), ("Σίσυφος", [2, 3]), ("FILE", [4])]:
            assert [i for i, t in enumerate(FOLDING_TEXTS) if needle.casefold() in t.casefold()] == expected
            assert memory.archive.find_text(needle) == expected, needle
        assert memory.forget(query="STRASSE") == [0, 1]
        assert memory.forget(query="strasse") == []
        assert sorted(memory.indices) == [2, 3, 4, 5]
    finally:
        if store is not None:
            store.forget_all()


def test_eviction_and_limits_work_around_forgotten_holes(make_archive):
    store = make_archive()
    store.add([make_record(f"message {i}") for i in range(10)])
    store.forget([0, 3])
    assert store.evict_oldest(2) == [1, 2]
    assert store.enforce_limits(4, None) == [4, 5]
    assert store.bounds() == (6, 9) and len(store) == 4
    assert store.enforce_limits(None, 1) == [6, 7, 8], "the byte limit keeps the newest message whatever its size"
    stats = store.stats()
    assert (stats.evicted_count, stats.forgotten_count, stats.archived_total, len(store)) == (7, 2, 10, 1)
    assert store.evict_oldest(5) == [9] and store.bounds() is None and len(store) == 0


def test_threads_share_the_store_without_lost_or_duplicate_indices(make_archive, embedder):
    store = make_archive(pool_size=3)
    results, errors = [], []

    def work(worker):
        try:
            for batch in range(5):
                texts = [f"worker {worker} batch {batch} item {i}" for i in range(4)]
                results.extend(store.add([make_record(t) for t in texts]))
                store.candidates(None, f"worker {worker}", 0, 5)
        except Exception as error:  # collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == [] and sorted(results) == list(range(80))


def test_a_failed_vector_write_changes_nothing(make_archive, embedder):
    store = make_archive()
    store.add([make_record("one"), make_record("two")])
    store.set_vectors({0: embedder.embed_documents(["one"])})
    with pytest.raises(DimensionMismatchError):
        store.set_vectors({1: np.ones((1, 8), dtype=np.float32) / np.sqrt(8)})
    stats = store.stats()
    assert (stats.vector_count, stats.pending_count, stats.dimension) == (1, 1, 384)
