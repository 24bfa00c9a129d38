"""ContextBudget: how a model's context window is shared between the conversation and what the memory brings back.

One budget serves the conversation manager and the hook. The manager keeps the active history below
``history_limit`` of the window (it summarizes before the window is full), so the memory's share is free when a
question comes; the hook spends at most ``memory_share`` of the window on archived context, never more than the room
the call leaves; ``reply_share`` stays free for the reply and the error of token estimates. For a model with
``context_window_limit=8000`` and the defaults: history up to 5,100 tokens, memory up to 2,500 (the cap), reply 400.

With a large window the memory's part is capped at ``max_memory_tokens``: half of a 200,000-token window would put
up to 100,000 tokens of archived context into every call, and users pay for every one. What the cap leaves goes to
the history. A turn the relevance gate is unsure about gets at most ``uncertain_memory_tokens``; a model that
declares no window gets ``fallback_memory_tokens`` and is reduced only when it reports an overflow (as Strands does).
Tokens are estimated locally at four characters per token (Strands' own fallback), never by a provider's service.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from strands.types.content import Message

from strands_semantic_memory.messages._text import render_message

__all__ = ["ContextBudget", "agent_budget", "estimate_tokens", "history_tokens", "model_window"]

logger = logging.getLogger(__name__)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` at four characters per token, rounded up."""
    return math.ceil(len(text) / 4)


def history_tokens(messages: Sequence[Message], system_prompt: Any = None) -> int:
    """Estimated tokens of a call's messages (their text as the archive renders it) and system prompt."""
    prompt = system_prompt if isinstance(system_prompt, str) else ""
    return estimate_tokens(prompt) + sum(estimate_tokens(render_message(m)) for m in messages)


class ContextBudget(BaseModel):
    """The shares of a model's context window: the memory's, the reply's, and the history's (the rest).

    Attributes:
        memory_share: Share of the window the hook may fill with archived context (0-0.9). On the in-session LoCoMo
            benchmark shares from 0.3 to 0.6 delivered more evidence the larger they were, 0.6 hardly more than 0.5.
        reply_share: Share kept free for the model's reply and for the error of token estimates (0-0.5).
        fallback_memory_tokens: Tokens of archived context when the model declares no window.
        max_memory_tokens: The most tokens of archived context one call carries, whatever the window (None: no
            cap); the history gets what it leaves.
        uncertain_memory_tokens: The most a turn gets when it resembles the archive only a little: its few best
            hits, not a full share.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    memory_share: float = Field(0.5, ge=0.0, le=0.9)
    reply_share: float = Field(0.05, ge=0.0, le=0.5)
    fallback_memory_tokens: int = Field(1000, ge=1)
    max_memory_tokens: int | None = Field(2500, ge=1)
    uncertain_memory_tokens: int = Field(250, ge=0)

    @model_validator(mode="after")
    def _room(self) -> ContextBudget:
        if self.memory_share + self.reply_share > 0.9:
            raise ValueError("memory_share + reply_share must leave at least 10 % of the window to the conversation")
        return self

    def _capped(self, tokens: int) -> int:
        return tokens if self.max_memory_tokens is None else min(tokens, self.max_memory_tokens)

    def history_limit(self, window: int) -> int:
        """The most tokens the active history may take before the manager reduces it."""
        return window - self._capped(_part(window, self.memory_share)) - _part(window, self.reply_share)

    def memory_tokens(self, window: int | None, used: int | None = None) -> int:
        """The most tokens of archived context one model call may carry.

        Args:
            window: The model's context window, or None when it declares none.
            used: Tokens the call takes without the archived context, when known: the memory never takes more than
                the room they leave (less the reply's share), and may spend up to the cap when the history leaves the
                window mostly free (a new session), while a full history keeps the share.
        """
        if window is None:
            return self._capped(self.fallback_memory_tokens)
        share = self._capped(_part(window, self.memory_share))
        if used is None:
            return share
        room = window - _part(window, self.reply_share) - used
        ceiling = share if self.max_memory_tokens is None else max(share, self.max_memory_tokens)
        return max(0, min(ceiling, room))


def _part(window: int, share: float) -> int:
    return math.floor(window * share + 1e-9)  # 8000 x 0.3 is 2400, not 2399


_odd_windows: set[tuple[str, str]] = set()


def model_window(model: Any) -> int | None:
    """The model's declared context window (its ``context_window_limit``), or None when it declares none.

    A declared window is an ``int`` above 0 and at most 2**53; anything else (``"8000"``, a float, ``True``, NaN)
    counts as undeclared, as it does for Strands' own managers, and is logged once per model type and value.
    """
    limit = getattr(model, "context_window_limit", None)
    if limit is None:
        return None
    if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= 2**53:
        return limit
    key = (type(model).__name__, repr(limit)[:80])
    if key not in _odd_windows:
        _odd_windows.add(key)
        logger.warning("model=<%s>, context_window_limit=<%s> | not a positive whole number: undeclared", *key)
    return None


def agent_budget(agent: Any, own: ContextBudget | None) -> ContextBudget:
    """The budget of ``agent``'s model calls: ``own``, else its conversation manager's or context strategy's.

    The conversation manager and ``BudgetSummarization`` expose ``budget``; the storage's strategy records its
    budget on the agent's context manager, so the hook and the store on the same agent find the same one.
    """
    if own is not None:
        return own
    for holder in (getattr(agent, "conversation_manager", None), getattr(agent, "context_manager", None)):
        budget = getattr(holder, "budget", None)
        if isinstance(budget, ContextBudget):
            return budget
    for strategy in getattr(getattr(agent, "context_manager", None), "strategies", None) or ():
        budget = getattr(strategy, "budget", None)
        if isinstance(budget, ContextBudget):
            return budget
    return ContextBudget()
