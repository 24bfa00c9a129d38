"""The vector index alone from 1k to 1M vectors, and the synthetic vectors beyond what a run can embed.

:func:`vector_index_rows` grows a ``FaissIndex`` in batches as an archive grows: search latency on one thread,
recall@10 against exact search, bytes per vector. Vectors for sizes beyond what can be embedded in a benchmark run
come from :func:`synthetic_vectors`: a Gaussian mixture fitted to real embeddings of the bundled model (the report
prints the caveat: recall on real data at 1M was not measured).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.sizes import ScaleSettings
from benchmarks.measure.tools import percentile, rss_bytes, unique_queries
from benchmarks.results import VectorIndexRow
from strands_semantic_memory.archives.in_process.faiss import FaissIndex
from strands_semantic_memory.embeddings import Vectors

CAVEAT = (
    "Vectors beyond the pool are synthetic: a Gaussian mixture fitted to the bundled model's embeddings "
    "(benchmarks/measure/vector_index.py synthetic_vectors); recall@10 on 1M real embeddings was not measured."
)
"""What the report says of every measurement on synthetic vectors."""


def synthetic_vectors(real: Vectors, count: int, seed: int = 0, components: int = 500) -> Vectors:
    """``count`` unit vectors drawn from a Gaussian mixture fitted to real embeddings.

    k-means (spherical, ``components`` centres) on the real vectors gives the topics; each sample is a centre
    plus Gaussian noise with the covariance of the real vectors' residuals around their centres. The result
    has the real data's topic structure and spread without repeating any real vector. It is harder for an
    approximate index than repeated real vectors and easier than a single Gaussian, which has no neighbourhoods.

    Args:
        real: Real embeddings (unit rows).
        count: How many vectors to draw.
        seed: Random seed.
        components: Mixture components (at most ``len(real) // 10``).

    Returns:
        ``(count, dimension)`` float32 unit rows.
    """
    import faiss

    dimension = real.shape[1]
    components = max(1, min(components, len(real) // 10))
    kmeans = faiss.Kmeans(dimension, components, niter=20, spherical=True, seed=seed, verbose=False)
    kmeans.train(np.ascontiguousarray(real, dtype=np.float32))
    _, owner = kmeans.index.search(np.ascontiguousarray(real, dtype=np.float32), 1)
    centroids: Vectors = np.asarray(kmeans.centroids, dtype=np.float32)
    residuals = real - centroids[owner[:, 0]]
    covariance = np.cov(residuals, rowvar=False) + 1e-6 * np.eye(dimension)
    factor = np.linalg.cholesky(covariance).astype(np.float32)
    weights = np.bincount(owner[:, 0], minlength=components) / len(real)
    rng = np.random.default_rng(seed)
    out = np.empty((count, dimension), dtype=np.float32)
    for start in range(0, count, 100_000):
        size = min(100_000, count - start)
        centres = centroids[rng.choice(components, size=size, p=weights)]
        sample = centres + rng.standard_normal((size, dimension), dtype=np.float32) @ factor.T
        out[start : start + size] = sample / np.linalg.norm(sample, axis=1, keepdims=True)
    return out


def gaussian_vectors(real: Vectors, count: int, seed: int = 0) -> Vectors:
    """``count`` unit vectors from one Gaussian with the real embeddings' mean and covariance.

    A stress case, not a model of real data: it has no neighbourhoods (a point's 10th neighbour is nearly as close
    as its first), which is the hardest input for an approximate index.
    """
    dimension = real.shape[1]
    mean = real.mean(axis=0)
    factor = np.linalg.cholesky(np.cov(real - mean, rowvar=False) + 1e-6 * np.eye(dimension)).astype(np.float32)
    rng = np.random.default_rng(seed)
    out = np.empty((count, dimension), dtype=np.float32)
    for start in range(0, count, 100_000):
        size = min(100_000, count - start)
        sample = mean + rng.standard_normal((size, dimension), dtype=np.float32) @ factor.T
        out[start : start + size] = sample / np.linalg.norm(sample, axis=1, keepdims=True)
    return out


def _live_rss() -> int:
    """Process RSS after returning freed heap pages to the system (glibc), so slack from freed buffers is not
    counted as memory the store holds."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: plain RSS
        pass
    return rss_bytes()


def vector_index_rows(
    real: Vectors, queries: Vectors, settings: ScaleSettings, data: str = "mixture", sizes: Sequence[int] | None = None
) -> list[VectorIndexRow]:
    """The vector store from 1k to 1M vectors, grown in batches as an archive grows.

    Args:
        real: Real document embeddings (the mixture is fitted on them).
        queries: Real query embeddings (searched against the synthetic vectors).
        settings: Sizes.
        data: ``"mixture"`` (:func:`synthetic_vectors`) or ``"gaussian"`` (:func:`gaussian_vectors`, stress case).
        sizes: Overrides ``settings.index_sizes``.

    Returns:
        One row per size: tier, build seconds (all adds, including the switch), search p50/p99 (ms, one thread),
        recall@10 against exact search, bytes per vector (the store's own count, and process RSS growth).
    """
    import faiss

    sizes = tuple(sizes or settings.index_sizes)
    largest = max(sizes)
    vectors = synthetic_vectors(real, largest, seed=11) if data == "mixture" else gaussian_vectors(real, largest, 11)
    query_block = np.ascontiguousarray(queries[: settings.index_queries], dtype=np.float32)
    rows: list[VectorIndexRow] = []
    for size in sizes:
        before = _live_rss()
        store = (
            FaissIndex(real.shape[1])
            if settings.approximate_above is None
            else FaissIndex(real.shape[1], approximate_above=settings.approximate_above)
        )
        ids = np.arange(size, dtype=np.int64) << 8
        started = time.perf_counter()
        for start in range(0, size, 10_000):
            store.add(ids[start : start + 10_000], vectors[start : min(size, start + 10_000)])
        build = time.perf_counter() - started
        grown = _live_rss() - before
        exact_index = faiss.IndexFlatIP(real.shape[1])
        exact_index.add(vectors[:size])
        _, exact = exact_index.search(query_block, 10)
        del exact_index
        latencies, cpu, hits = [], [], 0
        for row, query in enumerate(query_block):
            started, started_cpu = time.perf_counter(), time.thread_time()
            _, found = store.search(query[None], 10)
            latencies.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            hits += len(set((found >> 8).tolist()) & set(exact[row].tolist()))
        rows.append(
            {
                "size": size,
                "data": data,
                "tier": "approximate (IVF, float16)" if store.approximate else "exact (flat)",
                "build_seconds": build,
                "search_p50_ms": percentile(latencies, 50),
                "search_p99_ms": percentile(latencies, 99),
                "search_cpu_p50_ms": percentile(cpu, 50),
                "recall_at_10": hits / (10 * len(query_block)),
                "store_bytes_per_vector": store.nbytes / size,
                "rss_bytes_per_vector": grown / size,
            }
        )
        del store
    return rows


class VectorIndex(Measurement):
    """The vector index alone at each of ``run.sizes.scale.index_sizes``."""

    name: ClassVar[str] = "index"
    label: ClassVar[str] = "vector index 1k..1M"
    key: ClassVar[str] = "vector_index"
    uses_pool: ClassVar[bool] = True

    def measure(self, run: Run) -> list[VectorIndexRow]:
        """Mixture vectors fitted to the pool, searched with real query vectors."""
        queries = run.embedder.embed_queries(unique_queries(run.sizes.scale.index_queries, seed=23))
        return vector_index_rows(run.require_pool()["vectors"], queries, run.sizes.scale)
