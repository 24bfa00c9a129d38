"""The search statement against a real PostgreSQL: the context formula in SQL against the one Python formula."""

import pytest

from strands_semantic_memory.messages._codec import encode_message, record_key, searchable_text
from strands_semantic_memory.retrieval._ranking import strongest
from strands_semantic_memory.stores._protocol import ContextRequest, NewRecord
from strands_semantic_memory.stores.postgres import PostgresArchive
from tests.support.conversations import distractor_conversation, text_message
from tests.support.stores import new_namespace

QUESTIONS = ("How much did the sourdough cost?", "Who reviews the job interview?", "the hiking trip plan on Thursday")


@pytest.fixture(scope="module")
def filled(pg_uri, embedder):
    """A namespace of 120 conversation messages with their vectors (read only by the tests of this module)."""
    store = PostgresArchive(pg_uri, new_namespace("formula"))
    texts = [m["content"][0]["text"] for m in distractor_conversation(120)]
    records = [
        NewRecord(
            data=(data := encode_message(text_message("user", text))),
            role="user",
            tracking_id=None,
            text=searchable_text(text),
            key=record_key(None, data),
            archived_at=1.0,
            said_at=None,
        )
        for text in texts
    ]
    store.add(records)
    store.set_vectors({i: v[None, :] for i, v in enumerate(embedder.embed_documents(texts))})
    yield store
    store.drop_namespace()
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
