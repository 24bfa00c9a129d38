"""OpenTelemetry traces and metrics of the memory, under Strands' own spans (docs/operations.md, "Traces and metrics").

Everything goes through the OpenTelemetry API that Strands already depends on: the spans nest under the current
span (Strands' agent, cycle and tool spans), and with no SDK configured every span is a non-recording one and every
instrument a no-op. Spans follow Strands' memory spans (``memory.search``, ``memory.add``, ``memory.inject``; their
``gen_ai.operation.name`` is the span's name, their attributes ``memory.*``); content (the query's text) is recorded
only when the user opts in the way Strands' content redaction is configured (``content_allowed``).

Modules: ``_spans`` (the tracer, ``Operation``, the opt-in), ``_metrics`` (the instruments, and the gauges' view of
the open memories), ``_search`` (a search's span and duration).
"""

from opentelemetry.util.types import AttributeValue

from strands_semantic_memory._telemetry._metrics import (
    ARCHIVE_ADDED,
    ARCHIVE_ADDED_BYTES,
    ARCHIVE_REMOVED,
    EMBEDDING_DURATION,
    EMBEDDING_MESSAGES,
    INJECT_TOKENS,
    SEARCH_DURATION,
    ArchiveFigures,
    watch,
)
from strands_semantic_memory._telemetry._search import SearchOperation, query_attributes
from strands_semantic_memory._telemetry._spans import (
    SCOPE,
    Link,
    Operation,
    content_allowed,
    current_link,
    fail_current,
)

__all__ = [
    "ARCHIVE_ADDED",
    "ARCHIVE_ADDED_BYTES",
    "ARCHIVE_REMOVED",
    "EMBEDDING_DURATION",
    "EMBEDDING_MESSAGES",
    "INJECT_TOKENS",
    "SCOPE",
    "SEARCH_DURATION",
    "ArchiveFigures",
    "AttributeValue",
    "Link",
    "Operation",
    "SearchOperation",
    "content_allowed",
    "current_link",
    "fail_current",
    "query_attributes",
    "watch",
]
