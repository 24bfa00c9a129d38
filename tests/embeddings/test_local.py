import numpy as np
import pytest

from strands_semantic_memory.embeddings import SentenceTransformerEmbedder, resolve_embedder
from strands_semantic_memory.embeddings._local import bundled_model_path, resolve_local_model
from strands_semantic_memory.errors import ConfigurationError, EmbeddingError


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


def test_missing_model_is_a_clear_error(tmp_path):
    broken = SentenceTransformerEmbedder(str(tmp_path / "no-such-model"))
    with pytest.raises(EmbeddingError, match="could not load the embedding model"):
        broken.embed_documents(["x"])


def test_dimensions_option_is_for_bedrock_only():
    with pytest.raises(ConfigurationError, match="Bedrock models only"):
        resolve_embedder("all-MiniLM-L6-v2", embedding_dimensions=256)


def test_query_fast_path_equals_encode(embedder):
    queries = ["What was my booking reference?", "an entirely different question about trees"]
    np.testing.assert_allclose(embedder.embed_queries(queries), embedder._encode(queries, ""), atol=1e-5)
    many = [f"query {i}" for i in range(6)]  # above the fast path's size: encode()
    np.testing.assert_allclose(embedder.embed_queries(many)[:2], embedder._forward(many[:2], ""), atol=1e-5)
