"""Agentic context editing: the model summarizes or drops ranges of its own active context, losing nothing.

Modules: ``_editing`` (``ContextEditor`` and its tools), ``_ranges`` (which messages an edit may address),
``_log`` (the log of applied edits kept in ``agent.state``, replayed by sessions).
"""

from strands_semantic_memory.context_editing._editing import ContextEditor

__all__ = ["ContextEditor"]
