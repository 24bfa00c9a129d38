"""The engine: ``SemanticMemory``, a lossless archive of Strands messages with hybrid search.

- ``_memory``: ``SemanticMemory``, its search results, self-statements and statistics;
- ``_options``: ``MemoryOptions``, every tunable with one name, validated;
- ``_history``: the archive as JSON Lines and transcripts loaded in bulk, idempotent and resumable.
"""

from strands_semantic_memory.engine._history import (
    HISTORY_VERSION,
    ImportReport,
    check_history,
    export_history,
    history_line,
    import_history,
)
from strands_semantic_memory.engine._memory import MemoryStats, SearchHit, SearchResult, SemanticMemory, Statement
from strands_semantic_memory.engine._options import MemoryOptions

__all__ = [
    "HISTORY_VERSION",
    "ImportReport",
    "MemoryOptions",
    "MemoryStats",
    "SearchHit",
    "SearchResult",
    "SemanticMemory",
    "Statement",
    "check_history",
    "export_history",
    "history_line",
    "import_history",
]
