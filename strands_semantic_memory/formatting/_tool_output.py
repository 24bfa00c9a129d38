"""Bounded rendering of archived messages for tool outputs.

Tool outputs have a size bound (``max_output_chars``): ``render_passages`` keeps the most relevant passages that
fit, reduces a passage too long on its own to its hits, and cuts a single message too long on its own with a note
saying so. The fenced format itself is ``format_passages``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from strands.types.content import Message

from strands_semantic_memory.formatting._block import QUOTE, format_passages
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.retrieval._passages import Passage, subset_passage

__all__ = ["cut_message", "read_passage", "render_passages"]


def cut_message(message: Message, max_chars: int, index: int) -> Message:
    """A text-only copy of ``message`` cut to about ``max_chars`` characters, saying where it was cut."""
    text = render_message(message)
    if len(text) <= max_chars:
        return message
    kept = max(0, max_chars - 80)
    note = f" [... message {index} cut here: {len(text) - kept} of {len(text)} characters not shown]"
    cut: Message = {"role": message["role"], "content": [{"text": text[:kept] + note}]}
    return cut


def _with_messages(passage: Passage, messages: list[Message]) -> Passage:
    return replace(passage, messages=messages)


def render_passages(
    passages: Sequence[Passage],
    max_chars: int,
    *,
    include_metadata: bool = True,
    show_dates: bool = False,
    quote_prefix: str = QUOTE,
    fenced: bool = True,
) -> tuple[str, list[Passage], int]:
    """Render the most relevant passages that fit in ``max_chars``, in conversation order.

    Passages are taken by decreasing score. A passage too long on its own is reduced to its hit messages; a hit
    message too long on its own is cut, with a note saying so (``conversation_read`` shows it whole).

    Args:
        passages: Retrieved passages.
        max_chars: Size bound of the rendered text.
        include_metadata: Label each message ``[Message N, role]``.
        show_dates: Add each message's date to its label.
        quote_prefix: The prefix of each archived line (``QUOTE``, or ``ENTRY_QUOTE`` for a Strands memory entry).
        fenced: Put the ``[archive]`` fences around the passages.

    Returns:
        ``(text, passages shown, how many passages were left out)``.
    """

    def render(chosen: Sequence[Passage]) -> str:
        ordered = sorted(chosen, key=lambda w: w.start)
        return format_passages(
            ordered, include_metadata=include_metadata, show_dates=show_dates, quote_prefix=quote_prefix, fenced=fenced
        )

    candidates: list[Passage] = []
    for passage in sorted(passages, key=lambda w: (-w.score, w.start)):
        if not passage.messages:
            continue
        if len(render([passage])) <= max_chars:
            candidates.append(passage)
            continue
        hit_positions = [p for p, i in enumerate(passage.indices) if i in set(passage.hit_indices)] or [0]
        for position in hit_positions:
            single = subset_passage(passage, [position], score=passage.score)
            if len(render([single])) > max_chars:
                message = cut_message(single.messages[0], max_chars - 200, single.indices[0])
                single = _with_messages(single, [message])
            candidates.append(single)
    chosen: list[Passage] = []
    for candidate in candidates:
        if any(candidate.start <= c.end and c.start <= candidate.end for c in chosen):
            continue
        if len(render([*chosen, candidate])) <= max_chars:
            chosen.append(candidate)
    left_out = sum(1 for w in passages if not any(w.start <= c.end and c.start <= w.end for c in chosen))
    return (render(chosen) if chosen else ""), sorted(chosen, key=lambda w: w.start), left_out


# ---------------------------------------------------------------------------------------------- the tools


def read_passage(found: Sequence[tuple[int, Message]], timestamps: Sequence[float | None]) -> Passage:
    """``(index, message)`` pairs read from the archive, with their times, as one passage without hits."""
    indices = [i for i, _ in found]
    return Passage(
        start=indices[0],
        end=indices[-1],
        messages=[m for _, m in found],
        hit_indices=[],
        indices=indices,
        roles=[str(m.get("role", "?")) for _, m in found],
        timestamps=list(timestamps),
    )
