"""Context windows: widen hits by a radius, merge what overlaps, and fit windows into a character budget.

Pure functions over archive indices, with no I/O, so they are tested exhaustively (see
``tests/test_windows.py``, property-based).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from strands.types.content import Message

T = TypeVar("T")


@dataclass(frozen=True)
class IndexRange:
    """An inclusive range of archive indices and the hits that produced it.

    Attributes:
        start: First archive index in the range.
        end: Last archive index in the range (inclusive).
        hit_indices: The hits inside the range, ascending.
    """

    start: int
    end: int
    hit_indices: tuple[int, ...]


@dataclass(frozen=True)
class ContextWindow:
    """A run of consecutive archived messages around one or more search hits.

    Attributes:
        start: Archive index of the first message in the window.
        end: Archive index of the last message in the window (inclusive).
        messages: The archived messages ``start..end`` that are still in the archive, in conversation order.
        hit_indices: Archive indices of the search hits inside this window, ascending.
        score: The window's relevance: the best hit score, plus a bonus for every further hit it contains
            (see ``window_score``). Higher is more relevant.
        indices: The archive index of each entry of ``messages``.
        hit_scores: The score of each hit, aligned with ``hit_indices``.
        roles: The role of each entry of ``messages``.
        timestamps: The time of each entry of ``messages`` (seconds since the epoch): when it was said if the
            caller gave that time, else when it was archived.
    """

    start: int
    end: int
    messages: list[Message]
    hit_indices: list[int]
    score: float = 0.0
    indices: list[int] = field(default_factory=list)
    hit_scores: list[float] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    timestamps: list[float | None] = field(default_factory=list)


def expand_and_merge(hit_indices: Iterable[int], radius: int, lowest: int, highest: int) -> list[IndexRange]:
    """Widen every hit by ``radius`` on each side, clip to the archive, and merge overlapping or adjacent ranges.

    Args:
        hit_indices: Archive indices of the hits, in any order; duplicates are fine.
        radius: How many neighbours to take on each side (0 keeps only the hit).
        lowest: Smallest archive index present (ranges are clipped to it).
        highest: Largest archive index present (ranges are clipped to it).

    Returns:
        Disjoint, non-adjacent ranges in ascending order. Two ranges that touch (``end + 1 == start``) are
        merged, since showing them apart would cut one passage in two.

    Raises:
        ValueError: If ``radius`` is negative.
    """
    if radius < 0:
        raise ValueError(f"radius must be >= 0, got {radius}")
    hits = sorted({h for h in hit_indices if lowest <= h <= highest})
    merged: list[IndexRange] = []
    for hit in hits:
        start, end = max(lowest, hit - radius), min(highest, hit + radius)
        if merged and start <= merged[-1].end + 1:
            last = merged[-1]
            merged[-1] = IndexRange(last.start, max(last.end, end), last.hit_indices + (hit,))
        else:
            merged.append(IndexRange(start, end, (hit,)))
    return merged


def window_score(hit_scores: Sequence[float], neighbour_bonus: float = 0.1) -> float:
    """Relevance of a window from the scores of the hits it contains.

    The best hit counts fully; each further hit adds ``neighbour_bonus`` times its score, so a passage where
    several messages match ranks above an isolated hit of the same strength.

    Args:
        hit_scores: Scores of the hits in the window (at least one).
        neighbour_bonus: Weight of each hit after the best one.

    Returns:
        The window's score.
    """
    ordered = sorted(hit_scores, reverse=True)
    return ordered[0] + neighbour_bonus * sum(ordered[1:])


def pack_by_budget(items: Sequence[T], sizes: Sequence[int], budget: int | None) -> list[T]:
    """Choose items, most relevant first, while their total size fits the budget; never cut an item.

    Args:
        items: Items in order of decreasing relevance.
        sizes: The size of each item (same order).
        budget: Maximum total size; None means no limit.

    Returns:
        The chosen items, in the order given. An item too large to fit is skipped, and smaller, less relevant
        ones may still be taken after it.
    """
    if budget is None:
        return list(items)
    chosen: list[T] = []
    used = 0
    for item, size in zip(items, sizes, strict=True):
        if used + size <= budget:
            chosen.append(item)
            used += size
    return chosen
