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

With a large window the memory's share is capped at ``max_memory_tokens`` (2,500 by default): half of a
200,000-token window would put up to 100,000 tokens of archived context into every call, and pay for them. What
the cap leaves goes to the history (187,500 tokens of that window's 200,000), so the manager does not summarize
earlier than the window needs. A turn the relevance gate is unsure about gets at most ``uncertain_memory_tokens``.

When the model does not declare its window, the manager reduces only when the model reports an overflow (as
Strands does), and the hook spends at most ``fallback_memory_tokens``.

Every part reads the window through ``model_window`` (an int above 0, or undeclared) and finds an agent's budget
through ``agent_budget`` (its own, else the conversation manager's, else a ``BudgetSummarization``'s, else the
default), so the manager, the hook, the memory store and the storage's strategy agree on both.
"""

from __future__ import annotations

import logging
import math
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strands.types.content import Message

from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._text import render_message

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_BUDGET",
    "MAX_DECLARED_WINDOW",
    "ContextBudget",
    "agent_budget",
    "estimate_tokens",
    "history_tokens",
    "model_window",
    "share_budget",
    "tokens_for_length",
]

MAX_DECLARED_WINDOW = 2**53
"""The largest window read as declared: the shares are computed in floating point, which holds every integer up to
this one exactly (a larger one, 10**400 say, would overflow or round)."""


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
        uncertain_memory_tokens: The most tokens of archived context a turn gets when it resembles the archive only
            a little (``"uncertain"``, see ``retrieval.relevance``): its few best hits, not a full share. Default
            250: on the development half of LoCoMo, enough for the two to five best messages of a question asked
            without the names the archive uses, while an unrelated prompt in that band costs at most that much.
    """

    memory_share: float = 0.5
    reply_share: float = 0.05
    fallback_memory_tokens: int = 1000
    max_memory_tokens: int | None = 2500
    uncertain_memory_tokens: int = 250

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
        band = self.uncertain_memory_tokens
        if isinstance(band, bool) or not isinstance(band, int) or band < 0:
            raise ConfigurationError(f"uncertain_memory_tokens must be an integer >= 0, got {band!r}")

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
            ``memory_share`` of the window, at most ``max_memory_tokens``; with ``used`` known, the room the call
            leaves (less the reply's share), up to ``max_memory_tokens`` when that is more than the share: a call
            whose history leaves the window mostly empty (a new session) may spend the cap, and a call whose history
            fills its own part gets the share. ``fallback_memory_tokens`` without a window.
        """
        if window is None or window <= 0:
            return self._capped(self.fallback_memory_tokens)
        share = self._memory_part(window)
        if used is None:
            return share
        room = window - _part(window, self.reply_share) - used
        ceiling = share if self.max_memory_tokens is None else max(share, self.max_memory_tokens)
        return max(0, min(ceiling, room))


def _part(window: int, share: float) -> int:
    """``share`` of ``window`` tokens, rounded down (a product such as 8000 x 0.3 is 2400, not 2399)."""
    return math.floor(window * share + 1e-9)


DEFAULT_BUDGET = ContextBudget()
"""The budget of an agent that has none of its own (``agent_budget``'s last resort)."""

_warned_lock = threading.Lock()
_warned: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_warned_unreferenceable: set[tuple[int, str]] = set()


def model_window(model: Any) -> int | None:
    """The model's declared context window in tokens (its ``context_window_limit``), or None when it declares none.

    A declared window is an ``int`` above 0 (not a bool) and at most ``MAX_DECLARED_WINDOW``. Any other value (a
    string such as ``"8000"``, a float, NaN, infinity, a negative number, ``True``, an absurdly large number)
    counts as undeclared, as it does for Strands' own managers, and is logged once per model and value, named.

    Args:
        model: A Strands model (or any object; one without ``context_window_limit`` declares no window).

    Returns:
        The window in tokens, or None.
    """
    limit = getattr(model, "context_window_limit", None)
    if limit is None:
        return None
    if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= MAX_DECLARED_WINDOW:
        return limit
    _warn_odd_window(model, limit)
    return None


def _warn_odd_window(model: Any, limit: object) -> None:
    """Log an odd ``context_window_limit`` once per model and value."""
    shown = _shown(limit)
    with _warned_lock:
        try:
            seen = _warned.setdefault(model, set())
        except TypeError:  # a model that cannot be weakly referenced: remembered by id
            key = (id(model), shown)
            if key in _warned_unreferenceable:
                return
            _warned_unreferenceable.add(key)
        else:
            if shown in seen:
                return
            seen.add(shown)
    logger.warning(
        "model=<%s>, context_window_limit=<%s> | not a positive whole number of tokens: the model's window counts as "
        "undeclared (the manager reduces only on an overflow, the memory gets fallback_memory_tokens)",
        type(model).__name__,
        shown,
    )


def _shown(value: object) -> str:
    """A short, safe rendering of an odd value for the log (an int of 400 digits is shown by its size)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an int of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_strategy_budgets: weakref.WeakKeyDictionary[Any, ContextBudget] = weakref.WeakKeyDictionary()


def share_budget(agent: Any, budget: ContextBudget) -> None:
    """Record the budget a context-management strategy keeps for ``agent`` (``BudgetSummarization`` does, in ``init``).

    ``agent_budget`` then finds it for the hook and the memory store on the same agent, so one budget serves all.
    """
    try:
        _strategy_budgets[agent] = budget
    except TypeError:  # an object that cannot be weakly referenced keeps no shared budget
        logger.debug("agent=<%s> | cannot record a shared budget for this object", type(agent).__name__)


def agent_budget(agent: Any, own: ContextBudget | None) -> ContextBudget:
    """The budget that applies to ``agent``'s model calls.

    Args:
        agent: The agent (or None).
        own: The caller's own budget (a hook's or a memory store's ``budget=``), if any.

    Returns:
        ``own``, else the budget of the agent's conversation manager (this library's manager has one), else the
        budget of a ``BudgetSummarization`` in the agent's ``ContextManager``, else ``DEFAULT_BUDGET``.
    """
    if own is not None:
        return own
    managed = getattr(getattr(agent, "conversation_manager", None), "budget", None)
    if isinstance(managed, ContextBudget):
        return managed
    try:
        shared = _strategy_budgets.get(agent)
    except TypeError:  # an object that cannot be weakly referenced has no strategy budget
        shared = None
    return shared if shared is not None else DEFAULT_BUDGET
