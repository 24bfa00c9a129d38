"""The whole engine at scale: ``SemanticMemory.retrieve`` (query embedding, dense and lexical search, passages).

Messages repeat the pool's texts with a unique suffix; their vectors are synthetic
(``benchmarks.measure.vector_index.synthetic_vectors``), so the vector index sees distinct, realistically spread
vectors, and only the queries are embedded by the real model.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.sizes import ScaleSettings
from benchmarks.measure.tools import backend_of, cyclic_messages, percentile, spread, unique_queries
from benchmarks.measure.vector_index import synthetic_vectors
from benchmarks.results import EngineRow, Pool
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings import Vectors
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.retrieval import RETRIEVAL_MODES, Retrieval


class SyntheticDocuments:
    """Embeds documents as synthetic vectors (by position in a prepared block), queries with the real model."""

    def __init__(self, inner: Any, vectors: Vectors) -> None:
        self.inner = inner
        self.vectors = vectors
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.position = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        block = self.vectors[self.position : self.position + len(texts)]
        self.position += len(texts)
        if len(block) < len(texts):  # more chunks than prepared: reuse from the start
            block = np.vstack([block, self.vectors[: len(texts) - len(block)]])
        return block

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        vectors: Vectors = self.inner.embed_queries(texts)
        return vectors


def engine_latency_rows(
    embedder: Any,
    pool: Pool,
    settings: ScaleSettings,
    modes: Sequence[Retrieval] = RETRIEVAL_MODES,
    compare: Any = None,
) -> list[EngineRow]:
    """``SemanticMemory.retrieve`` (query embedding, dense + lexical search, windows) at each archive size.

    Messages repeat the benchmark pool's texts with a unique suffix; their vectors are synthetic (see
    :func:`synthetic_vectors`), so the vector index sees distinct, realistically spread vectors. One row per size
    and retrieval mode; ``dense`` and ``lexical`` show which side of ``hybrid`` costs what. ``hybrid`` is timed
    in ``settings.engine_rounds`` rounds on the same built archive (``rounds``: the per-round p50s). With
    ``compare`` (another backend of the same model), one more hybrid row has ``compare`` embedding the queries.
    """
    rows: list[EngineRow] = []
    rounds = max(1, settings.engine_rounds)
    queries = unique_queries(settings.engine_queries * rounds, seed=17)
    runs: list[tuple[Retrieval, Any, int]] = [(mode, embedder, rounds if mode == "hybrid" else 1) for mode in modes]
    if compare is not None and "hybrid" in modes:
        runs.append(("hybrid", compare, 1))
    for size in settings.engine_sizes:
        vectors = synthetic_vectors(pool["vectors"], size + 1000, seed=size)
        documents = SyntheticDocuments(embedder, vectors)
        memory = SemanticMemory(embedder=documents)
        base = cyclic_messages(pool, size)
        started = time.perf_counter()
        for start in range(0, size, 5000):
            batch: list[Any] = [
                dict(m, content=[{"text": f"{render_message(m)} #{start + n}"}])
                for n, m in enumerate(base[start : start + 5000])
            ]
            memory.add(batch)
        build = time.perf_counter() - started
        for mode, queries_by, count in runs:
            documents.inner = queries_by  # who embeds the queries (documents are the prepared vectors)
            label = backend_of(queries_by)
            tag = f"{mode} {size} {label['name']}"
            memory.configure(retrieval=mode)
            memory.search(f"warm up {tag}", top_k=3)
            per_round, totals, embeds, searches = [], [], [], []
            for round_ in range(count):
                round_totals = []
                for query in queries[round_ * settings.engine_queries : (round_ + 1) * settings.engine_queries]:
                    text = f"{query} [{tag}]"  # distinct text: no query-cache hit
                    started = time.perf_counter()
                    memory.retrieve(text)
                    round_totals.append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    queries_by.embed_queries([f"{query} (timing {tag})"])
                    embeds.append((time.perf_counter() - started) * 1000)
                    started_cpu = time.thread_time()  # the query vector is cached now: search + windows only
                    memory.retrieve(text)
                    searches.append((time.thread_time() - started_cpu) * 1000)
                per_round.append(percentile(round_totals, 50))
                totals.extend(round_totals)
            rows.append(
                {
                    "size": size,
                    "mode": mode,
                    "queries": label["short"],
                    "default": queries_by is embedder,
                    "build_seconds": build,
                    "retrieve_p50_ms": percentile(totals, 50),
                    "retrieve_p99_ms": percentile(totals, 99),
                    "rounds": spread(per_round),
                    "query_embedding_p50_ms": percentile(embeds, 50),
                    "search_and_windows_cpu_p50_ms": percentile(searches, 50),
                    "approximate": getattr(memory.archive, "approximate_index", None) is not None,
                }
            )
        documents.inner = embedder
        del memory, documents, vectors
        gc.collect()
    return rows


class EngineAtScale(Measurement):
    """``retrieve`` at each of ``run.sizes.scale.engine_sizes``, in every mode (and with PyTorch queries)."""

    name: ClassVar[str] = "engine"
    label: ClassVar[str] = "engine at scale"
    uses_pool: ClassVar[bool] = True

    def measure(self, run: Run) -> list[EngineRow]:
        """Every mode with the default's queries; one hybrid row with the comparison backend's when there is one."""
        return engine_latency_rows(run.embedder, run.require_pool(), run.sizes.scale, compare=run.compare)
