"""Conversation managers that archive every message verbatim (mirrors ``strands.agent.conversation_manager``).

- ``_manager``: ``SemanticSummarizingConversationManager``;
- ``_structured``: the structured summary of ``summary_format="structured"``.
"""

from strands_semantic_memory.conversation_manager._manager import SemanticSummarizingConversationManager
from strands_semantic_memory.conversation_manager._structured import Fact, StructuredSummary

__all__ = ["Fact", "SemanticSummarizingConversationManager", "StructuredSummary"]
