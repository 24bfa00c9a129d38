"""Scale measurements: the durable SQLite archive against JSON session state, and the vector index up to 1M.

Each function returns rows of a shape in ``results.py``, for ``run.py`` and ``report.py``:

- :func:`session_turn_rows`: wall time of one agent turn with Strands' ``FileSessionManager`` for archives of each
  size, the archive saved in the session state (JSON) or referenced there (``archive_path``, SQLite).
- :func:`durable_open_rows`: reopening a durable archive, against restoring the same archive from JSON state.
- :func:`crossover`: where the durable archive starts to pay, from the two above.
- :func:`vector_index_rows`: :class:`~strands_semantic_memory.archives.in_process.faiss._store.FaissIndex` from 1k to 1M
  vectors: search latency on one thread, recall@10 against exact search, bytes per vector.
- :func:`engine_latency_rows`: query embedding + search + windows (what the hook does before formatting) for a
  whole :class:`~strands_semantic_memory.SemanticMemory` of up to 1M messages.

Vectors for sizes beyond what can be embedded in a benchmark run come from :func:`synthetic_vectors`: a Gaussian
mixture fitted to real embeddings of the bundled model (caveat printed with the rows: recall on real data at 1M
was not measured).
"""

from __future__ import annotations

import gc
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.in_process.faiss._store import DEFAULT_APPROXIMATE_ABOVE, FaissIndex
from strands_semantic_memory.archives.sqlite import SqliteArchive
from strands_semantic_memory.embeddings import Vectors
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.retrieval import RETRIEVAL_MODES, Retrieval

from .measuring import PrecomputedEmbedder, backend_of, cyclic_messages, percentile, rss_bytes, spread, unique_queries
from .results import Crossover, DurableOpenRow, EngineRow, Pool, SessionTurnRow, VectorIndexRow


@dataclass(frozen=True)
class ScaleSettings:
    """Sizes of one scale run. ``FULL`` is what the report shows; ``QUICK`` keeps the smoke test fast."""

    turn_sizes: tuple[int, ...] = (0, 1_000, 10_000, 100_000)
    turns: int = 10
    turn_rounds: int = 3
    """Rounds of ``turns`` turns with the durable archive (cheap); the JSON state runs one round (it is not)."""
    open_sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    open_repeats: int = 3
    """Reopens of each durable archive (their min / median / max is the spread)."""
    restore_repeats: int = 2
    """JSON-state restores of each archive (no target: the median is enough)."""
    index_sizes: tuple[int, ...] = (1_000, 10_000, 100_000, 200_000, 500_000, 1_000_000)
    index_queries: int = 200
    approximate_above: int = DEFAULT_APPROXIMATE_ABOVE
    engine_sizes: tuple[int, ...] = (100_000, 1_000_000)
    engine_queries: int = 100
    engine_rounds: int = 3
    """Hybrid retrieval is timed in this many rounds of ``engine_queries`` on the same built archive."""


FULL_SCALE = ScaleSettings()
QUICK_SCALE = ScaleSettings(
    turn_sizes=(0, 300),
    turns=3,
    turn_rounds=2,
    open_sizes=(300,),
    open_repeats=2,
    restore_repeats=1,
    index_sizes=(1_000, 3_000),
    index_queries=20,
    approximate_above=2_000,
    engine_sizes=(3_000,),
    engine_queries=10,
    engine_rounds=2,
)


# --------------------------------------------------------------------------------------------- synthetic vectors


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


# --------------------------------------------------------------------------------------------- FAISS tiers


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
        store = FaissIndex(real.shape[1], approximate_above=settings.approximate_above)
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


# --------------------------------------------------------------------------------------------- the engine at scale


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
        store = getattr(memory.archive, "_vectors", None)
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
                    "approximate": bool(getattr(store, "approximate", False)),
                }
            )
        documents.inner = embedder
        del memory, documents, vectors
        gc.collect()
    return rows


# --------------------------------------------------------------------------------------------- durable archive


def _fill(memory: SemanticMemory, messages: Sequence[Any]) -> None:
    for start in range(0, len(messages), 2000):
        memory.add(messages[start : start + 2000])


def durable_open_rows(embedder: Any, pool: Pool, settings: ScaleSettings) -> list[DurableOpenRow]:
    """Reopen a durable archive of each size, against saving and restoring the same archive as JSON state."""
    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    rows: list[DurableOpenRow] = []
    folder = Path(tempfile.mkdtemp(prefix="ssm-open-"))
    try:
        for size in settings.open_sizes:
            messages = cyclic_messages(pool, size)
            path = folder / f"archive-{size}.sqlite3"
            durable = SemanticMemory(embedder=pre, archive_path=path)
            started = time.perf_counter()
            _fill(durable, messages)
            fill = time.perf_counter() - started
            durable.archive.close()
            opens, opens_cpu = [], []
            for _ in range(settings.open_repeats):
                gc.collect()
                started, started_cpu = time.perf_counter(), time.process_time()
                archive = SqliteArchive(path)
                opens.append(time.perf_counter() - started)
                opens_cpu.append(time.process_time() - started_cpu)
                assert len(archive) == size and not archive.has_pending()
                archive.close()
            files = sum(f.stat().st_size for f in folder.glob(f"archive-{size}.sqlite3*"))
            in_process = SemanticMemory(embedder=pre)
            _fill(in_process, messages)
            started = time.perf_counter()
            payload = json.dumps(in_process.to_state(), separators=(",", ":"))
            save = time.perf_counter() - started
            del in_process
            restores, restores_cpu = [], []
            for _ in range(settings.restore_repeats):
                gc.collect()
                started, started_cpu = time.perf_counter(), time.process_time()
                restored = SemanticMemory.from_state(json.loads(payload), embedder=pre)
                restores.append(time.perf_counter() - started)
                restores_cpu.append(time.process_time() - started_cpu)
                del restored
            rows.append(
                {
                    "size": size,
                    "sqlite_fill_ms_per_message": fill * 1000 / size,
                    "sqlite_open_seconds": float(np.median(opens)),
                    "sqlite_open_spread": spread(opens),
                    "sqlite_open_cpu_seconds": float(np.median(opens_cpu)),
                    "sqlite_file_bytes": files,
                    "json_state_bytes": len(payload),
                    "json_save_seconds": save,
                    "json_restore_seconds": float(np.median(restores)),
                    "json_restore_cpu_seconds": float(np.median(restores_cpu)),
                }
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def session_turn_rows(embedder: Any, pool: Pool, settings: ScaleSettings) -> list[SessionTurnRow]:
    """Median wall time of one agent turn with Strands' ``FileSessionManager``, JSON state vs durable archive.

    A real ``Agent`` with a scripted model (no model time), the semantic manager holding an archive of the given
    size, and a ``FileSessionManager``. Each turn first archives two messages, as a conversation at its context
    limit does when messages leave the context: Strands then saves the agent state again (it skips the save when
    the manager's state is unchanged), which with JSON state means the whole archive.

    The durable archive runs ``settings.turn_rounds`` rounds of ``settings.turns`` turns (cheap); its overhead
    against the empty archive is also given per round (round ``i`` at this size minus round ``i`` of the empty
    archive: ``sqlite_overhead_rounds``). JSON state runs one round (a turn at 100k takes seconds).
    """
    from strands import Agent
    from strands.session.file_session_manager import FileSessionManager

    from benchmarks.scripted import ScriptedModel
    from strands_semantic_memory import SemanticSummarizingConversationManager

    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    most = settings.turns * max(1, settings.turn_rounds)
    leaving: list[Any] = cyclic_messages(pool, 2 * most + 2)  # known texts: nothing new is embedded
    texts = [render_message(m) for m in leaving]
    pre.embed_queries(["warm up the model"])
    rows: list[SessionTurnRow] = []
    for size in settings.turn_sizes:
        measured: dict[str, _Turns] = {}
        for backend in ("json", "sqlite"):
            folder = Path(tempfile.mkdtemp(prefix="ssm-turn-"))
            try:
                path = folder / "archive.sqlite3" if backend == "sqlite" else None
                memory = SemanticMemory(embedder=pre, archive_path=path)
                _fill(memory, cyclic_messages(pool, size))
                manager = SemanticSummarizingConversationManager(memory=memory, preserve_recent_messages=10)
                sessions = FileSessionManager(session_id=f"bench-{backend}-{size}", storage_dir=str(folder))
                agent = Agent(
                    model=ScriptedModel(), conversation_manager=manager, session_manager=sessions, callback_handler=None
                )
                agent(texts[0])  # the first turn creates the session files
                per_turn, per_turn_cpu, per_round = [], [], []
                rounds = max(1, settings.turn_rounds) if backend == "sqlite" else 1
                for round_ in range(rounds):
                    round_turns = []
                    for turn in range(round_ * settings.turns + 1, (round_ + 1) * settings.turns + 1):
                        gc.collect()
                        started, started_cpu = time.perf_counter(), time.process_time()
                        memory.add(leaving[2 * turn : 2 * turn + 2])
                        agent(texts[turn])
                        round_turns.append((time.perf_counter() - started) * 1000)
                        per_turn_cpu.append((time.process_time() - started_cpu) * 1000)
                    per_round.append(float(np.median(round_turns)))
                    per_turn.extend(round_turns)
                measured[backend] = _Turns(
                    turn_ms=float(np.median(per_turn)),
                    round_ms=per_round,
                    cpu_ms=float(np.median(per_turn_cpu)),
                    agent_json_bytes=sum(f.stat().st_size for f in folder.rglob("agent.json")),
                )
                if path is not None:
                    memory.archive.close()
                del agent, manager, memory, sessions
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        as_json, durable = measured["json"], measured["sqlite"]
        rows.append(
            {
                "size": size,
                "json_turn_ms": as_json.turn_ms,
                "json_turn_round_ms": as_json.round_ms,
                "json_turn_cpu_ms": as_json.cpu_ms,
                "json_agent_json_bytes": as_json.agent_json_bytes,
                "sqlite_turn_ms": durable.turn_ms,
                "sqlite_turn_round_ms": durable.round_ms,
                "sqlite_turn_cpu_ms": durable.cpu_ms,
                "sqlite_agent_json_bytes": durable.agent_json_bytes,
                "json_overhead_ms": None,
                "sqlite_overhead_ms": None,
            }
        )
    empty = next((r for r in rows if r["size"] == 0), None)
    if empty is not None:
        for row in rows:
            row["json_overhead_ms"] = row["json_turn_ms"] - empty["json_turn_ms"]
            row["sqlite_overhead_ms"] = row["sqlite_turn_ms"] - empty["sqlite_turn_ms"]
            pairs = zip(row["sqlite_turn_round_ms"], empty["sqlite_turn_round_ms"], strict=False)
            row["sqlite_overhead_rounds"] = spread([mine - base for mine, base in pairs])
    return rows


@dataclass(frozen=True)
class _Turns:
    """One backend's turns at one archive size: median wall and CPU time, per-round medians, saved bytes."""

    turn_ms: float
    round_ms: list[float]
    cpu_ms: float
    agent_json_bytes: int


def crossover(turn_rows: list[SessionTurnRow], open_rows: list[DurableOpenRow], margin_ms: float = 5.0) -> Crossover:
    """Where the durable archive starts to pay, from measured rows (linear interpolation between sizes).

    Returns:
        ``turn_size``: the archive size above which a turn with JSON state costs ``margin_ms`` more CPU than with
        the durable archive (the 5 ms target); ``open_size``: the size above which restoring JSON state takes more
        CPU than reopening the file. Either is the smallest size measured when the file already wins there, and
        None when it never does.
    """

    def first_above(rows: Sequence[tuple[int, float, float]], margin: float) -> float | None:
        """The size where ``left - right`` first exceeds ``margin``, from ``(size, left, right)`` rows."""
        previous: tuple[float, float] | None = None
        for size, left, right in sorted(rows):
            gap = left - right - margin
            if gap > 0:
                if previous is None:
                    return float(size)
                size0, gap0 = previous
                return float(size0 + (size - size0) * (-gap0) / (gap - gap0))
            previous = (float(size), gap)
        return None

    turns = [(r["size"], r["json_turn_cpu_ms"], r["sqlite_turn_cpu_ms"]) for r in turn_rows]
    opens = [(r["size"], r["json_restore_cpu_seconds"], r["sqlite_open_cpu_seconds"]) for r in open_rows]
    return {"turn_size": first_above(turns, margin_ms), "open_size": first_above(opens, 0.0)}
