"""Reading what a model passes a tool: strictly, boundedly, with errors addressed to the model.

A model's tool input is untrusted: any JSON value of any size. The tools declare ``Any`` parameters (Strands then
neither coerces ``true`` into the index 1 nor answers with a validation error as long as the input) and show the
model a JSON schema of their own; these readers then accept exactly the documented types and raise ``ValueError``
with a short message that quotes at most ``QUOTED_CHARS`` characters of what was sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = [
    "QUOTED_CHARS",
    "bounded",
    "index_list",
    "integer",
    "optional_text",
    "quoted",
    "ranges",
    "schema",
    "text",
    "time_bound",
]

QUOTED_CHARS = 60
"""Most characters of a model's argument that an answer quotes back."""
MAX_TIME_CHARS = 40
MAX_INTEGER = 2**62
"""The largest integer a tool accepts (SQLite's integers are 64-bit)."""
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def quoted(value: Any) -> str:
    """What an answer may show of ``value``: its repr cut to ``QUOTED_CHARS``, or its type and size."""
    if isinstance(value, (list, tuple, dict)) and len(value) > 4:
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, str) and len(value) > QUOTED_CHARS:
        return f"{value[:QUOTED_CHARS]!r}... ({len(value)} characters)"
    shown = repr(value)
    return shown if len(shown) <= QUOTED_CHARS else f"{shown[:QUOTED_CHARS]}... ({len(shown)} characters)"


def bounded(answer: str, limit: int) -> str:
    """``answer`` within ``limit`` characters, saying so when cut (the last bound on every output)."""
    if len(answer) <= limit:
        return answer
    note = f"\n[output cut at {limit} characters]"
    return answer[: limit - len(note)] + note


def text(value: Any, name: str, max_chars: int) -> str:
    """A string of at most ``max_chars`` characters (never a number or a list)."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {quoted(value)}")
    if len(value) > max_chars:
        raise ValueError(f"{name} is {len(value)} characters long; at most {max_chars} are accepted")
    return value


def optional_text(value: Any, name: str, max_chars: int) -> str | None:
    """``text``, with None or an empty string read as absent."""
    return None if value is None or value == "" else text(value, name, max_chars)


def integer(value: Any, name: str, low: int = 0, high: int = MAX_INTEGER) -> int:
    """An integer as JSON writes one (``3`` or ``3.0``) in ``low..high``; never ``true`` or ``"3"``."""
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole:
        raise ValueError(f"{name} must be an integer, got {quoted(value)}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {quoted(value)}")
    return int(value)


def index_list(value: Any, name: str, max_items: int) -> list[int]:
    """A list of at most ``max_items`` archive indices, ascending, without repeats."""
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list of archive indices, got {quoted(value)}")
    if len(value) > max_items:
        raise ValueError(f"{name} holds {len(value)} items; at most {max_items} per call")
    return sorted({integer(item, f"each of {name}") for item in value})


def time_bound(value: Any, name: str, *, end_of_day: bool = False) -> float | None:
    """An ISO-8601 date or time (UTC unless it names a zone) as epoch seconds; None or "" for no bound.

    A bare date is the start of that day, or with ``end_of_day`` its last instant (``until="2024-05-01"``
    includes the day).
    """
    given = optional_text(value, name, MAX_TIME_CHARS)
    if given is None:
        return None
    raw = given.strip()
    try:
        moment = datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw)
    except ValueError:
        raise ValueError(
            f"{name}={quoted(value)} is not an ISO-8601 date or time; use e.g. 2024-05-01 or 2024-05-01T14:30:00Z"
        ) from None
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
    if end_of_day and _DATE.fullmatch(raw):
        moment += timedelta(days=1, microseconds=-1)
    return moment.timestamp()


def ranges(indices: Iterable[int]) -> str:
    """Indices as compact ranges: ``[3, 4, 5, 9]`` -> ``"3-5, 9"``."""
    parts: list[list[int]] = []
    for index in sorted(set(indices)):
        if parts and index == parts[-1][1] + 1:
            parts[-1][1] = index
        else:
            parts.append([index, index])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in parts) or "none"


def schema(required: Iterable[str] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    """A tool's ``inputSchema`` from its properties' JSON schemas."""
    return {"json": {"type": "object", "properties": properties, "required": list(required)}}
