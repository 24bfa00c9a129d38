"""PostgresArchive against a real PostgreSQL + pgvector (started by the tests from the pgserver package).

Store-level tests drive the ArchiveStore protocol directly with records built the way the engine builds them
(``encode_message``, ``record_key``); engine-level tests go through SemanticMemory, the manager and the hook.
Tests that need the whole table to themselves (HNSW, migration) get a database of their own.
"""

import itertools
import json
import re
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector
from psycopg import pq

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    StateError,
    StoreError,
)
from strands_semantic_memory.messages._codec import encode_message, record_key, searchable_text
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION
from strands_semantic_memory.stores._protocol import ArchiveStore, NewRecord, SearchFilter
from strands_semantic_memory.stores.postgres import SCHEMA_VERSION, PostgresArchive
from strands_semantic_memory.stores.postgres._queries import LEXICAL, Plan, candidates_sql
from strands_semantic_memory.stores.postgres._text import (
    MAX_LEXEME_BYTES,
    query_lexemes,
    quoted,
    tsquery_literal,
    tsvector_literal,
)
from tests.support import REPO_ROOT
from tests.support.conversations import (
    PLANTED_TURN,
    REFERENCE,
    TOPIC_TURNS,
    distractor_conversation,
    make_agent,
    text_message,
)
from tests.support.scripted_model import ScriptedModel
from tests.support.stores import new_namespace

ROOT = REPO_ROOT

HOSTILE_TEXTS = {
    "nul": "before\x00after, a NUL in a tool result",
    "lone surrogate": "a lone \ud800 surrogate and a reversed pair \udc00\ud800",
    "long token": "token eyJ" + "A1b2C3d4" * 400 + " end",  # one 3,203-byte token: over the tsvector lexeme limit
    "5 MB": " ".join(f"word{i % 50_000} filler" for i in range(330_000)),  # over 5 MB of text
}


def make_record(text, *, role="user", tracking_id=None, said_at=None, archived_at=None, data=None, clean=True):
    """A NewRecord as the engine builds it (``clean=False`` passes the raw text, as a careless engine would)."""
    message = text_message(role, text)
    if tracking_id is not None:
        message["tracking_id"] = tracking_id
    data = encode_message(message) if data is None else data
    return NewRecord(
        data=data,
        role=role,
        tracking_id=tracking_id,
        text=searchable_text(text) if clean else text,
        key=record_key(tracking_id, data),
        archived_at=time.time() if archived_at is None else archived_at,
        said_at=said_at,
    )


@pytest.fixture
def make_store(pg_uri):
    """PostgresArchive factory (fresh namespace unless given); every store is closed afterwards."""
    stores = []

    def make(uri=None, namespace=None, **options):
        store = PostgresArchive(uri or pg_uri, namespace or new_namespace("store"), **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        store.close()


_databases = itertools.count()


@pytest.fixture
def fresh_database(pg_uri):
    """A database of its own (for tests that need the whole ssm_archive table), dropped afterwards."""
    name = f"ssm_test_{next(_databases)}_{time.time_ns()}"
    with psycopg.connect(pg_uri, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield psycopg.conninfo.make_conninfo(pg_uri, dbname=name)
    with psycopg.connect(pg_uri, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def hnsw_index_is_valid(uri):
    with psycopg.connect(uri) as connection:
        row = connection.execute(
            "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
            "WHERE c.relname = 'ssm_archive_hnsw_384'"
        ).fetchone()
    return row is not None and row[0]


def wait_for_index(store, uri, seconds=120.0):
    """Wait for the background HNSW build a search started to finish (True once the index is valid).

    The builder's ANALYZE must be over before the test's database is dropped with FORCE.
    """
    return store._builder.wait(seconds) and hnsw_index_is_valid(uri)


def embed(embedder, texts):
    return {i: vectors[None, :] for i, vectors in enumerate(embedder.embed_documents(texts))}


def pg_memory(pg_uri, embedder, namespace=None, **kwargs):
    return SemanticMemory(embedder=embedder, store=PostgresArchive(pg_uri, namespace or new_namespace()), **kwargs)


class RoundTrips:
    """Counts client/server round trips on one connection from libpq's protocol trace (a send followed by a read)."""

    def __init__(self, connection):
        self.connection = connection
        self.file = tempfile.TemporaryFile("w+")

    def __enter__(self):
        self.connection.pgconn.trace(self.file.fileno())
        self.connection.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        return self

    def __exit__(self, *exc):
        self.connection.pgconn.untrace()
        self.file.flush()
        self.file.seek(0)
        directions = [line.split("\t", 1)[0] for line in self.file.read().splitlines() if line[:1] in "FB"]
        self.count = sum(1 for a, b in itertools.pairwise(directions) if a == "F" and b == "B")
        self.file.close()


# ------------------------------------------------------------------ protocol basics


def test_the_store_satisfies_the_protocol_and_declares_its_capabilities():
    store = PostgresArchive("postgresql://nobody@127.0.0.1:9/none", new_namespace())
    assert isinstance(store, ArchiveStore), "no connection is attempted: properties are free of side effects"
    assert store.persistent and store.thread_safe and store.dimension is None
    with pytest.raises(ConfigurationError, match="lock_timeout"):
        PostgresArchive("postgresql://x", "ns", lock_timeout=0)
    with pytest.raises(ConfigurationError, match="pool_size"):
        PostgresArchive("postgresql://x", "ns", pool_size=0)


def test_hostile_texts_archive_and_come_back_byte_for_byte(make_store):
    """Issue 11 item 5: NUL, lone surrogates, tokens over 2,046 bytes and 5 MB messages all archive."""
    store = make_store()
    records = [make_record(text, tracking_id=f"t-{name}", clean=False) for name, text in HOSTILE_TEXTS.items()]
    raw = NewRecord(
        data=b'{"role":"user","content":[{"text":"\\u0000"}]}\xff\x00 not even UTF-8',
        role="user",
        tracking_id=None,
        text="raw bytes",
        key="u:raw",
        archived_at=1.0,
    )
    indices = store.add([*records, raw])
    assert indices == list(range(len(records) + 1))
    stored = store.get(indices)
    assert [stored[i].data for i in indices] == [r.data for r in [*records, raw]], "the bytes are never altered"
    assert len(stored[3].data) > 5_000_000
    # The searchable copies are usable: the long token matches itself, the NUL text is found, nothing waits wrongly.
    long_token = HOSTILE_TEXTS["long token"].split()[1]
    assert len(long_token.encode()) > MAX_LEXEME_BYTES
    assert list(store.candidates(None, long_token, 0, 5).lexical) == [2]
    assert store.find_text("BEFORE AFTER") == [0], "NUL became a space in the searchable text"
    assert store.find_text("lone \ufffd surrogate") == [1]
    pending = dict(store.pending(set()))
    assert set(pending) == set(indices) and "\x00" not in pending[0]


def test_tsvector_literals_respect_postgresql_limits():
    literal, terms = tsvector_literal(HOSTILE_TEXTS["5 MB"])
    assert len(literal.encode()) < 1_048_575 and terms == 50_001
    assert tsquery_literal("the of and") is None, "stopwords only: no lexical query"
    hashed = tsquery_literal("x" * 3000)
    assert hashed is not None and hashed.startswith("'#") and len(hashed) < 64


def test_add_is_idempotent_on_the_key_and_keeps_different_messages_with_one_tracking_id(make_store):
    """Issue 11 item 9, store side."""
    store = make_store()
    first = make_record("the first message", tracking_id="same-id")
    other = make_record("a different message reusing the id", tracking_id="same-id")
    assert store.add([first, other, first]) == [0, 1, 0], "a repeat inside one batch gets the first index"
    assert store.add([first, other]) == [0, 1], "a retried batch archives nothing again"
    untracked = make_record("ok")
    assert store.add([untracked, make_record("ok")]) == [2, 3], "without a tracking id, every message is new"
    assert len(store) == 4 and store.stats().archived_total == 4


def test_bulk_add_uses_copy_and_keeps_order_and_idempotency(make_store):
    """Issue 16 section 4: a large batch is one COPY per slice, in one transaction."""
    store = make_store()
    records = [make_record(f"bulk message {i} about topic {i % 13}", tracking_id=f"b{i}") for i in range(1200)]
    assert store.add(records) == list(range(1200))
    assert store.add(records[:300] + [make_record("one more", tracking_id="b-new")]) == [*range(300), 1200]
    got = store.get([0, 599, 1199])
    assert [got[i].data for i in (0, 599, 1199)] == [records[i].data for i in (0, 599, 1199)]
    assert store.stats().pending_count == 1201


def test_a_bulk_add_refreshes_the_planner_statistics(make_store, fresh_database):
    """Autovacuum analyzes after its nap; until then the planner took the table for empty and the vector writes
    after a bulk load scanned it whole (a 100k load: 64 s instead of 19 s). A large batch analyzes at once."""
    store = make_store(fresh_database)
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        store.add([make_record("seed the schema", tracking_id="seed")])
        (before,) = connection.execute("SELECT reltuples FROM pg_class WHERE relname = 'ssm_archive'").fetchone()
        store.add([make_record(f"bulk message {i}", tracking_id=f"s{i}") for i in range(1500)])
        (after,) = connection.execute("SELECT reltuples FROM pg_class WHERE relname = 'ssm_archive'").fetchone()
    assert before < 1 and after >= 1500


def test_the_full_text_index_keeps_a_short_pending_list_and_a_bulk_add_flushes_it(make_store, fresh_database):
    """Issue 16: every full-text search scans GIN's pending list linearly (4 MB by default: a lexical match at 100k
    took 46-73 ms instead of 18). The index is created with a 64 kB limit, an older index gets it when a store opens,
    and a bulk add leaves nothing pending."""
    store = make_store(fresh_database)
    store.add([make_record("seed the schema", tracking_id="seed")])
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        options = "SELECT reloptions FROM pg_class WHERE relname = 'ssm_archive_tsv'"
        assert connection.execute(options).fetchone()[0] == ["gin_pending_list_limit=64"]
        connection.execute("ALTER INDEX ssm_archive_tsv RESET (gin_pending_list_limit)")  # as created before
        store.add([make_record(f"bulk message {i} about kites and kestrels", tracking_id=f"b{i}") for i in range(1500)])
        (left,) = connection.execute("SELECT gin_clean_pending_list('ssm_archive_tsv'::regclass)").fetchone()
        assert left == 0, "the bulk add flushed the pending list"
        make_store(fresh_database).add([make_record("another namespace opens the database")])
        assert connection.execute(options).fetchone()[0] == ["gin_pending_list_limit=64"]
    assert len(store.candidates(None, "kestrels", 0, 2000).lexical) == 1500


def test_times_and_roles_are_stored_and_returned(make_store, pg_uri):
    store = make_store()
    store.add([make_record("said yesterday", role="assistant", archived_at=2000.5, said_at=1000.25)])
    store.add([make_record("no said time", archived_at=3000.0)])
    reopened = make_store(namespace=store.namespace)
    got = reopened.get([0, 1])
    assert (got[0].role, got[0].archived_at, got[0].said_at, got[0].time) == ("assistant", 2000.5, 1000.25, 1000.25)
    assert (got[1].said_at, got[1].time) == (None, 3000.0)


# ------------------------------------------------------------------ search


def test_search_filters_by_role_and_time_in_sql(make_store, embedder):
    """Issue 13 item 4: role and time filters apply to the dense and the lexical side, matching the oracle."""
    store = make_store()
    texts = [f"project update number {i}: the deployment went fine" for i in range(40)]
    records = [
        make_record(
            text,
            role="user" if i % 2 else "assistant",
            archived_at=10_000.0 + i,
            said_at=None if i % 3 == 0 else 100.0 * i,
        )
        for i, text in enumerate(texts)
    ]
    store.add(records)
    store.set_vectors(embed(embedder, texts))
    query = embedder.embed_queries(["project update deployment"])
    times = {i: r.archived_at if r.said_at is None else r.said_at for i, r in enumerate(records)}
    filters = [
        SearchFilter(roles=frozenset({"user"})),
        SearchFilter(since=1000.0, until=3000.0),
        SearchFilter(roles=frozenset({"assistant"}), since=10_010.0),
        SearchFilter(roles=frozenset({"tool"})),
    ]
    for search_filter in filters:
        expected = {i for i, r in enumerate(records) if search_filter.accepts(r.role, times[i])}
        found = store.candidates(query, "project deployment", 100, 100, search_filter)
        assert set(found.dense) == expected, search_filter
        assert set(found.lexical) == expected, search_filter
        assert set(found.similarity) == expected
    unfiltered = store.candidates(query, "project deployment", 5, 5, SearchFilter())
    assert len(unfiltered.dense) == 5 and len(unfiltered.lexical) == 5


def test_candidates_match_an_independent_numpy_search(make_store, embedder):
    store = make_store()
    messages = distractor_conversation(120)
    texts = [m["content"][0]["text"] for m in messages]
    store.add([make_record(t) for t in texts])
    vectors = embedder.embed_documents(texts)
    store.set_vectors(
        {i: np.vstack([v, v * 0 + 1 / np.sqrt(len(v))]) if i == 7 else v[None] for i, v in enumerate(vectors)}
    )
    query = embedder.embed_queries(["How long does the meeting take?"])
    found = store.candidates(query, "meeting Thursday", 10, 10)
    scores = vectors @ query[0]
    scores[7] = max(scores[7], float(np.full(384, 1 / np.sqrt(384)) @ query[0]))
    expected = np.argsort(-scores, kind="stable")[:10]
    assert list(found.dense) == [int(i) for i in expected], "exact search, best chunk per message, best first"
    assert np.allclose([found.dense[int(i)] for i in expected], scores[expected], atol=1e-5)
    assert set(found.similarity) == set(found.dense) | set(found.lexical)
    for index, similarity in found.similarity.items():
        assert similarity == pytest.approx(float(scores[index]), abs=1e-5)
    assert all("meeting" in texts[i].lower() or "thursday" in texts[i].lower() for i in found.lexical)
    assert store.similarities(query, [3, 7, 999]) == pytest.approx({3: float(scores[3]), 7: float(scores[7])}, abs=1e-5)


def lexical_side(uri, namespace, query, lexical_k, budget):
    """The store's lexical candidates for ``query`` with a given scan budget (the statement, run directly)."""
    lexemes = query_lexemes(query)
    params = {"ns": namespace, "tsq": tsquery_literal(query), "terms": lexemes, "budget": budget}
    params.update(literals=[quoted(t) for t in lexemes], lexical_k=lexical_k, dense_k=0)
    with psycopg.connect(uri, autocommit=True) as connection:
        rows = connection.execute(candidates_sql(Plan(False, True, False, None, None)), params).fetchall()
    return {int(i): s for kind, i, s in rows if kind == LEXICAL}


def test_frequent_terms_are_ranked_only_when_the_selective_ones_match_too_few(make_store, fresh_database):
    """Issue 16: over the scan budget, messages matching only the query's frequent terms are not ranked (unless
    needed to fill the list); the scores of those ranked are the whole query's."""
    store = make_store(fresh_database)
    texts = [f"the weather report number {i}" for i in range(400)]  # "weather" and "report": frequent
    texts[50] = "the weather report mentions the lighthouse keeper"
    texts[120] = "a lighthouse keeper wrote the weather report, the weather report again"
    texts[300] = "lighthouse only"
    store.add([make_record(t) for t in texts])
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        connection.execute("ANALYZE ssm_archive")  # the term frequencies come from the column's statistics
    query = "weather report from the lighthouse"
    everything = lexical_side(fresh_database, store.namespace, query, 10, budget=10**9)
    assert len(everything) == 10 and 300 not in everything, "ranking every match: common words repeated win"
    pruned = lexical_side(fresh_database, store.namespace, query, 3, budget=50)
    assert sorted(pruned) == [50, 120, 300], "only the messages that mention the rare term were ranked"
    for index in set(pruned) & set(everything):
        assert pruned[index] == pytest.approx(everything[index]), "scores are the whole query's"
    filled = lexical_side(fresh_database, store.namespace, query, 10, budget=50)
    assert {50, 120, 300} < set(filled) and len(filled) == 10, "frequent-only matches fill a short list"
    assert store.candidates(None, query, 0, 10).lexical == everything, "below the real budget: unchanged"


def test_hnsw_path_is_used_above_the_threshold_and_agrees_with_exact_search(make_store, fresh_database, embedder):
    """Issue 15: PostgreSQL's HNSW path, against the exact scan on the same data."""
    messages = distractor_conversation(400)
    messages.insert(250, text_message("user", PLANTED_TURN))
    texts = [m["content"][0]["text"] for m in messages]
    roles = [m["role"] for m in messages]
    store = make_store(fresh_database, exact_search_below=300)
    vectors = embed(embedder, texts)
    store.add([make_record(t, role=r) for t, r in list(zip(texts, roles, strict=True))[:200]])
    store.set_vectors({i: v for i, v in vectors.items() if i < 200})
    assert not hnsw_index_is_valid(fresh_database), "below the threshold no index is kept up to date row by row"
    store.add([make_record(t, role=r) for t, r in list(zip(texts, roles, strict=True))[200:]])
    store.set_vectors({i: v for i, v in vectors.items() if i >= 200})
    assert not hnsw_index_is_valid(fresh_database), "a bulk load crossing the threshold does not build it half-way"
    first = store.candidates(embedder.embed_queries(["When is the meeting?"]), "meeting", 10, 10)
    assert len(first.dense) == 10, "searches are exact while the index is built"
    assert wait_for_index(store, fresh_database), "the first search over the threshold builds it, in one pass"
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        register_vector(connection)
        query = embedder.embed_queries(["What was my booking reference?"])
        params = {"ns": store.namespace, "q": query[0], "tsq": None, "dense_k": 10, "lexical_k": 0, "fetch": 40}
        sql = candidates_sql(Plan(True, False, True, 384, None))
        plan = "\n".join(row[0] for row in connection.execute("EXPLAIN " + sql, params).fetchall())
        assert "ssm_archive_hnsw_384" in plan, plan
    exact = make_store(fresh_database, namespace=store.namespace, exact_search_below=10**9)
    for question in ["What was my booking reference?", "When is the meeting?", "What did Alice review?"]:
        query = embedder.embed_queries([question])
        approximate = store.candidates(query, question, 10, 10)
        truth = exact.candidates(query, question, 10, 10)
        assert len(set(approximate.dense) & set(truth.dense)) >= 9, question
        assert approximate.lexical == truth.lexical
        for index in set(approximate.similarity) & set(truth.similarity):
            assert approximate.similarity[index] == pytest.approx(truth.similarity[index], abs=1e-5)
    hit = store.candidates(embedder.embed_queries(["What was my booking reference?"]), "", 1, 0)
    assert list(hit.dense) == [250]
    traced = psycopg.connect(fresh_database, autocommit=True, prepare_threshold=0)
    same = make_store(fresh_database, namespace=store.namespace, exact_search_below=300, connection=traced)
    same.candidates(query, "meeting", 10, 10)
    with RoundTrips(traced) as trips:
        assert same.candidates(query, "meeting", 10, 10).dense == approximate_for(store, query)
    assert trips.count == 1, "hnsw.ef_search is sent again only when a search needs another value"
    users = store.candidates(query, "", 20, 0, SearchFilter(roles=frozenset({"user"})))
    assert len(users.dense) == 20 and all(roles[i] == "user" for i in users.dense)


def test_build_index_after_a_bulk_load_builds_it_once_and_waits(make_store, fresh_database, embedder):
    """After a bulk load the caller can build the HNSW index at once instead of at the first search."""
    messages = distractor_conversation(120)
    texts = [m["content"][0]["text"] for m in messages]
    store = make_store(fresh_database, exact_search_below=100)
    store.add([make_record(t, role=m["role"]) for t, m in zip(texts[:60], messages[:60], strict=True)])
    store.set_vectors({i: v for i, v in embed(embedder, texts[:60]).items()})
    assert store.build_index() is False, "under the threshold there is nothing to build"
    assert not hnsw_index_is_valid(fresh_database)
    store.add([make_record(t, role=m["role"]) for t, m in zip(texts[60:], messages[60:], strict=True)])
    store.set_vectors({i + 60: v for i, v in embed(embedder, texts[60:]).items()})
    assert store.build_index() is True
    assert hnsw_index_is_valid(fresh_database), "built and valid when build_index returns"
    assert store.build_index() is True, "a second call finds it built"


def test_the_default_threshold_builds_the_hnsw_index_at_8000_messages(make_store, fresh_database):
    """Issue 16: HNSW from 8,000 messages by default (at 10k the exact scan took 31-38 ms against 13-16 ms)."""
    store = make_store(fresh_database)
    assert store.exact_search_below == 8000
    vectors = np.random.default_rng(4).standard_normal((8000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"synthetic note {i}" for i in range(8000)]
    store.add([make_record(t) for t in texts[:7999]])
    store.set_vectors({i: vectors[i][None, :] for i in range(7999)})
    assert store.build_index() is False, "below the default threshold the search stays exact"
    store.add([make_record(texts[7999])])
    store.set_vectors({7999: vectors[7999][None, :]})
    assert store.build_index() is True
    assert hnsw_index_is_valid(fresh_database)
    for i in (0, 4321, 7999):
        found = store.candidates(vectors[i][None, :], "", 5, 0)
        assert next(iter(found.dense)) == i and found.dense[i] == pytest.approx(1.0, abs=1e-5)


def approximate_for(store, query):
    return store.candidates(query, "meeting", 10, 10).dense


def test_a_small_namespace_in_a_shared_hnsw_table_falls_back_to_exact_results(make_store, fresh_database, embedder):
    """pgvector filters by namespace after the HNSW scan: a small namespace must still get its true neighbours."""
    big_texts = [m["content"][0]["text"] for m in distractor_conversation(400, seed=3)]
    big = make_store(fresh_database, exact_search_below=100)
    big.add([make_record(t) for t in big_texts])
    big.set_vectors(embed(embedder, big_texts))
    big.candidates(embedder.embed_queries(["anything"]), "", 5, 0)
    assert wait_for_index(big, fresh_database)
    small_texts = [f"note {i}: {t}" for i, t in enumerate(TOPIC_TURNS)]
    small = make_store(fresh_database, exact_search_below=0)
    small.add([make_record(t) for t in small_texts])
    small.set_vectors(embed(embedder, small_texts))
    query = embedder.embed_queries(["shortest paths in graphs"])
    found = small.candidates(query, "", 5, 0)
    truth = make_store(fresh_database, namespace=small.namespace, exact_search_below=10**9).candidates(query, "", 5, 0)
    assert found.dense == pytest.approx(truth.dense, abs=1e-5) and len(found.dense) == 5


def unit_rows(count, seed, towards=None):
    vectors = np.random.default_rng(seed).standard_normal((count, 384)).astype(np.float32)
    if towards is not None:
        vectors += towards * 40
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_namespace_whose_rows_the_shared_index_does_not_reach_gets_exact_results(make_store, fresh_database):
    """pgvector removes other namespaces' rows after the HNSW scan: when they take every place the scan has, the
    search must look further and fall back to the exact scan (it returned an empty dense list: the rows left after
    the filter were fewer than those fetched, which was taken for "no more")."""
    axis = np.zeros(384, dtype=np.float32)
    axis[0] = 1.0
    other = make_store(fresh_database, exact_search_below=100)
    other.add([make_record(f"other tenant {i}") for i in range(3000)])
    other.set_vectors({i: v[None, :] for i, v in enumerate(unit_rows(3000, 1, towards=axis))})
    ours = make_store(fresh_database, exact_search_below=100)
    ours.add([make_record(f"own note {i}") for i in range(3000)])
    ours.set_vectors({i: v[None, :] for i, v in enumerate(unit_rows(3000, 2, towards=-axis))})
    assert ours.build_index() is True
    exact = make_store(fresh_database, namespace=ours.namespace, exact_search_below=10**9)
    for query in unit_rows(3, 3, towards=axis)[:, None, :]:  # near the other tenant's rows, far from ours
        found = ours.candidates(query, "", 50, 0)
        assert len(found.dense) == 50 and found.dense == pytest.approx(exact.candidates(query, "", 50, 0).dense)


def test_a_search_is_one_round_trip_and_a_hook_turn_two(pg_uri, make_store, embedder):
    """Issue 16 section 4: candidates in one statement, windows in another, has_pending from the last report."""
    connection = psycopg.connect(pg_uri, autocommit=True, prepare_threshold=0)  # as the pool's connections are
    store = make_store(connection=connection)
    texts = [m["content"][0]["text"] for m in distractor_conversation(60)]
    store.add([make_record(t) for t in texts])
    store.set_vectors(embed(embedder, texts))
    query = embedder.embed_queries(["When is the meeting?"])
    with RoundTrips(connection) as first:
        store.candidates(query, "meeting", 10, 10)
    with RoundTrips(connection) as search:
        found = store.candidates(query, "meeting Thursday", 15, 15)
    assert len(found.dense) == 15 and found.lexical

    def hook_turn():
        assert not store.has_pending()
        found = store.candidates(query, "meeting Thursday", 15, 15, SearchFilter(roles=frozenset({"user"})))
        store.get(sorted({j for i in found.dense for j in range(i - 2, i + 3)}))

    hook_turn()  # each statement's first use on a connection prepares it
    with RoundTrips(connection) as turn:
        hook_turn()
    with RoundTrips(connection) as write:
        store.add([make_record("one more message", tracking_id="rt")])
    assert (search.count, turn.count, write.count) == (1, 2, 2)
    assert first.count <= 2, "a statement's first use on a connection may add one round trip to prepare it"


class UnservedContext:
    """A store that leaves the ``context`` request unanswered (as the protocol allows): the engine reads the
    neighbours separately."""

    def __init__(self, store):
        self._store = store

    def __len__(self):
        return len(self._store)

    def candidates(self, vector, query, dense_k, lexical_k, search_filter=None, *, context=None):
        return self._store.candidates(vector, query, dense_k, lexical_k, search_filter)

    def __getattr__(self, name):
        return getattr(self._store, name)


@pytest.mark.parametrize("roles", [None, ["user"]])
@pytest.mark.parametrize("retrieval", ["hybrid", "dense", "lexical"])
def test_an_engine_hook_turn_is_two_round_trips_with_unchanged_results(pg_uri, make_store, embedder, retrieval, roles):
    """Issue 15: the neighbours the ranking scores come with the candidates; then one read for the windows."""
    connection = psycopg.connect(pg_uri, autocommit=True, prepare_threshold=0)  # as the pool's connections are
    store = make_store(connection=connection)
    options = {"retrieval": retrieval, "top_k": 3, "ranking": {"min_depth": 20}}  # fewer candidates than messages
    memory = SemanticMemory(embedder=embedder, store=store, context_radius=1, **options)
    memory.archive(distractor_conversation(80))
    memory.embed_pending()
    unserved = SemanticMemory(embedder=embedder, store=UnservedContext(store), **options)
    for warming in (memory, unserved):
        warming.retrieve("warm up: prepare the statements for solar panels", roles=roles, context_radius=1)
    for question in ("How much did the sourdough cost?", "Who reviews the job interview?", "the hiking trip plan"):
        with RoundTrips(connection) as turn:
            windows = memory.retrieve(question, roles=roles)
        assert windows, question
        assert turn.count == 2, (question, turn.count)
        with RoundTrips(connection) as old:
            same = unserved.retrieve(question, roles=roles, context_radius=1)
        assert [(w.start, w.end, w.hit_indices, w.hit_scores) for w in windows] == [
            (w.start, w.end, w.hit_indices, w.hit_scores) for w in same
        ]
        if retrieval != "lexical":  # (a lexical turn may find every window record among the neighbours read)
            assert old.count >= 3, "without the context answered the neighbours cost a round trip of their own"


def test_has_pending_reports_other_writers_within_the_check_interval(make_store):
    reader = make_store(pending_check_interval=0)
    writer = make_store(namespace=reader.namespace)
    assert not reader.has_pending()
    writer.add([make_record("waiting for vectors")])
    assert reader.has_pending(), "interval 0: every call asks the database"


# ------------------------------------------------------------------ forgetting and removal


def test_forget_deletes_every_row_for_good_also_after_reopening(make_store, embedder, pg_uri):
    """Issue 13: forget(indices) deletes the message, its text, lexical entry and vectors."""
    store = make_store()
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
    for view in (store, make_store(namespace=store.namespace)):
        found = view.candidates(query, f"secret booking reference {REFERENCE}", 10, 10)
        assert not {2, 4} & (set(found.dense) | set(found.lexical) | set(found.similarity))
        assert view.get([2, 4]) == {} and view.similarities(query, [2, 4]) == {}
        assert view.find_text("secret") == [] and view.find_text(REFERENCE) == []
        stats = view.stats()
        assert (len(view), stats.message_count, stats.forgotten_count, stats.vector_count) == (4, 4, 2, 4)
        assert view.bounds() == (0, 5)
    with psycopg.connect(pg_uri) as connection:
        (rows,) = connection.execute(
            "SELECT count(*) FROM ssm_archive WHERE namespace = %s AND idx IN (2, 4)", (store.namespace,)
        ).fetchone()
    assert rows == 0, "no row of the forgotten messages is left, vectors included"
    assert store.add([make_record(texts[2], tracking_id="f2")]) == [6], "a forgotten key is not live: new index"


def test_forget_by_text_finds_case_insensitive_substrings(make_store):
    store = make_store()
    store.add([make_record(t) for t in ["Call Émile at NOON", "nothing here", "émile again", "noon"]])
    assert store.find_text("ÉMILE") == [0, 2]
    assert store.find_text("call émile at noon") == [0]
    assert store.find_text("100% match") == []


FOLDING_TEXTS = ["Die Straße ist lang", "STRASSE gesperrt", "ΣΊΣΥΦΟΣ", "σίσυφος rolls", "the ﬁle is here", "nothing"]


@pytest.mark.parametrize("kind", ["in_memory", "pgvector"])
def test_forget_by_text_folds_case_like_str_casefold_on_every_store(kind, pg_uri, embedder):
    """Issue 16: forget(query=) matches the same messages in process and on PostgreSQL (``lower()`` did not fold
    ß to ss, final sigma to sigma, or the ﬁ ligature)."""
    store = PostgresArchive(pg_uri, new_namespace("fold")) if kind == "pgvector" else None
    memory = SemanticMemory(embedder=embedder, **({"store": store} if store is not None else {}))
    try:
        memory.archive([text_message("user", t) for t in FOLDING_TEXTS])
        for needle, expected in [("strasse", [0, 1]), ("Σίσυφος", [2, 3]), ("FILE", [4])]:
            assert [i for i, t in enumerate(FOLDING_TEXTS) if needle.casefold() in t.casefold()] == expected
            assert memory.archive_store.find_text(needle) == expected, needle
        assert memory.forget(query="STRASSE") == [0, 1]
        assert memory.forget(query="strasse") == []
        assert sorted(memory.indices) == [2, 3, 4, 5]
    finally:
        if store is not None:
            store.drop_namespace()


def test_eviction_and_limits_work_around_forgotten_holes(make_store):
    store = make_store()
    store.add([make_record(f"message {i}") for i in range(10)])
    store.forget([0, 3])
    assert store.evict_oldest(2) == [1, 2]
    assert store.enforce_limits(4, None) == [4, 5]
    assert store.bounds() == (6, 9) and len(store) == 4
    assert store.enforce_limits(None, 1) == [6, 7, 8], "the byte limit keeps the newest message whatever its size"
    stats = store.stats()
    assert (stats.evicted_count, stats.forgotten_count, stats.archived_total, len(store)) == (7, 2, 10, 1)
    assert store.evict_oldest(5) == [9] and store.bounds() is None and len(store) == 0


# ------------------------------------------------------------------ bounded waits, threads, atomicity


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


def test_a_blocked_writer_fails_after_lock_timeout_while_a_search_returns(make_store, pg_uri):
    """Issue 11 item 12: a writer waits at most lock_timeout, commits nothing, and never blocks searches."""
    store = make_store(lock_timeout=4.0)
    store.add([make_record("first message about the harbour")])
    blocker = psycopg.connect(pg_uri)
    blocker.execute("SELECT 1 FROM ssm_namespaces WHERE namespace = %s FOR UPDATE", (store.namespace,))
    outcome = {}

    def write():
        try:
            outcome["indices"] = store.add([make_record("blocked message")])
        except StoreError as error:
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


def test_reads_are_bounded_too_and_timeouts_are_set_on_every_connection(make_store, pg_uri):
    connection = psycopg.connect(pg_uri, autocommit=True)
    store = make_store(connection=connection, lock_timeout=0.3, statement_timeout=7.5)
    assert not store.thread_safe, "a single given connection serializes calls"
    store.add([make_record("x")])
    assert connection.execute("SHOW lock_timeout").fetchone() == ("300ms",)
    assert connection.execute("SHOW statement_timeout").fetchone() == ("7500ms",)
    pooled = make_store(namespace=store.namespace, lock_timeout=0.3)
    with psycopg.connect(pg_uri) as blocker:
        blocker.execute("LOCK TABLE ssm_archive IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(StoreError, match="lock_timeout"):
            pooled.candidates(None, "x", 0, 5)
        blocker.rollback()
    assert list(pooled.candidates(None, "x", 0, 5).lexical) == [0]


def test_threads_share_the_store_without_lost_or_duplicate_indices(make_store, embedder):
    store = make_store(pool_size=3)
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


def test_a_failed_vector_write_changes_nothing(make_store, embedder):
    store = make_store()
    store.add([make_record("one"), make_record("two")])
    store.set_vectors({0: embedder.embed_documents(["one"])})
    with pytest.raises(DimensionMismatchError):
        store.set_vectors({1: np.ones((1, 8), dtype=np.float32) / np.sqrt(8)})
    stats = store.stats()
    assert (stats.vector_count, stats.pending_count, stats.dimension) == (1, 1, 384)


def test_load_state_validates_everything_before_it_drops_vectors(make_store, embedder):
    """Issue 11 item 10 and issue 15 (reembed=True on PostgreSQL)."""
    store = make_store()
    texts = ["the harbour opens at dawn", "the market closes at noon"]
    store.add([make_record(t) for t in texts])
    store.set_vectors(embed(embedder, texts))
    state = store.export_state("model-a")
    assert state["store"] == {"kind": "pgvector", "namespace": store.namespace, "schema_version": SCHEMA_VERSION}
    bad = [
        {**state, "store": {**state["store"], "schema_version": SCHEMA_VERSION + 1}},
        {**state, "store": {**state["store"], "namespace": "another"}},
        {**state, "store": {**state["store"], "schema_version": "2"}},
        {"records": []},
    ]
    for invalid in bad:
        with pytest.raises(StateError):
            store.load_state(invalid, reembed=True)
        assert store.stats().vector_count == 2, "nothing changed"
    store.load_state(state, reembed=False)
    assert store.stats().vector_count == 2
    store.load_state(state, reembed=True)
    stats = store.stats()
    assert (stats.vector_count, stats.pending_count, stats.dimension, store.dimension) == (0, 2, None, None)
    assert store.has_pending() and [i for i, _ in store.pending(set())] == [0, 1]
    store.set_vectors(embed(embedder, [text for _, text in store.pending(set())]))
    found = store.candidates(embedder.embed_queries(["when does the market close?"]), "", 1, 0)
    assert list(found.dense) == [1]


def test_a_namespace_bound_to_another_model_is_refused(make_store):
    store = make_store()
    store.bind("model-a")
    store.add([make_record("x")])
    other = make_store(namespace=store.namespace)
    other.bind("model-b")
    with pytest.raises(EmbeddingModelMismatchError):
        len(other)
    with pytest.raises(EmbeddingModelMismatchError):
        store.bind("model-b")
    store.bind("model-a")


# ------------------------------------------------------------------ schema and migration

V1_SCHEMA = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE ssm_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE ssm_namespaces (namespace text PRIMARY KEY, model_id text, dimension integer,
    next_index bigint NOT NULL DEFAULT 0, evicted_count bigint NOT NULL DEFAULT 0);
CREATE TABLE ssm_archive (namespace text NOT NULL, idx bigint NOT NULL, chunk integer NOT NULL, data text,
    role text, tracking_id text, body text, tsv tsvector, pending boolean NOT NULL DEFAULT false,
    nbytes bigint NOT NULL DEFAULT 0, lexical_terms integer NOT NULL DEFAULT 0, dimension integer, embedding vector,
    PRIMARY KEY (namespace, idx, chunk));
CREATE UNIQUE INDEX ssm_archive_tracking ON ssm_archive (namespace, tracking_id)
    WHERE tracking_id IS NOT NULL AND chunk = 0;
CREATE INDEX ssm_archive_pending ON ssm_archive (namespace, idx) WHERE pending;
CREATE INDEX ssm_archive_tsv ON ssm_archive USING gin (tsv);
CREATE INDEX ssm_archive_hnsw_384 ON ssm_archive USING hnsw ((embedding::vector(384)) vector_ip_ops)
    WHERE dimension = 384;
INSERT INTO ssm_meta VALUES ('schema_version', '1');
"""


def unstemmed_tsvector(text):
    """Terms as version 1 of the tokenizer wrote them (lowercase words, no stemming)."""
    return " ".join(f"'{word}':{n}" for n, word in enumerate(re.findall(r"\w+", text.lower()), 1))


def test_a_schema_1_database_is_migrated_in_place(make_store, fresh_database, embedder):
    """Schema version 1 (text data, unique tracking ids, no times, unstemmed terms) gains bytea data, keys, times,
    counters, and terms of the current tokenizer."""
    messages = [text_message("user", PLANTED_TURN), text_message("assistant", "Noted."), text_message("user", "Bye")]
    for i, message in enumerate(messages[:2]):
        message["tracking_id"] = f"v1-{i}"
    vectors = embedder.embed_documents([m["content"][0]["text"] for m in messages])
    with psycopg.connect(fresh_database) as connection:
        connection.execute(V1_SCHEMA)
        register_vector(connection)
        connection.execute("INSERT INTO ssm_namespaces VALUES ('legacy', %s, 384, 3, 0)", (embedder.model_id,))
        for i, message in enumerate(messages):
            text = message["content"][0]["text"]
            connection.execute(
                "INSERT INTO ssm_archive (namespace, idx, chunk, data, role, tracking_id, body, tsv, nbytes, "
                "lexical_terms, dimension, embedding) VALUES ('legacy', %s, 0, %s, %s, %s, %s, %s::tsvector, 500, 3, "
                "384, %s)",
                (
                    i,
                    encode_message(message).decode(),
                    message["role"],
                    message.get("tracking_id"),
                    text,
                    unstemmed_tsvector(text),
                    vectors[i],
                ),
            )
        connection.execute(
            "INSERT INTO ssm_archive (namespace, idx, chunk, dimension, embedding) VALUES ('legacy', 0, 1, 384, %s)",
            (vectors[2],),
        )
    before = time.time()
    store = make_store(fresh_database, namespace="legacy")
    store.bind(embedder.model_id)
    assert len(store) == 3
    got = store.get([0, 1, 2])
    assert [got[i].data for i in range(3)] == [encode_message(m) for m in messages]
    assert all(before - 1 <= got[i].archived_at <= time.time() + 1 and got[i].said_at is None for i in range(3))
    with psycopg.connect(fresh_database) as connection:
        assert dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall()) == {
            "schema_version": str(SCHEMA_VERSION),
            "tokenizer_version": str(TOKENIZER_VERSION),
        }
        assert connection.execute("SELECT to_regclass('ssm_archive_tracking')").fetchone() == (None,)
        assert connection.execute(
            "SELECT role FROM ssm_archive WHERE namespace = 'legacy' AND chunk = 1"
        ).fetchone() == ("user",), "chunk rows carry the role, for filters"
    assert store.add([make_record(PLANTED_TURN, tracking_id="v1-0")]) == [0], "a v1 message is recognised"
    assert store.add([make_record("A new text, an old id", tracking_id="v1-0")]) == [3], "same id, other message"
    query = embedder.embed_queries(["What was my booking reference?"])
    found = store.candidates(query, "booking reference", 3, 3, SearchFilter(roles=frozenset({"user"})))
    assert next(iter(found.dense)) == 0 and next(iter(found.lexical)) == 0
    assert store.stats().forgotten_count == 0 and store.forget([1]) == [1]


def test_schema_is_created_once_and_versioned(make_store, fresh_database):
    first = make_store(fresh_database)
    second = make_store(fresh_database)
    assert len(first) == 0 and len(second) == 0
    with psycopg.connect(fresh_database) as connection:
        assert connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone() == (
            str(SCHEMA_VERSION),
        )
        (storage,) = connection.execute(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'ssm_archive'::regclass AND attname = 'embedding'"
        ).fetchone()
        assert storage == "m", "vectors stay in the row: exact scans read no TOAST"
        connection.execute("UPDATE ssm_meta SET value = '99'")
    with pytest.raises(StoreError, match="newer than this library"):
        len(make_store(fresh_database))


# ------------------------------------------------------------------ through the engine, the manager and the hook


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


def test_engine_archives_hostile_messages_and_forgets_them_for_good(pg_uri, embedder):
    namespace = new_namespace("engine")
    memory = pg_memory(pg_uri, embedder, namespace)
    hostile = [text_message("user", text) for text in HOSTILE_TEXTS.values() if len(text) < 10_000]
    twins = [
        dict(text_message("user", "first twin"), tracking_id="twin"),
        dict(text_message("user", "second"), tracking_id="twin"),
    ]
    indices = memory.archive([*hostile, *twins, text_message("user", PLANTED_TURN)])
    assert indices == list(range(len(hostile) + 3)), "two messages with one tracking id are both archived"
    assert memory.archive(twins) == indices[-3:-1], "archiving them again is a no-op"
    assert [m for _, m in memory.messages()][: len(hostile)] == hostile
    assert memory.forget(query=REFERENCE) == [indices[-1]]
    reopened = pg_memory(pg_uri, embedder, namespace)
    assert all(REFERENCE not in json.dumps(h.message) for h in reopened.search("booking reference", top_k=20))
    assert [m for _, m in reopened.messages()][: len(hostile)] == hostile


class RenamedModel:
    """The real bundled model under another model id: what a namespace sees when its embedding model changes."""

    def __init__(self, inner):
        self.inner = inner
        self.model_id = "renamed/" + inner.model_id
        self.dimension = inner.dimension

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)


def test_restoring_with_another_model_and_reembed_rebinds_the_namespace(pg_uri, embedder):
    """Issue 15: reembed=True on PostgreSQL drops the old vectors, embeds again and binds the new model."""
    namespace = new_namespace("reembed")
    old = pg_memory(pg_uri, embedder, namespace)
    old.archive([text_message("user", PLANTED_TURN), *distractor_conversation(20)])
    state = old.to_state()
    renamed = RenamedModel(embedder)
    new = SemanticMemory(embedder=renamed, store=PostgresArchive(pg_uri, namespace))
    with pytest.raises(EmbeddingModelMismatchError):
        new.load_state(state)
    new.load_state(state, reembed=True)
    stats = new.get_memory_usage_stats()
    assert stats["pending_embedding_count"] == 0 and len(new) == 21
    assert new.search("What was my booking reference?", top_k=1)[0].index == 0
    with pytest.raises(EmbeddingModelMismatchError):
        pg_memory(pg_uri, embedder, namespace).search("x")


def run_python(script: str, timeout: int = 300) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


WRITER = """
import json, sys
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.stores.postgres import PostgresArchive
uri, namespace, worker = sys.argv[1], sys.argv[2], sys.argv[3]
memory = SemanticMemory(store=PostgresArchive(uri, namespace))
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
        from strands_semantic_memory.stores.postgres import PostgresArchive
        memory = SemanticMemory(store=PostgresArchive({pg_uri!r}, {namespace!r}))
        hit = memory.search("What was my booking reference?", top_k=1)[0]
        print(json.dumps({{"count": len(memory), "index": hit.index, "text": hit.message["content"][0]["text"]}}))
    """)
    answer = json.loads(output.strip().splitlines()[-1])
    assert answer == {"count": 201, "index": 120, "text": PLANTED_TURN}


def test_manager_state_only_references_the_namespace_and_a_new_worker_picks_it_up(pg_uri, embedder, tmp_path):
    from strands.session import FileSessionManager

    namespace = new_namespace("session")
    manager = SemanticSummarizingConversationManager(
        embedder=embedder, store=PostgresArchive(pg_uri, namespace), preserve_recent_messages=4
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
        embedder=embedder, store=PostgresArchive(pg_uri, namespace), preserve_recent_messages=4
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
            embedding_model="bedrock:amazon.titan-embed-text-v2:0", store=PostgresArchive(pg_uri, namespace)
        ).search("x")


def unreachable_store() -> PostgresArchive:
    return PostgresArchive("postgresql://nobody@127.0.0.1:9/none", new_namespace("down"), connect_timeout=2)


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
    store = PostgresArchive(pg_uri, new_namespace("search-down"))
    memory = SemanticMemory(embedder=embedder, store=store)
    memory.archive([text_message("user", PLANTED_TURN)])
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
