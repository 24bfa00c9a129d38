"""Tools the agent calls on its archive: ``conversation_search``, ``conversation_read``, ``conversation_forget``.

Modules: ``_conversation_tools`` (the tools) and ``_arguments`` (checking what the model passes them).
"""

from strands_semantic_memory.tools._conversation_tools import memory_tools

__all__ = ["memory_tools"]
