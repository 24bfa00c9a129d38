"""Archived messages in a tool's output, within a size bound, written by the one block writer.

The output of ``conversation_search`` and ``conversation_read`` is a fenced block from ``BlockWriter``: every
archived line quoted, every unquoted line inside the fences written from numbers and fixed words, so archived text
never passes for the library's framing (an ``[end of archive]`` or a note of this module). Within the bound, search
passages are packed hits first (``pack_passages``); a message too long on its own is cut, with an unquoted line
saying how much of it is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from strands_semantic_memory.archives._protocol import StoredRecord
from strands_semantic_memory.formatting._block import ARCHIVE_BEGIN, ARCHIVE_END, BlockWriter
from strands_semantic_memory.messages._codec import encode_message
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.retrieval._passages import Passage, pack_passages

__all__ = ["render_passages", "render_records"]

GAP_COST = len("[...]") + 1
FENCE_COST = len(ARCHIVE_BEGIN) + len(ARCHIVE_END) + 2


def _cut(record: StoredRecord, max_chars: int, show_dates: bool) -> str:
    """One message too long for ``max_chars``: its beginning, quoted, and a line saying how much is shown."""
    full = render_message(record.message)
    keep = max(0, max_chars - 120)
    while True:
        shown = full[:keep]
        data = encode_message({"role": record.role, "content": [{"text": shown}]})  # type: ignore[typeddict-item]
        body = BlockWriter(include_metadata=True, show_dates=show_dates).message(replace(record, data=data, text=shown))
        text = f"{body}\n[message {record.index} cut: {len(shown)} of {len(full)} characters shown]"
        if len(text) <= max_chars - FENCE_COST or keep == 0:
            return f"{ARCHIVE_BEGIN}\n{text}\n{ARCHIVE_END}"
        keep = max(0, keep * (max_chars - FENCE_COST) // len(text) - 1)


def render_passages(passages: Sequence[Passage], max_chars: int, *, show_dates: bool) -> tuple[str, int]:
    """The passages that fit in ``max_chars``, hits first and best first, in conversation order.

    Returns:
        ``(fenced text, how many runs of messages were left out)``; the best hit alone, cut, when none fits whole.
    """
    writer = BlockWriter(include_metadata=True, show_dates=show_dates)
    chosen, dropped = pack_passages(
        passages, lambda r: (len(writer.message(r)) + 1,), (max_chars - FENCE_COST,), (GAP_COST,)
    )
    if chosen:
        return writer.fenced(chosen), len(dropped)
    best = max(passages, key=lambda p: p.score)
    index = max(best.hits, key=lambda i: best.hits[i])
    record = next(r for r in best.records if r.index == index)
    return _cut(record, max_chars, show_dates), len(passages) - 1


def render_records(records: Sequence[StoredRecord], max_chars: int, *, show_dates: bool) -> tuple[str, int]:
    """The first records (in order) that fit whole in ``max_chars``; the first one cut when it alone does not.

    Returns:
        ``(fenced text, how many records it shows)``.
    """
    writer = BlockWriter(include_metadata=True, show_dates=show_dates)
    used, count = FENCE_COST, 0
    for record in records:
        used += len(writer.message(record)) + 1
        if used > max_chars:
            break
        count += 1
    if count == 0:
        return _cut(records[0], max_chars, show_dates), 1
    return writer.fenced([Passage(tuple(records[:count]), {})]), count
