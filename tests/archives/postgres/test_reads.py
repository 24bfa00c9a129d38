"""Reads: round trips per search and per hook turn, pending writes reported from the last statement."""

import psycopg
import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives._protocol import SearchFilter
from tests.support.conversations import distractor_conversation
from tests.support.postgres import RoundTrips, embed, make_record


def test_a_search_is_one_round_trip_and_a_hook_turn_two(pg_uri, make_archive, embedder):
    """Candidates in one statement, passages in another, has_pending from the last report."""
    connection = psycopg.connect(pg_uri, autocommit=True, prepare_threshold=0)  # as the pool's connections are
    store = make_archive(connection=connection)
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
def test_an_engine_hook_turn_is_two_round_trips_with_unchanged_results(
    pg_uri, make_archive, embedder, retrieval, roles
):
    """The neighbours the ranking scores come with the candidates; then one read for the passages."""
    connection = psycopg.connect(pg_uri, autocommit=True, prepare_threshold=0)  # as the pool's connections are
    store = make_archive(connection=connection)
    options = {"retrieval": retrieval, "top_k": 3, "ranking": {"min_depth": 20}}  # fewer candidates than messages
    memory = SemanticMemory(embedder=embedder, archive=store, context_radius=1, **options)
    memory.add(distractor_conversation(80))
    memory.embed_pending()
    unserved = SemanticMemory(embedder=embedder, archive=UnservedContext(store), **options)
    for warming in (memory, unserved):
        warming.retrieve("warm up: prepare the statements for solar panels", roles=roles, context_radius=1)
    for question in ("How much did the sourdough cost?", "Who reviews the job interview?", "the hiking trip plan"):
        with RoundTrips(connection) as turn:
            passages = memory.retrieve(question, roles=roles)
        assert passages, question
        assert turn.count == 2, (question, turn.count)
        with RoundTrips(connection) as old:
            same = unserved.retrieve(question, roles=roles, context_radius=1)
        assert [(w.start, w.end, w.hit_indices, w.hit_scores) for w in passages] == [
            (w.start, w.end, w.hit_indices, w.hit_scores) for w in same
        ]
        if retrieval != "lexical":  # (a lexical turn may find every passage record among the neighbours read)
            assert old.count >= 3, "without the context answered the neighbours cost a round trip of their own"


def test_has_pending_reports_other_writers_within_the_check_interval(make_archive):
    reader = make_archive(pending_check_interval=0)
    writer = make_archive(user_id=reader.user_id)
    assert not reader.has_pending()
    writer.add([make_record("waiting for vectors")])
    assert reader.has_pending(), "interval 0: every call asks the database"
