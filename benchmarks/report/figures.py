"""What a section builder returns: its Markdown lines, and the figures they show as data to plot.

Builders never draw: a :class:`Figure` names its file and carries the data; the writer (``benchmarks.report.writer``)
draws it with the function ``benchmarks.report.plots.DRAW`` keeps for that file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

RECALL = "recall.png"
LOCOMO = "locomo.png"
SCALE = "scale.png"
TOKENS = "tokens.png"
DURABLE = "durable.png"
INDEX = "index.png"
LOCOMO_LOOP = "locomo-loop.png"
"""The report's figure files, beside ``benchmarks.md``."""


@dataclass(frozen=True)
class Figure:
    """One figure to draw: its file, and the data the drawing reads (plain data from the run's results)."""

    file: str
    data: Any


@dataclass(frozen=True)
class Part:
    """One section of the report: its Markdown lines (figures linked by file name), and the figures to draw."""

    lines: Sequence[str]
    figures: Sequence[Figure] = field(default_factory=tuple)


Add = Callable[[str], None]
"""How a builder appends a line of Markdown."""
