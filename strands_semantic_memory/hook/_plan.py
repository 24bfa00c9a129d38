"""The plan of one model call: what the memory may add to it, decided once when the call starts and passed down.

Everything the hook's parts need to know about the call is read here, once: the options as they are now, the
agent's budget (``agent_budget``), the model's window (``model_window``), the tokens the call takes without the
memory, and the messages it already holds. The search, the choice of passages and the view of the call read the
plan; none of them looks at the agent, the model or the options again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strands.types.content import Message

from strands_semantic_memory.budget import ContextBudget, agent_budget, estimate_tokens, history_tokens, model_window
from strands_semantic_memory.formatting._block import context_block
from strands_semantic_memory.hook._options import HookOptions

__all__ = ["BLOCK_OVERHEAD", "CallPlan", "plan_call", "search_depth", "tracking_ids"]

TOKENS_PER_HIT = 25
"""Tokens per hit the search depth assumes: a budget of ``T`` tokens searches ``T / 25`` hits (20 to 100). On the
development half of LoCoMo, each conversation archived whole, a 2,500-token budget delivered 90.2 % of the evidence
from 100 hits and 88.1 % from 50 (the relative cut leaves the hits under it out, so the depth, not the budget,
bounds what a question gets)."""

MIN_DEPTH, MAX_DEPTH = 20, 100

BLOCK_OVERHEAD = estimate_tokens(context_block("", ""))
"""Tokens of the block's own lines (header, fences, the question's prefix)."""


def search_depth(memory_tokens: int) -> int:
    """Hits to search for when ``top_k`` is not set: ``memory_tokens / TOKENS_PER_HIT``, from 20 to 100.

    The budget then keeps the best that fit; searching deeper only costs time.
    """
    return max(MIN_DEPTH, min(MAX_DEPTH, memory_tokens // TOKENS_PER_HIT))


def tracking_ids(messages: Sequence[Message]) -> frozenset[str]:
    """The ``tracking_id`` of each message that has one (the id the archive keeps with a message)."""
    return frozenset(m["tracking_id"] for m in messages if isinstance(m.get("tracking_id"), str))


@dataclass(frozen=True, kw_only=True)
class CallPlan:
    """What one model call may receive from the memory.

    Attributes:
        options: The hook's options when the call started.
        budget: How the model's window is shared (the agent's budget, unless the hook has its own).
        window: The model's declared context window in tokens, or None.
        used: Estimated tokens the call takes without the memory (messages and system prompt); None for a preview,
            where only the memory's share applies.
        held_ids: Tracking ids of the messages the call holds (never injected again).
    """

    options: HookOptions
    budget: ContextBudget
    window: int | None
    used: int | None
    held_ids: frozenset[str]

    @property
    def share(self) -> int:
        """The memory's share of the window in tokens (capped), before the room the call leaves."""
        return self.budget.memory_tokens(self.window)

    @property
    def depth(self) -> int:
        """Hits the turn's search asks for: ``top_k``, else as many as the share holds (``search_depth``)."""
        return self.options.top_k or search_depth(self.share)

    def tokens(self, *, kept: int = 0, cap: int | None = None) -> int:
        """The most tokens the injected lines may take on this call.

        Args:
            kept: Tokens earlier turns' kept context already takes in the call.
            cap: The turn's own cap (lowered after a context overflow), if any.
        """
        used = None if self.used is None else self.used + BLOCK_OVERHEAD + kept
        tokens = self.budget.memory_tokens(self.window, used) - (kept if used is None else 0)
        for limit in (self.options.max_context_tokens, cap):
            if limit is not None:
                tokens = min(tokens, limit)
        return max(0, tokens)

    def chars(self, *, cap: int | None = None) -> int | None:
        """The most characters the injected lines may take (None: no character cap)."""
        limit = self.options.max_context_length
        if cap is not None:
            limit = cap if limit is None else min(limit, cap)
        return limit


def plan_call(
    options: HookOptions, agent: Any, messages: Sequence[Message] | None = None, system_prompt: Any = None
) -> CallPlan:
    """The plan of a model call of ``agent`` that sends ``messages`` (None: a preview, no call).

    Args:
        options: The hook's current options.
        agent: The agent (its model's window and its budget), or None.
        messages: The call's messages, when there is a call.
        system_prompt: The call's system prompt.
    """
    held = messages or []
    return CallPlan(
        options=options,
        budget=agent_budget(agent, options.budget),
        window=model_window(getattr(agent, "model", None)),
        used=None if messages is None else history_tokens(held, system_prompt),
        held_ids=tracking_ids(held),
    )
