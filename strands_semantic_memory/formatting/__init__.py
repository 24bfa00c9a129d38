"""What the model reads of the archive: the fenced context block, and bounded tool outputs.

Modules: ``_block`` (the one writer of the injected block, whose safety is a property of the text) and
``_tool_output`` (archived messages rendered within a tool output's bound).
"""

from strands_semantic_memory.formatting._block import format_passages, render_context_block

__all__ = ["format_passages", "render_context_block"]
