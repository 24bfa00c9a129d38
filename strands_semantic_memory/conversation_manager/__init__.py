"""Conversation managers that archive what they summarize away (mirrors ``strands.agent.conversation_manager``).

Modules: ``semantic_summarizing_conversation_manager`` (the manager), ``_compaction`` (shrinking the active
context without losing a message), ``_checks`` (checks made when a manager is built), ``_drop_policy`` (dropping
the oldest messages when a summary fails), ``_summarizer`` (how the summarizer is asked),
``_structured_summary`` and ``_session_state`` (the structured session state).
"""

from strands_semantic_memory.conversation_manager._checks import OnSummaryFailure, SummaryFormat
from strands_semantic_memory.conversation_manager._session_state import Fact, SessionState
from strands_semantic_memory.conversation_manager.semantic_summarizing_conversation_manager import (
    SemanticSummarizingConversationManager,
)

__all__ = ["Fact", "OnSummaryFailure", "SemanticSummarizingConversationManager", "SessionState", "SummaryFormat"]
