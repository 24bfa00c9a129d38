"""strands-semantic-memory: a memory that forgets nothing, for Strands Agents.

Whatever the conversation manager summarizes away is archived verbatim and indexed; the hook brings the
relevant earlier exchanges back into each model call of a new user turn.

Heavy or optional parts (PostgreSQL, SQLite, Bedrock, the Strands memory store and tools) are imported when
first named, so ``import strands_semantic_memory`` stays fast and needs no optional dependency.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .embeddings import Embedder, SentenceTransformerEmbedder
from .enrichment import format_windows, render_context_block
from .errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingError,
    EmbeddingModelMismatchError,
    InvalidMessageError,
    InvalidMessageTypeError,
    MissingDependencyError,
    SemanticMemoryError,
    StateError,
    StoreError,
)
from .hook import Enrichment, SemanticMemoryHook
from .manager import SemanticSummarizingConversationManager
from .memory import SearchHit, SemanticMemory
from .options import MemoryOptions
from .rerank import CrossEncoderReranker, Reranker
from .stats import MemoryStats
from .stores import ArchiveStore, InMemoryArchive, SearchFilter, StoredRecord
from .windows import ContextWindow

if TYPE_CHECKING:
    from .context_editing import ContextEditor
    from .embeddings.bedrock import BedrockEmbedder
    from .memory_store import SemanticMemoryStore
    from .session_state import Fact, SessionState
    from .stores.pgvector_store import PgVectorStore
    from .stores.sqlite_store import SqliteArchive
    from .tools import memory_tools

_LAZY = {
    "BedrockEmbedder": ".embeddings.bedrock",
    "ContextEditor": ".context_editing",
    "Fact": ".session_state",
    "SemanticMemoryStore": ".memory_store",
    "SessionState": ".session_state",
    "memory_tools": ".tools",
    "PgVectorStore": ".stores.pgvector_store",
    "SqliteArchive": ".stores.sqlite_store",
}

__all__ = [
    "ArchiveStore",
    "BedrockEmbedder",
    "ConfigurationError",
    "ContextEditor",
    "ContextWindow",
    "CrossEncoderReranker",
    "DimensionMismatchError",
    "Embedder",
    "EmbeddingError",
    "EmbeddingModelMismatchError",
    "Enrichment",
    "Fact",
    "InMemoryArchive",
    "InvalidMessageError",
    "InvalidMessageTypeError",
    "MemoryOptions",
    "MemoryStats",
    "MissingDependencyError",
    "PgVectorStore",
    "Reranker",
    "SearchFilter",
    "SearchHit",
    "SemanticMemory",
    "SemanticMemoryError",
    "SemanticMemoryHook",
    "SemanticMemoryStore",
    "SemanticSummarizingConversationManager",
    "SentenceTransformerEmbedder",
    "SessionState",
    "SqliteArchive",
    "StateError",
    "StoreError",
    "StoredRecord",
    "format_windows",
    "memory_tools",
    "render_context_block",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)
