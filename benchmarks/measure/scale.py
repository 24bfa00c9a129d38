"""Hook latency, archive cost, eviction and memory at each archive size, this library and the naive pattern side by side.

Archives of each size repeat the pool's messages with its precomputed vectors. Latency is
``SemanticMemoryHook.preview`` per user turn (query embedding, search, passages, budget, formatting) over distinct
queries, in each retrieval mode, and over PostgreSQL when a server is given; the archive cost is ``memory.add`` of
new batches beyond embedding, and again at the memory's limit (with eviction). The naive pattern
(``benchmarks.measure.naive``) is timed at the smaller sizes, and archiving with embedding included is compared
side by side.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import time
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from benchmarks.data.conversations import filler_messages
from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.naive import NaiveMemory
from benchmarks.measure.sizes import Settings
from benchmarks.measure.tools import (
    NO_CONTEXT,
    PrecomputedEmbedder,
    backend_of,
    build_memory,
    cyclic_messages,
    percentile,
    rss_bytes,
    spread,
    unique_queries,
)
from benchmarks.results import HookLatency, Latency, Pool, PostgresLatency, ScaleResult, ScaleRow, WithEmbedding
from strands_semantic_memory import SemanticMemory, SemanticMemoryHook
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.retrieval import RETRIEVAL_MODES


def hook_latency(memory: SemanticMemory, queries: Sequence[str], rounds: int = 1) -> HookLatency:
    """The hook's added time per user turn, without a model: ``SemanticMemoryHook.preview`` (query embedding,
    search, window assembly, budget, formatting), over distinct queries (no query-cache hits).

    The queries are split into ``rounds`` rounds; ``p50`` / ``p99`` are over every query, ``rounds`` is the spread
    of the per-round p50s.
    """
    hook = SemanticMemoryHook(memory=memory)
    hook.preview(f"warm up the caches {queries[0] if queries else ''}")  # a new text: warms the embedder too
    totals, per_round = [], []
    size = max(1, len(queries) // rounds)
    for start in range(0, size * rounds, size):
        round_totals = []
        for query in queries[start : start + size]:
            started = time.perf_counter()
            hook.preview(query)
            round_totals.append((time.perf_counter() - started) * 1000)
        per_round.append(percentile(round_totals, 50))
        totals.extend(round_totals)
    embed = []
    for query in queries[:20]:
        started = time.perf_counter()
        memory.embedder.embed_queries([query + " (timing)"])
        embed.append((time.perf_counter() - started) * 1000)
    return {
        "p50": percentile(totals, 50),
        "p99": percentile(totals, 99),
        "embed_p50": percentile(embed, 50),
        "rounds": spread(per_round),
    }


def naive_latency(naive: NaiveMemory, queries: Sequence[str], rounds: int = 1) -> Latency:
    """Naive search time per query (query embedding + FAISS search), with the same rounds as :func:`hook_latency`."""
    naive.search("warm up", 3)
    totals, per_round = [], []
    size = max(1, len(queries) // rounds)
    for start in range(0, size * rounds, size):
        round_totals = []
        for query in queries[start : start + size]:
            started = time.perf_counter()
            naive.search(query, 3)
            round_totals.append((time.perf_counter() - started) * 1000)
        per_round.append(percentile(round_totals, 50))
        totals.extend(round_totals)
    return {"p50": percentile(totals, 50), "p99": percentile(totals, 99), "rounds": spread(per_round)}


def _suffixed(messages: Sequence[Any], tag: str) -> list[Any]:
    return [dict(m, content=[{"text": f"{render_message(m)} [{tag} {n}]"}]) for n, m in enumerate(messages)]


def _archive_rounds(memory: SemanticMemory, pre: PrecomputedEmbedder, extra: list[Any], tag: str) -> list[float]:
    """ms per message of archiving 10 batches of 100 new messages whose vectors are precomputed."""
    per_message = []
    for start in range(0, 1000, 100):
        originals = extra[start : start + 100]
        batch = _suffixed(originals, f"{tag}:{start}")
        for original, message in zip(originals, batch, strict=True):  # timing excludes embedding: the vector of
            pre.known[render_message(message)] = pre.known[render_message(original)]  # the unsuffixed text
        started = time.perf_counter()
        memory.add(batch)
        per_message.append((time.perf_counter() - started) * 1000 / len(batch))
    return per_message


def archiving_with_embedding(
    settings: Settings,
    embedder: Any,
    pool: Pool,
    extra: list[Any],
    prototype: Any = None,
    prototype_threads: int | None = None,
) -> WithEmbedding:
    """Archiving throughput with embedding included, side by side in one run, at the largest naive size.

    Ours: ``memory.add`` of the new messages in one call, as the manager archives the messages that leave
    the window (embedding with the real model inside the call). Naive: the common pattern, one embedding call
    per message as it arrives, then ``vstack`` + index rebuild. Both embed with the same embedder object
    (``embedder``, the library's default backend in ``run.py``): only the algorithm differs. Each round uses new
    texts that appear nowhere else (no cache, no repeated text for either side).

    With ``prototype`` (the PyTorch embedder), the naive pattern is also timed as the prototype shipped it: one
    PyTorch call per message, on PyTorch's own default thread count (``prototype_threads``, restored after: the
    run may pin PyTorch to fewer threads for its comparison rows), in the same rounds.
    """
    size = max(settings.naive_sizes)
    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    base = cyclic_messages(pool, size)
    memory = build_memory(pre, base)
    naive = NaiveMemory(pre.inner, pool["vectors"].shape[1], threads=1)  # the very embedder ours calls
    texts = [render_message(m) for m in base]
    vectors = np.stack([pre.known[t] for t in texts])
    naive.bulk_load(texts, vectors)
    shipped = NaiveMemory(prototype, pool["vectors"].shape[1], threads=1) if prototype is not None else None
    if shipped is not None:
        shipped.bulk_load(texts, vectors)
        prototype.embed_documents(["load the prototype's model outside the timing"])
    ours, theirs, as_shipped = [], [], []
    count = settings.archive_probe
    for round_ in range(settings.repeats):
        batch = _suffixed(extra[round_ * count : (round_ + 1) * count], f"with embedding {round_}")
        calls = pre.document_calls
        started = time.perf_counter()
        memory.add(batch)
        ours.append((time.perf_counter() - started) * 1000 / count)
        assert pre.document_calls > calls and all(render_message(m) in pre.known for m in batch), "embedded inside"
        theirs.append(_naive_round(naive, pre.inner, [f"{render_message(m)} (naive)" for m in batch]) / count)
        if shipped is not None:
            as_shipped.append(_prototype_round(shipped, prototype, batch, prototype_threads) / count)
    return {
        "size": size,
        "messages": count,
        "ours": spread(ours),
        "naive": spread(theirs),
        "embedder": backend_of(pre.inner),
        "prototype": spread(as_shipped) if as_shipped else None,
        "prototype_embedder": backend_of(prototype) if prototype is not None else None,
        "prototype_threads": prototype_threads,
    }


def _naive_round(naive: NaiveMemory, embedder: Any, texts: Sequence[str]) -> float:
    """ms to add ``texts`` the naive way: one embedding call per message as it arrives, then vstack + rebuild."""
    started = time.perf_counter()
    for text in texts:
        naive.add(text, embedder.embed_documents([text])[0])
    return (time.perf_counter() - started) * 1000


def _prototype_round(naive: NaiveMemory, embedder: Any, batch: Sequence[Any], threads: int | None) -> float:
    """:func:`_naive_round` as the prototype shipped: PyTorch on ``threads`` threads (the pinned count restored)."""
    import torch

    pinned = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        return _naive_round(naive, embedder, [f"{render_message(m)} (prototype)" for m in batch])
    finally:
        torch.set_num_threads(pinned)


def scale(
    settings: Settings,
    embedder: Any,
    pool: Pool,
    pg_dsn: str | None = None,
    compare: Any = None,
    torch_default_threads: int | None = None,
) -> ScaleResult:
    """Latency, archive cost, eviction and memory at each archive size, ours and naive side by side.

    ``embedder`` is the library's default; with ``compare`` (another backend of the same model), the hybrid hook
    latency is measured again with ``compare`` embedding the queries over the same archive (``latency_compare``).
    """
    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    queries = unique_queries(settings.latency_queries, seed=5)
    extra = filler_messages(1000, seed=202)  # new messages for the timed archive batches
    pre.embed_documents([render_message(m) for m in extra])  # real vectors, computed before timing
    rows: list[ScaleRow] = []
    for size in settings.sizes:
        base = cyclic_messages(pool, size)
        gc.collect()
        before = rss_bytes()
        memory = build_memory(pre, base, retrieval="hybrid")
        after = rss_bytes()
        stats = memory.get_memory_usage_stats()
        text_bytes = sum(len(render_message(m).encode()) for m in base)
        latency: dict[str, HookLatency] = {}
        for mode in RETRIEVAL_MODES:
            memory.configure(retrieval=mode)  # distinct queries per mode and size: no query-cache hits
            rounds, count = (settings.repeats, len(queries)) if mode == "hybrid" else (1, settings.side_queries)
            latency[mode] = hook_latency(memory, [f"{q} [{mode} {size}]" for q in queries[:count]], rounds)
        memory.configure(retrieval="lexical")  # what the conversation-context ranking costs in this mode
        ranking = memory.options.ranking
        memory.configure(ranking=NO_CONTEXT)
        try:
            without_context = hook_latency(
                memory, [f"{q} [lexical without context {size}]" for q in queries[: settings.side_queries]]
            )
        finally:
            memory.configure(ranking=ranking, retrieval="hybrid")
        compared: HookLatency | None = None
        if compare is not None:
            pre.queries = compare  # same archive and document vectors, the other backend embeds the queries
            try:  # one round of the side queries: a comparison, not a target (PyTorch is slow on a loaded machine)
                compared = hook_latency(memory, [f"{q} [compare {size}]" for q in queries[: settings.side_queries]])
            finally:
                pre.queries = pre.inner
        per_message = _archive_rounds(memory, pre, extra, f"{size}")
        memory.configure(
            max_num_archived_messages=len(memory)
        )  # eviction at the limit: the same batches into a full memory
        at_limit = _archive_rounds(memory, pre, extra, f"limit {size}")
        row: ScaleRow = {
            "size": size,
            "estimated_bytes_per_message_beyond_text": (stats["total_memory"] - text_bytes) / size,
            "rss_bytes_per_message_beyond_text": (after - before - text_bytes) / size,
            "latency_hybrid": latency["hybrid"],
            "latency_dense": latency["dense"],
            "latency_lexical": latency["lexical"],
            "latency_lexical_without_context": without_context,
            "index_ms_per_message": float(np.median(per_message)),
            "index_spread": spread(per_message),
            "at_limit_ms_per_message": float(np.median(at_limit)),
        }
        if compared is not None:
            row["latency_compare"] = compared
        if (
            pg_dsn is not None
            and size in settings.pg_sizes
            and importlib.util.find_spec("strands_semantic_memory.archives.postgres")
        ):
            try:
                row["latency_pgvector"] = pgvector_latency(
                    pg_dsn, pre, base, [f"{q} [pg {size}]" for q in queries], settings.repeats
                )
            except Exception as error:  # report the rest of the row rather than lose the run
                row["pgvector_error"] = f"{type(error).__name__}: {error}"
        del memory
        gc.collect()
        if size in settings.naive_sizes:
            texts = [render_message(m) for m in base]
            naive_searches: list[Latency] = []
            for threads in (1, None):
                naive = NaiveMemory(embedder, pool["vectors"].shape[1], threads=threads)
                naive.bulk_load(texts, np.stack([pre.known[t] for t in texts]))
                tag = "naive" if threads == 1 else "naive default"
                naive_searches.append(
                    naive_latency(
                        naive, [f"{q} [{tag} {size}]" for q in queries[: settings.side_queries]], settings.repeats
                    )
                )
                del naive
            row["latency_naive"], row["latency_naive_default_threads"] = naive_searches
            naive = NaiveMemory(embedder, pool["vectors"].shape[1], threads=1)
            naive.bulk_load(texts, np.stack([pre.known[t] for t in texts]))
            adds, evicts = [], []
            for i in range(settings.naive_ops):
                vector = pre.known[render_message(extra[i])]
                started = time.perf_counter()
                naive.add(render_message(extra[i]), vector)
                adds.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                naive.evict_oldest()
                evicts.append((time.perf_counter() - started) * 1000)
            row["naive_add_ms_per_message"] = float(np.median(adds))
            row["naive_evict_ms_per_message"] = float(np.median(evicts))
            del naive
        rows.append(row)
    return {
        "rows": rows,
        "embedding_ms_per_message": pool["ms_per_message"],
        "pool": len(pool["texts"]),
        "pool_distinct": pool["distinct"],
        "with_embedding": archiving_with_embedding(
            settings,
            embedder,
            pool,
            extra,
            prototype=compare if backend_of(compare)["name"] == "torch" else None,
            prototype_threads=torch_default_threads,
        ),
        "faiss_default_threads": _faiss_default_threads(),
        "backend": backend_of(embedder),
        "compare_backend": backend_of(compare) if compare is not None else None,
    }


def _faiss_default_threads() -> int:
    import faiss

    return int(faiss.omp_get_max_threads())


def pgvector_latency(
    dsn: str, embedder: Any, messages: Sequence[Any], queries: Sequence[str], rounds: int = 1
) -> PostgresLatency:
    """Hook latency with the PostgreSQL + pgvector store (filled with the same messages and vectors).

    Also times filling the store (vectors precomputed: the bulk archiving cost beyond embedding).
    """
    from strands_semantic_memory.archives.postgres import PostgresArchive

    with fresh_database(dsn, f"bench_{len(messages)}") as own_dsn:
        return _pgvector_run(
            PostgresArchive(dsn=own_dsn, namespace=f"bench-{len(messages)}"), embedder, messages, queries, rounds
        )


@contextlib.contextmanager
def fresh_database(dsn: str, name: str) -> Iterator[str]:
    """A new, empty database on the server of ``dsn`` for the duration (dropped afterwards).

    Each size gets its own table, so a bulk load is timed as a first load (no HNSW index yet): in one shared table
    the index another size built would take every new vector as a graph insert.
    """
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(dsn, dbname=name)
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _pgvector_run(
    store: Any, embedder: Any, messages: Sequence[Any], queries: Sequence[str], rounds: int
) -> PostgresLatency:
    try:
        memory = SemanticMemory(embedder=embedder, archive=store, retrieval="hybrid")
        started = time.perf_counter()
        for start in range(0, len(messages), 5000):
            memory.add(messages[start : start + 5000])
        fill = time.perf_counter() - started
        started = time.perf_counter()
        indexed = store.build_index()  # what a user does after a bulk load; else the first searches build it
        index_seconds = time.perf_counter() - started
        latency = hook_latency(memory, queries, rounds)
        return {
            **latency,
            "fill_seconds": fill,
            "index_seconds": index_seconds,
            "indexed": indexed,
            "filled": len(messages),
        }
    finally:
        store.drop_namespace()
        store.close()


class Scale(Measurement):
    """Hook latency, archive cost, eviction and memory at each of ``run.sizes.run.sizes``."""

    name: ClassVar[str] = "scale"
    label: ClassVar[str] = "latency, archive cost, eviction, memory"
    uses_pool: ClassVar[bool] = True

    def measure(self, run: Run) -> ScaleResult:
        """Every size, with PostgreSQL when the run started it and PyTorch queries when it compares."""
        return scale(
            run.sizes.run,
            run.embedder,
            run.require_pool(),
            pg_dsn=run.pg_dsn,
            compare=run.compare,
            torch_default_threads=run.torch_default_threads,
        )
