"""The report's sections, in order: each module here exposes ``SECTION`` (a ``benchmarks.common.Section``)."""

from __future__ import annotations

from importlib import import_module

from benchmarks.common import Section

MODULES: tuple[str, ...] = (
    "recall",
    "across_sessions",
    "personal",
    "in_session",
    "latency",
    "per_exchange",
    "event_loop",
    "scale",
    "many_files",
    "load",
)
"""Section modules of this package, in report order (each added by the module's author)."""


def sections() -> list[Section]:
    """Every section, in report order."""
    return [import_module(f"benchmarks.{name}").SECTION for name in MODULES]
