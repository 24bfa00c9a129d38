"""The target table: every target of ``benchmarks.report.targets``, judged against the run."""

from __future__ import annotations

from benchmarks.report.figures import Add, Part
from benchmarks.report.targets import judge
from benchmarks.results import Results


def _targets(add: Add, results: Results) -> None:
    """The target table, judged by ``benchmarks.report.targets``."""
    add("## Targets")
    add("")
    add(
        "Targets from the issues (number in the first column). Timings with a spread were measured in several "
        "rounds within this run (median, then min to max of the rounds); a target is met only when every round "
        "meets it, and a target inside the spread is **not** met. Recall figures are deterministic (same data, same "
        "model and backend, exact search below the approximate threshold; LoCoMo recalls are rounded to 0.1 "
        "before they are compared). The durable-archive and 1k..1M rows with a target carry rounds too: reopening the "
        "durable archive (repeated reopens), the durable turn overhead (round i at 100k minus round i of the empty "
        "archive) and engine retrieval at 1M (rounds on the same built index)."
    )
    add("")
    add("| issue | target | measured | met |")
    add("| --- | --- | --- | --- |")
    for row in judge(results):
        add(f"| {row.issue} | {row.target} | {row.measured} | {row.met} |")
    add("")


def build(results: Results) -> Part:
    """The table, whatever ran: a target whose section did not run reads ``not run``."""
    lines: list[str] = []
    _targets(lines.append, results)
    return Part(lines)
