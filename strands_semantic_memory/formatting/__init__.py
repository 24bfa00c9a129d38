"""What the model reads of the archive: the fenced context block (``_block``) and bounded tool outputs."""

from strands_semantic_memory.formatting._block import BlockWriter, context_block, quote

__all__ = ["BlockWriter", "context_block", "quote"]
