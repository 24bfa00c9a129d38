"""strands-semantic-memory: a memory that forgets nothing, for Strands Agents.

Whatever the conversation manager summarizes away is archived verbatim and indexed; the hook brings the
relevant earlier exchanges back into each new user turn.
"""

from .embeddings import Embedder, SentenceTransformerEmbedder
from .errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingError,
    EmbeddingModelMismatchError,
    MissingDependencyError,
    SemanticMemoryError,
    StateError,
    StoreError,
)
from .hook import Enrichment, SemanticMemoryHook
from .manager import SemanticSummarizingConversationManager
from .memory import SearchHit, SemanticMemory
from .rerank import CrossEncoderReranker, Reranker
from .stores import FaissVectorStore, VectorStore
from .windows import ContextWindow

__all__ = [
    "ConfigurationError",
    "ContextWindow",
    "CrossEncoderReranker",
    "DimensionMismatchError",
    "Embedder",
    "EmbeddingError",
    "EmbeddingModelMismatchError",
    "Enrichment",
    "FaissVectorStore",
    "MissingDependencyError",
    "Reranker",
    "SearchHit",
    "SemanticMemory",
    "SemanticMemoryError",
    "SemanticMemoryHook",
    "SemanticSummarizingConversationManager",
    "SentenceTransformerEmbedder",
    "StateError",
    "StoreError",
    "VectorStore",
]
