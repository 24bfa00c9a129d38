"""The archive's floor: how close generic questions get to what it holds (the relevance gate's reference).

``retrieval._relevance`` decides whether a turn resembles the archive by comparing the turn's best similarity with
the archive's floor, the ``PROBE_QUANTILE`` quantile of the best similarities of ``PROBES``. Here the floor is
computed and kept: the probes are embedded once per embedding model and process (their vectors are shared by every
memory of that model), each probe costs one nearest-neighbour lookup in the archive, and the floor is computed
again once the archive has grown by a quarter since (messages added through this memory; another process's
additions are picked up after ``RECHECK_SECONDS``), or after a restore or ``forget_all``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.retrieval._relevance import PROBE_QUANTILE, PROBES, probe_floor

__all__ = ["Calibration"]

logger = logging.getLogger(__name__)

GROWTH = 0.25
"""The floor is computed again once this share of the archive was added since."""

RECHECK_SECONDS = 600.0
"""...or this long after it was computed (an archive shared by processes grows without this memory)."""

_probe_vectors: dict[tuple[str, int], Vectors] = {}
_probe_lock = threading.Lock()


def probe_vectors(model_id: str, dimension: int, embed: Callable[[str], Vectors]) -> Vectors:
    """The probes' unit vectors for an embedding model, embedded once per process."""
    key = (model_id, dimension)
    with _probe_lock:
        found = _probe_vectors.get(key)
    if found is None:
        found = np.vstack([embed(probe) for probe in PROBES]).astype(np.float32)
        with _probe_lock:
            _probe_vectors.setdefault(key, found)
    return found


class Calibration:
    """One memory's floor, computed when first needed and again when the archive has changed enough. Thread-safe."""

    def __init__(self) -> None:
        """Create a calibration that has computed nothing yet."""
        self._lock = threading.Lock()
        self._floor: float | None = None
        self._size = 0
        self._added = 0
        self._at: float | None = None

    def added(self, count: int) -> None:
        """Count messages added through the memory since the floor was computed."""
        if count:
            with self._lock:
                self._added += count

    def reset(self) -> None:
        """Forget the floor: the archive was replaced or emptied."""
        with self._lock:
            self._at = None
            self._floor = None

    def floor(self, size: Callable[[], int], probes: Callable[[], list[float | None]]) -> float | None:
        """The archive's floor, computed again when it is due.

        Args:
            size: Counts the archive's messages (called only when a computation is due).
            probes: The best similarity of each probe to the archive (None where nothing is embedded).

        Returns:
            The floor, or None when no probe found an embedded message.
        """
        with self._lock:
            due = (
                self._at is None
                or self._added >= max(1, GROWTH * self._size)
                or time.monotonic() - self._at >= RECHECK_SECONDS
            )
            if not due:
                return self._floor
        started = time.perf_counter()
        count = size()
        best = [s for s in probes() if s is not None]
        floor = probe_floor(best, PROBE_QUANTILE)
        with self._lock:
            self._floor, self._size, self._added, self._at = floor, count, 0, time.monotonic()
        logger.debug(
            "floor=<%s>, messages=<%d>, ms=<%.1f> | relevance floor computed from the probes",
            f"{floor:.3f}" if floor is not None else None,
            count,
            (time.perf_counter() - started) * 1000,
        )
        return floor
