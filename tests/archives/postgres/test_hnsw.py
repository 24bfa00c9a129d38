"""The HNSW path: built when a search first needs it, agreeing with exact search, exact where it cannot reach."""

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from strands_semantic_memory.archives._protocol import SearchFilter
from strands_semantic_memory.archives.postgres._queries import Plan, candidates_sql
from tests.support.conversations import PLANTED_TURN, TOPIC_TURNS, distractor_conversation, text_message
from tests.support.postgres import RoundTrips, embed, make_record


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


def test_hnsw_path_is_used_above_the_threshold_and_agrees_with_exact_search(make_archive, fresh_database, embedder):
    """PostgreSQL's HNSW path, against the exact scan on the same data."""
    messages = distractor_conversation(400)
    messages.insert(250, text_message("user", PLANTED_TURN))
    texts = [m["content"][0]["text"] for m in messages]
    roles = [m["role"] for m in messages]
    store = make_archive(fresh_database, exact_search_below=300)
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
        params = {"user": store.user_id, "q": query[0], "tsq": None, "dense_k": 10, "lexical_k": 0, "fetch": 40}
        sql = candidates_sql(Plan(True, False, True, 384, None))
        plan = "\n".join(row[0] for row in connection.execute("EXPLAIN " + sql, params).fetchall())
        assert "ssm_archive_hnsw_384" in plan, plan
    exact = make_archive(fresh_database, user_id=store.user_id, exact_search_below=10**9)
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
    same = make_archive(fresh_database, user_id=store.user_id, exact_search_below=300, connection=traced)
    same.candidates(query, "meeting", 10, 10)
    with RoundTrips(traced) as trips:
        assert same.candidates(query, "meeting", 10, 10).dense == approximate_for(store, query)
    assert trips.count == 1, "hnsw.ef_search is sent again only when a search needs another value"
    users = store.candidates(query, "", 20, 0, SearchFilter(roles=frozenset({"user"})))
    assert len(users.dense) == 20 and all(roles[i] == "user" for i in users.dense)


def test_build_index_after_a_bulk_load_builds_it_once_and_waits(make_archive, fresh_database, embedder):
    """After a bulk load the caller can build the HNSW index at once instead of at the first search."""
    messages = distractor_conversation(120)
    texts = [m["content"][0]["text"] for m in messages]
    store = make_archive(fresh_database, exact_search_below=100)
    store.add([make_record(t, role=m["role"]) for t, m in zip(texts[:60], messages[:60], strict=True)])
    store.set_vectors({i: v for i, v in embed(embedder, texts[:60]).items()})
    assert store.build_index() is False, "under the threshold there is nothing to build"
    assert not hnsw_index_is_valid(fresh_database)
    store.add([make_record(t, role=m["role"]) for t, m in zip(texts[60:], messages[60:], strict=True)])
    store.set_vectors({i + 60: v for i, v in embed(embedder, texts[60:]).items()})
    assert store.build_index() is True
    assert hnsw_index_is_valid(fresh_database), "built and valid when build_index returns"
    assert store.build_index() is True, "a second call finds it built"


def test_the_default_threshold_builds_the_hnsw_index_at_8000_messages(make_archive, fresh_database):
    """HNSW from 8,000 messages by default (at 10k the exact scan took 31-38 ms against 13-16 ms)."""
    store = make_archive(fresh_database)
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


def test_a_small_user_in_a_shared_hnsw_table_falls_back_to_exact_results(make_archive, fresh_database, embedder):
    """pgvector filters by user_id after the HNSW scan: a small user_id must still get its true neighbours."""
    big_texts = [m["content"][0]["text"] for m in distractor_conversation(400, seed=3)]
    big = make_archive(fresh_database, exact_search_below=100)
    big.add([make_record(t) for t in big_texts])
    big.set_vectors(embed(embedder, big_texts))
    big.candidates(embedder.embed_queries(["anything"]), "", 5, 0)
    assert wait_for_index(big, fresh_database)
    small_texts = [f"note {i}: {t}" for i, t in enumerate(TOPIC_TURNS)]
    small = make_archive(fresh_database, exact_search_below=0)
    small.add([make_record(t) for t in small_texts])
    small.set_vectors(embed(embedder, small_texts))
    query = embedder.embed_queries(["shortest paths in graphs"])
    found = small.candidates(query, "", 5, 0)
    truth = make_archive(fresh_database, user_id=small.user_id, exact_search_below=10**9).candidates(query, "", 5, 0)
    assert found.dense == pytest.approx(truth.dense, abs=1e-5) and len(found.dense) == 5


def unit_rows(count, seed, towards=None):
    vectors = np.random.default_rng(seed).standard_normal((count, 384)).astype(np.float32)
    if towards is not None:
        vectors += towards * 40
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_user_whose_rows_the_shared_index_does_not_reach_gets_exact_results(make_archive, fresh_database):
    """pgvector removes other users' rows after the HNSW scan: when they take every place the scan has, the
    search must look further and fall back to the exact scan (it returned an empty dense list: the rows left after
    the filter were fewer than those fetched, which was taken for "no more")."""
    axis = np.zeros(384, dtype=np.float32)
    axis[0] = 1.0
    other = make_archive(fresh_database, exact_search_below=100)
    other.add([make_record(f"other tenant {i}") for i in range(3000)])
    other.set_vectors({i: v[None, :] for i, v in enumerate(unit_rows(3000, 1, towards=axis))})
    ours = make_archive(fresh_database, exact_search_below=100)
    ours.add([make_record(f"own note {i}") for i in range(3000)])
    ours.set_vectors({i: v[None, :] for i, v in enumerate(unit_rows(3000, 2, towards=-axis))})
    assert ours.build_index() is True
    exact = make_archive(fresh_database, user_id=ours.user_id, exact_search_below=10**9)
    for query in unit_rows(3, 3, towards=axis)[:, None, :]:  # near the other tenant's rows, far from ours
        found = ours.candidates(query, "", 50, 0)
        assert len(found.dense) == 50 and found.dense == pytest.approx(exact.candidates(query, "", 50, 0).dense)
