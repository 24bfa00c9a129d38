"""Context windows: widen hits by a radius, merge what overlaps, and pack windows into budgets.

Pure functions over archive indices, with no I/O, so they are tested exhaustively (see
``tests/retrieval/test_windows.py``, property-based).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from strands.types.content import Message


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


Sizes = tuple[int, ...]
"""A size in each budget's unit (for example characters and tokens), in the order the budgets are given."""


def subset_window(window: ContextWindow, positions: Sequence[int], *, score: float | None = None) -> ContextWindow:
    """A window of some of ``window``'s messages: those at ``positions`` (ascending indexes into its lists).

    Hits keep their scores; the subset's score is ``score`` when given, else its best hit's score, or the window's
    score when it holds no hit.

    Raises:
        ValueError: If ``positions`` is empty.
    """
    if not positions:
        raise ValueError("a window needs at least one message")
    indices = [window.indices[p] for p in positions]
    chosen = set(indices)
    pairs = [(i, s) for i, s in zip(window.hit_indices, window.hit_scores, strict=False) if i in chosen]
    aligned = len(window.indices) == len(window.messages)
    return ContextWindow(
        start=indices[0],
        end=indices[-1],
        messages=[window.messages[p] for p in positions] if aligned else [],
        hit_indices=[i for i, _ in pairs],
        score=score if score is not None else max((s for _, s in pairs), default=window.score),
        indices=indices,
        hit_scores=[s for _, s in pairs],
        roles=[window.roles[p] for p in positions] if len(window.roles) == len(window.indices) else [],
        timestamps=[window.timestamps[p] for p in positions] if len(window.timestamps) == len(window.indices) else [],
    )


def _runs(positions: Iterable[int]) -> list[list[int]]:
    """Ascending positions split into runs of consecutive ones."""
    runs: list[list[int]] = []
    for position in sorted(positions):
        if runs and position == runs[-1][-1] + 1:
            runs[-1].append(position)
        else:
            runs.append([position])
    return runs


def pack_windows(
    windows: Sequence[ContextWindow],
    sizes: Callable[[ContextWindow, int], Sizes],
    budgets: Sequence[int | None],
    *,
    gap: Sizes,
    skip: Callable[[ContextWindow, int], bool] | None = None,
) -> tuple[list[ContextWindow], list[ContextWindow]]:
    """Choose the messages of retrieved windows that fit the budgets: hits first, then their neighbours.

    Every hit of every window is considered first, best score first; then neighbours, nearest to a chosen message
    of their window first (a neighbour is taken only next to a chosen message, so it is never shown apart from its
    passage). A message that does not fit is skipped and smaller, later ones may still be taken; a message is never
    cut. The chosen messages of a window form one or more runs; each run costs its messages' sizes, and each run
    after the first costs ``gap`` (the line shown between passages). Pure and deterministic.

    Args:
        windows: Retrieved windows (each with ``indices`` aligned with ``messages``).
        sizes: The size of the message at a position of a window, in each budget's unit.
        budgets: The most each unit may total; None: no limit in that unit.
        gap: The size of the separation between two runs, in each unit.
        skip: Messages never to choose (for example those the model already sees).

    Returns:
        ``(chosen, dropped)``: the chosen runs as windows in conversation order, and the runs left out (not
        skipped) as windows, most relevant window first.
    """
    units: list[tuple[tuple[int, float, float, int], int, int]] = []
    for w, window in enumerate(windows):
        hit_score = dict(zip(window.hit_indices, window.hit_scores, strict=False))
        hit_positions = [p for p, index in enumerate(window.indices) if index in hit_score]
        for p, index in enumerate(window.indices):
            if skip is not None and skip(window, p):
                continue
            if index in hit_score:
                key = (0, -hit_score[index], 0.0, index)
            else:
                distance = min((abs(p - h) for h in hit_positions), default=len(window.indices))
                key = (1, float(distance), -window.score, index)
            units.append((key, w, p))
    units.sort()
    dimensions = len(budgets)
    used = [0] * dimensions
    runs_total = 0
    chosen: set[tuple[int, int]] = set()
    for key, w, p in units:
        left, right = (w, p - 1) in chosen, (w, p + 1) in chosen
        if key[0] == 1 and not (left or right):
            continue  # a neighbour is shown only beside its passage
        runs_after = runs_total + 1 - left - right
        size = sizes(windows[w], p)
        trial = [
            used[d] + size[d] + gap[d] * (max(0, runs_after - 1) - max(0, runs_total - 1)) for d in range(dimensions)
        ]
        if all(budget is None or trial[d] <= budget for d, budget in enumerate(budgets)):
            chosen.add((w, p))
            used, runs_total = trial, runs_after
    picked: list[ContextWindow] = []
    dropped: list[tuple[float, int, ContextWindow]] = []
    considered = {(w, p) for _, w, p in units}
    for w, window in enumerate(windows):
        mine = [p for p in range(len(window.indices)) if (w, p) in chosen]
        rest = [p for p in range(len(window.indices)) if (w, p) in considered and (w, p) not in chosen]
        picked.extend(subset_window(window, run) for run in _runs(mine))
        dropped.extend((-window.score, w, subset_window(window, run)) for run in _runs(rest))
    picked.sort(key=lambda window: window.start)
    return picked, [window for _, _, window in sorted(dropped, key=lambda item: (item[0], item[1]))]
