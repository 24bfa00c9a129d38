"""The measurements of the retrieval, latency, archive-cost and restore sections, and LoCoMo with its timing.

Each function returns plain data of a shape in ``results.py``, which ``report.py`` turns into tables and plots.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from strands_semantic_memory import SemanticMemory, SemanticMemoryHook
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.retrieval import RETRIEVAL_MODES, Retrieval

from .dataset import Dataset, filler_messages
from .locomo import load_conversations, run_locomo, turn_text_of
from .measuring import (
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
from .naive import NaiveMemory
from .results import (
    HookLatency,
    Latency,
    LocomoResult,
    Pool,
    PostgresLatency,
    QualityResult,
    RestoreResult,
    ScaleResult,
    ScaleRow,
    WithEmbedding,
)

MODES: tuple[Retrieval, ...] = ("dense", "lexical", "hybrid")


@dataclass(frozen=True)
class Settings:
    """Sizes of one run. ``FULL`` is what ``docs/benchmarks.md`` reports; ``QUICK`` keeps the smoke test fast."""

    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    pool: int = 5_000
    latency_queries: int = 60
    """Distinct queries per size for the hybrid hook latency (split into ``repeats`` rounds)."""
    side_queries: int = 20
    """Distinct queries per size for dense, lexical and query-embedding timings."""
    per_kind: int = 15
    naive_sizes: tuple[int, ...] = (1_000, 10_000)
    naive_ops: int = 20
    restore_size: int = 10_000
    naive_restore_size: int = 1_000
    """The naive restore (re-embedding everything) is timed on this many messages and scaled linearly."""
    loop_turns: int = 60
    pg_sizes: tuple[int, ...] = (10_000, 100_000)
    repeats: int = 3
    """Rounds of every measurement that has a target (the report shows their min / median / max)."""
    archive_probe: int = 100
    """Messages archived with embedding included, ours against the naive pattern, per round."""


FULL = Settings()
QUICK = Settings(
    sizes=(200, 600),
    pool=300,
    latency_queries=6,
    side_queries=3,
    per_kind=3,
    naive_sizes=(200,),
    naive_ops=3,
    restore_size=300,
    naive_restore_size=100,
    loop_turns=24,
    pg_sizes=(200,),
    repeats=2,
    archive_probe=10,
)


# --------------------------------------------------------------------------------------------- pool


def embed_pool(embedder: Any, size: int, compare: Any = None, compare_size: int = 500) -> Pool:
    """Embed ``size`` filler messages once; the timing is the embedding cost per message.

    With ``compare`` (another backend of the same model, e.g. PyTorch beside ONNX Runtime), the first
    ``compare_size`` texts are embedded by it as well: its cost per message, and the largest cosine difference
    between the two backends' document vectors (they should agree to float rounding, which is why the pool is
    embedded only once and shared).
    """
    messages = filler_messages(size, seed=101)
    texts = [render_message(m) for m in messages]
    started = time.perf_counter()
    vectors = embedder.embed_documents(texts)
    seconds = time.perf_counter() - started
    distinct = len(set(texts))
    pool: Pool = {
        "messages": messages,
        "texts": texts,
        "vectors": vectors,
        "seconds": seconds,
        "ms_per_message": seconds * 1000 / size,
        "distinct": distinct,
        "backend": backend_of(embedder),
    }
    if compare is not None:
        subset = texts[: min(compare_size, size)]
        compare.embed_documents(subset[:2])  # load the model outside the timing
        started = time.perf_counter()
        other = np.asarray(compare.embed_documents(subset), dtype=np.float32)
        elapsed = time.perf_counter() - started
        ours = np.asarray(vectors[: len(subset)], dtype=np.float32)
        pool["compare"] = {
            "backend": backend_of(compare),
            "measured_on": len(subset),
            "ms_per_message": elapsed * 1000 / len(subset),
            "default_ms_per_message_same_texts": _time_per_message(embedder, subset),
            "max_cosine_difference": float(np.max(np.abs(np.sum(ours * other, axis=1) - 1.0))),
        }
    return pool


def _time_per_message(embedder: Any, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    embedder.embed_documents(texts)
    return (time.perf_counter() - started) * 1000 / len(texts)


# --------------------------------------------------------------------------------------------- quality


def retrieval_quality(dataset: Dataset, embedder: Any) -> QualityResult:
    """Recall@5/@10 of evidence turns per mode and question kind; window recall at equal turn budgets."""
    kinds = sorted({q.kind for q in dataset.questions})
    results: QualityResult = {
        "modes": {},
        "windows": {},
        "questions": len(dataset.questions),
        "messages": len(dataset.messages),
        "kinds": kinds,
    }
    texts = [render_message(m) for m in dataset.messages]
    shared = PrecomputedEmbedder(embedder, texts, embedder.embed_documents(texts))  # embed once, for all modes
    for mode in MODES:
        memory = build_memory(shared, dataset.messages, retrieval=mode)
        per_kind: dict[str, dict[str, list[float]]] = {k: {"r5": [], "r10": []} for k in ["all", *kinds]}
        for question in dataset.questions:
            hits = [h.index for h in memory.search(question.text, top_k=10)]
            evidence = set(question.evidence)
            r5 = len(evidence & set(hits[:5])) / len(evidence)
            r10 = len(evidence & set(hits[:10])) / len(evidence)
            for key in ("all", question.kind):
                per_kind[key]["r5"].append(r5)
                per_kind[key]["r10"].append(r10)
        results["modes"][mode] = {k: {m: float(np.mean(v)) for m, v in d.items()} for k, d in per_kind.items()}
        windows: dict[str, float] = {}
        for budget in (10, 20):
            for radius in (0, 1, 2):
                top_k = max(1, budget // (2 * radius + 1))
                scores = []
                for question in dataset.questions:
                    covered: set[int] = set()
                    for window in memory.retrieve(question.text, top_k=top_k, context_radius=radius):
                        covered.update(window.indices)
                    assert len(covered) <= budget
                    evidence = set(question.evidence)
                    scores.append(len(evidence & covered) / len(evidence))
                windows[f"budget {budget}, radius {radius} (top_k {top_k})"] = float(np.mean(scores))
        results["windows"][mode] = windows
    return results


# --------------------------------------------------------------------------------------------- latency and cost


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
            PostgresArchive(own_dsn, user_id=f"bench-{len(messages)}"), embedder, messages, queries, rounds
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
        store.forget_all()
        store.close()


def restore(settings: Settings, embedder: Any, pool: Pool) -> RestoreResult:
    """Save and restore an archive of ``restore_size`` messages: ours (no embedding) vs naive (re-embedding)."""
    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    messages = cyclic_messages(pool, settings.restore_size)
    memory = build_memory(pre, messages)
    payload = json.dumps(memory.to_state())
    calls_before = (pre.document_calls, pre.query_calls)
    seconds = []
    for _ in range(settings.repeats):
        gc.collect()
        started = time.perf_counter()
        restored = SemanticMemory.from_state(json.loads(payload), embedder=pre)
        seconds.append(time.perf_counter() - started)
        assert len(restored) == len(messages)
        del restored
    embedding_calls = (pre.document_calls - calls_before[0]) + (pre.query_calls - calls_before[1])
    naive = NaiveMemory(embedder, pool["vectors"].shape[1])
    subset = [f"{render_message(m)} (naive restore {n})" for n, m in enumerate(messages[: settings.naive_restore_size])]
    naive.bulk_load(subset, embedder.embed_documents(subset[:1]).repeat(len(subset), axis=0))
    naive_payload = naive.dump()
    started = time.perf_counter()
    NaiveMemory.restore(naive_payload, embedder, pool["vectors"].shape[1])  # embeds every message again
    naive_seconds = (time.perf_counter() - started) * len(messages) / len(subset)
    return {
        "size": len(messages),
        "seconds": float(np.median(seconds)),
        "spread": spread(seconds),
        "embedding_calls": embedding_calls,
        "state_bytes": len(payload),
        "naive_seconds": naive_seconds,
        "naive_measured_on": len(subset),
    }


# --------------------------------------------------------------------------------------------- LoCoMo


def locomo(
    path: Any,
    embedder: Any,
    repeats: int,
    limit: int | None = None,
    compare: Any = None,
    compare_modes: Sequence[str] = ("hybrid", "dense"),
) -> LocomoResult:
    """LoCoMo recall by mode and category (``benchmarks/locomo.py``), and ``search(q, top_k=50)`` latency of the
    default configuration in ``repeats`` rounds (recall is deterministic; only the timing varies).

    Each round asks a different share of the questions (question ``n`` in round ``n % repeats``) of fresh
    memories, so no round hits a query cache. With ``compare`` (another backend of the same model), recall is
    measured again in ``compare_modes`` with ``compare`` embedding the questions over the same document vectors
    (``results["compare"]``): the effect of the query path alone (e.g. int8 ONNX queries against PyTorch). Only
    recall is compared, so ``compare`` embeds every question once, in batches (equal to one at a time up to float
    rounding): on a loaded machine PyTorch one query at a time would take most of the run.
    """
    if not Path(path).is_file():
        return run_locomo(path, embedder=embedder, limit=limit)  # prints the one line that says why
    conversations = load_conversations(path)[:limit]
    texts = [turn_text_of(m) for c in conversations for m in c.messages]
    shared = PrecomputedEmbedder(embedder, texts, embedder.embed_documents(texts))  # embedded once for every run
    results = run_locomo(path, embedder=shared, limit=limit)
    results["backend"] = backend_of(embedder)
    plain = run_locomo(path, embedder=shared, modes=("lexical",), limit=limit, options={"ranking": NO_CONTEXT})
    results["lexical_without_context"] = plain["modes"]["lexical"]["all"]
    if compare is not None:
        other = PrecomputedEmbedder(embedder, texts, np.stack([shared.known[t] for t in texts]), queries=compare)
        questions = sorted({q.text for c in conversations for q in c.questions})
        if questions:
            other.known_queries = dict(zip(questions, compare.embed_queries(questions), strict=True))
        compared = run_locomo(path, embedder=other, modes=tuple(compare_modes), limit=limit)
        assert other.queries is compare and all(q in other.known_queries for q in questions)
        results["compare"] = {"backend": backend_of(compare), "modes": compared["modes"]}
    p50s = []
    for round_ in range(repeats):
        latencies = []
        for conversation in conversations:
            memory = SemanticMemory(embedder=shared)
            memory.add(conversation.messages)
            for number, question in enumerate(conversation.questions):
                if number % repeats == round_:
                    started = time.perf_counter()
                    memory.search(question.text, top_k=50)
                    latencies.append((time.perf_counter() - started) * 1000)
        p50s.append(percentile(latencies, 50))
    results["latency_spread"] = spread(p50s)
    return results
