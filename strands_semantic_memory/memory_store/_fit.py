"""Fitting a search's passages to the room the agent's next model call leaves, counted as Strands injects them.

Strands' default format escapes each entry as XML text inside an ``<entry source="...">`` element, all of them
inside a ``<memory>`` block after the user's words: every ``&`` costs 4 more characters, every ``<`` or ``>`` 3,
and the store's name is escaped as an attribute. The room is counted in those characters (``escaped_chars``), so
what the store returns fits what the model receives. Hits come first (best first), then neighbours (nearest first),
packed by ``pack_passages`` as the hook packs its own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from strands.memory.types import MemoryEntry

from strands_semantic_memory.budget import estimate_tokens, history_tokens, tokens_for_length
from strands_semantic_memory.formatting._block import ENTRY_QUOTE, format_passage_message
from strands_semantic_memory.memory_store._entries import LeftOut, StoreEnrichment
from strands_semantic_memory.retrieval._passages import Passage, pack_passages, subset_passage

if TYPE_CHECKING:
    from strands.agent.agent import Agent

logger = logging.getLogger(__name__)

__all__ = ["BLOCK_OVERHEAD", "call_tokens", "escaped_chars", "fit_passages", "injected_tokens", "wrapper_chars"]

BLOCK_OVERHEAD = "\n\n<memory>\n\n</memory>"
"""What Strands' default format adds around the entries (with the separator from the user's own words)."""


def escaped_chars(text: str, *, attribute: bool = False) -> int:
    """Length of ``text`` once Strands escapes it as XML text (or as an attribute value)."""
    extra = 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))
    if attribute:
        extra += 5 * (text.count('"') + text.count("'"))
    return len(text) + extra


def call_tokens(agent: Agent) -> int | None:
    """Estimated tokens the agent's next model call takes without injected memory: messages, system prompt, tools."""
    try:
        specs = agent.tool_registry.get_all_tool_specs()
        tools = estimate_tokens(json.dumps(specs, default=str)) if specs else 0
        return history_tokens(list(agent.messages), agent.system_prompt) + tools
    except Exception as error:  # an agent in an unexpected state must not break the search
        logger.debug("error=<%s> | could not measure the model call; the memory's share alone applies", error)
        return None


def wrapper_chars(name: str) -> int:
    """Characters of one entry's element in Strands' default format, with the line break after it."""
    return len('<entry source=""></entry>\n') + escaped_chars(name, attribute=True)


def injected_tokens(entries: Sequence[MemoryEntry], name: str) -> int:
    """Estimated tokens of ``entries`` as Strands' default format injects them for the store ``name`` (0 for none)."""
    if not entries:
        return 0
    chars = len(BLOCK_OVERHEAD) + sum(wrapper_chars(name) + escaped_chars(e.content) for e in entries)
    return tokens_for_length(chars)


def fit_passages(record: StoreEnrichment, tokens: int, name: str, *, show_dates: bool) -> None:
    """Keep, of ``record.passages``, the messages that fit in ``tokens`` as the store ``name``'s entries.

    Hits first (best first), then neighbours (nearest first); each entry is counted as Strands' default format
    injects it. Passages with nothing that fits move to ``record.left_out`` (reason ``"budget"``); the messages of
    kept passages that did not fit go to ``record.budget_left_out_indices``.
    """
    if not record.passages:
        return
    wrapper = wrapper_chars(name)
    room = tokens - tokens_for_length(len(BLOCK_OVERHEAD) + wrapper)

    def sizes(passage: Passage, position: int) -> tuple[int]:
        text = format_passage_message(passage, position, show_dates=show_dates, quote_prefix=ENTRY_QUOTE)
        return (tokens_for_length(escaped_chars(text) + 1),)

    usable = [w for w in record.passages if len(w.indices) == len(w.messages)]
    chosen, _ = pack_passages(usable, sizes, [max(0, room)], gap=(tokens_for_length(wrapper),))
    picked = {i for run in chosen for i in run.indices}
    kept: list[Passage] = []
    for passage in record.passages:
        positions = [p for p, i in enumerate(passage.indices) if i in picked]
        if not positions:
            record.left_out.append(LeftOut(passage, "budget"))
            continue
        if len(positions) < len(passage.indices):
            record.budget_left_out_indices.extend(i for i in passage.indices if i not in picked)
            passage = subset_passage(passage, positions, score=passage.score)
        kept.append(passage)
    record.passages = kept
    record.budget_left_out_indices.sort()
