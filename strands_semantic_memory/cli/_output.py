"""What the commands print: rows for a person, JSON for a program, progress bars on standard error.

Nothing shown is ever interpreted: archived text, user and session ids and error messages pass through ``visible``
(every control character, lone surrogate and bidirectional override as an escape, so an archived ``ESC [2J`` or OSC
52 sequence reaches the terminal as text) and tables are built from ``rich.text.Text`` cells on a console whose
markup is off, so ``[bold]`` or ``[/INST]`` shows as written. On a terminal rows are a table; piped, they are
tab-separated lines, one row each, so ``search | grep`` reads one hit per line. Standard output carries the result
only; progress bars (drawn on a terminal only), warnings and errors go to standard error.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from strands_semantic_memory.archives import StoredRecord
from strands_semantic_memory.messages import render_message

_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_HIDDEN_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")  # json escapes C0
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_SHORT_COLUMNS = frozenset({"index", "score", "role", "said"})


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def visible(text: str) -> str:
    """``text`` as a terminal may show it: controls, lone surrogates and bidi overrides written as escapes."""
    return _HIDDEN.sub(_escape, text)


def whose(user_id: str | None) -> str:
    """A user in words: ``user 'alice'``, or ``a user not named``."""
    return "a user not named" if user_id is None else f"user '{visible(user_id)}'"


def counted(number: int, noun: str) -> str:
    """``1 message``, ``2,048 messages``."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def when(seconds: float | None) -> str:
    """A time for a person: ``2024-05-01 09:30:00Z`` (UTC); empty when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return ""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return f"{seconds:g} s"


def said(record: StoredRecord) -> str:
    """When a message was said, as ``search`` and ``show`` both show it (unknown: when it was archived, marked)."""
    return when(record.said_at) if record.said_at is not None else f"{when(record.archived_at)} (archived)"


def snippet(record: StoredRecord, width: int = 200) -> str:
    """A message's text on one line, cut to ``width`` characters."""
    text = " ".join(render_message(record.message).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, markup=False, emoji=False)


def print_rows(header: Sequence[str] | None, rows: Sequence[Sequence[str]], *, title: str | None = None) -> None:
    """Rows as a table on a terminal, else as tab-separated lines (one row each); every cell shown ``visible``."""
    console = _console()
    if not console.is_terminal:
        lines = [] if title is None else [visible(title)]
        lines += ["\t".join(header)] if header else []
        lines += ["\t".join(visible(cell) for cell in row) for row in rows]
        click.echo("\n".join(lines))
        return
    if title is not None:
        console.print(Text(visible(title)), soft_wrap=True)  # a path is never folded, so it can be copied
    table = Table(show_header=header is not None)
    for position, name in enumerate(header or ("", "")):
        short = name in _SHORT_COLUMNS if header else position == 0
        table.add_column(Text(name), no_wrap=short, overflow="fold")
    for row in rows:
        table.add_row(*(Text(visible(cell)) for cell in row))
    console.print(table)


def json_text(value: Any, indent: int | None = 2) -> str:
    """JSON text of ``value`` that a terminal shows as text (no raw controls; lone surrogates escaped)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _HIDDEN_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON on standard output."""
    click.echo(json_text(value))


@contextmanager
def progress(description: str, total: float | None) -> Iterator[Callable[[float], None]]:
    """A progress bar on standard error while the block runs, drawn only on a terminal; yields ``advance(done)``."""
    console = _console(stderr=True)
    columns = (TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)
