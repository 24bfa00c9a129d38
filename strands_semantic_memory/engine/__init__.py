"""The engine: ``SemanticMemory``, a lossless archive of Strands messages with hybrid search.

Modules: ``_memory`` (``SemanticMemory``: its running parts and the write transaction), ``_options`` (the
frozen, validated tunables), ``_intake`` (checking and encoding what is offered), ``embedding`` (vectors computed
outside the lock, inline or in a background thread, and searches that see pending messages), ``_stats`` (what
``stats`` reports), ``_memory_state`` (saving and restoring a whole memory), ``_history`` (export to and import
from JSON Lines), ``_reembed`` (embedding every message again after a change of model). The checked, caching
embedder it embeds with is ``embeddings._checked.CheckedEmbedder``.
"""

from strands_semantic_memory.engine._history import (
    HISTORY_VERSION,
    HistoryLine,
    ImportProgress,
    ImportReport,
    check_history,
    export_history,
    history_line,
    import_history,
)
from strands_semantic_memory.engine._memory import MemoryArguments, SemanticMemory
from strands_semantic_memory.engine._options import MemoryOptions, MemoryTunables, OptionChanges
from strands_semantic_memory.engine._reembed import ReembedProgress, drop_vectors
from strands_semantic_memory.engine._stats import MemoryStats

__all__ = [
    "HISTORY_VERSION",
    "HistoryLine",
    "ImportProgress",
    "ImportReport",
    "MemoryArguments",
    "MemoryOptions",
    "MemoryStats",
    "MemoryTunables",
    "OptionChanges",
    "ReembedProgress",
    "SemanticMemory",
    "check_history",
    "drop_vectors",
    "export_history",
    "history_line",
    "import_history",
]
