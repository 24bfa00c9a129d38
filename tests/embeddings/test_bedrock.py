"""Bedrock embeddings against a local stand-in of bedrock-runtime: real boto3 client, signing and retries."""

import boto3
import numpy as np
import pytest
from botocore.config import Config

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings import resolve_embedder
from strands_semantic_memory.embeddings._bedrock import BedrockEmbedder
from strands_semantic_memory.errors import ConfigurationError, DimensionMismatchError, EmbeddingError
from tests.support.bedrock_standin import BedrockStandIn, fake_vector


@pytest.fixture
def standin():
    with BedrockStandIn() as server:
        yield server


def client_for(server, max_attempts=4):
    session = boto3.Session(aws_access_key_id="AKIDTEST", aws_secret_access_key="secret", region_name="us-east-1")
    return session.client(
        "bedrock-runtime",
        endpoint_url=server.endpoint,
        config=Config(retries={"total_max_attempts": max_attempts, "mode": "standard"}),
    )


def embedder(server, model_id, **kwargs):
    return BedrockEmbedder(model_id, client=client_for(server, kwargs.pop("max_attempts", 4)), **kwargs)


def test_titan_v2_request_body_dimensions_and_one_text_per_call(standin):
    titan = embedder(standin, "amazon.titan-embed-text-v2:0", dimensions=256)
    vectors = titan.embed_documents(["first text", "second text", "third"])
    assert vectors.shape == (3, 256)
    bodies = [r["body"] for r in standin.requests]
    assert sorted(b["inputText"] for b in bodies) == ["first text", "second text", "third"]
    assert all(b == {"inputText": b["inputText"], "dimensions": 256, "normalize": True} for b in bodies)
    assert all(r["model_id"] == "amazon.titan-embed-text-v2:0" for r in standin.requests)
    assert all(r["auth"].startswith("AWS4-HMAC-SHA256") for r in standin.requests), "requests are signed"
    np.testing.assert_allclose(vectors[0], fake_vector("first text", 256), rtol=1e-6)


def test_titan_v1_body(standin):
    titan = embedder(standin, "amazon.titan-embed-text-v1")
    assert titan.embed_queries(["hello"]).shape == (1, 1536)
    assert standin.requests[0]["body"] == {"inputText": "hello"}


def test_cohere_batches_of_96_and_input_types(standin):
    cohere = embedder(standin, "cohere.embed-english-v3")
    texts = [f"text {i}" for i in range(200)]
    vectors = cohere.embed_documents(texts)
    assert vectors.shape == (200, 1024)
    sizes = sorted(len(r["body"]["texts"]) for r in standin.requests)
    assert sizes == [8, 96, 96]
    assert all(r["body"]["input_type"] == "search_document" for r in standin.requests)
    assert all(r["body"]["truncate"] == "END" and r["body"]["embedding_types"] == ["float"] for r in standin.requests)
    np.testing.assert_allclose(vectors[150], fake_vector("search_document|text 150", 1024), rtol=1e-6)
    cohere.embed_queries(["a question"])
    assert standin.requests[-1]["body"]["input_type"] == "search_query"
    assert standin.requests[-1]["body"]["texts"] == ["a question"]


def test_cohere_plain_float_response_is_parsed(standin):
    cohere = embedder(standin, "cohere.embed-multilingual-v3")
    payload = standin.respond("cohere.embed-multilingual-v3", {"texts": ["a", "b"], "input_type": "search_query"})
    assert cohere._parse(payload, 2)[1] == fake_vector("search_query|b", 1024)


def test_throttling_is_retried_by_botocore(standin):
    standin.fail_next = [(429, "ThrottlingException"), (503, "ServiceUnavailableException")]
    titan = embedder(standin, "amazon.titan-embed-text-v2:0", max_attempts=4)
    assert titan.embed_queries(["retry me"]).shape == (1, 1024)
    assert len(standin.requests) == 3, "two failures retried, then success"


def test_exhausted_retries_and_access_denied_are_clear_errors(standin):
    standin.fail_next = [(429, "ThrottlingException")] * 2
    titan = embedder(standin, "amazon.titan-embed-text-v2:0", max_attempts=2)
    with pytest.raises(EmbeddingError, match="ThrottlingException"):
        titan.embed_queries(["x"])
    standin.fail_next = [(403, "AccessDeniedException")]
    with pytest.raises(EmbeddingError, match="bedrock:InvokeModel"):
        titan.embed_queries(["y"])


def test_vectors_are_normalized_before_the_index(standin):
    memory = SemanticMemory(embedder=embedder(standin, "cohere.embed-english-v3"))
    indices = memory.add([{"role": "user", "content": [{"text": f"message {i}"}]} for i in range(5)])
    raw = np.array([fake_vector(f"search_document|message {i}", 1024) for i in range(5)], dtype=np.float32)
    assert np.linalg.norm(raw, axis=1).min() > 2, "the service's vectors were not unit"
    for index, row in zip(indices, raw):
        unit = (row / np.linalg.norm(row))[None, :]
        # inner product of a unit query with the stored vector is 1 only if the stored vector is unit too
        assert memory.archive.similarities(unit, [index])[index] == pytest.approx(1.0, abs=1e-5)


def test_repeated_queries_are_cached(standin):
    memory = SemanticMemory(embedder=embedder(standin, "amazon.titan-embed-text-v2:0", dimensions=512))
    memory.add([{"role": "user", "content": [{"text": "alpha"}]}])
    before = len(standin.requests)
    for _ in range(3):
        memory.search("same question")
    assert len(standin.requests) == before + 1
    assert memory.get_memory_usage_stats()["query_cache_hits"] == 2


def test_failure_while_archiving_keeps_every_message(standin):
    memory = SemanticMemory(
        embedder=embedder(standin, "cohere.embed-english-v3", max_attempts=1), embedding_retry_interval=3600
    )
    # enough failures for the batch and for the engine's one-by-one retry that isolates a bad message
    standin.fail_next = [(500, "InternalServerException")] * 20
    messages = [{"role": "user", "content": [{"text": f"fact number {i}"}]} for i in range(4)]
    assert memory.add(messages) == [0, 1, 2, 3]
    stats = memory.get_memory_usage_stats()
    assert stats["message_count"] == 4 and stats["pending_embedding_count"] == 4
    assert [m for _, m in memory.messages()] == messages
    standin.fail_next = []  # the service is back
    assert memory.embed_pending() == 4
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == 0
    assert len(memory.search("fact number 2", top_k=4)) == 4


def test_unknown_model_and_bad_dimension_fail_at_construction():
    with pytest.raises(ConfigurationError, match="unknown Bedrock embedding model 'amazon.nope'"):
        resolve_embedder("bedrock:amazon.nope")
    with pytest.raises(ConfigurationError, match="256, 512|1024, 512, 256"):
        resolve_embedder("bedrock:amazon.titan-embed-text-v2:0", embedding_dimensions=300)
    with pytest.raises(ConfigurationError):
        resolve_embedder("bedrock:cohere.embed-english-v3", embedding_dimensions=512)
    titan = resolve_embedder("bedrock:amazon.titan-embed-text-v2:0", aws_region="eu-west-1", embedding_dimensions=512)
    assert (titan.model_id, titan.dimension, titan.region_name) == (
        "bedrock:amazon.titan-embed-text-v2:0",
        512,
        "eu-west-1",
    )


def test_restore_with_other_dimension_is_refused_and_same_restores(standin):
    memory = SemanticMemory(embedder=embedder(standin, "amazon.titan-embed-text-v2:0", dimensions=256))
    memory.add([{"role": "user", "content": [{"text": "kept"}]}])
    state = memory.to_state()
    with pytest.raises(DimensionMismatchError, match="256"):
        SemanticMemory.from_state(state, embedder=embedder(standin, "amazon.titan-embed-text-v2:0", dimensions=512))
    restored = SemanticMemory.from_state(
        state, embedder=embedder(standin, "amazon.titan-embed-text-v2:0", dimensions=256)
    )
    assert len(restored) == 1
    by_name = SemanticMemory.from_state(state, aws_region="us-east-1")  # model and dimension come from the state
    assert by_name.embedder.dimension == 256


def test_restore_local_archive_with_bedrock_is_refused(embedder):
    local = SemanticMemory(embedder=embedder)
    local.add([{"role": "user", "content": [{"text": "x"}]}])
    from strands_semantic_memory.errors import EmbeddingModelMismatchError

    with pytest.raises(EmbeddingModelMismatchError):
        SemanticMemory.from_state(local.to_state(), embedding_model="bedrock:cohere.embed-english-v3")


def test_client_is_built_with_botocore_retry_configuration(standin):
    session = boto3.Session(aws_access_key_id="AKIDTEST", aws_secret_access_key="secret")
    titan = BedrockEmbedder("amazon.titan-embed-text-v2:0", session=session, region_name="eu-central-1", max_attempts=6)
    retries = titan.client.meta.config.retries
    assert retries["total_max_attempts"] == 6 and retries["mode"] == "standard"
    assert titan.client.meta.region_name == "eu-central-1"


def test_missing_region_is_a_clear_error(monkeypatch):
    for name in ["AWS_REGION", "AWS_DEFAULT_REGION"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    session = boto3.Session(aws_access_key_id="AKIDTEST", aws_secret_access_key="secret")
    titan = BedrockEmbedder("amazon.titan-embed-text-v1", session=session)
    with pytest.raises(EmbeddingError, match="aws_region"):
        titan.embed_queries(["x"])
