"""ContextBudget: how a model's context window is shared between the conversation and what the memory brings back.

One budget serves the conversation manager and the hook. The manager keeps the active history below
``history_limit`` of the window (it reduces before the window is full, archiving first), so that the share the
memory needs is free when a question comes; the hook spends at most ``memory_share`` of the window on archived
context, and never more than the room the call leaves. A part of the window (``reply_share``) stays free for the
model's reply and for the error of token estimates.

Example, a model with ``context_window_limit=8000`` tokens and the defaults::

    history up to 0.45 x 8000 = 3600 tokens   (the manager summarizes above it, archiving first)
    memory up to  0.50 x 8000 = 4000 tokens   (the hook's injected context, hits before neighbours)
    reply         0.05 x 8000 =  400 tokens

With a large window the memory's share is capped at ``max_memory_tokens`` (8,000 by default): half of a
200,000-token window would put up to 100,000 tokens of archived context into every call, and pay for them. What
the cap leaves goes to the history (182,000 tokens of that window's 200,000), so the manager does not summarize
earlier than the window needs.

When the model does not declare its window, the manager reduces only when the model reports an overflow (as
Strands does), and the hook spends at most ``fallback_memory_tokens``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strands.types.content import Message

from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._text import render_message

__all__ = ["ContextBudget", "estimate_tokens", "history_tokens", "tokens_for_length"]


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` at four characters per token, rounded up (Strands' own fallback estimate).

    The budget is kept with this local estimate, so keeping it never sends a request to a provider's
    token-counting service; ``reply_share`` absorbs its error.
    """
    return tokens_for_length(len(text))


def tokens_for_length(chars: int) -> int:
    """``estimate_tokens`` of a text of ``chars`` characters, for a caller that knows the length but not the text.

    Args:
        chars: The text's length in characters.

    Returns:
        Tokens at four characters per token, rounded up.
    """
    return math.ceil(chars / 4)


def history_tokens(messages: Sequence[Message], system_prompt: Any = None) -> int:
    """Estimated tokens of a call's messages (their text, as ``render_message`` shows it) and system prompt."""
    prompt = system_prompt if isinstance(system_prompt, str) else ""
    return estimate_tokens(prompt) + sum(estimate_tokens(render_message(m)) for m in messages)


@dataclass(frozen=True)
class ContextBudget:
    """The shares of a model's context window: the memory's, the reply's, and the history's (the rest).

    Attributes:
        memory_share: Share of the window the hook may fill with archived context (0-0.9). Default 0.5: on the
            LoCoMo-in-the-loop benchmark, shares from 0.3 to 0.6 delivered more evidence the larger they were, 0.6
            hardly more than 0.5 (see the context budget page of the docs); a larger share leaves less room for the
            recent conversation.
        reply_share: Share kept free for the model's reply and for token-estimate error (0-0.5).
        fallback_memory_tokens: Tokens of archived context when the model's window is unknown.
        max_memory_tokens: The most tokens of archived context one call may carry, whatever the window (None: no
            cap beyond the share; it also bounds ``fallback_memory_tokens``). Default 8,000: twice the memory of
            the largest window the LoCoMo-in-the-loop benchmark measures (4,000 tokens of an 8,000-token window
            delivered up to 95 % of the evidence there), so with the default share it changes nothing up to a
            16,000-token window and bounds the cost of every call above it. The room it leaves goes to the history.
    """

    memory_share: float = 0.5
    reply_share: float = 0.05
    fallback_memory_tokens: int = 1000
    max_memory_tokens: int | None = 8000

    def __post_init__(self) -> None:
        """Check the shares.

        Raises:
            ConfigurationError: If a share is out of range, or the shares leave no room for the history.
        """
        for name, value, high in (("memory_share", self.memory_share, 0.9), ("reply_share", self.reply_share, 0.5)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
                raise ConfigurationError(f"{name} must be a number in [0, {high}], got {value!r}")
        if self.memory_share + self.reply_share > 0.9:
            raise ConfigurationError(
                f"memory_share + reply_share must leave at least 10 % of the window to the conversation, got "
                f"{self.memory_share} + {self.reply_share}"
            )
        tokens = self.fallback_memory_tokens
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
            raise ConfigurationError(f"fallback_memory_tokens must be an integer >= 1, got {tokens!r}")
        cap = self.max_memory_tokens
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ConfigurationError(f"max_memory_tokens must be an integer >= 1 or None, got {cap!r}")

    def history_limit(self, window: int) -> int:
        """The most tokens the active history may take before the manager reduces it.

        Args:
            window: The model's context window, in tokens.

        Returns:
            What the window holds besides the memory's part (its share, at most ``max_memory_tokens``) and the
            reply's share.
        """
        return window - self._memory_part(window) - _part(window, self.reply_share)

    def _memory_part(self, window: int) -> int:
        """The memory's share of ``window``, at most ``max_memory_tokens``."""
        return self._capped(_part(window, self.memory_share))

    def _capped(self, tokens: int) -> int:
        """``tokens``, at most ``max_memory_tokens``."""
        return tokens if self.max_memory_tokens is None else min(tokens, self.max_memory_tokens)

    def memory_tokens(self, window: int | None, used: int | None = None) -> int:
        """The most tokens of archived context one model call may carry.

        Args:
            window: The model's context window in tokens, or None when the model does not declare it.
            used: Tokens the call already takes without the archived context (history, system prompt, tools),
                when known; the memory never takes more than the room they leave (less the reply's share).

        Returns:
            ``memory_share`` of the window, at most ``max_memory_tokens``, capped by the room left;
            ``fallback_memory_tokens`` without a window.
        """
        if window is None or window <= 0:
            return self._capped(self.fallback_memory_tokens)
        share = self._memory_part(window)
        if used is None:
            return share
        room = window - _part(window, self.reply_share) - used
        return max(0, min(share, room))


def _part(window: int, share: float) -> int:
    """``share`` of ``window`` tokens, rounded down (a product such as 8000 x 0.3 is 2400, not 2399)."""
    return math.floor(window * share + 1e-9)
