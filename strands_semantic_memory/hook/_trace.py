"""The hook's ``memory.inject`` span: one per model call the hook acts on, as Strands' own memory injection has.

The span covers what the hook does before the call is sent (the turn's search on its first call, whose
``memory.search`` span is a child, and the choice of passages), and ends before the model is called: the model's
span is its sibling under Strands' cycle span. Its attributes say what the call received (passages, left out,
tokens) and, when nothing was injected, why. Each call also records its injected tokens on the
``semantic_memory.inject.tokens`` histogram.
"""

from __future__ import annotations

from strands_semantic_memory import _telemetry
from strands_semantic_memory.hook._plan import CallPlan
from strands_semantic_memory.hook._turn import Turn, View

__all__ = ["inject_operation", "record_view"]


def inject_operation(retries: int) -> _telemetry.Operation:
    """The ``memory.inject`` span of a model call (``retries``: earlier attempts of this call after an overflow)."""
    return _telemetry.Operation("memory.inject", {"memory.inject.retry": retries})


def skip_reason(turn: Turn | None, view: View | None) -> str | None:
    """Why the turn's own block was not injected into a call (None: it was)."""
    if view is None:
        return "messages_changed"  # other middleware added or removed messages
    if view.chosen:
        return None
    if turn is None:
        return "no_user_turn"  # a call of an earlier turn's tool loop, carrying kept context only
    enrichment = turn.enrichment
    if enrichment is None:
        return "empty_archive"
    if enrichment.error is not None:
        return "search_failed"
    if enrichment.relevance == "unrelated":
        return "unrelated"
    if turn.without_context:
        return "context_overflow"
    if not turn.passages:
        return "no_results"
    if view.left_out:
        return "all_left_out"  # the budget, or messages the call already holds
    return "turn_not_in_context"  # the turn's message left the context (reduced away)


def record_view(operation: _telemetry.Operation, plan: CallPlan, turn: Turn | None, view: View | None) -> None:
    """What the call receives, on its span and on the tokens histogram."""
    enrichment = turn.enrichment if turn is not None else None
    relevance = enrichment.relevance if enrichment is not None else "none"
    injected = view is not None and bool(view.chosen)
    tokens = view.body_tokens if view is not None and injected else 0
    _telemetry.INJECT_TOKENS.record(tokens, {"memory.relevance": relevance})
    if not operation.recording:
        return
    attributes: dict[str, _telemetry.AttributeValue] = {
        "memory.injected": injected,
        "memory.entry.count": len(view.chosen) if view is not None else 0,
        "memory.left_out.count": len(view.left_out) if view is not None else 0,
        "memory.inject.tokens": tokens,
        "memory.inject.chars": view.body_chars if view is not None and injected else 0,
        "memory.inject.kept_context": view is not None and view.kept_used,
        "memory.relevance": relevance,
        "memory.budget.tokens": plan.share,
    }
    if plan.window is not None:
        attributes["memory.window.tokens"] = plan.window
    reason = skip_reason(turn, view)
    if reason is not None:
        attributes["memory.inject.skip_reason"] = reason
    if enrichment is not None and enrichment.error is not None:
        attributes["memory.search.error"] = enrichment.error  # fails open, as Strands' injection: the span stays OK
    operation.set(attributes)
