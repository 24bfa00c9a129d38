"""What the benchmark sections share: the run's settings, timing and spread, the machine, and the report's pieces."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOCOMO_DEV = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo-dev.json"
"""The development half of LoCoMo, beside the clone (not shipped: CC BY-NC 4.0)."""


@dataclass(frozen=True)
class Settings:
    """One run's settings: ``quick`` runs every section at a tiny size (a smoke test, never written to docs/)."""

    quick: bool = False
    locomo: Path = LOCOMO_DEV
    output: Path = Path("docs")
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Section:
    """One section of the report.

    Attributes:
        name: Its key in ``benchmarks.json`` and on the command line (``--only``).
        title: Its heading in the report.
        run: Measures and returns JSON-able data (plots are written by ``render``).
        render: The section's markdown from its data; it may write plots into the folder it is given.
    """

    name: str
    title: str
    run: Callable[[Settings], dict[str, Any]]
    render: Callable[[dict[str, Any], Path], str]


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` quantile (0..1) of ``values``, linear between ranks (0 for none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median, minimum and maximum of repeated figures (the report shows all three)."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)} if values else {}


def timed(call: Callable[[], Any]) -> float:
    """Milliseconds ``call`` took."""
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def machine() -> dict[str, Any]:
    """What the run ran on: CPUs, Python, the commit, and the load when it started."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "strands_semantic_memory"], capture_output=True,
                               text=True, check=True).stdout.strip()  # fmt: skip
        revision = commit.stdout.strip() + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        revision = "unknown"
    return {
        "commit": revision,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
