"""What the commands print: tables for a person (rich), JSON for a program, progress bars on stderr.

Standard output carries the result only (a table, JSON, or an export's lines), so it can be piped; progress bars,
warnings and errors go to standard error. Progress bars are drawn when standard error is a terminal (rich's own
detection, which ``TTY_COMPATIBLE=1`` forces).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from strands_semantic_memory.messages import render_message

__all__ = [
    "Bar",
    "counted",
    "echo_json",
    "err_console",
    "iso",
    "json_text",
    "out_console",
    "progress_bar",
    "snippet",
    "when",
]


def out_console() -> Console:
    """The console of results (standard output); no colour or markup when it is not a terminal."""
    return Console(highlight=False, soft_wrap=False)


def err_console() -> Console:
    """The console of progress and messages (standard error)."""
    return Console(stderr=True, highlight=False)


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """JSON text of ``value``: UTF-8 as it is, or ASCII escapes throughout if it holds a lone surrogate."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, indent=indent)
    return text


def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON on standard output."""
    click.echo(json_text(value))


def when(seconds: float | None) -> str:
    """A time for a person: ``2024-05-01 09:30:00Z`` (UTC), or an empty string when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return ""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return f"{seconds:g} s"


def counted(number: int, noun: str) -> str:
    """``1 message``, ``2,048 messages``."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def iso(seconds: float) -> str | float:
    """A time for a program: ISO 8601 in UTC to the microsecond, as export lines write it."""
    from strands_semantic_memory.engine._history import iso_time

    return iso_time(seconds)


def snippet(message: Any, width: int = 100) -> str:
    """A message's text on one line, cut to ``width`` characters."""
    text = " ".join(render_message(message).split())
    return text if len(text) <= width else text[: width - 1] + "…"


class Bar:
    """One task of a progress display: ``update(completed)``; a no-op when the display is off."""

    def __init__(self, progress: Progress, task: TaskID) -> None:
        self._progress = progress
        self._task = task

    def update(self, completed: float, total: float | None = None) -> None:
        """Set how much is done (and the total, when it becomes known)."""
        self._progress.update(self._task, completed=completed, total=total)


@contextmanager
def progress_bar(description: str, total: float | None, *, unit: str = "messages") -> Iterator[Bar]:
    """A progress bar on standard error while the block runs (drawn only when standard error is a terminal).

    Args:
        description: What is being done ("importing", ...).
        total: How much there is to do, or None when unknown (a spinner and a count).
        unit: ``"messages"`` (a count of total) or ``"bytes"`` (sizes).
    """
    console = err_console()
    counter = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    progress = Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        counter,
        TextColumn(unit if unit != "bytes" else ""),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=False,
    )
    with progress:
        yield Bar(progress, progress.add_task(description, total=total))
