"""Conversation managers that archive what they summarize away (mirrors ``strands.agent.conversation_manager``).

Modules: ``semantic_summarizing_conversation_manager`` (the manager), ``_compaction`` (shrinking the active
context without losing a message), ``_options`` (the manager's options checked, and Strands compatibility),
``_drop_policy`` (dropping the oldest messages when a summary fails), ``_summarizer`` (how the summarizer is asked,
and one structured reduction merged through it), ``_structured_summary`` (``StructuredSummary``, the default schema
of the structured summary: how it is written into the conversation, kept within a budget and saved).
"""

from strands_semantic_memory.conversation_manager._options import OnSummaryFailure, SummaryFormat
from strands_semantic_memory.conversation_manager._structured_summary import Fact, StructuredSummary
from strands_semantic_memory.conversation_manager.semantic_summarizing_conversation_manager import (
    SemanticSummarizingConversationManager,
)

__all__ = ["Fact", "OnSummaryFailure", "SemanticSummarizingConversationManager", "StructuredSummary", "SummaryFormat"]
