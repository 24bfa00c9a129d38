"""The cross-encoder path with a real CrossEncoder built locally from the bundled MiniLM weights.

Its classification head is freshly initialised, so its ranking means nothing: these tests check that the model
loads from a folder, is called, and decides the final order. Ranking quality depends on the model users supply.
"""

import pytest
import torch

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings._local import bundled_model_path
from strands_semantic_memory.errors import EmbeddingError
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.retrieval import CrossEncoderReranker
from tests.support.conversations import distractor_conversation


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory):
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    model = CrossEncoder(str(bundled_model_path()), num_labels=1, device="cpu")
    folder = tmp_path_factory.mktemp("cross-encoder")
    model.save(str(folder))
    return str(folder)


class CountingReranker(CrossEncoderReranker):
    calls = 0

    def rerank(self, query, texts):
        CountingReranker.calls += 1
        return super().rerank(query, texts)


def test_cross_encoder_loads_from_a_folder_and_decides_the_order(embedder, cross_encoder_dir):
    reranker = CountingReranker(cross_encoder_dir)
    memory = SemanticMemory(embedder=embedder, reranker=reranker, rerank_candidates=10, retrieval="dense")
    memory.add(distractor_conversation(60))
    dense = SemanticMemory(embedder=embedder, retrieval="dense")
    dense.add(distractor_conversation(60))

    query = "what did we decide about the budget?"
    hits = memory.search(query, top_k=5)
    assert CountingReranker.calls == 1
    candidates = dense.search(query, top_k=10)
    expected_scores = reranker.model.predict([(query, render_message(c.message)) for c in candidates])
    expected = [c.index for _, c in sorted(zip(expected_scores, candidates), key=lambda p: (-p[0], p[1].index))][:5]
    assert [h.index for h in hits] == expected
    assert [h.index for h in hits] != [c.index for c in candidates[:5]], "the reranker changed the dense order"
    assert all(h.similarity == next(c.similarity for c in candidates if c.index == h.index) for h in hits)


def test_reranker_works_on_top_of_hybrid_retrieval(embedder, cross_encoder_dir):
    reranker = CrossEncoderReranker(cross_encoder_dir)
    memory = SemanticMemory(embedder=embedder, reranker=reranker, rerank_candidates=10, retrieval="hybrid")
    plain = SemanticMemory(embedder=embedder, retrieval="hybrid")
    for m in (memory, plain):
        m.add(distractor_conversation(60))
    query = "the cost was 230 euros"
    candidates = plain.search(query, top_k=10)
    expected_scores = reranker.model.predict([(query, render_message(c.message)) for c in candidates])
    expected = [c.index for _, c in sorted(zip(expected_scores, candidates), key=lambda p: (-p[0], p[1].index))][:4]
    assert [h.index for h in memory.search(query, top_k=4)] == expected


def test_missing_cross_encoder_is_a_clear_error(tmp_path):
    with pytest.raises(EmbeddingError, match="cross-encoder"):
        CrossEncoderReranker(str(tmp_path / "missing")).rerank("q", ["a"])
