"""How the report writes a value in a table cell or a sentence: numbers, spreads, ratios, labels, rows by size."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from benchmarks.results import HookLatency, ScaleRow, Spread
from strands_semantic_memory.retrieval import RETRIEVAL_MODES, Retrieval

KIND_LABELS = {
    "all": "overall",
    "exact": "exact tokens",
    "paraphrase": "paraphrase",
    "multi_turn": "multi-turn",
    "temporal": "temporal",
}
"""How the synthetic set's question kinds are named in the report."""

MODES = RETRIEVAL_MODES
"""Retrieval modes in the order the report shows them."""


def number(value: float | None, digits: int = 2) -> str:
    """``value`` with thousands separators and ``digits`` decimals; ``n/a`` when it was not measured."""
    return "n/a" if value is None else f"{value:,.{digits}f}"


def ratio(slow: float | None, fast: float | None) -> str:
    """How many times ``fast`` fits in ``slow`` (``12x``, ``3.4x``); ``n/a`` without both."""
    if slow is None or fast is None or fast <= 0:
        return "n/a"
    return f"{slow / fast:,.0f}x" if slow / fast >= 10 else f"{slow / fast:.1f}x"


def spread_cell(spread: Spread | None, digits: int = 2) -> str:
    """``median (min to max, n runs)``; ``n/a`` when not measured."""
    if not spread:
        return "n/a"
    return (
        f"{spread['median']:,.{digits}f} ({spread['min']:,.{digits}f} to {spread['max']:,.{digits}f}, "
        f"{spread['runs']} runs)"
    )


def hook_latency(row: ScaleRow, mode: Retrieval) -> HookLatency:
    """A scale row's hook latency in one retrieval mode."""
    if mode == "hybrid":
        return row["latency_hybrid"]
    return row["latency_dense"] if mode == "dense" else row["latency_lexical"]


Row = TypeVar("Row", bound=Mapping[str, object])


def row_at(rows: Sequence[Row] | None, size: int) -> Row | None:
    """The first row measured at ``size``, or None."""
    return next((row for row in rows or () if row["size"] == size), None)
