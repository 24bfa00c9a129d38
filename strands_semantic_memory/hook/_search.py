"""Search the archive for a user turn: once per turn from the model-call middleware, or as a preview.

A failing embedding service or database never breaks the conversation: the turn is then sent without earlier
context, and ``error`` says why.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any

from strands_semantic_memory.engine._memory import SemanticMemory, resolve_memory
from strands_semantic_memory.formatting._block import context_block
from strands_semantic_memory.hook._selection import InjectionSettings, select_passages
from strands_semantic_memory.hook._turn import Enrichment, Turn

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


async def search_turn(
    agent: Any,
    memory: SemanticMemory | None,
    turn: Turn,
    *,
    top_k: int | None,
    context_radius: int | None,
    min_score: float | None,
) -> Enrichment | None:
    """Search the archive once for the turn (off the event loop: embedding and databases block).

    Sets ``turn.searched`` and ``turn.passages``.

    Returns:
        What was found (with the error, if the search failed), or None when nothing is archived yet.
    """
    turn.searched = True
    started = time.perf_counter()
    enrichment = Enrichment(query=turn.query)
    try:
        searched = resolve_memory(agent if memory is None else memory, pass_as="SemanticMemoryHook(memory=...)")
        if is_empty(searched):
            return None  # nothing archived yet: no search
        turn.passages = await asyncio.to_thread(
            searched.retrieve, turn.query, top_k=top_k, context_radius=context_radius, min_score=min_score
        )
    except Exception as error:  # a failing embedding service or database must not break the conversation
        logger.warning("error=<%s> | archive search failed; the user turn is sent without earlier context", error)
        enrichment.error = f"{type(error).__name__}: {error}"
        turn.passages = []
    enrichment.elapsed_ms = (time.perf_counter() - started) * 1000
    logger.debug(
        "passages=<%d>, ms=<%.1f> | archive searched for the user turn", len(turn.passages), enrichment.elapsed_ms
    )
    return enrichment


def preview_turn(
    agent: Any,
    memory: SemanticMemory | None,
    query: str,
    settings: InjectionSettings,
    *,
    top_k: int | None,
    context_radius: int | None,
    min_score: float | None,
) -> Enrichment:
    """What would be injected for a user turn with this text (see ``preview``).

    Raises:
        ConfigurationError: If there is no memory to search.
    """
    started = time.perf_counter()
    turn = Turn(message={"role": "user", "content": [{"text": query}]}, query=query, searched=True)
    searched = resolve_memory(agent if memory is None else memory, pass_as="SemanticMemoryHook(memory=...)")
    enrichment = Enrichment(query=query)
    if is_empty(searched):
        return enrichment
    turn.passages = searched.retrieve(query, top_k=top_k, context_radius=context_radius, min_score=min_score)
    model = agent.model if agent is not None else None
    selection = select_passages(settings, model, None, turn, 0)
    chosen = selection.chosen
    enrichment.passages, enrichment.left_out, enrichment.tokens = chosen, selection.dropped, selection.tokens
    enrichment.text = context_block(selection.body, query) if chosen else ""
    enrichment.elapsed_ms = (time.perf_counter() - started) * 1000
    return enrichment
