"""Passages: widen hits by a radius, merge what overlaps, and pack passages into budgets.

Pure functions over archive indices, with no I/O, so they are tested exhaustively (see
``tests/retrieval/test_passages.py``, property-based).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from strands.types.content import Message

_T = TypeVar("_T")


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
class Passage:
    """A run of consecutive archived messages around one or more search hits.

    Attributes:
        start: Archive index of the first message in the passage.
        end: Archive index of the last message in the passage (inclusive).
        messages: The archived messages ``start..end`` that are still in the archive, in conversation order.
        hit_indices: Archive indices of the search hits inside this passage, ascending.
        score: The passage's relevance: the best hit score, plus a bonus for every further hit it contains
            (see ``passage_score``). Higher is more relevant.
        indices: The archive index of each entry of ``messages``.
        hit_scores: The score of each hit, aligned with ``hit_indices``.
        roles: The role of each entry of ``messages``.
        timestamps: The time of each entry of ``messages`` (seconds since the epoch): when it was said if the
            caller gave that time, else when it was archived.
        session_ids: The session each entry of ``messages`` was said in (None: unknown).
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
    session_ids: list[str | None] = field(default_factory=list)


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


def passage_score(hit_scores: Sequence[float], neighbour_bonus: float = 0.1) -> float:
    """Relevance of a passage from the scores of the hits it contains.

    The best hit counts fully; each further hit adds ``neighbour_bonus`` times its score, so a passage where
    several messages match ranks above an isolated hit of the same strength.

    Args:
        hit_scores: Scores of the hits in the passage (at least one).
        neighbour_bonus: Weight of each hit after the best one.

    Returns:
        The passage's score.
    """
    ordered = sorted(hit_scores, reverse=True)
    return ordered[0] + neighbour_bonus * sum(ordered[1:])


Sizes = tuple[int, ...]
"""A size in each budget's unit (for example characters and tokens), in the order the budgets are given."""


def _take(values: list[_T], positions: Sequence[int], run: slice | None) -> list[_T]:
    """The values at ``positions``: the slice ``run`` when the positions are one run."""
    return values[run] if run is not None else [values[p] for p in positions]


def subset_passage(passage: Passage, positions: Sequence[int], *, score: float | None = None) -> Passage:
    """A passage of some of ``passage``'s messages: those at ``positions`` (ascending indexes into its lists).

    Hits keep their scores; the subset's score is ``score`` when given, else its best hit's score, or the passage's
    score when it holds no hit. A run of positions given as a ``range`` is cut as slices.

    Raises:
        ValueError: If ``positions`` is empty.
    """
    if not positions:
        raise ValueError("a passage needs at least one message")
    count = len(passage.indices)
    run = None  # a run of consecutive positions (a ``range``, as packing cuts them) is taken as slices
    if isinstance(positions, range) and positions.step == 1 and positions.start >= 0 and positions.stop <= count:
        run = slice(positions.start, positions.stop)
    indices = _take(passage.indices, positions, run)
    messages = _take(passage.messages, positions, run) if len(passage.messages) == count else []
    roles = _take(passage.roles, positions, run) if len(passage.roles) == count else []
    timestamps = _take(passage.timestamps, positions, run) if len(passage.timestamps) == count else []
    session_ids = _take(passage.session_ids, positions, run) if len(passage.session_ids) == count else []
    hit_indices: list[int] = []
    hit_scores: list[float] = []
    if passage.hit_indices:
        inside = set(indices)
        for index, hit_score in zip(passage.hit_indices, passage.hit_scores, strict=False):
            if index in inside:
                hit_indices.append(index)
                hit_scores.append(hit_score)
    return Passage(
        start=indices[0],
        end=indices[-1],
        messages=messages,
        hit_indices=hit_indices,
        score=score if score is not None else max(hit_scores, default=passage.score),
        indices=indices,
        hit_scores=hit_scores,
        roles=roles,
        timestamps=timestamps,
        session_ids=session_ids,
    )


def _distances(hit_positions: Sequence[int], count: int) -> list[float]:
    """Each position's distance to the nearest of ``hit_positions`` (ascending); ``count`` for all without a hit."""
    if not hit_positions:
        return [float(count)] * count
    return [float(min(abs(p - h) for h in hit_positions)) for p in range(count)]


def _runs(flags: Sequence[bool]) -> list[range]:
    """The runs of consecutive positions whose flag is set, in order."""
    runs: list[range] = []
    start = None
    for position, flag in enumerate(flags):
        if flag and start is None:
            start = position
        elif not flag and start is not None:
            runs.append(range(start, position))
            start = None
    if start is not None:
        runs.append(range(start, len(flags)))
    return runs


def pack_passages(
    passages: Sequence[Passage],
    sizes: Callable[[Passage, int], Sizes],
    budgets: Sequence[int | None],
    *,
    gap: Sizes,
    skip: Callable[[Passage, int], bool] | None = None,
) -> tuple[list[Passage], list[Passage]]:
    """Choose the messages of retrieved passages that fit the budgets: hits first, then their neighbours.

    Every hit of every passage is considered first, best score first; then neighbours, nearest to a chosen message
    of their passage first (a neighbour is taken only next to a chosen message, so it is never shown apart from its
    passage). A message that does not fit is skipped and smaller, later ones may still be taken; a message is never
    cut. The chosen messages of a passage form one or more runs; each run costs its messages' sizes, and each run
    after the first costs ``gap`` (the line shown between passages). Pure and deterministic.

    Args:
        passages: Retrieved passages (each with ``indices`` aligned with ``messages``).
        sizes: The size of the message at a position of a passage, in each budget's unit.
        budgets: The most each unit may total; None: no limit in that unit.
        gap: The size of the separation between two runs, in each unit.
        skip: Messages never to choose (for example those the model already sees).

    Returns:
        ``(chosen, dropped)``: the chosen runs as passages in conversation order, and the runs left out (not
        skipped) as passages, most relevant passage first.
    """
    # One unit per message: (0, -score, 0, index) for a hit, (1, distance to the nearest hit, -passage score, index)
    # for a neighbour, then the passage and the position; sorted, they are the order of consideration.
    units: list[tuple[int, float, float, int, int, int]] = []
    considered: list[list[bool]] = []
    for w, passage in enumerate(passages):
        indices = passage.indices
        hit_score = dict(zip(passage.hit_indices, passage.hit_scores, strict=False))
        distances = _distances([p for p, index in enumerate(indices) if index in hit_score], len(indices))
        seen = [False] * len(indices)
        for p, index in enumerate(indices):
            if skip is not None and skip(passage, p):
                continue
            seen[p] = True
            if index in hit_score:
                units.append((0, -hit_score[index], 0.0, index, w, p))
            else:
                units.append((1, distances[p], -passage.score, index, w, p))
        considered.append(seen)
    units.sort()
    limits = [(d, budget) for d, budget in enumerate(budgets) if budget is not None]
    dimensions = range(len(budgets))
    used = [0] * len(budgets)
    runs_total = 0  # chosen runs so far: each after the first costs a gap
    taken = [[False] * len(seen) for seen in considered]
    for kind, _, _, _, w, p in units:
        row = taken[w]
        left = p > 0 and row[p - 1]
        right = p + 1 < len(row) and row[p + 1]
        if kind == 1 and not (left or right):
            continue  # a neighbour is shown only beside its passage
        runs_after = runs_total + 1 - left - right
        gaps = (runs_after - 1 if runs_after > 1 else 0) - (runs_total - 1 if runs_total > 1 else 0)
        size = sizes(passages[w], p)
        trial = [used[d] + size[d] + gap[d] * gaps for d in dimensions]
        for d, budget in limits:
            if trial[d] > budget:
                break
        else:
            row[p] = True
            used, runs_total = trial, runs_after
    picked: list[Passage] = []
    dropped: list[tuple[float, int, Passage]] = []
    for w, passage in enumerate(passages):
        row = taken[w]
        left_out = [seen and not chosen for seen, chosen in zip(considered[w], row, strict=True)]
        picked.extend(subset_passage(passage, run) for run in _runs(row))
        dropped.extend((-passage.score, w, subset_passage(passage, run)) for run in _runs(left_out))
    picked.sort(key=lambda passage: passage.start)
    return picked, [passage for _, _, passage in sorted(dropped, key=lambda item: (item[0], item[1]))]
