"""Namespaces: isolated from each other, bound to the embedding model that built them."""

import json

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.errors import EmbeddingModelMismatchError
from tests.support.archives import new_namespace
from tests.support.conversations import PLANTED_TURN, REFERENCE, distractor_conversation, text_message
from tests.support.postgres import make_record, pg_memory


def test_namespaces_are_isolated(pg_uri, embedder):
    a = pg_memory(pg_uri, embedder, max_num_archived_messages=50)
    b = pg_memory(pg_uri, embedder)
    a.add(distractor_conversation(80, seed=1))
    b.add([text_message("user", PLANTED_TURN)])
    assert len(a) == 50 and len(b) == 1
    assert all(REFERENCE not in json.dumps(h.message) for h in a.search("booking reference", top_k=50))
    assert b.search("booking reference")[0].message["content"][0]["text"] == PLANTED_TURN
    assert list(b.indices) == [0], "b's indices are its own, unaffected by a's eviction"
    assert b.get_memory_usage_stats()["evicted_count"] == 0


def test_a_namespace_bound_to_another_model_is_refused(make_archive):
    store = make_archive()
    store.bind("model-a")
    store.add([make_record("x")])
    other = make_archive(namespace=store.namespace)
    other.bind("model-b")
    with pytest.raises(EmbeddingModelMismatchError):
        len(other)
    with pytest.raises(EmbeddingModelMismatchError):
        store.bind("model-b")
    store.bind("model-a")


def test_namespace_built_with_another_model_is_refused(pg_uri, embedder):
    namespace = new_namespace("model")
    pg_memory(pg_uri, embedder, namespace).add([text_message("user", "x")])
    with pytest.raises(EmbeddingModelMismatchError):
        SemanticMemory(
            embedding_model="bedrock:amazon.titan-embed-text-v2:0", archive=PostgresArchive(pg_uri, namespace)
        ).search("x")
