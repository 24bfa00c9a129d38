"""The scripted chat model of the tests: the package's public ``ScriptedModel`` (``strands_semantic_memory.testing``).

Nothing is defined here: the names the test modules import from this module are the public ones, so the model the
tests drive is the model users get. New tests import from ``strands_semantic_memory.testing`` directly.
"""

from __future__ import annotations

from strands_semantic_memory.testing import Reply, Responder, ScriptedModel, ToolCall, last_user_text
from strands_semantic_memory.testing import noted_reply as default_responder

__all__ = ["Reply", "Responder", "ScriptedModel", "ToolCall", "default_responder", "last_user_text"]
