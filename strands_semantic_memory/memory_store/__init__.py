"""The archive as a Strands ``MemoryStore``: ``SemanticMemoryStore``, for ``Agent(memory_manager=MemoryManager(...))``.

Modules: ``_store`` (the store: archiving what Strands hands over, the agent it serves and its model calls, the
search and its gate) and ``_entries`` (passages fitted to the budget as Strands injects them, packed into few
entries).
"""

from strands_semantic_memory.memory_store._store import (
    DEFAULT_DESCRIPTION,
    KEEP_TOOL_TRAFFIC,
    SemanticMemoryStore,
    StoreEnrichment,
)

__all__ = ["DEFAULT_DESCRIPTION", "KEEP_TOOL_TRAFFIC", "SemanticMemoryStore", "StoreEnrichment"]
