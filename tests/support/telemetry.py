"""OpenTelemetry's real SDK in memory for tests: the process's providers, and the spans and metrics one test recorded.

OpenTelemetry's global providers can be set once per process, and the library's tracer and meter follow the first
ones set. ``install`` sets them, once: a tracer provider whose sampler records only while a test switches it on
(the rest of the suite gets non-recording spans, as without an SDK), with an in-memory span exporter, and a meter
provider with an in-memory metric reader (counters and histograms as deltas). The telemetry tests
(``tests/_telemetry``) and the documentation's telemetry example (root ``conftest.py``) both call it, in any order.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, ObservableGauge
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, Sampler

OPT_IN = "OTEL_SEMCONV_STABILITY_OPT_IN"
"""Where Strands (and this library) read the content opt-in."""
SCOPE = "strands_semantic_memory"
"""The library's instrumentation scope (its tracer's and meter's name)."""


class Switch(Sampler):
    """Samples every span while on, none while off."""

    def __init__(self) -> None:
        self.on = False

    def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None, links=None, trace_state=None):
        sampler = ALWAYS_ON if self.on else ALWAYS_OFF
        return sampler.should_sample(parent_context, trace_id, name, kind, attributes, links, trace_state)

    def get_description(self) -> str:
        return "Switch"


class OpenSpans(SpanProcessor):
    """Counts the recording spans started and not yet ended (registered after the exporter: an ended span is
    exported before it stops counting), so a test can wait for another thread's span to end."""

    def __init__(self) -> None:
        self._open: dict[int, str] = {}
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        with self._lock:
            self._open[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            self._open.pop(span.context.span_id, None)

    def names(self) -> list[str]:
        with self._lock:
            return list(self._open.values())


@dataclass(frozen=True)
class Installed:
    """The process's OpenTelemetry SDK for the tests."""

    switch: Switch
    exporter: InMemorySpanExporter
    open_spans: OpenSpans
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider


_installed: Installed | None = None
_install_lock = threading.Lock()


def install() -> Installed:
    """Set OpenTelemetry's global providers to the tests' in-memory SDK (once per process), and return it.

    Raises:
        RuntimeError: If something else set the global providers first (the library would report there).
    """
    global _installed
    with _install_lock:
        if _installed is None:
            switch, exporter, open_spans = Switch(), InMemorySpanExporter(), OpenSpans()
            tracer_provider = TracerProvider(sampler=switch)
            tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
            tracer_provider.add_span_processor(open_spans)
            trace.set_tracer_provider(tracer_provider)
            delta, cumulative = AggregationTemporality.DELTA, AggregationTemporality.CUMULATIVE
            reader = InMemoryMetricReader(
                preferred_temporality={Counter: delta, Histogram: delta, ObservableGauge: cumulative}
            )
            meter_provider = MeterProvider(metric_readers=[reader])
            metrics.set_meter_provider(meter_provider)
            _installed = Installed(switch, exporter, open_spans, reader, tracer_provider, meter_provider)
    if trace.get_tracer_provider() is not _installed.tracer_provider or (
        metrics.get_meter_provider() is not _installed.meter_provider
    ):
        raise RuntimeError("something set OpenTelemetry's global providers before the tests' in-memory SDK")
    return _installed


@dataclass
class Telemetry:
    """The spans and metrics recorded during one test."""

    installed: Installed
    points: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def exporter(self) -> InMemorySpanExporter:
        return self.installed.exporter

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        """Finished spans (of this name), in the order they ended."""
        return [s for s in self.exporter.get_finished_spans() if name is None or s.name == name]

    def span(self, name: str) -> ReadableSpan:
        """The one finished span of this name."""
        found = self.spans(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def by_id(self) -> dict[int, ReadableSpan]:
        return {s.context.span_id: s for s in self.spans()}

    def parent(self, span: ReadableSpan) -> ReadableSpan | None:
        return None if span.parent is None else self.by_id().get(span.parent.span_id)

    def ancestors(self, span: ReadableSpan) -> list[str]:
        """The names of the span's ancestors, nearest first."""
        names, parent = [], self.parent(span)
        while parent is not None:
            names.append(parent.name)
            parent = self.parent(parent)
        return names

    def settle(self, memory: Any, timeout: float = 120.0) -> None:
        """Wait until ``memory`` has nothing pending and every recording span has ended (the background thread's
        batches included), without embedding anything in this thread."""
        deadline = time.monotonic() + timeout
        while memory.stats().pending_embedding_count or self.installed.open_spans.names():
            assert time.monotonic() < deadline, (
                memory.stats().pending_embedding_count,
                self.installed.open_spans.names(),
            )
            time.sleep(0.02)

    def collect(self) -> dict[str, list[Any]]:
        """Collect the metrics recorded since the last collection (counters and histograms are deltas)."""
        data = self.installed.reader.get_metrics_data()
        points: dict[str, list[Any]] = {}
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                if scope.scope.name == SCOPE:
                    for metric in scope.metrics:
                        points.setdefault(metric.name, []).extend(metric.data.data_points)
        self.points = points
        return points

    def metric(self, name: str, **attributes: Any) -> list[Any]:
        """The points of ``name`` in the last collection whose attributes include these (``a__b`` for ``a.b``)."""
        wanted = {k.replace("__", "."): v for k, v in attributes.items()}
        return [p for p in self.points.get(name, []) if wanted.items() <= dict(p.attributes).items()]


def total(points: Sequence[Any]) -> float:
    """The sum of counter points, or of histogram points' sums."""
    return sum(p.value if hasattr(p, "value") else p.sum for p in points)
