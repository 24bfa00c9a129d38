"""Choose which retrieved messages fit into one model call: hits first, then their neighbours, within the budget.

The budget comes from ``ContextBudget``: a share of the model's context window, never more than the room the call
leaves; ``max_context_length`` (characters) and ``max_context_tokens`` cap it further when set. Messages the model
already sees in the call are skipped, so every token spent on memory brings something the model lacks. The packing
itself is ``pack_passages`` (pure, property-tested); this module sizes the pieces and writes the body, formatting
each message once for both (``MessageTexts``).

Tokens are estimated locally (``estimate_tokens``), so choosing the context never sends a request to a provider's
token-counting service.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from strands.types.content import Message

from strands_semantic_memory.budget import ContextBudget, estimate_tokens, model_window, tokens_for_length
from strands_semantic_memory.formatting._block import MessageTexts, context_block
from strands_semantic_memory.hook._turn import Turn
from strands_semantic_memory.retrieval._passages import Passage, pack_passages

__all__ = ["InjectionSettings", "Selection", "select_passages", "tracking_ids"]

GAP_PROBE = "[... 999999999 messages not shown ...]"  # the longest gap line, to bound its size
SEPARATOR = "\n\n"  # what may follow a message in the body: a line break, and an empty line before the next
OVERHEAD = context_block("", "")  # the block's own lines


@dataclass(frozen=True)
class InjectionSettings:
    """The hook's options that shape the injected block (read from the hook on every call: they may change)."""

    max_context_length: int | None
    max_context_tokens: int | None
    include_metadata: bool
    show_dates: bool
    keep_injected_context: bool
    budget: ContextBudget


@dataclass
class Selection:
    """Passages chosen for one call (conversation order), those left out, the body text and its tokens."""

    chosen: list[Passage]
    dropped: list[Passage]
    body: str
    tokens: int | None


def tracking_ids(messages: Sequence[Message]) -> frozenset[str]:
    """The ``tracking_id`` of each message that has one (the id the archive keeps with a message)."""
    return frozenset(m["tracking_id"] for m in messages if isinstance(m.get("tracking_id"), str))


def _token_budget(settings: InjectionSettings, model: Any, used: int | None, turn: Turn, kept_extra: int) -> int:
    """The most tokens the injected lines may take on this call."""
    window = model_window(model)
    used_now = None if used is None else used + estimate_tokens(OVERHEAD) + kept_extra
    budget = settings.budget.memory_tokens(window, used_now) - (kept_extra if used is None else 0)
    for cap in (settings.max_context_tokens, turn.token_cap):
        if cap is not None:
            budget = min(budget, cap)
    return max(0, budget)


def select_passages(
    settings: InjectionSettings,
    model: Any,
    used: int | None,
    turn: Turn,
    kept_extra: int,
    seen: Collection[str] = frozenset(),
) -> Selection:
    """Choose the retrieved messages for this call within the budgets: hits first, then neighbours.

    Args:
        settings: The hook's current options.
        model: The model (its ``context_window_limit``, when set, sizes the budget).
        used: Estimated tokens the call takes without the injected context, when known.
        turn: The turn, with its retrieved passages and caps.
        kept_extra: Tokens already taken by earlier turns' kept context.
        seen: Tracking ids of messages the model already sees in this call (skipped).

    Returns:
        The chosen passages in conversation order, those left out, the body text, and its estimated tokens (None
        when nothing was chosen).
    """
    char_budget = settings.max_context_length
    if turn.char_cap is not None:
        char_budget = turn.char_cap if char_budget is None else min(char_budget, turn.char_cap)
    token_budget = _token_budget(settings, model, used, turn, kept_extra)

    texts = MessageTexts(include_metadata=settings.include_metadata, show_dates=settings.show_dates)

    def sizes(passage: Passage, position: int) -> tuple[int, int]:
        chars = len(texts.message(passage, position)) + len(SEPARATOR)  # with the separator that may follow it
        return chars, tokens_for_length(chars)

    def skip(passage: Passage, position: int) -> bool:
        tracking_id = passage.messages[position].get("tracking_id")
        return isinstance(tracking_id, str) and tracking_id in seen

    gap = GAP_PROBE + "\n"
    usable = [w for w in turn.passages if len(w.indices) == len(w.messages)]
    chosen, dropped = pack_passages(
        usable, sizes, [char_budget, token_budget], gap=(len(gap), estimate_tokens(gap)), skip=skip if seen else None
    )
    body = texts.body(chosen)  # the chosen messages were formatted once, when they were sized
    return Selection(chosen, dropped, body, estimate_tokens(body) if chosen else None)
