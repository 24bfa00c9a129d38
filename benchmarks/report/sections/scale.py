"""Hook latency, archive cost, eviction and memory at each archive size, this library beside the naive pattern."""

from __future__ import annotations

from benchmarks.report.cells import number, ratio, spread_cell
from benchmarks.report.figures import SCALE, Add, Figure, Part
from benchmarks.results import Results, ScaleResult


def _scale(add: Add, scale: ScaleResult) -> None:
    add("## Hook latency, archive cost, eviction, memory")
    add("")
    add(
        f"Archives of each size are built from a pool of {scale['pool']:,} messages "
        f"({scale['pool_distinct']:,} distinct texts) embedded once with the real model; larger archives repeat the "
        "pool. Exact flat search and BM25 costs do not depend on the vector values, so the timings hold for "
        "distinct messages too (above 50,000 vectors the store searches its approximate index, whose cost depends "
        "little on them). Latency is `SemanticMemoryHook.preview(query)`: what the hook does for a user turn "
        "(query embedding, search, window assembly, budget, formatting of the injected block) without a model, over "
        "distinct queries (no cache hits); without an agent `preview` runs without an event loop (in an agent the "
        "hook's search runs on a worker thread, `asyncio.to_thread`: about 0.05 ms more, measured apart). The hook "
        "searches about as many hits as the memory's share of the window holds: with no agent, and so no model "
        "window, the fallback share (1,000 tokens) gives 25 hits with their neighbours (before the context budget "
        "the hook asked for 3). Hybrid latency is measured in rounds (median p50, min to max of the rounds)."
    )
    add("")
    backend = scale["backend"]["short"]
    compare = scale["compare_backend"]["short"] if scale["compare_backend"] else None
    add(
        f"Document embedding cost (measured on the pool, default backend; {backend} names its query graph, documents "
        "go through the fp32 graph): "
        f"**{scale['embedding_ms_per_message']:.2f} ms per message** (batched, CPU). The archive columns are beyond "
        "embedding."
        + (
            f" The {compare} columns time the same hook over the same archive with {compare} embedding the queries "
            "(one round of distinct queries, as many as the dense and lexical columns)."
            if compare
            else ""
        )
    )
    add("")
    add(
        "The naive baseline (`benchmarks/measure/naive.py`: numpy `vstack` + FAISS rebuild on every add, `pop(0)` eviction) "
        "searches with the library's FAISS thread setting (1 OpenMP thread per search, set around each search as "
        "the library's store does), so that only the algorithm differs; it is also shown with FAISS's default "
        f"({scale['faiss_default_threads']} threads here)."
    )
    add("")
    compared = any("latency_compare" in r for r in scale["rows"])
    add(
        f"| archived | hybrid p50 (rounds), {backend} | hybrid p99 | dense p50 / p99 | lexical p50 / p99 | PostgreSQL "
        "hybrid p50 (rounds) / p99 | naive p50 / p99, 1 thread | naive p50 / p99, default threads | query embedding "
        f"p50, {backend} |"
        + (f" hybrid p50 / p99, {compare} queries | query embedding p50, {compare} |" if compared else "")
    )
    add("| --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- | --- |" if compared else ""))
    for r in scale["rows"]:
        other = r.get("latency_compare")
        extra = (
            (
                f" {number(other['p50'])} / {number(other['p99'])} | {number(other['embed_p50'])} |"
                if other
                else " not run | not run |"
            )
            if compared
            else ""
        )
        pg = r.get("latency_pgvector")
        naive, naive_default = r.get("latency_naive"), r.get("latency_naive_default_threads")
        pg_cell = f"{spread_cell(pg['rounds'])} / {number(pg['p99'])}" if pg else r.get("pgvector_error", "not run")
        add(
            f"| {r['size']:,} | {spread_cell(r['latency_hybrid']['rounds'])} | {number(r['latency_hybrid']['p99'])} | "
            f"{number(r['latency_dense']['p50'])} / {number(r['latency_dense']['p99'])} | "
            f"{number(r['latency_lexical']['p50'])} / {number(r['latency_lexical']['p99'])} | {pg_cell} | "
            f"{(number(naive['p50']) + ' / ' + number(naive['p99'])) if naive else 'not run'} | "
            f"{(number(naive_default['p50']) + ' / ' + number(naive_default['p99'])) if naive_default else 'not run'} | "
            f"{number(r['latency_hybrid']['embed_p50'])} |" + extra
        )
    add("")
    plain_rows = [r for r in scale["rows"] if "latency_lexical_without_context" in r]
    if plain_rows:
        cells = ", ".join(
            f"{number(r['latency_lexical_without_context']['p50'])} ms at {r['size']:,} "
            f"(with it: {number(r['latency_lexical']['p50'])})"
            for r in plain_rows
        )
        add(
            "The lexical-only hook without conversation context (each message scored alone, as release 1 ranked; "
            f"its recall is in the LoCoMo section), p50 over the same number of distinct queries: {cells}."
        )
        add("")
    fills = [(r["size"], r["latency_pgvector"]) for r in scale["rows"] if "latency_pgvector" in r]
    if fills:
        add(
            "PostgreSQL bulk archiving (vectors precomputed, batches of 5,000 through `memory.add`; each size in "
            "a database of its own, so a first load: no HNSW index yet, which in a shared table would take every new "
            "vector as a graph insert): "
            + ", ".join(f"{size:,} messages in {pg['fill_seconds']:.1f} s" for size, pg in fills)
            + ". Then `store.build_index()` (what a bulk load should be followed by; otherwise the first search starts "
            "the build in the background and searches are exact until it ends), before the latency is measured: "
            + ", ".join(
                f"{size:,} messages {pg['index_seconds']:.1f} s"
                + ("" if pg.get("indexed") else " (below the exact-search threshold: no index)")
                for size, pg in fills
                if "index_seconds" in pg
            )
            + "."
        )
        add("")
    add(
        "| archived | archive, ms per message (10 batches of 100: median, min to max) | at the limit (with eviction) | "
        "naive add (vstack + rebuild) | ratio | naive eviction (pop(0) + delete + rebuild) | est. bytes per message "
        "beyond text | RSS bytes per message beyond text |"
    )
    add("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in scale["rows"]:
        naive_add = r.get("naive_add_ms_per_message")
        add(
            f"| {r['size']:,} | {spread_cell(r['index_spread'], 3)} | {r['at_limit_ms_per_message']:.3f} | "
            f"{number(naive_add, 3) if naive_add is not None else 'not run'} | "
            f"{ratio(naive_add, r['index_ms_per_message'])} | "
            f"{number(r.get('naive_evict_ms_per_message'), 3) if 'naive_evict_ms_per_message' in r else 'not run'} | "
            f"{r['estimated_bytes_per_message_beyond_text']:,.0f} | {r['rss_bytes_per_message_beyond_text']:,.0f} |"
        )
    add("")
    add(
        "The naive baseline is not run at 100k: one add there rebuilds a 100k-vector index, and building the archive "
        "add by add would take hours. Its per-operation cost grows linearly with the archive (see the sizes it ran). "
        "RSS growth is measured once around building each archive (it includes allocator slack and anything else the "
        "process allocated meanwhile); the estimate is the byte accounting that the memory limits use."
    )
    add("")
    embedding = scale.get("with_embedding")
    if embedding:
        add(
            f"Archiving with embedding included, side by side at {embedding['size']:,} archived messages, "
            f"{embedding['messages']} new messages per round: this library (`memory.add` of the batch, as the "
            f"manager archives the messages leaving the window) **{spread_cell(embedding['ours'])} ms per message**; the "
            f"naive pattern (one embedding call per message as it arrives, then vstack + rebuild) "
            f"**{spread_cell(embedding['naive'])} ms per message**. Both sides call the same embedder object "
            f"({embedding['embedder']['long']}), on texts that appear nowhere else in the run: "
            "only the algorithm differs (one batched call and an incremental index, against a call per message and a "
            "rebuild per message)."
        )
        prototype = embedding["prototype"]
        if prototype:
            threads = embedding["prototype_threads"]
            add("")
            add(
                "The same rounds, the naive pattern as the prototype shipped it (one "
                f"{embedding['prototype_embedder']['long'] if embedding['prototype_embedder'] else 'PyTorch'} call per message"
                + (f", on PyTorch's default {threads} threads" if threads else "")
                + f", then vstack + rebuild): **{spread_cell(prototype)} ms per message**, "
                f"{ratio(prototype['median'], embedding['ours']['median'])} this library's "
                f"time (against the naive pattern on the library's own embedder: "
                f"{ratio(embedding['naive']['median'], embedding['ours']['median'])}). The difference "
                "between the two is the embedder's, not the algorithm's."
            )
        add("")
    add("![scale](scale.png)")
    add("")


def build(results: Results) -> Part | None:
    """The section, or None when the measurement did not run."""
    scale = results.get("scale")
    if not scale:
        return None
    lines: list[str] = []
    _scale(lines.append, scale)
    return Part(lines, (Figure(SCALE, scale),))
