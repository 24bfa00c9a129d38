"""A search as a ``memory.search`` span and a sample of ``semantic_memory.search.duration``."""

from __future__ import annotations

from types import TracebackType

from opentelemetry.util.types import AttributeValue

from strands_semantic_memory._telemetry._metrics import SEARCH_DURATION
from strands_semantic_memory._telemetry._spans import Operation, content_allowed

__all__ = ["SearchOperation", "query_attributes"]


def query_attributes(query: object) -> dict[str, AttributeValue]:
    """A search's query on its span: its size in characters, and its text only if ``memory.query`` is opted in."""
    if not isinstance(query, str):
        return {}
    attributes: dict[str, AttributeValue] = {"memory.query.chars": len(query)}
    if content_allowed("memory.query"):
        attributes["memory.query"] = query
    return attributes


class SearchOperation(Operation):
    """One search of a memory: the span (see ``Operation``), and its duration recorded on the histogram.

    The histogram's attributes are the method (``search``, ``retrieve``, ``recall``), the retrieval mode, the
    archive's type, and ``error.type`` when the search raised.
    """

    __slots__ = ("_metric_attributes",)

    def __init__(self, method: str, retrieval: str, archive_type: str) -> None:
        """Describe the search; the span starts on entering the ``with`` block."""
        self._metric_attributes: dict[str, AttributeValue] = {
            "memory.search.method": method,
            "memory.retrieval": retrieval,
            "memory.archive.type": archive_type,
        }
        super().__init__("memory.search", self._metric_attributes)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """End the span, then record the duration."""
        super().__exit__(kind, error, traceback)
        attributes = self._metric_attributes
        if self.error_type is not None:
            attributes = {**attributes, "error.type": self.error_type}
        SEARCH_DURATION.record(self.elapsed_ms, attributes)
