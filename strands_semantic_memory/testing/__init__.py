"""Test doubles for your own tests, examples and offline trials: a scripted chat model and a disk-cached embedder.

- :class:`ScriptedModel`: a real ``strands.models.Model`` whose replies come from a script (a text, a list, or a
  responder function), which answers Strands' summary calls and structured output, records every request, and
  refuses calls above a declared input size with ``ContextWindowOverflowException``, as providers do. Put it where
  your model goes; the agent loop, the managers, the hook and the archive all run for real.
- :class:`DiskCachedEmbedder`: the real model's vectors, kept on disk (no pickle), so a test suite or a parameter
  sweep embeds each text once across runs.

Modules: ``_scripted_model`` (the model, its reply types and the default scripts) and ``_disk_cache`` (the
embedder). This package is what the library's own tests, documentation examples and benchmarks use.
"""

from strands_semantic_memory.testing._disk_cache import DiskCachedEmbedder
from strands_semantic_memory.testing._scripted_model import (
    DEFAULT_SUMMARY,
    SUMMARY_REQUEST,
    Reply,
    Responder,
    ScriptedModel,
    ScriptedRequest,
    StructuredReply,
    StructuredRequest,
    StructuredResponder,
    ToolCall,
    archive_indices,
    last_user_text,
    merge_facts,
    noted_reply,
    previous_summary,
)

__all__ = [
    "DEFAULT_SUMMARY",
    "SUMMARY_REQUEST",
    "DiskCachedEmbedder",
    "Reply",
    "Responder",
    "ScriptedModel",
    "ScriptedRequest",
    "StructuredReply",
    "StructuredRequest",
    "StructuredResponder",
    "ToolCall",
    "archive_indices",
    "last_user_text",
    "merge_facts",
    "noted_reply",
    "previous_summary",
]
