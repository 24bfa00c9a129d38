"""Turn benchmark results into ``docs/benchmarks.md`` and PNG plots beside it."""

from __future__ import annotations

import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KIND_LABELS = {
    "all": "overall",
    "exact": "exact tokens",
    "paraphrase": "paraphrase",
    "multi_turn": "multi-turn",
    "temporal": "temporal",
}
KS = (5, 10, 25, 50)


def _fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _ratio(slow: float | None, fast: float | None) -> str:
    if slow is None or fast is None or fast <= 0:
        return "n/a"
    return f"{slow / fast:,.0f}x" if slow / fast >= 10 else f"{slow / fast:.1f}x"


def _spread(s: Mapping[str, Any] | None, digits: int = 2) -> str:
    if not s:
        return "n/a"
    return f"{s['median']:,.{digits}f} ({s['min']:,.{digits}f} to {s['max']:,.{digits}f}, {s['runs']} runs)"


def _get(data: Any, *keys: Any) -> Any:
    for key in keys:
        if data is None:
            return None
        if isinstance(key, int) and isinstance(data, list):
            data = data[key] if -len(data) <= key < len(data) else None
        else:
            data = data.get(key) if isinstance(data, Mapping) else None
    return data


def _by(rows: list[dict[str, Any]] | None, size: int, **match: Any) -> dict[str, Any] | None:
    for row in rows or []:
        if row.get("size") == size and all(row.get(k) == v for k, v in match.items()):
            return row
    return None


# --------------------------------------------------------------------------------------------- plots


def plot_recall(quality: dict[str, Any], out: Path) -> None:
    kinds = ["all", *quality["kinds"]]
    modes = list(quality["modes"])
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(modes)
    for n, mode in enumerate(modes):
        values = [quality["modes"][mode][k]["r10"] for k in kinds]
        ax.bar([i + n * width for i in range(len(kinds))], values, width, label=mode)
    ax.set_xticks([i + width * (len(modes) - 1) / 2 for i in range(len(kinds))])
    ax.set_xticklabels([KIND_LABELS.get(k, k) for k in kinds])
    ax.set_ylabel("recall@10 of evidence turns")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title("Synthetic retrieval set: recall@10 by question type")
    fig.tight_layout()
    fig.savefig(out / "recall.png", dpi=110)
    plt.close(fig)


def plot_locomo(data: dict[str, Any], out: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    for mode, summary in data["modes"].items():
        left.plot(KS, [summary["all"][f"r{k}"] for k in KS], marker="o", label=f"this library, {mode}")
    left.plot(KS, [data["dragon"][f"r{k}"] for k in KS], marker="s", color="black", linestyle="--", label="DRAGON")
    left.set_xscale("log")
    left.set_xticks(KS)
    left.set_xticklabels([str(k) for k in KS])
    left.set_xlabel("k (hits)")
    left.set_ylabel("recall@k of evidence turns (%)")
    left.set_ylim(0, 100)
    left.set_title(f"LoCoMo ({data['conversations']} conversations, {data['questions']} questions)")
    left.legend(fontsize=8)
    first = next(iter(data["modes"]))
    categories = list(data["modes"][first]["categories"])
    modes = list(data["modes"])
    width = 0.8 / len(modes)
    for n, mode in enumerate(modes):
        values = [data["modes"][mode]["categories"][c]["r10"] for c in categories]
        right.bar([i + n * width for i in range(len(categories))], values, width, label=mode)
    right.axhline(data["dragon"]["r10"], color="black", linestyle="--", linewidth=1, label="DRAGON overall R@10")
    right.set_xticks([i + width * (len(modes) - 1) / 2 for i in range(len(categories))])
    right.set_xticklabels([c.split(" ", 1)[-1] for c in categories], fontsize=8)
    right.set_ylabel("recall@10 (%)")
    right.set_ylim(0, 100)
    right.set_title("recall@10 by question category")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "locomo.png", dpi=110)
    plt.close(fig)


def plot_scale(scale: dict[str, Any], out: Path) -> None:
    rows = scale["rows"]
    sizes = [r["size"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for mode in ("hybrid", "dense", "lexical"):
        left.plot(sizes, [r[f"latency_{mode}"]["p50"] for r in rows], marker="o", label=f"{mode} p50")
        left.plot(sizes, [r[f"latency_{mode}"]["p99"] for r in rows], marker="x", linestyle="--", label=f"{mode} p99")
    for key, label, marker in (
        ("latency_naive", "naive p50 (1 FAISS thread)", "s"),
        ("latency_naive_default_threads", "naive p50 (FAISS default threads)", "D"),
        ("latency_pgvector", "PostgreSQL hybrid p50", "^"),
    ):
        points = [(r["size"], r[key]["p50"]) for r in rows if key in r]
        if points:
            left.plot(*zip(*points), marker=marker, label=label)
    left.set_xscale("log")
    left.set_xlabel("archived messages")
    left.set_ylabel("ms per user turn")
    left.set_title("Hook time per user turn (hook.preview)")
    left.legend(fontsize=7)
    right.plot(sizes, [r["index_ms_per_message"] for r in rows], marker="o", label="this library: archive")
    right.plot(sizes, [r["at_limit_ms_per_message"] for r in rows], marker="o", label="this library: at the limit")
    naive_add = [(r["size"], r["naive_add_ms_per_message"]) for r in rows if "naive_add_ms_per_message" in r]
    if naive_add:
        right.plot(*zip(*naive_add), marker="s", color="grey", label="naive: vstack + rebuild")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("archived messages")
    right.set_ylabel("ms per archived message (beyond embedding)")
    right.set_title("Archive cost")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "scale.png", dpi=110)
    plt.close(fig)


def plot_tokens(loop: dict[str, Any], out: Path) -> None:
    rows = loop["rows"]
    names = [r["manager"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, max(4.5, 1.5 + 0.4 * len(rows))))
    positions = range(len(rows))
    left.barh([p - 0.2 for p in positions], [r["mean_tokens"] for r in rows], 0.4, label="mean")
    left.barh([p + 0.2 for p in positions], [r["max_tokens"] for r in rows], 0.4, label="max")
    left.set_yticks(list(positions))
    left.set_yticklabels(names, fontsize=8)
    left.invert_yaxis()
    left.set_xlabel("estimated tokens per request (characters / 4)")
    left.set_title("Tokens sent to the model per turn")
    left.legend(fontsize=8)
    right.barh(list(positions), [r["facts_reached"] for r in rows], color="tab:green")
    right.set_yticks(list(positions))
    right.set_yticklabels([])
    right.invert_yaxis()
    right.set_xlim(0, max(r["facts"] for r in rows))
    right.set_xlabel("planted facts in the request of their recall turn")
    right.set_title("Facts that reached the model when asked")
    fig.tight_layout()
    fig.savefig(out / "tokens.png", dpi=110)
    plt.close(fig)


def plot_durable(large: dict[str, Any], out: Path) -> None:
    turns, opens = large["session_turns"], large["durable_open"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    sizes = [max(r["size"], 100) for r in turns]  # the empty archive is drawn at 100 on the log axis
    left.plot(sizes, [r["json_turn_ms"] for r in turns], marker="o", label="archive in the JSON session state")
    left.plot(sizes, [r["sqlite_turn_ms"] for r in turns], marker="s", label="durable SQLite archive (archive_path)")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("archived messages (the empty archive drawn at 100)")
    left.set_ylabel("ms per agent turn (median)")
    left.set_title("One agent turn with Strands' FileSessionManager")
    left.legend(fontsize=8)
    sizes = [r["size"] for r in opens]
    right.plot(sizes, [r["sqlite_open_seconds"] for r in opens], marker="s", label="reopen the SQLite archive")
    right.plot(sizes, [r["json_restore_seconds"] for r in opens], marker="o", label="restore from JSON state")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("archived messages")
    right.set_ylabel("seconds (median)")
    right.set_title("Opening an archive")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "durable.png", dpi=110)
    plt.close(fig)


def plot_index(large: dict[str, Any], out: Path) -> None:
    index, engine = large["vector_index"], large["engine"]
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(14, 4))
    sizes = [r["size"] for r in index]
    left.plot(sizes, [r["search_p50_ms"] for r in index], marker="o", label="vector search p50")
    left.plot(sizes, [r["search_p99_ms"] for r in index], marker="x", linestyle="--", label="vector search p99")
    for mode in ("hybrid", "dense", "lexical"):
        points = [(r["size"], r["retrieve_p50_ms"]) for r in engine if r["mode"] == mode and r.get("default", True)]
        if points:
            left.plot(*zip(*points), marker="^", label=f"engine retrieve p50, {mode}")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("archived vectors / messages")
    left.set_ylabel("ms")
    left.set_title("Search time (1 FAISS thread)")
    left.legend(fontsize=7)
    middle.plot(sizes, [r["recall_at_10"] for r in index], marker="o")
    middle.axhline(0.99, color="grey", linestyle="--", linewidth=1, label="target 0.99")
    middle.set_xscale("log")
    middle.set_ylim(min(0.9, min(r["recall_at_10"] for r in index) - 0.01), 1.005)
    middle.set_xlabel("archived vectors")
    middle.set_ylabel("recall@10 against exact search")
    middle.set_title("Approximate index quality")
    middle.legend(fontsize=8)
    right.plot(sizes, [r["store_bytes_per_vector"] for r in index], marker="o", label="store's own count")
    right.plot(sizes, [r["rss_bytes_per_vector"] for r in index], marker="x", label="process RSS growth")
    right.set_xscale("log")
    right.set_xlabel("archived vectors")
    right.set_ylabel("bytes per vector")
    right.set_title("Vector index memory")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "index.png", dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------------------------- targets


def _verdict(value: Any, limit: float, at_most: bool, kind: str) -> str:
    """``value``: a spread dict (min/median/max) or a number; ``kind`` says what a plain number is."""
    if value is None:
        return "n/a (not run)"
    if isinstance(value, Mapping):
        low, high = value["min"], value["max"]
        good_all = high <= limit if at_most else low >= limit
        good_none = low > limit if at_most else high < limit
        if good_all:
            return "yes"
        return "**no**" if good_none else "**no** (target inside the spread)"
    good = value <= limit if at_most else value >= limit
    if kind == "deterministic":
        return "yes" if good else "**no**"
    return ("yes" if good else "**no**") + f" ({kind})"


def _measured(value: Any, digits: int, kind: str) -> str:
    if value is None:
        return "not run"
    if isinstance(value, Mapping):
        return _spread(value, digits)
    suffix = {"deterministic": "deterministic: same on every run"}.get(kind, kind)
    return f"{value:,.{digits}f} ({suffix})"


def _ratio_spread(slow: Mapping[str, Any] | None, fast: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not slow or not fast:
        return None
    return {
        "min": slow["min"] / fast["max"],
        "median": slow["median"] / fast["median"],
        "max": slow["max"] / fast["min"],
        "runs": min(slow["runs"], fast["runs"]),
    }


def _recall_gap(loco: Mapping[str, Any], mode: str) -> float | None:
    """Largest |R@k difference| (points) between the default embedder's queries and the comparison backend's."""
    ours, theirs = _get(loco, "modes", mode, "all"), _get(loco, "compare", "modes", mode, "all")
    if not ours or not theirs:
        return None
    return float(max(abs(ours[f"r{k}"] - theirs[f"r{k}"]) for k in KS))


def targets(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(issue, target, measured, met) rows."""
    rows = _get(results, "scale", "rows")
    large = results.get("large") or {}
    restore = results.get("restore") or {}
    loco = results.get("locomo") or {}
    at = {size: _by(rows, size) for size in (10_000, 100_000)}
    turn_100k = _by(large.get("session_turns"), 100_000)
    open_100k = _by(large.get("durable_open"), 100_000)
    index_1m = _by(large.get("vector_index"), 1_000_000)
    engine_1m = _by(large.get("engine"), 1_000_000, mode="hybrid", default=True) or _by(
        large.get("engine"), 1_000_000, mode="hybrid"
    )
    with_embedding = _get(results, "scale", "with_embedding")
    throughput = _ratio_spread(_get(with_embedding, "naive"), _get(with_embedding, "ours"))
    pg_100k = _get(at[100_000], "latency_pgvector")
    restore_spread = restore.get("spread") if restore.get("size") == 10_000 else None
    median = "median only: spread not recorded"
    single = "one run, no spread"
    loco_hybrid = _get(loco, "modes", "hybrid", "all")
    compare_label = _get(loco, "compare", "backend", "short") or "PyTorch"
    spec: list[tuple[str, str, Any, float, bool, int, str]] = [
        (
            "16.2",
            "hook p50 <= 6 ms at 10k (hybrid, in process)",
            _get(at[10_000], "latency_hybrid", "rounds"),
            6,
            True,
            2,
            "",
        ),
        (
            "16.2",
            "hook p50 <= 10 ms at 100k (hybrid, in process)",
            _get(at[100_000], "latency_hybrid", "rounds"),
            10,
            True,
            2,
            "",
        ),
        (
            "16.3",
            "retrieve p50 <= 15 ms at 1M (hybrid, engine without formatting)",
            _get(engine_1m, "rounds") or _get(engine_1m, "retrieve_p50_ms"),
            15,
            True,
            2,
            median,
        ),
        (
            "16.3",
            "approximate index recall@10 >= 0.99 of exact at 1M",
            _get(index_1m, "recall_at_10"),
            0.99,
            False,
            3,
            "deterministic",
        ),
        ("16.4", "PostgreSQL hook p50 <= 20 ms at 100k rows", _get(pg_100k, "rounds"), 20, True, 2, ""),
        (
            "16.4",
            "PostgreSQL bulk archiving of 100k messages < 60 s (vectors precomputed)",
            _get(pg_100k, "fill_seconds"),
            60,
            True,
            1,
            single,
        ),
        (
            "16.2",
            "archiving with embedding >= 10x the naive pattern's throughput (ratio), both on the library's embedder",
            throughput,
            10,
            False,
            1,
            "",
        ),
        (
            "16.2",
            "the same against the prototype as it shipped (naive pattern, one PyTorch call per message)",
            _ratio_spread(_get(with_embedding, "prototype"), _get(with_embedding, "ours")),
            10,
            False,
            1,
            "",
        ),
        ("16.1", "restore of 10k from JSON state <= 0.3 s, no embedding calls", restore_spread, 0.3, True, 3, ""),
        (
            "16.1",
            "reopen a durable archive of 100k <= 2 s",
            _get(open_100k, "sqlite_open_spread") or _get(open_100k, "sqlite_open_seconds"),
            2,
            True,
            2,
            median,
        ),
        (
            "16.1",
            "FileSessionManager turn at 100k within 5 ms of an empty archive (durable)",
            _get(turn_100k, "sqlite_overhead_rounds") or _get(turn_100k, "sqlite_overhead_ms"),
            5,
            True,
            1,
            median,
        ),
        (
            "16.3",
            "<= 1.8 KB per message beyond its text at 100k: the library's estimate",
            _get(at[100_000], "estimated_bytes_per_message_beyond_text"),
            1843,
            True,
            0,
            "deterministic",
        ),
        (
            "16.3",
            "<= 1.8 KB per message beyond its text at 100k: process RSS growth",
            _get(at[100_000], "rss_bytes_per_message_beyond_text"),
            1843,
            True,
            0,
            single,
        ),
        ("12", "LoCoMo dev R@5 >= 65 (hybrid default)", _get(loco_hybrid, "r5"), 65, False, 1, "deterministic"),
        ("12", "LoCoMo dev R@10 >= 75", _get(loco_hybrid, "r10"), 75, False, 1, "deterministic"),
        ("12", "LoCoMo dev R@25 >= 85", _get(loco_hybrid, "r25"), 85, False, 1, "deterministic"),
        ("12", "LoCoMo dev R@50 >= 90", _get(loco_hybrid, "r50"), 90, False, 1, "deterministic"),
        ("12", "LoCoMo search(q, top_k=50) p50 <= 15 ms", loco.get("latency_spread"), 15, True, 2, ""),
        (
            "16",
            f"LoCoMo dev recall within 0.5 points of the PyTorch model: hybrid (default), default queries vs "
            f"{compare_label} queries, largest of the R@5/10/25/50 differences",
            _recall_gap(loco, "hybrid"),
            0.5,
            True,
            1,
            "deterministic",
        ),
        (
            "16",
            f"the same in dense mode (the query vector alone decides), default vs {compare_label} queries",
            _recall_gap(loco, "dense"),
            0.5,
            True,
            1,
            "deterministic",
        ),
        ("earlier", "hook p50 <= 15 ms at 10k (hybrid)", _get(at[10_000], "latency_hybrid", "rounds"), 15, True, 2, ""),
        (
            "earlier",
            "hook p50 <= 40 ms at 100k (hybrid)",
            _get(at[100_000], "latency_hybrid", "rounds"),
            40,
            True,
            2,
            "",
        ),
        (
            "earlier",
            "hook p50 at 10k no worse than round 1 (12 ms: PyTorch, quiet machine; issues 11, 12)",
            _get(at[10_000], "latency_hybrid", "rounds"),
            12,
            True,
            2,
            "",
        ),
        (
            "earlier",
            "hook p50 at 100k no worse than round 1 (19 ms: PyTorch, quiet machine; issues 11, 12)",
            _get(at[100_000], "latency_hybrid", "rounds"),
            19,
            True,
            2,
            "",
        ),
        *(
            (
                "11",
                f"lexical-only hook p50 at {label} no worse than release 1 ({figure} ms"
                + (
                    ", its documented run, not this one; the mode now ranks conversation context, issue 12: without "
                    "it, see the hook latency section)"
                    if size == 1_000
                    else "; as above)"
                ),
                _get(_by(rows, size), "latency_lexical", "p50"),
                figure,
                True,
                2,
                "one round, no spread",
            )
            for label, size, figure in (("1k", 1_000, 0.32), ("10k", 10_000, 0.38), ("100k", 100_000, 1.31))
        ),
        (
            "earlier",
            "archive <= 0.2 ms per message beyond embedding at 100k (10 batches)",
            _get(at[100_000], "index_spread"),
            0.2,
            True,
            3,
            "",
        ),
        ("earlier", "restore of 10k <= 1 s", restore_spread, 1.0, True, 3, ""),
        (
            "earlier",
            "<= 2 KB per message beyond its text at 100k: process RSS growth",
            _get(at[100_000], "rss_bytes_per_message_beyond_text"),
            2048,
            True,
            0,
            single,
        ),
    ]
    out = []
    for issue, label, value, limit, at_most, digits, kind in spec:
        if label.startswith("restore") and restore.get("embedding_calls"):
            out.append(
                (issue, label, _measured(value, digits, kind), f"**no** ({restore['embedding_calls']} embedding calls)")
            )
            continue
        out.append((issue, label, _measured(value, digits, kind), _verdict(value, limit, at_most, kind)))
    return out


# --------------------------------------------------------------------------------------------- the report


def write_report(results: dict[str, Any], out: Path) -> Path:
    """Write the markdown report and plots into ``out``; returns the report's path.

    Sections that were not run (or failed) are reported as such; everything present is written.
    """
    out.mkdir(parents=True, exist_ok=True)
    meta = results["meta"]
    quality, scale, restore = results.get("quality"), results.get("scale"), results.get("restore")
    loco, loop, large = results.get("locomo"), results.get("loop"), results.get("large")
    lines: list[str] = []
    add = lines.append
    add("# Benchmarks")
    add("")
    load_before, load_after = meta["load_before"], meta["load_after"]
    add(
        f"Generated by `{meta['command']}` in {meta['seconds']:.0f} s on {meta['cpus']} CPU cores, Python "
        f"{platform.python_version()}, {meta['versions']}. Every number below is what that run measured. The machine "
        f"was shared: load average {load_before[0]:.1f} (1 min) / {load_before[1]:.1f} (5 min) when the run started, "
        f"{load_after[0]:.1f} / {load_after[1]:.1f} when it ended, on {meta['cpus']} cores, so absolute timings are "
        "pessimistic and noisy; compare ratios within this one run, and read every target together with its spread."
    )
    add("")
    backend, compare = meta.get("backend") or {}, meta.get("compare_backend")
    add(
        "**Embedder: the library's default**, what `SemanticMemory()` builds (embedding backend `auto`): bundled "
        f"all-MiniLM-L6-v2 (384 dimensions, CPU) on {backend.get('long', 'the default backend')}, no cross-encoder. "
        "Every section and target below uses it unless a column or row names another backend."
        + (
            f" {compare['long']} is measured beside it for comparison (hook latency and query embedding, LoCoMo "
            "recall with its queries, one engine row at scale): the same model, and document vectors that agree to "
            "float rounding, so the pool of documents is embedded once and shared; only the query path differs."
            if compare
            else ""
        )
    )
    add("")
    pool_compare = meta.get("pool_compare")
    if pool_compare:
        add(
            f"Document vectors, checked in this run on {pool_compare['measured_on']:,} pool texts: largest "
            f"|1 - cosine| between the default backend's and {pool_compare['backend']['short']}'s vectors "
            f"{pool_compare['max_cosine_difference']:.1e}. Embedding those texts took "
            f"{pool_compare['default_ms_per_message_same_texts']:.2f} ms per message with the default backend and "
            f"{pool_compare['ms_per_message']:.2f} ms with {pool_compare['backend']['short']} (batched)."
        )
        add("")
    add("Time per section: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in meta["steps"].items()) + ".")
    add("")
    threads = meta.get("query_threads")
    if threads:
        pinned = meta.get("torch_threads")
        add(
            "PyTorch threads (these apply to the PyTorch rows only when the default backend is ONNX Runtime): "
            f"one query embedding took {threads['default_p50_ms']:.0f} ms (p50) with PyTorch's default "
            f"{threads['default_threads']:.0f} intra-op threads and {threads['one_p50_ms']:.0f} ms with one thread, "
            "measured at the start of this run on distinct queries. "
            + (
                f"**This run pinned PyTorch to {pinned} thread(s)** (`--torch-threads {pinned}`, "
                "`torch.set_num_threads`) for everything below; the library itself does not change PyTorch's setting."
                if pinned
                else "This run left PyTorch's setting as the library does (untouched)."
            )
        )
        add("")
    if meta.get("skipped"):
        add(f"**Not run, past the run's time budget of {meta['deadline']:.0f} s**: " + ", ".join(meta["skipped"]) + ".")
        add("")
    for name, error in meta["errors"].items():
        add(f"**Section `{name}` failed in this run**: `{error}`")
        add("")
    add("## Targets")
    add("")
    add(
        "Targets from the issues (number in the first column). Timings with a spread were measured in several "
        "rounds within this run (median, then min to max of the rounds); a target is met only when every round "
        "meets it, and a target inside the spread is **not** met. Recall figures are deterministic (same data, same "
        "model and backend, exact search below the approximate threshold; LoCoMo recalls are rounded to 0.1 "
        "before they are compared). The `benchmarks/scale.py` rows with a target carry rounds too: reopening the "
        "durable archive (repeated reopens), the durable turn overhead (round i at 100k minus round i of the empty "
        "archive) and engine retrieval at 1M (rounds on the same built index)."
    )
    add("")
    add("| issue | target | measured | met |")
    add("| --- | --- | --- | --- |")
    for issue, label, measured, met in targets(results):
        add(f"| {issue} | {label} | {measured} | {met} |")
    add("")
    if quality:
        _quality(add, quality, meta, out)
    if loco:
        _locomo(add, loco, out)
    elif "locomo" not in meta["errors"]:
        add("## LoCoMo")
        add("")
        add("Not run (`--locomo none`).")
        add("")
    if scale:
        _scale(add, scale, out)
    if restore:
        add(
            f"Restore of a saved {restore['size']:,}-message archive from JSON state: **{_spread(restore['spread'])} s**, "
            f"{restore['embedding_calls']} embedding calls (state: {restore['state_bytes'] / 1e6:.1f} MB of JSON). The "
            f"naive restore, which embeds every message again, would take {restore['naive_seconds']:.1f} s "
            f"({_ratio(restore['naive_seconds'], restore['seconds'])} slower; timed on "
            f"{restore.get('naive_measured_on', restore['size']):,} messages and scaled linearly)."
        )
        add("")
    if large:
        _large(add, large, out)
    if loop:
        _loop(add, loop, out)
    path = out / "benchmarks.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _quality(add: Any, quality: dict[str, Any], meta: dict[str, Any], out: Path) -> None:
    plot_recall(quality, out)
    add("## Retrieval quality: the synthetic set")
    add("")
    add(
        f"The retrieval set (`benchmarks/dataset.py`, seed {meta['seed']}): one conversation of "
        f"{quality['messages']} messages with {quality['questions']} questions whose answers sit in specific earlier "
        "user turns, among look-alike distractors. Recall@k is the share of evidence turns among the top k hits "
        "(averaged over questions). It is saturated and synthetic; LoCoMo below is the yardstick."
    )
    add("")
    kinds = ["all", *quality["kinds"]]
    add("| mode | " + " | ".join(f"{KIND_LABELS.get(k, k)} R@5 | R@10" for k in kinds) + " |")
    add("| --- |" + " --- | --- |" * len(kinds))
    for mode, data in quality["modes"].items():
        add(f"| {mode} | " + " | ".join(f"{data[k]['r5']:.2f} | {data[k]['r10']:.2f}" for k in kinds) + " |")
    add("")
    add("![recall](recall.png)")
    add("")
    add(
        "Windows at equal turn budgets: recall of evidence turns inside the retrieved windows when the windows may "
        "hold at most 10 or 20 turns in total (`top_k = budget // (2 * radius + 1)`)."
    )
    add("")
    window_keys = list(next(iter(quality["windows"].values())))
    add("| mode | " + " | ".join(window_keys) + " |")
    add("| --- |" + " --- |" * len(window_keys))
    for mode, data in quality["windows"].items():
        add(f"| {mode} | " + " | ".join(f"{data[k]:.2f}" for k in window_keys) + " |")
    add("")


def _locomo(add: Any, loco: dict[str, Any], out: Path) -> None:
    add("## LoCoMo")
    add("")
    if "skipped" in loco:
        add(loco["skipped"] + ".")
        add("")
        return
    plot_locomo(loco, out)
    add(
        f"LoCoMo (Maharana et al., ACL 2024; `locomo10.json` of snap-research/LoCoMo, CC BY-NC 4.0, not shipped): "
        f"here the development half, {loco['conversations']} conversations, {loco['messages']:,} turns, "
        f"{loco['questions']} questions with evidence. The metric of the LoCoMo paper (see `benchmarks/locomo.py`): "
        "every turn archived as one message, `search(question, top_k=50)` with the default configuration, recall@k "
        "= share of the question's evidence turns among the first k hits, in percent. DRAGON's figures are the "
        "paper's, on all ten conversations; the held-out half is not measured here."
    )
    add("")
    backend = _get(loco, "backend", "short")
    compare = _get(loco, "compare", "backend", "short")
    if backend:
        add(
            f"Embedder: the default ({_get(loco, 'backend', 'long')})."
            + (
                f" The rows marked {compare} queries search the same archive (the same document vectors) with "
                f"{compare} embedding the questions (all at once, in batches: recall only, not timed): the "
                "difference is the query path's alone."
                if compare
                else ""
            )
        )
        add("")
    add("| retriever | R@5 | R@10 | R@25 | R@50 |")
    add("| --- | --- | --- | --- | --- |")
    for mode, summary in loco["modes"].items():
        label = f"this library, {mode}" + (f" ({backend} queries)" if compare else "")
        add(f"| {label} | " + " | ".join(f"{summary['all'][f'r{k}']:.1f}" for k in KS) + " |")
    for mode, summary in (_get(loco, "compare", "modes") or {}).items():
        add(
            f"| this library, {mode} ({compare} queries) | "
            + " | ".join(f"{summary['all'][f'r{k}']:.1f}" for k in KS)
            + " |"
        )
    plain = loco.get("lexical_without_context")
    if plain:
        add(
            f"| this library, lexical without conversation context ({backend} queries) | "
            + " | ".join(f"{plain[f'r{k}']:.1f}" for k in KS)
            + " |"
        )
    add("| DRAGON (LoCoMo paper, all ten) | " + " | ".join(f"{loco['dragon'][f'r{k}']:.1f}" for k in KS) + " |")
    add("")
    if plain:
        add(
            "Without conversation context: `ranking=RankingOptions(neighbour_hits=0, neighbour_weights=())`, every "
            "message scored alone, as before the ranking of issue 12 (the lexical-only mode of release 1 ranked so)."
        )
        add("")
    modes = list(loco["modes"])
    categories = list(loco["modes"][modes[0]]["categories"])
    add("By question category (R@5 / R@10 / R@25 / R@50):")
    add("")
    add("| category | questions | " + " | ".join(modes) + " |")
    add("| --- | --- |" + " --- |" * len(modes))
    for category in categories:
        cells = []
        for mode in modes:
            row = loco["modes"][mode]["categories"][category]
            cells.append(" / ".join(f"{row[f'r{k}']:.1f}" for k in KS))
        count = loco["modes"][modes[0]]["categories"][category]["questions"]
        add(f"| {category} | {count} | " + " | ".join(cells) + " |")
    add("")
    add("![locomo](locomo.png)")
    add("")
    latency = loco.get("latency_ms")
    if latency:
        add(
            f"`search(q, top_k=50)` ({latency['mode']}, query embedding included) over {latency['searches']} searches: "
            f"p50 {_spread(loco.get('latency_spread'))} ms, p95 {latency['p95']:.1f} ms in the first run."
        )
        add("")


def _scale(add: Any, scale: dict[str, Any], out: Path) -> None:
    plot_scale(scale, out)
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
        "hook's search runs on a worker thread, `asyncio.to_thread`: about 0.05 ms more, measured apart). Hybrid latency is measured "
        "in rounds (median p50, min to max of the rounds)."
    )
    add("")
    backend = _get(scale, "backend", "short") or "default"
    compare = _get(scale, "compare_backend", "short")
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
        "The naive baseline (`benchmarks/naive.py`: numpy `vstack` + FAISS rebuild on every add, `pop(0)` eviction) "
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
                f" {_fmt(other['p50'])} / {_fmt(other['p99'])} | {_fmt(other['embed_p50'])} |"
                if other
                else " not run | not run |"
            )
            if compared
            else ""
        )
        pg = r.get("latency_pgvector")
        naive, naive_default = r.get("latency_naive"), r.get("latency_naive_default_threads")
        pg_cell = f"{_spread(pg['rounds'])} / {_fmt(pg['p99'])}" if pg else r.get("pgvector_error", "not run")
        add(
            f"| {r['size']:,} | {_spread(r['latency_hybrid']['rounds'])} | {_fmt(r['latency_hybrid']['p99'])} | "
            f"{_fmt(r['latency_dense']['p50'])} / {_fmt(r['latency_dense']['p99'])} | "
            f"{_fmt(r['latency_lexical']['p50'])} / {_fmt(r['latency_lexical']['p99'])} | {pg_cell} | "
            f"{(_fmt(naive['p50']) + ' / ' + _fmt(naive['p99'])) if naive else 'not run'} | "
            f"{(_fmt(naive_default['p50']) + ' / ' + _fmt(naive_default['p99'])) if naive_default else 'not run'} | "
            f"{_fmt(r['latency_hybrid']['embed_p50'])} |" + extra
        )
    add("")
    plain_rows = [r for r in scale["rows"] if "latency_lexical_without_context" in r]
    if plain_rows:
        cells = ", ".join(
            f"{_fmt(r['latency_lexical_without_context']['p50'])} ms at {r['size']:,} "
            f"(with it: {_fmt(r['latency_lexical']['p50'])})"
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
            "PostgreSQL bulk archiving (vectors precomputed, batches of 5,000 through `memory.archive`; each size in "
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
            f"| {r['size']:,} | {_spread(r['index_spread'], 3)} | {r['at_limit_ms_per_message']:.3f} | "
            f"{_fmt(naive_add, 3) if naive_add is not None else 'not run'} | "
            f"{_ratio(naive_add, r['index_ms_per_message'])} | "
            f"{_fmt(r.get('naive_evict_ms_per_message'), 3) if 'naive_evict_ms_per_message' in r else 'not run'} | "
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
            f"{embedding['messages']} new messages per round: this library (`memory.archive` of the batch, as the "
            f"manager archives the messages leaving the window) **{_spread(embedding['ours'])} ms per message**; the "
            f"naive pattern (one embedding call per message as it arrives, then vstack + rebuild) "
            f"**{_spread(embedding['naive'])} ms per message**. Both sides call the same embedder object "
            f"({_get(embedding, 'embedder', 'long') or 'the default'}), on texts that appear nowhere else in the run: "
            "only the algorithm differs (one batched call and an incremental index, against a call per message and a "
            "rebuild per message)."
        )
        if embedding.get("prototype"):
            threads = embedding.get("prototype_threads")
            add("")
            add(
                "The same rounds, the naive pattern as the prototype shipped it (one "
                f"{_get(embedding, 'prototype_embedder', 'long') or 'PyTorch'} call per message"
                + (f", on PyTorch's default {threads} threads" if threads else "")
                + f", then vstack + rebuild): **{_spread(embedding['prototype'])} ms per message**, "
                f"{_ratio(_get(embedding, 'prototype', 'median'), _get(embedding, 'ours', 'median'))} this library's "
                f"time (against the naive pattern on the library's own embedder: "
                f"{_ratio(_get(embedding, 'naive', 'median'), _get(embedding, 'ours', 'median'))}). The difference "
                "between the two is the embedder's, not the algorithm's."
            )
        add("")
    add("![scale](scale.png)")
    add("")


def _large(add: Any, large: dict[str, Any], out: Path) -> None:
    add("## Durable archive and 1k..1M messages")
    add("")
    add(
        "From `benchmarks/scale.py`. Cells are medians; where a target depends on a cell, its rounds follow in "
        "parentheses (median, min to max of the rounds)."
    )
    add("")
    for caveat in large.get("caveats", []):
        add(f"- {caveat}")
    add("")
    turns, opens = large.get("session_turns") or [], large.get("durable_open") or []
    if turns and opens:
        plot_durable(large, out)
    if turns:
        add(
            "One agent turn (real `Agent`, scripted model: no model time) with Strands' `FileSessionManager` saving "
            "the agent state on every message, the archive kept in the JSON session state or in a durable SQLite "
            "file (`archive_path=`):"
        )
        add("")
        add(
            "| archived | JSON state: ms per turn | overhead vs empty | agent.json bytes | durable: ms per turn | "
            "overhead vs empty (rounds: round i minus round i of the empty archive) | agent.json bytes |"
        )
        add("| --- | --- | --- | --- | --- | --- | --- |")
        for r in turns:
            rounds = r.get("sqlite_overhead_rounds")
            durable = _spread(rounds, 1) if rounds and r["size"] else _fmt(r.get("sqlite_overhead_ms"), 1)
            add(
                f"| {r['size']:,} | {r['json_turn_ms']:.1f} | {_fmt(r.get('json_overhead_ms'), 1)} | "
                f"{r['json_agent_json_bytes']:,} | {r['sqlite_turn_ms']:.1f} | {durable} | "
                f"{r['sqlite_agent_json_bytes']:,} |"
            )
        add("")
    if opens:
        add(
            "| archived | SQLite fill, ms per message | reopen SQLite (s) | SQLite files | JSON save (s) | JSON restore (s) | JSON state |"
        )
        add("| --- | --- | --- | --- | --- | --- | --- |")
        for r in opens:
            add(
                f"| {r['size']:,} | {r['sqlite_fill_ms_per_message']:.3f} | "
                f"{_spread(r['sqlite_open_spread'], 3) if r.get('sqlite_open_spread') else _fmt(r['sqlite_open_seconds'], 3)} | "
                f"{r['sqlite_file_bytes'] / 1e6:.1f} MB | {r['json_save_seconds']:.3f} | "
                f"{r['json_restore_seconds']:.3f} | {r['json_state_bytes'] / 1e6:.1f} MB |"
            )
        add("")
    crossover = large.get("crossover") or {}
    if crossover:
        turn, opening = crossover.get("turn_size"), crossover.get("open_size")
        add(
            "Crossover (interpolated between measured sizes): a turn costs more with JSON state than with the durable "
            f"archive above {_fmt(turn, 0) if turn else 'no measured size'} messages; restoring JSON takes longer "
            f"than reopening the file above {_fmt(opening, 0) if opening else 'no measured size'} messages."
        )
        add("")
    if turns and opens:
        add("![durable](durable.png)")
        add("")
    index, engine = large.get("vector_index") or [], large.get("engine") or []
    if index:
        add("The vector store alone (`FaissIndex`, 1 search thread), grown in batches of 10,000:")
        add("")
        add(
            "| vectors | tier | build (s) | search p50 / p99 (ms) | CPU p50 (ms) | recall@10 vs exact | bytes per vector (store) | RSS per vector |"
        )
        add("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in index:
            add(
                f"| {r['size']:,} | {r['tier']} | {r['build_seconds']:.1f} | {r['search_p50_ms']:.2f} / "
                f"{r['search_p99_ms']:.2f} | {r['search_cpu_p50_ms']:.2f} | {r['recall_at_10']:.3f} | "
                f"{r['store_bytes_per_vector']:,.0f} | {r['rss_bytes_per_vector']:,.0f} |"
            )
        add("")
    if engine:
        add(
            "The whole engine (`SemanticMemory.retrieve`: query embedding, dense and lexical search, windows; no "
            "formatting) at scale:"
        )
        add("")
        add(
            "| archived | mode | queries embedded by | build (s) | retrieve p50 / p99 (ms) | retrieve p50 rounds | "
            "query embedding p50 | search + windows CPU p50 | approximate index |"
        )
        add("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in engine:
            rounds = r.get("rounds")
            add(
                f"| {r['size']:,} | {r['mode']} | {r.get('queries', 'default')} | {r['build_seconds']:.0f} | "
                f"{r['retrieve_p50_ms']:.2f} / {r['retrieve_p99_ms']:.2f} | "
                f"{_spread(rounds) if rounds and rounds['runs'] > 1 else 'one round'} | "
                f"{r['query_embedding_p50_ms']:.2f} | "
                f"{r['search_and_windows_cpu_p50_ms']:.2f} | {'yes' if r['approximate'] else 'no'} |"
            )
        add("")
    if index and engine:
        plot_index(large, out)
        add("![index](index.png)")
        add("")


def _loop(add: Any, loop: dict[str, Any], out: Path) -> None:
    plot_tokens(loop, out)
    rows = loop["rows"]
    add("## Tokens sent per turn in the Strands loop")
    add("")
    add(
        f"`benchmarks/compaction.py`: the same conversation of {loop['turns']} user turns through a real Strands "
        "`Agent` per manager: filler turns, eight facts planted early (one changed later), recall questions at the "
        "end. Tokens are characters / 4 of each chat request."
    )
    add("")
    add(
        "**What is scripted**: the chat model (a fixed short reply; it overflows above 3,000 characters of input, "
        "which drives Strands' real overflow recovery) and, in every row not named after a model, the summarizer, "
        "identically for every summarizing manager: it recognises a planted fact by its form (`Note: <key> is <value>.`), the structured summarizer "
        "keeps every fact (the zero-loss instruction assumed obeyed) and the prose summarizer keeps at most the 4 "
        'most recent facts (a prose summary is bounded; the lossless-prose row lifts that bound). So "facts '
        "reached\" in the summary rows measures the summary format under these assumptions, not a model's quality. "
        "**Not scripted**: Strands' agent loop and managers, our managers, the archive and the hook's retrieval "
        "(bundled MiniLM model) in the rows with the hook."
    )
    add("")
    local = [r for r in rows if r.get("summarizer")]
    if local:
        seconds = sum(r.get("seconds", 0.0) for r in local)
        add(
            f"**Real summaries**: the rows named after {local[0]['summarizer']} run the same conversation with the "
            "summaries written by that model (the demo's SmolLM2-135M-Instruct, Q4_1 GGUF, llama.cpp, greedy, at most "
            "160 tokens per summary), with the default summarization prompt (Strands'; our text manager passes the "
            "same one on); only the chat replies are scripted. A 135M model is far below what production "
            "summarization uses: these rows show a poor summary, not how good summaries get. They took "
            f"{seconds:.0f} s in all. The structured managers are not run with it: asked for the JSON state (through "
            "a JSON-schema grammar), the model ran into the 1,024-token bound again and again when this was tried "
            "(unterminated JSON, a failed compaction and some 13 s each time)."
        )
    else:
        add(
            "**Real summaries** (the same rows with SmolLM2-135M writing the summaries) were not run: "
            f"{loop.get('local_model_missing') or 'the local model is not installed'}."
        )
    add("")
    add(
        "| manager | tokens/turn mean | max | last | facts reached | stale value sent | overflows | summaries | archived | failed turns | scripted |"
    )
    add("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        add(
            f"| {r['manager']} | {r['mean_tokens']:.0f} | {r['max_tokens']} | {r['last_tokens']} | "
            f"{r['facts_reached']} of {r['facts']} | {'yes' if r['stale_value_sent'] else 'no'} | {r['overflows']} | "
            f"{r['summaries']} | {r['archived']} | {r.get('failed_turns', 0)} | {r['scripted']} |"
        )
    add("")
    hooked = [r for r in rows if r.get("found_not_sent") is not None]
    if hooked:
        add(
            "In the rows with the hook, recall turns whose planted value the hook's search found (in a window it "
            "injected or left out) but that did not reach the model, and recall turns retried with less injected "
            "context after an overflow: "
            + "; ".join(
                f"{r['manager']}: {r['found_not_sent']} and {r['retried_recalls']} of {r['facts']}" for r in hooked
            )
            + ". The window (3,000 characters) is small next to the injected block (up to 800): once the recent "
            "turns fill it, the block is cut down or left out for the call."
        )
        add("")
    failed = [r for r in rows if r.get("first_failure")]
    for r in failed:
        add(f"- {r['manager']}: {r['failed_turns']} turns failed; the first: `{r['first_failure']}`")
    if failed:
        add("")
    add("![tokens](tokens.png)")
    add("")
