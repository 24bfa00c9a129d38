"""Restore from JSON state: one paragraph after the scale section, against the naive restore that embeds again."""

from __future__ import annotations

from benchmarks.report.cells import ratio, spread_cell
from benchmarks.report.figures import Add, Part
from benchmarks.results import RestoreResult, Results


def _restore(add: Add, restore: RestoreResult) -> None:
    add(
        f"Restore of a saved {restore['size']:,}-message archive from JSON state: **{spread_cell(restore['spread'])} s**, "
        f"{restore['embedding_calls']} embedding calls (state: {restore['state_bytes'] / 1e6:.1f} MB of JSON). The "
        f"naive restore, which embeds every message again, would take {restore['naive_seconds']:.1f} s "
        f"({ratio(restore['naive_seconds'], restore['seconds'])} slower; timed on "
        f"{restore.get('naive_measured_on', restore['size']):,} messages and scaled linearly)."
    )
    add("")


def build(results: Results) -> Part | None:
    """The paragraph, or None when the measurement did not run."""
    restore = results.get("restore")
    if not restore:
        return None
    lines: list[str] = []
    _restore(lines.append, restore)
    return Part(lines)
