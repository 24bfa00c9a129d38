"""Write the report: each section's Markdown in the order of the table of sections, and its figures, drawn.

The writer is the only part of the benchmarks that draws (``benchmarks.report.plots``) and writes files; section
builders return text and figures as data (``benchmarks.report.figures``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from benchmarks.report.figures import Part
from benchmarks.report.plots import DRAW
from benchmarks.results import Results

REPORT = "benchmarks.md"
"""The report's file name."""


class Buildable(Protocol):
    """What the writer needs of a section: its builder, and the figure files it may draw."""

    @property
    def build(self) -> Callable[[Results], Part | None]:
        """Builds the section's text and figures from a run's results (None: nothing to show)."""
        ...

    @property
    def figures(self) -> Sequence[str]:
        """The figure files the section draws."""
        ...


def write_report(results: Results, out: Path, sections: Sequence[Buildable]) -> Path:
    """Write ``benchmarks.md`` and its figures into ``out``.

    Sections whose measurement did not run (or failed) show nothing, or say so; everything present is written.

    Args:
        results: One run's results.
        out: The folder for ``benchmarks.md`` and the figures (created when missing).
        sections: The report's sections in order (``benchmarks.sections.SECTIONS``).

    Returns:
        The report's path.

    Raises:
        ValueError: A builder returned a figure its section does not declare.
    """
    out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for section in sections:
        part = section.build(results)
        if part is None:
            continue
        lines.extend(part.lines)
        for figure in part.figures:
            if figure.file not in section.figures:
                raise ValueError(f"the figure {figure.file} is not one of its section's ({', '.join(section.figures)})")
            DRAW[figure.file](figure.data, out / figure.file)
    path = out / REPORT
    path.write_text("\n".join(lines) + "\n")
    return path
