"""The hook: relevant archived exchanges brought into the model calls of each new user turn.

Modules: ``_hook`` (``SemanticMemoryHook``, its registration and per-call middleware), ``_turn`` (what is
remembered per agent and per user turn), ``_search`` (one search per turn, and the preview), ``_selection`` (which
passages fit a call), ``_model_call`` (what one model call receives, and shrinking it after an overflow).
"""

from strands_semantic_memory.hook._hook import Enrichment, SemanticMemoryHook

__all__ = ["Enrichment", "SemanticMemoryHook"]
