"""The engine: ``SemanticMemory``, a lossless archive of Strands messages with hybrid search.

Modules: ``_memory`` (the facade and its running parts), ``_options`` (the frozen, validated tunables),
``_intake`` (checking and encoding what is offered), ``_embedding_queue`` (vectors computed outside the lock,
inline or in a background thread),
``_query_encoder`` (query embeddings and their cache), ``_stats`` (what ``stats`` reports).
"""

from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.engine._options import MemoryOptions
from strands_semantic_memory.engine._stats import MemoryStats

__all__ = ["MemoryOptions", "MemoryStats", "SemanticMemory"]
