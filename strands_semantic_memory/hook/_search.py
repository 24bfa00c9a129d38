"""Search the archive for a user turn: once per turn from the model-call middleware, or as a preview.

Both read the call's plan (``CallPlan``) for the depth and the options; a storage's ``TurnScope`` narrows what a
search of Strands' stash found to what left the context.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import weakref
from typing import TYPE_CHECKING

from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.formatting._block import context_block
from strands_semantic_memory.hook._plan import CallPlan
from strands_semantic_memory.hook._selection import select_passages
from strands_semantic_memory.hook._turn import Enrichment, Turn
from strands_semantic_memory.retrieval._recall import Recollection
from strands_semantic_memory.retrieval._relevance import DEFAULT_RULE

if TYPE_CHECKING:
    from strands_semantic_memory.storage._context import TurnScope

__all__ = ["is_empty", "preview_turn", "search_turn"]

logger = logging.getLogger(__name__)


_FOUND: weakref.WeakSet[SemanticMemory] = weakref.WeakSet()
"""Memories counted non-empty once: they are searched from then on without counting first."""


def is_empty(memory: SemanticMemory) -> bool:
    """Whether nothing is archived yet, asking the store only until the answer is known to be no.

    A memory that archived or restored something (``version > 0``), or that was counted non-empty before (an
    archive opened from a file or a database), is searched without counting first: counting is a database round
    trip on PostgreSQL, and searching an archive whose messages were all forgotten finds nothing.
    """
    if memory.version > 0 or memory in _FOUND:
        return False
    if len(memory) == 0:
        return True
    _FOUND.add(memory)
    return False


def _recall(plan: CallPlan, memory: SemanticMemory, query: str, scope: TurnScope | None) -> Recollection:
    """One search for ``query`` (blocking), narrowed to the storage's scope when there is one.

    With ``inject_when="relevant"`` the hits below the relative cut are left out before any record is read.
    """
    options = plan.options
    found = memory.recall(
        query,
        top_k=plan.depth if scope is None else scope.depth,
        context_radius=options.context_radius,
        min_score=options.min_score,
        cut=DEFAULT_RULE.cut if options.inject_when == "relevant" else 0.0,
    )
    if scope is None:
        return found
    return dataclasses.replace(found, passages=scope.passages(found.passages))


async def search_turn(plan: CallPlan, memory: SemanticMemory, turn: Turn, scope: TurnScope | None = None) -> None:
    """Search the archive once for the turn (off the event loop: embedding and databases block); ``Turn.found``.

    A failing embedding service or database never breaks the conversation: the turn finds nothing, and its
    enrichment's ``error`` says why. Nothing archived yet: no search, and no enrichment.
    """
    started = time.perf_counter()
    enrichment = Enrichment(query=turn.query)
    found = Recollection(passages=[], best_similarity=None)
    try:
        if is_empty(memory):
            turn.found(found, None, inject_when=plan.options.inject_when, budget=plan.budget)
            return
        found = await asyncio.to_thread(_recall, plan, memory, turn.query, scope)
    except Exception as error:  # a failing embedding service or database must not break the conversation
        logger.warning("error=<%s> | archive search failed; the user turn is sent without earlier context", error)
        enrichment.error = f"{type(error).__name__}: {error}"
    enrichment.elapsed_ms = (time.perf_counter() - started) * 1000
    turn.found(found, enrichment, inject_when=plan.options.inject_when, budget=plan.budget)
    logger.debug(
        "passages=<%d>, relevance=<%s>, similarity=<%s>, floor=<%s>, cut=<%d>, ms=<%.1f> | archive searched for the "
        "user turn",
        len(found.passages),
        enrichment.relevance,
        _shown(found.best_similarity),
        _shown(found.floor),
        found.cut,
        enrichment.elapsed_ms,
    )


def preview_turn(plan: CallPlan, memory: SemanticMemory, query: str) -> Enrichment:
    """What would be injected for a user turn with this text, within the plan's share (see ``preview``)."""
    started = time.perf_counter()
    enrichment = Enrichment(query=query)
    if is_empty(memory):
        return enrichment
    turn = Turn(message={"role": "user", "content": [{"text": query}]}, query=query)
    turn.found(
        _recall(plan, memory, query, None), enrichment, inject_when=plan.options.inject_when, budget=plan.budget
    )
    selection = select_passages(plan, turn.passages, token_cap=turn.token_cap)
    enrichment.passages, enrichment.tokens = selection.chosen, selection.tokens
    enrichment.left_out = [*enrichment.left_out, *selection.left_out]
    enrichment.text = context_block(selection.body, query) if selection.chosen else ""
    enrichment.elapsed_ms = (time.perf_counter() - started) * 1000
    return enrichment


def _shown(value: float | None) -> str:
    return "none" if value is None else f"{value:.3f}"
