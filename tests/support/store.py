"""Helpers for tests of SemanticMemoryStore through a real Agent and Strands' MemoryManager."""

from __future__ import annotations

from typing import Any

from strands import Agent
from strands.memory import MemoryManager

from strands_semantic_memory.memory_store import SemanticMemoryStore
from strands_semantic_memory.testing import ScriptedModel


def text(role: str, words: str) -> dict[str, Any]:
    """A text message."""
    return {"role": role, "content": [{"text": words}]}


def injected(request: Any) -> str:
    """The block Strands' injection appended to the last user message of a model request ("" when none)."""
    last = request["messages"][-1]["content"][-1].get("text", "")
    return last if "<memory>" in last else ""


def agent_with(store: SemanticMemoryStore, model: ScriptedModel, **options: Any) -> Agent:
    """An agent whose MemoryManager has this one store (``options``: the manager's)."""
    return Agent(model=model, memory_manager=MemoryManager(stores=[store], **options), callback_handler=None)
