"""Agentic context editing: the model summarizes or drops ranges of its own active context, losing nothing.

Modules: ``_editor`` (``ContextEditor``, its tools and safe points) and ``_edits`` (pure functions: message ids,
editable ranges, applying an edit exactly, the log a restored session replays).
"""

from strands_semantic_memory.context_editing._editor import ContextEditor

__all__ = ["ContextEditor"]
