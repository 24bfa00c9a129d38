"""Choose which retrieved messages fit into one model call: hits first, then their neighbours, within the budget.

The budgets come from the call's plan (``CallPlan``): a share of the model's context window, never more than the
room the call leaves; ``max_context_length`` (characters) and ``max_context_tokens`` cap it further when set.
Messages the model already sees in the call are skipped, so every token spent on memory brings something the model
lacks. The packing itself is ``pack_passages`` (pure, property-tested); this module sizes the pieces and writes the
body, formatting each message once for both (``MessageTexts``).

Tokens are estimated locally (``estimate_tokens``), so choosing the context never sends a request to a provider's
token-counting service.
"""

from __future__ import annotations

from collections.abc import Sequence

from strands_semantic_memory.budget import estimate_tokens, tokens_for_length
from strands_semantic_memory.formatting._block import GAP, MessageTexts
from strands_semantic_memory.hook._plan import CallPlan
from strands_semantic_memory.hook._turn import Selection
from strands_semantic_memory.retrieval._passages import Passage, pack_passages

__all__ = ["fits", "select_passages"]

SEPARATOR = "\n\n"  # what may follow a message in the body: a line break, and an empty line before the next


def select_passages(
    plan: CallPlan,
    passages: Sequence[Passage],
    *,
    kept: int = 0,
    char_cap: int | None = None,
    token_cap: int | None = None,
) -> Selection:
    """Choose the retrieved messages for this call within the plan's budgets: hits first, then neighbours.

    Args:
        plan: The call's plan (its options, budget, window, room and the tracking ids it holds).
        passages: What the turn's search found, in conversation order.
        kept: Tokens earlier turns' kept context takes in the call.
        char_cap: The turn's character cap (after an overflow), if any.
        token_cap: The turn's token cap (after an overflow), if any.

    Returns:
        The chosen passages in conversation order, those left out, the body text, and its estimated tokens.
    """
    options = plan.options
    texts = MessageTexts(include_metadata=options.include_metadata, show_dates=options.show_dates)
    held_ids = plan.held_ids

    def sizes(passage: Passage, position: int) -> tuple[int, int]:
        chars = len(texts.message(passage, position)) + len(SEPARATOR)  # with the separator that may follow it
        return chars, tokens_for_length(chars)

    def skip(passage: Passage, position: int) -> bool:
        tracking_id = passage.messages[position].get("tracking_id")
        return isinstance(tracking_id, str) and tracking_id in held_ids

    gap = GAP + "\n"
    usable = [w for w in passages if len(w.indices) == len(w.messages)]
    budgets = [plan.chars(cap=char_cap), plan.tokens(kept=kept, cap=token_cap)]
    chosen, left_out = pack_passages(
        usable, sizes, budgets, gap=(len(gap), estimate_tokens(gap)), skip=skip if held_ids else None
    )
    body = texts.body(chosen)  # the chosen messages were formatted once, when they were sized
    return Selection(chosen=chosen, left_out=left_out, body=body, tokens=estimate_tokens(body) if chosen else 0)


def fits(
    plan: CallPlan, selection: Selection, *, kept: int = 0, char_cap: int | None = None, token_cap: int | None = None
) -> bool:
    """Whether an earlier call's choice still fits this call's budgets (so it is sent again unchanged)."""
    chars = plan.chars(cap=char_cap)
    return selection.tokens <= plan.tokens(kept=kept, cap=token_cap) and (chars is None or len(selection.body) <= chars)
