"""Small helpers for readable demo output: sections, steps with timings, wrapped text."""

from __future__ import annotations

import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class Console:
    """Writes the demo's output to a stream (stdout by default)."""

    def __init__(self, out: TextIO | None = None, width: int = 100) -> None:
        self.out = out or sys.stdout
        self.width = width

    def line(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def section(self, title: str) -> None:
        self.line()
        self.line(f"== {title} " + "=" * max(3, self.width - len(title) - 4))

    def item(self, text: str, indent: int = 2) -> None:
        prefix = " " * indent
        self.line(textwrap.fill(text, self.width, initial_indent=prefix, subsequent_indent=prefix + "  "))

    def block(self, text: str, indent: int = 4) -> None:
        for raw in text.splitlines() or [""]:
            self.line(" " * indent + raw)

    def said(self, who: str, text: str, indent: int = 2) -> None:
        """A reply in full: ``who: text``, its own line breaks kept, long lines wrapped."""
        prefix = " " * indent
        lines = text.strip().splitlines() or ["(empty)"]
        first = True
        for raw in lines:
            head = f"{prefix}{who}: " if first else prefix + " " * (len(who) + 2)
            self.line(
                textwrap.fill(raw, self.width, initial_indent=head, subsequent_indent=prefix + " " * (len(who) + 2))
                if raw.strip()
                else ""
            )
            first = False

    def ok(self, text: str) -> None:
        self.item(f"[ok] {text}")

    def warn(self, text: str) -> None:
        self.item(f"[!!] {text}")

    def fail(self, text: str, hint: str | None = None) -> None:
        self.item(f"[xx] {text}")
        if hint:
            self.item(f"-> {hint}", indent=7)

    @contextmanager
    def step(self, text: str) -> Iterator[dict[str, float]]:
        """Print ``text ...`` now and ``done (1.2 s)`` when the block ends."""
        print(f"  {text} ...", end="", file=self.out, flush=True)
        timing = {"seconds": 0.0}
        started = time.perf_counter()
        try:
            yield timing
        except BaseException:
            print(" failed", file=self.out, flush=True)
            raise
        timing["seconds"] = time.perf_counter() - started
        print(f" done ({timing['seconds']:.1f} s)", file=self.out, flush=True)


def shorten(text: str, width: int = 88) -> str:
    """One line, at most ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."
