"""Values the conversation tools are given: time bounds, integers, index ranges.

What a model sends is untrusted: any JSON value, of any size. The tools declare their parameters with
``ModelInt``, ``ModelText`` and ``ModelIndices``, which show the model a JSON schema but accept any value, so
Strands' validation neither coerces (``true`` is not the index 1) nor answers with an error as long as the input;
these functions then read the values strictly and raise ``ValueError`` with a short message addressed to the model
(quoting at most ``QUOTED_CHARS`` of what it sent), so it can correct the call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta, timezone
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

__all__ = [
    "QUOTED_CHARS",
    "ModelIndices",
    "ModelInt",
    "ModelText",
    "bounded",
    "format_index_ranges",
    "format_time",
    "index_list_argument",
    "int_argument",
    "parse_time",
    "quoted",
    "text_argument",
]

QUOTED_CHARS = 60
"""Most characters of a model's argument that a tool's answer quotes back."""


class _AnyValue:
    """A tool parameter that accepts any JSON value and shows the model ``json_schema`` (checked by the tool)."""

    json_schema: ClassVar[dict[str, Any]] = {}

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.any_schema()

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return dict(cls.json_schema)


if TYPE_CHECKING:
    ModelInt = Any
    ModelText = Any
    ModelIndices = Any
else:

    class ModelInt(_AnyValue):
        """An integer parameter, as the model is told; read with ``int_argument``."""

        json_schema: ClassVar[dict[str, Any]] = {"type": "integer"}

    class ModelText(_AnyValue):
        """A string parameter, as the model is told; read with ``text_argument``."""

        json_schema: ClassVar[dict[str, Any]] = {"type": "string"}

    class ModelIndices(_AnyValue):
        """A list of archive indices, as the model is told; read with ``index_list_argument``."""

        json_schema: ClassVar[dict[str, Any]] = {"type": "array", "items": {"type": "integer"}}


def quoted(value: Any, limit: int = QUOTED_CHARS) -> str:
    """``repr(value)``, cut to about ``limit`` characters with a note of its full length (cheap for huge values)."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"... ({len(value)} characters)"
    if isinstance(value, (list, tuple, dict)) and len(value) > 8:
        return f"a {type(value).__name__} of {len(value)} items"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def bounded(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, saying so (a last bound on every tool answer)."""
    if len(text) <= limit:
        return text
    note = f" [... cut: {len(text)} characters, at most {limit} per answer]"
    return text[: max(0, limit - len(note))] + note


def text_argument(value: Any, name: str, *, max_chars: int | None = None) -> str:
    """A string argument (not a number or a list), at most ``max_chars`` long; ValueError otherwise."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {quoted(value)}")
    if max_chars is not None and len(value) > max_chars:
        raise ValueError(f"{name} is {len(value)} characters long; at most {max_chars} are accepted")
    return value


def index_list_argument(value: Any, name: str, max_items: int) -> list[int]:
    """A list of at most ``max_items`` archive indices (integers >= 0), without repeats; ValueError otherwise."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a list of archive indices, got {quoted(value)}")
    if len(value) > max_items:
        raise ValueError(f"{name} holds {len(value)} items; at most {max_items} archive indices per call")
    indices = sorted({int_argument(item, f"each of {name}") for item in value})
    if indices and indices[0] < 0:
        raise ValueError(f"archive indices are >= 0, got {indices[0]}")
    return indices


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
        raise ValueError(f"{name} must be an ISO-8601 date or time such as 2024-05-01T14:30:00Z, got {quoted(value)}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite time, got {quoted(value)}")
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
            raise ValueError(f"{name}={quoted(value)} is not a valid date: {error}") from error
    normalized = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        moment = datetime.fromisoformat(normalized.replace(" ", "T", 1))
    except ValueError as error:
        raise ValueError(
            f"{name}={quoted(value)} is not an ISO-8601 date or time; use e.g. 2024-05-01 or 2024-05-01T14:30:00Z"
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
    """An integer as JSON writes it (``3`` or ``3.0``); ValueError for anything else (``true``, ``"3"``, ``3.5``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be an integer, got {quoted(value)}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{name} must be an integer, got {quoted(value)}")
    return int(value)


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
