"""What the hook remembers per agent and per user turn, and how it recognises a user turn.

``Enrichment`` is public (``SemanticMemoryHook.last_enrichment``); the other records are the hook's internal
bookkeeping, shared by the hook, the passage selection (``_selection``) and the model-call middleware
(``_model_call``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from strands.types.content import ContentBlock, Message

from strands_semantic_memory.retrieval._passages import Passage

__all__ = ["AgentState", "Enrichment", "Turn", "is_text_block", "position_of", "user_text"]


@dataclass
class Enrichment:
    """What the hook did for one user turn (kept as ``last_enrichment``).

    Attributes:
        query: The user's words that were searched for.
        passages: The passages injected into the turn's latest model call, in conversation order.
        left_out: Passages found but left out to respect the budgets (characters, tokens, or the room left
            after a context overflow).
        text: The full text the user's turn was sent with on the latest model call (empty when nothing was
            injected). The agent's history keeps the user's own words.
        elapsed_ms: Time spent searching and formatting for the turn's first model call.
        tokens: Estimated tokens of the injected lines (four characters per token), when something was injected.
        overflow_retries: Model calls of this turn retried with less or no injected context after the model
            reported a context overflow.
        error: Why the search failed, when it did (the turn was then sent without earlier context).
    """

    query: str
    passages: list[Passage] = field(default_factory=list)
    left_out: list[Passage] = field(default_factory=list)
    text: str = ""
    elapsed_ms: float = 0.0
    tokens: int | None = None
    overflow_retries: int = 0
    error: str | None = None


@dataclass
class Turn:
    """One user turn: the user's message (recognised by identity) and what the search found for it."""

    message: Message
    query: str
    searched: bool = False
    passages: list[Passage] = field(default_factory=list)
    enrichment: Enrichment | None = None
    char_cap: int | None = None  # lowered after a context overflow, for the rest of the turn
    token_cap: int | None = None
    without_context: bool = False  # after a second overflow: nothing is injected for the rest of the turn
    sent: tuple[list[ContentBlock], int] | None = None  # content of the latest successful call, its extra tokens


@dataclass
class AgentState:
    """Per-agent state (a hook can serve several agents)."""

    turn: Turn | None = None
    # keep_injected_context: id(user message) -> (the message, the content it was sent with, extra tokens)
    kept: dict[int, tuple[Message, list[ContentBlock], int]] = field(default_factory=dict)
    without_kept: bool = False  # after an overflow in this invocation: earlier turns' kept context is left out
    registered: bool = False


def is_text_block(block: Any) -> bool:
    """Whether ``block`` is a text content block."""
    return isinstance(block, dict) and "text" in block


def user_text(message: Message) -> str | None:
    """The text of a user turn the hook acts on, or None (tool results, assistant turns, non-text turns).

    Nothing in the message's metadata is read: a message's fields never change what the hook does.
    """
    if message.get("role") != "user":
        return None
    content = message.get("content") or []
    if any(isinstance(b, dict) and ("toolResult" in b or "toolUse" in b) for b in content):
        return None
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    text = "\n".join(t for t in texts if t.strip())
    return text or None


def position_of(messages: Sequence[Message], message: Message) -> int | None:
    """Where ``message`` (the object itself, not an equal copy) is in ``messages``, searching from the end."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is message:
            return i
    return None
