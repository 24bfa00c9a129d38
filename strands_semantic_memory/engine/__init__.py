"""The engine: ``SemanticMemory``, a lossless archive of Strands messages with hybrid search.

Modules: ``_memory`` (``SemanticMemory``: its running parts and the write transaction), ``_options`` (the
frozen, validated tunables), ``_intake`` (checking and encoding what is offered), ``embedding`` (vectors computed
outside the lock, inline or in a background thread, and searches that see pending messages), ``_stats`` (what
``stats`` reports), ``_memory_state`` (saving and restoring a whole memory). The checked, caching embedder it embeds
with is ``embeddings._checked.CheckedEmbedder``.
"""

from strands_semantic_memory.engine._memory import MemoryArguments, SemanticMemory
from strands_semantic_memory.engine._options import MemoryOptions, MemoryTunables, OptionChanges
from strands_semantic_memory.engine._stats import MemoryStats

__all__ = ["MemoryArguments", "MemoryOptions", "MemoryStats", "MemoryTunables", "OptionChanges", "SemanticMemory"]
