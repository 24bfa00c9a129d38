"""Spans: the library's tracer, one operation as a span under the current one, and the content opt-in.

The tracer comes from the OpenTelemetry API's global provider (``opentelemetry.trace.get_tracer``), which Strands'
``StrandsTelemetry`` (or any SDK setup) configures. Before a provider is set, and when none ever is, the API hands
out non-recording spans: an ``Operation`` then costs a span object and a context switch, and no attribute is
computed (callers check ``Operation.recording`` first).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from types import TracebackType

from opentelemetry import context as context_api
from opentelemetry import trace
from opentelemetry.trace import Link, Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

__all__ = ["SCOPE", "VERSION", "Link", "Operation", "content_allowed", "current_link", "fail_current"]

logger = logging.getLogger(__name__)

SCOPE = "strands_semantic_memory"
"""The instrumentation scope of the library's spans and metrics (the tracer's and the meter's name)."""


def _version() -> str | None:
    try:
        return metadata.version("strands-semantic-memory")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return None


VERSION = _version()
"""The library's version, as its installed metadata says (None when it is not installed)."""

_TRACER = trace.get_tracer(SCOPE, VERSION)
"""Created once; a proxy until a provider is set, which it then follows."""

OPT_IN_VARIABLE = "OTEL_SEMCONV_STABILITY_OPT_IN"
"""Where Strands reads its telemetry opt-ins; its ``gen_ai_unredacted_attributes=`` token lists content to record."""
_UNREDACTED_TOKEN = "gen_ai_unredacted_attributes="

_opt_in_seen: tuple[str, frozenset[str], tuple[str, ...]] | None = None


def content_allowed(attribute: str) -> bool:
    """Whether the user opted in to recording ``attribute`` (content, such as ``memory.query``) in spans.

    The opt-in is Strands' own: ``OTEL_SEMCONV_STABILITY_OPT_IN`` with a ``gen_ai_unredacted_attributes=`` token
    listing attribute names separated by ``;``, a trailing ``*`` matching a prefix (``memory.*``). Unlike Strands,
    which records its content unless that token is present, this library records no content unless it is listed
    there. The variable is read again only when its value changes.
    """
    global _opt_in_seen
    value = os.environ.get(OPT_IN_VARIABLE, "")
    seen = _opt_in_seen
    if seen is None or seen[0] != value:
        exact: set[str] = set()
        prefixes: list[str] = []
        for token in value.split(","):
            token = token.strip()
            if not token.startswith(_UNREDACTED_TOKEN):
                continue
            for entry in token[len(_UNREDACTED_TOKEN) :].split(";"):
                entry = entry.strip()
                if entry.endswith("*"):
                    prefixes.append(entry[:-1])
                elif entry:
                    exact.add(entry)
        seen = _opt_in_seen = (value, frozenset(exact), tuple(prefixes))
    return attribute in seen[1] or any(attribute.startswith(prefix) for prefix in seen[2])


def current_link() -> Link | None:
    """A link to the current span, when there is a valid one (for work another thread does later on its behalf)."""
    span_context = trace.get_current_span().get_span_context()
    return Link(span_context) if span_context.is_valid else None


def fail_current(error: BaseException) -> None:
    """Record a failure that is handled, not raised, on the current span (when it records)."""
    span = trace.get_current_span()
    if span.is_recording():
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))


class Operation:
    """One operation as a span, current while the ``with`` block runs; an exception is recorded on it.

    ``name`` is also the span's ``gen_ai.operation.name``, as in Strands' memory spans. The span is a child of the
    current span, or a trace root with ``root=True`` (work a background thread does for earlier requests, which it
    links to instead). Set further attributes only when ``recording`` (they are computed for nothing otherwise).

    Attributes:
        span: The span.
        recording: Whether the span records (an SDK is configured and sampled it).
        elapsed_ms: Milliseconds the block took, once it ended.
        error_type: The class name of the exception that ended the block, if any.
    """

    __slots__ = (
        "_attributes",
        "_links",
        "_root",
        "_started",
        "_token",
        "elapsed_ms",
        "error_type",
        "name",
        "recording",
        "span",
    )

    def __init__(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue] | None = None,
        *,
        root: bool = False,
        links: Sequence[Link] = (),
    ) -> None:
        """Describe the operation; the span starts on entering the ``with`` block."""
        self.name = name
        self._attributes = attributes
        self._root = root
        self._links = links
        self.span: Span = trace.INVALID_SPAN
        self.recording = False
        self.elapsed_ms = 0.0
        self.error_type: str | None = None
        self._token: object = None
        self._started = 0.0

    def __enter__(self) -> Operation:
        """Start the span and make it current."""
        parent = context_api.Context() if self._root else None
        span = _TRACER.start_span(self.name, context=parent, links=self._links or None)
        self.span = span
        self.recording = span.is_recording()
        if self.recording:
            span.set_attribute("gen_ai.operation.name", self.name)
            if self._attributes:
                span.set_attributes(self._attributes)
        self._token = context_api.attach(trace.set_span_in_context(span))
        self._started = time.perf_counter()
        return self

    def set(self, attributes: Mapping[str, AttributeValue]) -> None:
        """Set attributes on the span (call it only when ``recording``, so nothing is computed in vain)."""
        self.span.set_attributes(attributes)

    def fail(self, error: BaseException) -> None:
        """Record a failure the operation handled without raising (an error status, the exception as an event)."""
        self.error_type = type(error).__name__
        if self.recording:
            self.span.record_exception(error)
            self.span.set_status(Status(StatusCode.ERROR, f"{self.error_type}: {error}"))

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """End the span; an exception (not a cancellation or an exit) is recorded on it, with an error status."""
        self.elapsed_ms = (time.perf_counter() - self._started) * 1000
        try:
            if isinstance(error, Exception):
                self.fail(error)
        finally:
            context_api.detach(self._token)  # type: ignore[arg-type]
            self.span.end()
