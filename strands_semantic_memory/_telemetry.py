"""OpenTelemetry spans and metrics of the memory, under Strands' own spans (docs/operations.md, "Traces and metrics").

The tracer and meter come from the OpenTelemetry API's global providers, which Strands' ``StrandsTelemetry`` (or any
SDK setup) configures; without one the API hands out no-op spans and instruments, and an operation costs a few
microseconds. Spans: ``memory.add``, ``memory.search``, ``memory.embed``, ``memory.forget``, ``memory.inject`` (one per
model call the hook acts on) and ``memory.tool``. They carry sizes and counts, never archived text; the query's text
only when the user opts in as for Strands' content: ``OTEL_SEMCONV_STABILITY_OPT_IN`` with a
``gen_ai_unredacted_attributes=memory.query`` token (``;``-separated names, ``*`` for a prefix). A failure is recorded
by its exception's type only: an embedder's error may quote the text it was given.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.trace import Status, StatusCode

__all__ = ["METRICS", "content_allowed", "operation", "watch"]

SCOPE = "strands_semantic_memory"
_TRACER = trace.get_tracer(SCOPE)
_METER = metrics.get_meter(SCOPE)


class _Metrics:
    """The library's instruments, created once."""

    def __init__(self) -> None:
        self.search_ms = _METER.create_histogram("semantic_memory.search.duration", unit="ms")
        self.inject_tokens = _METER.create_histogram("semantic_memory.inject.tokens", unit="{token}")
        self.added = _METER.create_counter("semantic_memory.archive.added", unit="{message}")
        self.removed = _METER.create_counter("semantic_memory.archive.removed", unit="{message}")
        self.embedded = _METER.create_counter("semantic_memory.embedding.messages", unit="{message}")
        self.embed_ms = _METER.create_histogram("semantic_memory.embedding.duration", unit="ms")


METRICS = _Metrics()
_watched: list[Callable[[], Callable[[], dict[str, float]] | None]] = []


def _observe(name: str) -> Callable[[Any], Iterable[metrics.Observation]]:
    def observe(_options: Any) -> Iterable[metrics.Observation]:
        for reference in list(_watched):
            figures = reference()
            if figures is None:
                _watched.remove(reference)
                continue
            with contextlib.suppress(Exception):  # a closed memory reports nothing
                yield metrics.Observation(figures()[name])

    return observe


_METER.create_observable_gauge("semantic_memory.archive.size", [_observe("count")], unit="{message}")
_METER.create_observable_gauge("semantic_memory.embedding.backlog", [_observe("pending")], unit="{message}")


def watch(figures: Callable[[], Callable[[], dict[str, float]] | None]) -> None:
    """Report a memory's ``count`` and ``pending`` on the gauges while it lives (``figures``: a weak method)."""
    _watched.append(figures)
    if len(_watched) > 10_000:
        _watched[:] = [w for w in _watched if w() is not None]


def content_allowed(attribute: str) -> bool:
    """Whether the user opted in to recording ``attribute`` (content such as ``memory.query``) on spans."""
    names: list[str] = []
    for token in os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "").split(","):
        token = token.strip()
        if token.startswith("gen_ai_unredacted_attributes="):
            names += [n.strip() for n in token.split("=", 1)[1].split(";") if n.strip()]
    return any(attribute == n or (n.endswith("*") and attribute.startswith(n[:-1])) for n in names)


@contextlib.contextmanager
def operation(name: str, **attributes: Any) -> Iterator[trace.Span]:
    """One operation as a span under the current one; a failure is recorded by its type (the block re-raises)."""
    started = time.perf_counter()
    with _TRACER.start_as_current_span(name, record_exception=False, set_status_on_exception=False) as span:
        if span.is_recording():
            span.set_attribute("gen_ai.operation.name", name)
            for key, value in attributes.items():
                if value is not None:
                    span.set_attribute(key, value)
        try:
            yield span
        except BaseException as error:
            if span.is_recording():
                span.set_attribute("error.type", type(error).__name__)
                span.set_status(Status(StatusCode.ERROR, type(error).__name__))
            raise
        finally:
            if span.is_recording():
                span.set_attribute("memory.duration_ms", (time.perf_counter() - started) * 1000)
