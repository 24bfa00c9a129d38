"""Tools the measurements share: an embedder that serves precomputed vectors, backend labels, spreads and
percentiles, process memory, distinct queries, archives built from the embedded pool, and PyTorch's query threads."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from typing_extensions import Unpack

from benchmarks.data.conversations import DAYS, NAMES, TOPICS
from benchmarks.results import Backend, Pool, QueryThreads, Spread
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings import Vectors
from strands_semantic_memory.engine import MemoryTunables
from strands_semantic_memory.retrieval import RankingOptions

NO_CONTEXT = RankingOptions(neighbour_hits=0, neighbour_weights=())
"""The ranking without conversation context: each message scored alone (what the context ranking is priced
against)."""


class PrecomputedEmbedder:
    """Serves real vectors computed earlier for known texts; embeds anything else with the real model.

    Lets the scale benchmarks build 100k-message archives without embedding 100k texts in every run: the vectors
    are the real model's, computed once for the pool.
    """

    def __init__(self, inner: Any, texts: Sequence[str], vectors: Vectors, queries: Any = None) -> None:
        self.inner = inner
        # Queries go to ``inner`` unless another embedder of the same model is given: its query path is then
        # what is measured, over the same document vectors.
        self.queries = inner if queries is None else queries
        self.known_queries: dict[str, Any] = {}  # query vectors computed earlier (recall-only comparisons)
        self.known = dict(zip(texts, vectors, strict=True))
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.document_calls = 0
        self.query_calls = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.document_calls += 1
        missing = [t for t in texts if t not in self.known]
        if missing:
            self.known.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return np.stack([self.known[t] for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self.query_calls += 1
        if self.known_queries and all(t in self.known_queries for t in texts):
            return np.stack([self.known_queries[t] for t in texts])
        vectors: Vectors = self.queries.embed_queries(texts)
        return vectors


def backend_of(embedder: Any) -> Backend:
    """What runs an embedder: ``short`` (a table cell) and ``long`` (a sentence) labels."""
    from strands_semantic_memory.embeddings import OnnxEmbedder, SentenceTransformerEmbedder

    if isinstance(embedder, OnnxEmbedder):
        from importlib.metadata import version

        precision = embedder.query_precision
        return {
            "name": "onnx",
            "short": f"ONNX {precision}",
            "long": (
                f"ONNX Runtime {version('onnxruntime')} (`OnnxEmbedder`: fp32 graph for documents, {precision} graph "
                f"for queries, {embedder.document_threads} / {embedder.query_threads} threads)"
            ),
        }
    if isinstance(embedder, SentenceTransformerEmbedder):
        return {"name": "torch", "short": "PyTorch", "long": "PyTorch (`SentenceTransformerEmbedder`, fp32)"}
    name = type(embedder).__name__
    return {"name": name, "short": name, "long": f"`{name}`"}


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def spread(values: Sequence[float]) -> Spread:
    """Run-to-run spread of repeated measurements: ``min``, ``median``, ``max`` and ``runs``."""
    return {
        "min": float(np.min(values)),
        "median": float(np.median(values)),
        "max": float(np.max(values)),
        "runs": len(values),
    }


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def unique_queries(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [
        f"What did {NAMES[rng.integers(len(NAMES))]} say about {TOPICS[rng.integers(len(TOPICS))]} "
        f"on {DAYS[rng.integers(len(DAYS))]} (question {i})?"
        for i in range(count)
    ]


def cyclic_messages(pool: Pool, count: int) -> list[dict[str, Any]]:
    messages = pool["messages"]
    return [messages[i % len(messages)] for i in range(count)]


def build_memory(embedder: Any, messages: Sequence[Any], **options: Unpack[MemoryTunables]) -> SemanticMemory:
    memory = SemanticMemory(embedder=embedder, **options)
    for start in range(0, len(messages), 2000):
        memory.add(messages[start : start + 2000])
    return memory


def query_threads(embedder: Any, count: int) -> QueryThreads:
    """Query-embedding p50 (ms) with PyTorch's default intra-op threads and with one, on distinct queries.

    Leaves PyTorch's setting as it found it.
    """
    import torch

    default = torch.get_num_threads()
    embedder.embed_queries(["warm up"])
    p50: dict[str, float] = {}
    for label, threads in (("default", default), ("one", 1)):
        torch.set_num_threads(threads)
        times = []
        for n in range(count):
            begun = time.perf_counter()
            embedder.embed_queries([f"what did we decide about the {label} thread setting, question {n}?"])
            times.append((time.perf_counter() - begun) * 1000)
        p50[label] = statistics.median(times)
    torch.set_num_threads(default)
    return {"default_threads": float(default), "default_p50_ms": p50["default"], "one_p50_ms": p50["one"]}
