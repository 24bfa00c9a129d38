"""Tools the agent calls on its archive: ``conversation_search``, ``conversation_read``, ``conversation_forget``.

Modules: ``_conversation_tools`` (``memory_tools`` and the tools) and ``_arguments`` (reading what the model sends).
"""

from strands_semantic_memory.tools._conversation_tools import ConfirmForget, ForgetRequest, memory_tools

__all__ = ["ConfirmForget", "ForgetRequest", "memory_tools"]
