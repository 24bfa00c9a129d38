"""The report's figures, drawn: one PNG per figure file, beside ``benchmarks.md``.

Only the writer calls :data:`DRAW`; section builders return the data to plot (``benchmarks.report.figures``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchmarks.report import figures  # noqa: E402
from benchmarks.report.cells import KIND_LABELS, MODES, hook_latency  # noqa: E402
from benchmarks.results import (  # noqa: E402
    KS,
    DurableOpenRow,
    EngineRow,
    Latency,
    LocomoLoopResult,
    LocomoResult,
    LoopResult,
    QualityResult,
    ScaleResult,
    ScaleRow,
    SessionTurnRow,
    VectorIndexRow,
    at_ks,
)


def plot_recall(quality: QualityResult, path: Path) -> None:
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_locomo(data: LocomoResult, path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    for mode, summary in data["modes"].items():
        left.plot(KS, at_ks(summary["all"]), marker="o", label=f"this library, {mode}")
    left.plot(KS, at_ks(data["dragon"]), marker="s", color="black", linestyle="--", label="DRAGON")
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_scale(scale: ScaleResult, path: Path) -> None:
    rows = scale["rows"]
    sizes = [r["size"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for mode in MODES:
        left.plot(sizes, [hook_latency(r, mode)["p50"] for r in rows], marker="o", label=f"{mode} p50")
        left.plot(sizes, [hook_latency(r, mode)["p99"] for r in rows], marker="x", linestyle="--", label=f"{mode} p99")
    others: tuple[tuple[Callable[[ScaleRow], Latency | None], str, str], ...] = (
        (lambda r: r.get("latency_naive"), "naive p50 (1 FAISS thread)", "s"),
        (lambda r: r.get("latency_naive_default_threads"), "naive p50 (FAISS default threads)", "D"),
        (lambda r: r.get("latency_pgvector"), "PostgreSQL hybrid p50", "^"),
    )
    for latency_of, label, marker in others:
        points = [(r["size"], latency["p50"]) for r in rows if (latency := latency_of(r)) is not None]
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_tokens(loop: LoopResult, path: Path) -> None:
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_durable(rows: tuple[list[SessionTurnRow], list[DurableOpenRow]], path: Path) -> None:
    turns, opens = rows
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_index(rows: tuple[list[VectorIndexRow], list[EngineRow]], path: Path) -> None:
    index, engine = rows
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(14, 4))
    sizes = [r["size"] for r in index]
    left.plot(sizes, [r["search_p50_ms"] for r in index], marker="o", label="vector search p50")
    left.plot(sizes, [r["search_p99_ms"] for r in index], marker="x", linestyle="--", label="vector search p99")
    for mode in MODES:
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_loop(results: LocomoLoopResult | dict[str, Any], path: Path) -> None:
    """LoCoMo in the loop: evidence delivered per row and window (bars), and each conversation's figure (dots).

    ``results["windows"]`` maps a window to its rows; every row is drawn at every window, so the caller keeps the
    rows played at every window only.
    """
    windows = list(results["windows"])
    rows = list(next(iter(results["windows"].values())))
    fig, ax = plt.subplots(figsize=(8, 4.6))
    width = 0.8 / max(1, len(rows))
    for r, row in enumerate(rows):
        xs = [w + (r - (len(rows) - 1) / 2) * width for w in range(len(windows))]
        overall = [results["windows"][w][row]["all"]["delivered"] for w in windows]
        ax.bar(xs, overall, width * 0.95, label=row)
        for x, w in zip(xs, windows):
            per = [c["delivered"] for c in results["windows"][w][row]["conversations"].values()]
            ax.plot([x] * len(per), per, "k.", markersize=3)
    ax.axhline(85, color="grey", linewidth=0.6, linestyle="--")
    ax.set_xticks(range(len(windows)), [f"W = {int(w):,} chars" for w in windows])
    ax.set_ylabel("evidence delivered (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    ax.set_title("LoCoMo in the loop: evidence in the answering call's input (dots: conversations)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


DRAW: dict[str, Callable[[Any, Path], None]] = {
    figures.RECALL: plot_recall,
    figures.LOCOMO: plot_locomo,
    figures.SCALE: plot_scale,
    figures.TOKENS: plot_tokens,
    figures.DURABLE: plot_durable,
    figures.INDEX: plot_index,
    figures.LOCOMO_LOOP: plot_loop,
}
"""How each figure file is drawn, from the data its section's builder gave."""
