"""strands-semantic-memory: a memory that forgets nothing, for Strands Agents.

Whatever leaves an agent's context is archived verbatim and indexed; the relevant earlier exchanges come back to
the model when they matter. The root exports the entry points; each feature lives in its own subpackage:

- ``conversation_manager``: the manager that archives what it summarizes away;
- ``hook``: the hook that brings archived exchanges into a turn's model calls;
- ``engine``: ``SemanticMemory``, the archive and its search;
- ``archives``: where the archive lives (in process, SQLite, PostgreSQL);
- ``embeddings``: the bundled model, ONNX Runtime, Amazon Bedrock;
- ``tools`` and ``context_editing``: tools the agent calls;
- ``memory_store``: the archive as a Strands ``MemoryStore``;
- ``storage``: the archive as a Strands ``Storage``, for Strands' ``ContextManager`` and ``ContextOffloader``;
- ``retrieval``, ``messages``,
  ``formatting``: ranking, the message codec, what the model reads;
- ``errors``: the exception family.

Parts with optional or heavy dependencies (the memory store, the storage, tools, context editing) are imported when
first named, so ``import strands_semantic_memory`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from strands_semantic_memory.conversation_manager import SemanticSummarizingConversationManager
from strands_semantic_memory.engine import MemoryOptions, MemoryStats, SemanticMemory
from strands_semantic_memory.errors import SemanticMemoryError
from strands_semantic_memory.hook import Enrichment, SemanticMemoryHook
from strands_semantic_memory.retrieval import Passage, SearchHit

__version__ = "0.1.0"  # the package's one version: pyproject.toml reads it (setuptools' dynamic version)

if TYPE_CHECKING:
    from strands_semantic_memory.context_editing import ContextEditor
    from strands_semantic_memory.memory_store import SemanticMemoryStore
    from strands_semantic_memory.storage import SemanticStorage
    from strands_semantic_memory.tools import memory_tools

_LAZY = {
    "ContextEditor": "strands_semantic_memory.context_editing",
    "SemanticMemoryStore": "strands_semantic_memory.memory_store",
    "SemanticStorage": "strands_semantic_memory.storage",
    "memory_tools": "strands_semantic_memory.tools",
}

__all__ = [
    "ContextEditor",
    "Enrichment",
    "MemoryOptions",
    "MemoryStats",
    "Passage",
    "SearchHit",
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
