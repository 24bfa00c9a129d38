"""The disk-cached embedder: the real model's vectors, embedded once across instances and runs."""

from __future__ import annotations

import hashlib

import numpy as np

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.testing import DiskCachedEmbedder


def test_each_text_is_embedded_once_across_instances(counting_embedder, tmp_path):
    first = DiskCachedEmbedder(counting_embedder, tmp_path)
    texts = ["a fact about the billing service", "the Lisbon hotel costs $180 a night"]
    vectors = first.embed_documents(texts)
    first.embed_queries(["where do we stay?"])
    first.flush()
    calls = (counting_embedder.document_calls, counting_embedder.query_calls)
    second = DiskCachedEmbedder(counting_embedder, tmp_path)
    assert np.array_equal(second.embed_documents(texts[::-1]), vectors[::-1])
    second.embed_queries(["where do we stay?"])
    assert (counting_embedder.document_calls, counting_embedder.query_calls) == calls
    second.embed_documents(["something new"])
    assert counting_embedder.document_calls == calls[0] + 1
    assert second.embedded == {"document": 1, "query": 0}


def test_the_vectors_are_the_real_models_and_a_with_block_keeps_them(embedder, tmp_path):
    with DiskCachedEmbedder(embedder, tmp_path) as cached:
        memory = SemanticMemory(embedder=cached)
        memory.add([{"role": "user", "content": [{"text": "The staging port is 6432."}]}])
        assert memory.search("staging port")[0].index == 0
    assert list(tmp_path.glob("*-document-*.npz")) and list(tmp_path.glob("*-query-*.npz")), "flushed on leaving"
    assert cached.model_id == embedder.model_id and cached.dimension == embedder.dimension
    text = "The staging port is 6432."
    assert np.allclose(cached.embed_documents([text])[0], embedder.embed_documents([text])[0], atol=1e-6)


def test_a_digest_that_ends_in_a_nul_byte_is_found_again(counting_embedder, tmp_path):
    text = next(t for t in (f"text {n}" for n in range(100_000)) if hashlib.sha256(t.encode()).digest()[-1] == 0)
    first = DiskCachedEmbedder(counting_embedder, tmp_path)
    first.embed_documents([text])
    first.flush()
    calls = counting_embedder.document_calls
    DiskCachedEmbedder(counting_embedder, tmp_path).embed_documents([text])
    assert counting_embedder.document_calls == calls, "numpy drops trailing NUL bytes of fixed-width bytes on reading"
