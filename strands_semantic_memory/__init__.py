"""strands-semantic-memory: a memory that forgets nothing, for Strands Agents.

Every message is archived verbatim as it is added; the relevant earlier exchanges come back to the model when they
matter, in this session or a later one of the same user. The root exports the entry points; each feature lives in
its own subpackage (``engine``, ``archives``, ``embeddings``, ``retrieval``, ``hook``, ``conversation_manager``,
``memory_store``, ``storage``, ``tools``, ``context_editing``, ``cli``). Parts with heavier imports are imported
when first named, so ``import strands_semantic_memory`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from strands_semantic_memory.engine import MemoryOptions, MemoryStats, SearchHit, SearchResult, SemanticMemory
from strands_semantic_memory.errors import SemanticMemoryError
from strands_semantic_memory.retrieval import Passage

__version__ = "0.1.0"

if TYPE_CHECKING:
    from strands_semantic_memory.context_editing import ContextEditor
    from strands_semantic_memory.conversation_manager import SemanticSummarizingConversationManager
    from strands_semantic_memory.hook import SemanticMemoryHook
    from strands_semantic_memory.memory_store import SemanticMemoryStore
    from strands_semantic_memory.storage import SemanticStorage
    from strands_semantic_memory.tools import memory_tools

_LAZY = {
    "ContextEditor": "strands_semantic_memory.context_editing",
    "SemanticMemoryHook": "strands_semantic_memory.hook",
    "SemanticMemoryStore": "strands_semantic_memory.memory_store",
    "SemanticStorage": "strands_semantic_memory.storage",
    "SemanticSummarizingConversationManager": "strands_semantic_memory.conversation_manager",
    "memory_tools": "strands_semantic_memory.tools",
}

__all__ = [
    "ContextEditor",
    "MemoryOptions",
    "MemoryStats",
    "Passage",
    "SearchHit",
    "SearchResult",
    "SemanticMemory",
    "SemanticMemoryError",
    "SemanticMemoryHook",
    "SemanticMemoryStore",
    "SemanticStorage",
    "SemanticSummarizingConversationManager",
    "memory_tools",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)
