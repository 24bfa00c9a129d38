"""PostgresArchive as an Archive: the protocol, what a record keeps, restoring a saved state."""

import pytest

from strands_semantic_memory.archives._protocol import Archive
from strands_semantic_memory.archives.postgres import SCHEMA_VERSION, PostgresArchive
from strands_semantic_memory.errors import ConfigurationError, StateError
from tests.support.archives import new_user_id
from tests.support.postgres import embed, make_record


def test_the_store_satisfies_the_protocol_and_declares_its_capabilities():
    store = PostgresArchive("postgresql://nobody@127.0.0.1:9/none", new_user_id())
    assert isinstance(store, Archive), "no connection is attempted: properties are free of side effects"
    assert store.persistent and store.thread_safe and store.dimension is None
    with pytest.raises(ConfigurationError, match="lock_timeout"):
        PostgresArchive("postgresql://x", "ns", lock_timeout=0)
    with pytest.raises(ConfigurationError, match="pool_size"):
        PostgresArchive("postgresql://x", "ns", pool_size=0)


def test_times_and_roles_are_stored_and_returned(make_archive, pg_uri):
    store = make_archive()
    store.add([make_record("said yesterday", role="assistant", archived_at=2000.5, said_at=1000.25)])
    store.add([make_record("no said time", archived_at=3000.0)])
    reopened = make_archive(user_id=store.user_id)
    got = reopened.get([0, 1])
    assert (got[0].role, got[0].archived_at, got[0].said_at, got[0].time) == ("assistant", 2000.5, 1000.25, 1000.25)
    assert (got[1].said_at, got[1].time) == (None, 3000.0)


def test_load_state_validates_everything_before_it_drops_vectors(make_archive, embedder):
    """A saved state is checked completely before any vector is dropped (also with reembed=True)."""
    store = make_archive()
    texts = ["the harbour opens at dawn", "the market closes at noon"]
    store.add([make_record(t) for t in texts])
    store.set_vectors(embed(embedder, texts))
    state = store.export_state("model-a")
    assert state["archive"] == {"kind": "pgvector", "user_id": store.user_id, "schema_version": 1}
    assert SCHEMA_VERSION == 1
    bad = [
        {**state, "archive": {**state["archive"], "schema_version": SCHEMA_VERSION + 1}},
        {**state, "archive": {**state["archive"], "schema_version": 0}},
        {**state, "archive": {**state["archive"], "user_id": "another"}},
        {**state, "archive": {**state["archive"], "schema_version": "1"}},
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
