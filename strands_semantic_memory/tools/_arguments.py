"""Values the conversation tools are given: the memory behind a source, time bounds, integers, index ranges.

Models pass loosely typed arguments (numbers as strings, dates in several ISO-8601 spellings); these functions read
them strictly and raise ``ValueError`` with a message addressed to the model, so it can correct the call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.errors import ConfigurationError

__all__ = ["format_index_ranges", "format_time", "int_argument", "parse_time", "resolve_memory"]


def resolve_memory(source: Any, name: str = "source") -> SemanticMemory:
    """The ``SemanticMemory`` behind a memory, a conversation manager, or a ``SemanticMemoryStore``.

    Args:
        source: A ``SemanticMemory``, or any object whose ``memory`` attribute is one (the
            ``SemanticSummarizingConversationManager``, the ``SemanticMemoryStore``).
        name: The argument's name, for the error message.

    Returns:
        The memory.

    Raises:
        ConfigurationError: If ``source`` is neither.
    """
    if isinstance(source, SemanticMemory):
        return source
    memory = getattr(source, "memory", None)
    if isinstance(memory, SemanticMemory):
        return memory
    shown = repr(source) if len(repr(source)) <= 60 else repr(source)[:57] + "..."
    raise ConfigurationError(
        f"{name} must be a SemanticMemory, a SemanticSummarizingConversationManager or a SemanticMemoryStore, "
        f"got {type(source).__name__} {shown}"
    )


# ---------------------------------------------------------------------------------------------- values from models


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_time(value: Any, *, name: str, end_of_day: bool = False) -> float | None:
    """Read a time bound given by a model or a caller.

    Accepted: ``None``/``""`` (no bound), epoch seconds (a number or a numeric string), a ``datetime``, a ``date``,
    or an ISO-8601 string (``2024-05-01``, ``2024-05-01T14:30``, ``2024-05-01T14:30:00Z``, ``...+02:00``). Times
    without a zone are UTC. A bare date means the start of that day, or its end when ``end_of_day`` is set (so
    ``until="2024-05-01"`` includes the whole day).

    Args:
        value: The bound.
        name: The argument's name, for the error message.
        end_of_day: Read a bare date as the last instant of the day.

    Returns:
        Epoch seconds, or None for no bound.

    Raises:
        ValueError: If the value is not a time (the message says what is accepted).
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an ISO-8601 date or time such as 2024-05-01T14:30:00Z, got {value!r}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite time, got {value!r}")
        return float(value)
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    if isinstance(value, date):
        return _day_bound(value, end_of_day)
    if not isinstance(value, str):
        raise ValueError(f"{name} must be an ISO-8601 date or time string, got {type(value).__name__}")
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    if _ISO_DATE.match(text):
        try:
            return _day_bound(date.fromisoformat(text), end_of_day)
        except ValueError as error:
            raise ValueError(f"{name}={value!r} is not a valid date: {error}") from error
    normalized = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        moment = datetime.fromisoformat(normalized.replace(" ", "T", 1))
    except ValueError as error:
        raise ValueError(
            f"{name}={value!r} is not an ISO-8601 date or time; use e.g. 2024-05-01 or 2024-05-01T14:30:00Z"
        ) from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _day_bound(day: date, end_of_day: bool) -> float:
    start = datetime.combine(day, time(0, 0), tzinfo=timezone.utc)
    if end_of_day:
        return (start + timedelta(days=1)).timestamp() - 1e-6
    return start.timestamp()


def format_time(seconds: float | None) -> str:
    """A UTC time as ``2024-05-01 14:30 UTC`` (empty for None)."""
    if seconds is None:
        return ""
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def int_argument(value: Any, name: str) -> int:
    """An integer given as a number or a numeric string (``3``, ``3.0``, ``"3"``); ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        number = float(value)
    except ValueError as error:
        raise ValueError(f"{name} must be an integer, got {value!r}") from error
    if not number.is_integer():
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(number)


def format_index_ranges(indices: Iterable[int]) -> str:
    """Indices as compact ranges: ``[3, 4, 5, 9]`` -> ``"3-5, 9"``."""
    ordered = sorted(set(indices))
    if not ordered:
        return "none"
    parts: list[str] = []
    start = previous = ordered[0]
    for index in ordered[1:]:
        if index == previous + 1:
            previous = index
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = index
    parts.append(str(start) if start == previous else f"{start}-{previous}")
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------- rendering
