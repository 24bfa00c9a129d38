"""Metrics: the library's instruments, created once from the OpenTelemetry API's global meter provider.

Until a provider is set (``StrandsTelemetry().setup_meter(...)`` or any SDK setup) the instruments are proxies that
record nothing; set later, the provider receives what is recorded from then on. The two gauges are observed: their
callbacks run only when a metric reader collects, and read every open memory's archive then (see ``watch``).
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

from strands_semantic_memory._telemetry._spans import SCOPE, VERSION

__all__ = [
    "ARCHIVE_ADDED",
    "ARCHIVE_ADDED_BYTES",
    "ARCHIVE_REMOVED",
    "EMBEDDING_DURATION",
    "EMBEDDING_MESSAGES",
    "INJECT_TOKENS",
    "SEARCH_DURATION",
    "ArchiveFigures",
    "watch",
]

logger = logging.getLogger(__name__)

_METER = metrics.get_meter(SCOPE, VERSION or "")

SEARCH_DURATION = _METER.create_histogram(
    "semantic_memory.search.duration",
    unit="ms",
    description="Time one search of a memory took (search, retrieve or recall; the hook's search is a recall).",
)
INJECT_TOKENS = _METER.create_histogram(
    "semantic_memory.inject.tokens",
    unit="{token}",
    description="Estimated tokens of archived context the hook added to one model call (0: none).",
    explicit_bucket_boundaries_advisory=[0, 50, 100, 250, 500, 1000, 1500, 2000, 2500, 5000, 10000],
)
ARCHIVE_ADDED = _METER.create_counter(
    "semantic_memory.archive.added",
    unit="{message}",
    description="Messages archived (each once: a message archived again is not counted).",
)
ARCHIVE_ADDED_BYTES = _METER.create_counter(
    "semantic_memory.archive.added_bytes",
    unit="By",
    description="Bytes of the messages archived (their encoded JSON).",
)
ARCHIVE_REMOVED = _METER.create_counter(
    "semantic_memory.archive.removed",
    unit="{message}",
    description="Messages removed from archives: evicted by a size limit, or forgotten on request.",
)
EMBEDDING_MESSAGES = _METER.create_counter(
    "semantic_memory.embedding.messages",
    unit="{message}",
    description="Archived messages an embedding batch handled: embedded (vectors stored) or failed (left pending).",
)
EMBEDDING_DURATION = _METER.create_histogram(
    "semantic_memory.embedding.duration",
    unit="ms",
    description="Time one embedding batch took: claim, embed, store.",
)


@dataclass(frozen=True)
class ArchiveFigures:
    """What an open memory reports to the gauges.

    Attributes:
        archive_type: The archive's class name (``InMemoryArchive``, ``SqliteArchive``, ``PostgresArchive``).
        messages: Live archived messages.
        pending: Archived messages waiting for their vectors.
    """

    archive_type: str
    messages: int
    pending: int


FiguresSource = Callable[[], "ArchiveFigures | None"]

_sources: list[weakref.WeakMethod[FiguresSource]] = []
_lock = threading.Lock()
_snapshot: tuple[float, dict[str, tuple[int, int]], set[str]] | None = None
SNAPSHOT_SECONDS = 1.0
"""Both gauges of one collection share one reading of each archive: the second gauge to be observed reuses the
first one's reading if it is younger than this; a gauge observed again reads the archives again."""


def watch(source: FiguresSource) -> None:
    """Report an open memory to the gauges: ``source`` (a bound method, held weakly) returns its figures, or None.

    It is called only when a metric reader collects (with no SDK configured, never), once per collection.
    """
    with _lock:
        _sources.append(weakref.WeakMethod(source))


def _figures(gauge: str) -> dict[str, tuple[int, int]]:
    """Messages and pending messages per archive type over every open memory (one reading per collection)."""
    global _snapshot
    with _lock:
        now = time.monotonic()
        if _snapshot is not None and gauge not in _snapshot[2] and now - _snapshot[0] < SNAPSHOT_SECONDS:
            _snapshot[2].add(gauge)
            return _snapshot[1]
        _sources[:] = [ref for ref in _sources if ref() is not None]
        sources = [ref() for ref in _sources]
    totals: dict[str, tuple[int, int]] = {}
    for source in sources:  # read outside the lock: a memory being built does not wait for a slow archive
        if source is None:
            continue
        try:
            figures = source()
        except Exception as error:  # a closed or unreachable archive must not break the collection
            logger.debug("error=<%s> | an archive could not be read for the gauges; left out", error)
            continue
        if figures is None:
            continue
        messages, pending = totals.get(figures.archive_type, (0, 0))
        totals[figures.archive_type] = (messages + figures.messages, pending + figures.pending)
    with _lock:
        _snapshot = (now, totals, {gauge})
    return totals


def _archive_messages(options: CallbackOptions) -> Iterable[Observation]:
    for archive_type, (messages, _) in _figures("messages").items():
        yield Observation(messages, {"memory.archive.type": archive_type})


def _pending_messages(options: CallbackOptions) -> Iterable[Observation]:
    for archive_type, (_, pending) in _figures("pending").items():
        yield Observation(pending, {"memory.archive.type": archive_type})


_METER.create_observable_gauge(
    "semantic_memory.archive.messages",
    callbacks=[_archive_messages],
    unit="{message}",
    description="Live archived messages in the memories open in this process.",
)
_METER.create_observable_gauge(
    "semantic_memory.embedding.pending",
    callbacks=[_pending_messages],
    unit="{message}",
    description="Archived messages waiting for their vectors (the embedding backlog) in the memories open here.",
)
