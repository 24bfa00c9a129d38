"""The hook: relevant archived exchanges brought into the model calls of each new user turn (``_hook``)."""

from strands_semantic_memory.hook._hook import Enrichment, SemanticMemoryHook

__all__ = ["Enrichment", "SemanticMemoryHook"]
