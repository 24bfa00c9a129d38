"""Users: each a partition of the tables, isolated from the others, bound to the embedding model that built it."""

import json

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.errors import ConfigurationError, EmbeddingModelMismatchError, StateError
from tests.support.archives import new_user_id
from tests.support.conversations import PLANTED_TURN, REFERENCE, distractor_conversation, text_message
from tests.support.postgres import embed, make_record, pg_memory


def test_users_are_isolated(pg_uri, embedder):
    a = pg_memory(pg_uri, embedder, max_num_archived_messages=50)
    b = pg_memory(pg_uri, embedder)
    a.add(distractor_conversation(80, seed=1))
    b.add([text_message("user", PLANTED_TURN)])
    assert len(a) == 50 and len(b) == 1
    assert all(REFERENCE not in json.dumps(h.message) for h in a.search("booking reference", top_k=50))
    assert b.search("booking reference")[0].message["content"][0]["text"] == PLANTED_TURN
    assert list(b.indices) == [0], "b's indices are its own, unaffected by a's eviction"
    assert b.get_memory_usage_stats()["evicted_count"] == 0


def test_a_user_bound_to_another_model_is_refused(make_archive):
    store = make_archive()
    store.bind("model-a")
    store.add([make_record("x")])
    other = make_archive(user_id=store.user_id)
    other.bind("model-b")
    with pytest.raises(EmbeddingModelMismatchError):
        len(other)
    with pytest.raises(EmbeddingModelMismatchError):
        store.bind("model-b")
    store.bind("model-a")


def test_a_user_built_with_another_model_is_refused(pg_uri, embedder):
    user_id = new_user_id("model")
    pg_memory(pg_uri, embedder, user_id).add([text_message("user", "x")])
    with pytest.raises(EmbeddingModelMismatchError):
        SemanticMemory(
            embedding_model="bedrock:amazon.titan-embed-text-v2:0", archive=PostgresArchive(pg_uri, user_id)
        ).search("x")


def test_every_row_names_its_user_and_the_user_is_required(make_archive, embedder):
    alice, bob = make_archive(), make_archive()
    alice.add([make_record("alice's words", session_id="a-1")])
    alice.set_vectors(embed(embedder, ["alice's words"]))
    bob.add([make_record("bob's words")])
    with alice.connection() as connection:
        rows = connection.execute(
            "SELECT DISTINCT user_id, session_id FROM ssm_archive WHERE user_id = ANY(%s) ORDER BY 1",
            ([alice.user_id, bob.user_id],),
        ).fetchall()
        users = connection.execute(
            "SELECT user_id FROM ssm_users WHERE user_id = ANY(%s) ORDER BY 1", ([alice.user_id, bob.user_id],)
        ).fetchall()
    assert rows == sorted([(alice.user_id, "a-1"), (bob.user_id, None)])  # vector rows carry the session too
    assert users == sorted([(alice.user_id,), (bob.user_id,)])
    assert alice.get([0])[0].session_id == "a-1" and bob.get([0])[0].session_id is None
    with pytest.raises(TypeError):
        PostgresArchive("postgresql://x")  # type: ignore[call-arg]
    for bad in (None, "", "x" * 257, "a\nb"):
        with pytest.raises(ConfigurationError, match="user_id"):
            PostgresArchive("postgresql://x", bad)


def test_a_state_of_another_user_is_refused(make_archive):
    alice, bob = make_archive(), make_archive()
    state = alice.export_state("model-a")
    assert state["user_id"] == alice.user_id
    with pytest.raises(StateError, match="references user"):
        bob.load_state(state, reembed=False)
