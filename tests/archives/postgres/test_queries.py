"""The search statement against a real PostgreSQL: filters, agreement with an independent search, the lexical
scan budget, the context formula in SQL against the one Python formula, and the neighbourhoods it answers."""

import numpy as np
import psycopg
import pytest

from strands_semantic_memory.archives._protocol import ContextRequest, SearchFilter
from strands_semantic_memory.archives._scoring import strongest
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.archives.postgres._queries import LEXICAL, Plan, candidates_sql
from strands_semantic_memory.archives.postgres._text_search import query_lexemes, quoted, tsquery_literal
from tests.support.archives import new_user_id
from tests.support.conversations import distractor_conversation
from tests.support.postgres import embed, make_record

QUESTIONS = ("How much did the sourdough cost?", "Who reviews the job interview?", "the hiking trip plan on Thursday")


@pytest.fixture(scope="module")
def filled(pg_uri, embedder):
    """A user_id of 120 conversation messages with their vectors (read only by the tests of this module)."""
    store = PostgresArchive(pg_uri, new_user_id("formula"))
    texts = [m["content"][0]["text"] for m in distractor_conversation(120)]
    store.add([make_record(text) for text in texts])
    store.set_vectors(embed(embedder, texts))
    yield store
    store.forget_all()
    store.close()


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize(
    ("dense_weight", "lexical_power", "dense_floor"),
    [(0.5, 2.0, True), (0.5, 2.0, False), (0.3, 1.0, True), (0.8, 3.0, False), (1.0, 2.0, True), (0.0, 2.0, True)],
)
@pytest.mark.parametrize("sides", ["both", "dense", "lexical"])
def test_the_sql_picks_the_strongest_candidates_as_the_python_formula_does(
    filled, embedder, question, dense_weight, lexical_power, dense_floor, sides
):
    """``around`` (the candidates whose neighbourhoods the statement answers) is ``strongest`` of its candidates.

    The statement's own candidates and similarities go into the Python formula, so only the formula is compared;
    every ``leading`` from one candidate to all of them checks the whole order, ties by index included.
    """
    vector = embedder.embed_queries([question]) if sides != "lexical" else None
    dense_k, lexical_k = (12 if sides != "lexical" else 0), (12 if sides != "dense" else 0)
    total = None
    for leading in range(1, 25):
        request = ContextRequest(
            radius=1, leading=leading, dense_weight=dense_weight, lexical_power=lexical_power, dense_floor=dense_floor
        )
        found = filled.candidates(vector, question, dense_k, lexical_k, context=request)
        assert found.context is not None, "the statement answers the request"
        expected = strongest(found.dense, found.lexical, found.similarity, request)
        assert found.context.around == frozenset(expected), (leading, sorted(found.context.around), expected)
        total = len(found.dense.keys() | found.lexical.keys())
        if leading >= total:
            break
    assert total, "the question finds candidates"


def test_search_filters_by_role_and_time_in_sql(make_archive, embedder):
    """Role and time filters apply to the dense and the lexical side, matching the oracle."""
    store = make_archive()
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
        expected = {i for i, r in enumerate(records) if search_filter.accepts(i, r.role, times[i], None)}
        found = store.candidates(query, "project deployment", 100, 100, search_filter)
        assert set(found.dense) == expected, search_filter
        assert set(found.lexical) == expected, search_filter
        assert set(found.similarity) == expected
    unfiltered = store.candidates(query, "project deployment", 5, 5, SearchFilter())
    assert len(unfiltered.dense) == 5 and len(unfiltered.lexical) == 5


def test_candidates_match_an_independent_numpy_search(make_archive, embedder):
    store = make_archive()
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


def lexical_side(uri, user_id, query, lexical_k, budget):
    """The store's lexical candidates for ``query`` with a given scan budget (the statement, run directly)."""
    lexemes = query_lexemes(query)
    params = {"user": user_id, "tsq": tsquery_literal(query), "terms": lexemes, "budget": budget}
    params.update(literals=[quoted(t) for t in lexemes], lexical_k=lexical_k, dense_k=0)
    with psycopg.connect(uri, autocommit=True) as connection:
        rows = connection.execute(candidates_sql(Plan(False, True, False, None, None)), params).fetchall()
    return {int(i): s for kind, i, s in rows if kind == LEXICAL}


def test_frequent_terms_are_ranked_only_when_the_selective_ones_match_too_few(make_archive, fresh_database):
    """Over the scan budget, messages matching only the query's frequent terms are not ranked (unless
    needed to fill the list); the scores of those ranked are the whole query's."""
    store = make_archive(fresh_database)
    texts = [f"the weather report number {i}" for i in range(400)]  # "weather" and "report": frequent
    texts[50] = "the weather report mentions the lighthouse keeper"
    texts[120] = "a lighthouse keeper wrote the weather report, the weather report again"
    texts[300] = "lighthouse only"
    store.add([make_record(t) for t in texts])
    with psycopg.connect(fresh_database, autocommit=True) as connection:
        connection.execute("ANALYZE ssm_archive")  # the term frequencies come from the column's statistics
    query = "weather report from the lighthouse"
    everything = lexical_side(fresh_database, store.user_id, query, 10, budget=10**9)
    assert len(everything) == 10 and 300 not in everything, "ranking every match: common words repeated win"
    pruned = lexical_side(fresh_database, store.user_id, query, 3, budget=50)
    assert sorted(pruned) == [50, 120, 300], "only the messages that mention the rare term were ranked"
    for index in set(pruned) & set(everything):
        assert pruned[index] == pytest.approx(everything[index]), "scores are the whole query's"
    filled = lexical_side(fresh_database, store.user_id, query, 10, budget=50)
    assert {50, 120, 300} < set(filled) and len(filled) == 10, "frequent-only matches fill a short list"
    assert store.candidates(None, query, 0, 10).lexical == everything, "below the real budget: unchanged"


@pytest.mark.parametrize("search_filter", [None, SearchFilter(roles=frozenset({"user"}))])
@pytest.mark.parametrize("radius", [1, 3])
def test_the_neighbourhoods_answered_are_every_covered_index_read_directly(
    make_archive, embedder, search_filter, radius
):
    """``context``: each covered index that is not a candidate, live as the filter says, with its best chunk.

    The user_id has what the neighbourhood scan must get right: overlapping neighbourhoods (many leading
    candidates, ``radius`` up to 3), the start of the archive (no negative index), a message of two chunks, one
    still waiting for its vector (live, no similarity), a forgotten one (neither), and roles for the filter.
    """
    store = make_archive()
    texts = [m["content"][0]["text"] for m in distractor_conversation(60)]
    store.add([make_record(t, role="user" if i % 3 else "assistant") for i, t in enumerate(texts)])
    vectors = {i: v[None] for i, v in enumerate(embedder.embed_documents(texts))}
    vectors[5] = np.vstack([vectors[5][0], vectors[40][0]])  # two chunks: the better one counts
    del vectors[9]  # waits for its vector
    store.set_vectors(vectors)
    store.forget([12])
    query = "the hiking trip plan and the sourdough cost"
    vector = embedder.embed_queries([query])
    request = ContextRequest(radius=radius, leading=30)
    found = store.candidates(vector, query, 10, 10, search_filter, context=request)
    assert found.context is not None and len(found.context.around) > 10
    candidates = found.dense.keys() | found.lexical.keys()
    covered = {a + o for a in found.context.around for o in range(-radius, radius + 1) if a + o >= 0} - candidates
    assert len(covered) < len(found.context.around) * (2 * radius + 1), "neighbourhoods overlap"
    records = store.get(sorted(covered))
    assert 12 not in records and {9, 5} & covered, "the forgotten and the special messages are among the covered"
    live = {i for i, r in records.items() if search_filter is None or search_filter.accepts_record(r)}
    assert live < set(records) if search_filter else live == set(records)
    assert found.context.live == frozenset(live)
    expected = store.similarities(vector, sorted(covered))
    assert 9 not in expected and set(expected) == set(records) - {9}
    assert found.context.similarity == expected, "the same best-chunk cosines as the similarities statement"
    assert found.context.around == frozenset(strongest(found.dense, found.lexical, found.similarity, request))
