"""Times as callers give them: seconds since the epoch, from a number or a datetime."""

from __future__ import annotations

import math
from datetime import datetime

from strands_semantic_memory.errors import InvalidMessageTypeError

__all__ = ["TimeBound", "to_epoch"]

TimeBound = float | datetime | None
"""A time: seconds since the epoch, a datetime (naive: local time, as Python reads it), or None."""


def to_epoch(value: TimeBound, name: str) -> float | None:
    """Seconds since the epoch of ``value`` (None stays None).

    Raises:
        InvalidMessageTypeError: If it is neither a finite number nor a datetime.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    raise InvalidMessageTypeError(f"{name} must be a finite number of seconds or a datetime, got {value!r:.60}")
