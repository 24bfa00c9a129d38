"""The archive as a Strands ``MemoryStore``: ``SemanticMemoryStore``, for ``Agent(memory_manager=MemoryManager(...))``.

Modules: ``_store`` (``SemanticMemoryStore``: searching, archiving what Strands hands over, the tools),
``_extraction`` (Strands' extraction: the default config that keeps tool traffic, triggers that tell the store its
agent, the keys that make a retried batch idempotent), ``_active_context`` (what the agent still has in its context,
left out of what a search returns), ``_fit`` (fitting the entries to the room the model call leaves, counted as
Strands escapes and wraps them), ``_entries`` (one ``MemoryEntry`` per passage, and ``StoreEnrichment``, the record
of a search).
"""

from strands_semantic_memory.memory_store._entries import LeftOut, LeftOutReason, StoreEnrichment
from strands_semantic_memory.memory_store._extraction import KEEP_TOOL_TRAFFIC
from strands_semantic_memory.memory_store._store import DEFAULT_DESCRIPTION, NewMemoryArguments, SemanticMemoryStore

__all__ = [
    "DEFAULT_DESCRIPTION",
    "KEEP_TOOL_TRAFFIC",
    "LeftOut",
    "LeftOutReason",
    "NewMemoryArguments",
    "SemanticMemoryStore",
    "StoreEnrichment",
]
