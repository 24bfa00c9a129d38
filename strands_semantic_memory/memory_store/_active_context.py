"""The active-context filter: archived messages the agent still has in its context are not returned again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from strands.types.content import Message

from strands_semantic_memory.messages._text import render_message

__all__ = ["ActiveContext"]


class ActiveContext:
    """The messages an agent has in its context, as the store's extraction filter would archive them."""

    def __init__(self, messages: Sequence[Message], exclude: set[str]) -> None:
        self.size = len(messages)
        self._contents: dict[tuple[str, str], list[list[Any]]] = {}
        for message in messages:
            content = [b for b in message.get("content") or [] if not (isinstance(b, dict) and _kind(b) in exclude)]
            if content:
                key = (str(message.get("role")), render_message({"role": message["role"], "content": content}))
                self._contents.setdefault(key, []).append(content)

    def __bool__(self) -> bool:
        return bool(self._contents)

    def holds(self, archived: Message) -> bool:
        """Whether an archived message is (role and content equal) one the agent still has in its context."""
        key = (str(archived.get("role")), render_message(archived))
        return any(content == archived.get("content") for content in self._contents.get(key, ()))


def _kind(block: Any) -> str:
    return next(iter(block), "")
