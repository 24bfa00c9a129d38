"""Bounded rendering of archived messages for tool outputs.

Tool outputs have a size bound (``max_output_chars``): ``render_windows`` keeps the most relevant windows that
fit, reduces a window too long on its own to its hits, and cuts a single message too long on its own with a note
saying so. The fenced format itself is ``format_windows``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from strands.types.content import Message

from strands_semantic_memory.formatting._block import QUOTE, format_windows
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.retrieval._windows import ContextWindow, subset_window

__all__ = ["cut_message", "read_window", "render_windows"]


def cut_message(message: Message, max_chars: int, index: int) -> Message:
    """A text-only copy of ``message`` cut to about ``max_chars`` characters, saying where it was cut."""
    text = render_message(message)
    if len(text) <= max_chars:
        return message
    kept = max(0, max_chars - 80)
    note = f" [... message {index} cut here: {len(text) - kept} of {len(text)} characters not shown]"
    cut: Message = {"role": message["role"], "content": [{"text": text[:kept] + note}]}
    return cut


def _with_messages(window: ContextWindow, messages: list[Message]) -> ContextWindow:
    return replace(window, messages=messages)


def render_windows(
    windows: Sequence[ContextWindow],
    max_chars: int,
    *,
    include_metadata: bool = True,
    show_dates: bool = False,
    quote_prefix: str = QUOTE,
    fenced: bool = True,
) -> tuple[str, list[ContextWindow], int]:
    """Render the most relevant windows that fit in ``max_chars``, in conversation order.

    Windows are taken by decreasing score. A window too long on its own is reduced to its hit messages; a hit
    message too long on its own is cut, with a note saying so (``conversation_read`` shows it whole).

    Args:
        windows: Retrieved windows.
        max_chars: Size bound of the rendered text.
        include_metadata: Label each message ``[Message N, role]``.
        show_dates: Add each message's date to its label.
        quote_prefix: The prefix of each archived line (``QUOTE``, or ``ENTRY_QUOTE`` for a Strands memory entry).
        fenced: Put the ``[archive]`` fences around the windows.

    Returns:
        ``(text, windows shown, how many windows were left out)``.
    """

    def render(chosen: Sequence[ContextWindow]) -> str:
        ordered = sorted(chosen, key=lambda w: w.start)
        return format_windows(
            ordered, include_metadata=include_metadata, show_dates=show_dates, quote_prefix=quote_prefix, fenced=fenced
        )

    candidates: list[ContextWindow] = []
    for window in sorted(windows, key=lambda w: (-w.score, w.start)):
        if not window.messages:
            continue
        if len(render([window])) <= max_chars:
            candidates.append(window)
            continue
        hit_positions = [p for p, i in enumerate(window.indices) if i in set(window.hit_indices)] or [0]
        for position in hit_positions:
            single = subset_window(window, [position], score=window.score)
            if len(render([single])) > max_chars:
                message = cut_message(single.messages[0], max_chars - 200, single.indices[0])
                single = _with_messages(single, [message])
            candidates.append(single)
    chosen: list[ContextWindow] = []
    for candidate in candidates:
        if any(candidate.start <= c.end and c.start <= candidate.end for c in chosen):
            continue
        if len(render([*chosen, candidate])) <= max_chars:
            chosen.append(candidate)
    left_out = sum(1 for w in windows if not any(w.start <= c.end and c.start <= w.end for c in chosen))
    return (render(chosen) if chosen else ""), sorted(chosen, key=lambda w: w.start), left_out


# ---------------------------------------------------------------------------------------------- the tools


def read_window(found: Sequence[tuple[int, Message]], timestamps: Sequence[float | None]) -> ContextWindow:
    """``(index, message)`` pairs read from the archive, with their times, as one window without hits."""
    indices = [i for i, _ in found]
    return ContextWindow(
        start=indices[0],
        end=indices[-1],
        messages=[m for _, m in found],
        hit_indices=[],
        indices=indices,
        roles=[str(m.get("role", "?")) for _, m in found],
        timestamps=list(timestamps),
    )
