"""When a message was said, and the time bounds of a search: seconds since the epoch, from a number or a datetime.

Both the write path (``engine._intake``: a message's ``said_at``) and the read path (``retrieval``: a search's
``since`` and ``until``) read times the same way, so the reading lives here, below both.
"""

from __future__ import annotations

from datetime import datetime

from strands_semantic_memory.errors import InvalidMessageTypeError

__all__ = ["TimeBound", "to_epoch"]

TimeBound = float | datetime | None
"""A time as callers give it: seconds since the epoch, a datetime, or None (no bound)."""


def to_epoch(value: TimeBound, name: str) -> float | None:
    """Seconds since the epoch from a number or a datetime (naive datetimes are local time, as Python does)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise InvalidMessageTypeError(f"{name} must be a number of seconds or a datetime, got {type(value).__name__}")
