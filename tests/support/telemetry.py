"""OpenTelemetry's real SDK in memory, installed once per process (its global providers can be set only once).

The telemetry tests and the documentation's telemetry example (root ``conftest.py``) both call ``install``, in any
order; the spans of every test land in one exporter, so a test reads the spans that ended while it ran.
"""

from __future__ import annotations

import threading

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_lock = threading.Lock()
_installed: tuple[InMemorySpanExporter, InMemoryMetricReader] | None = None


def install() -> tuple[InMemorySpanExporter, InMemoryMetricReader]:
    """The process's in-memory span exporter and metric reader, set as the global providers on the first call."""
    global _installed
    with _lock:
        if _installed is None:
            spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(spans))
            trace.set_tracer_provider(provider)
            metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
            _installed = (spans, reader)
        return _installed
