"""Passages: hits widened by their neighbours and merged, and packed into a budget, hits first. Pure functions.

A passage is a run of consecutive archived messages around one or more hits. The hook, the memory store and the
tools show passages rather than lone hits: a reply means little without the question before it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from strands.types.content import Message

from strands_semantic_memory.archives._protocol import StoredRecord

__all__ = ["Passage", "build_passages", "merge_ranges", "pack_passages"]


@dataclass(frozen=True)
class Passage:
    """A run of consecutive archived messages around one or more search hits.

    Attributes:
        records: The archived messages of the run that are still live, in conversation order.
        hits: Archive index -> score of each hit inside the passage.
        score: The passage's relevance: its best hit's score plus a tenth of each other candidate's inside it.
    """

    records: tuple[StoredRecord, ...]
    hits: Mapping[int, float]
    score: float = 0.0

    @property
    def start(self) -> int:
        """Archive index of the first message."""
        return self.records[0].index

    @property
    def end(self) -> int:
        """Archive index of the last message (inclusive)."""
        return self.records[-1].index

    @property
    def indices(self) -> list[int]:
        """The archive index of each message."""
        return [r.index for r in self.records]

    @cached_property
    def messages(self) -> list[Message]:
        """The messages exactly as archived (fresh copies)."""
        return [r.message for r in self.records]

    @property
    def hit_indices(self) -> list[int]:
        """Archive indices of the hits inside, ascending."""
        return sorted(self.hits)

    @property
    def roles(self) -> list[str]:
        """The role of each message."""
        return [r.role for r in self.records]

    @property
    def timestamps(self) -> list[float]:
        """When each message was said (else archived), in seconds since the epoch."""
        return [r.time for r in self.records]

    @property
    def session_ids(self) -> list[str | None]:
        """The session each message was said in (None: unknown)."""
        return [r.session_id for r in self.records]

    def subset(self, positions: Sequence[int]) -> Passage:
        """The passage of the messages at these positions (ascending), its hits and score kept where they fall."""
        records = tuple(self.records[p] for p in positions)
        inside = {r.index for r in records}
        hits = {i: s for i, s in self.hits.items() if i in inside}
        return Passage(records, hits, max(hits.values(), default=self.score))


def merge_ranges(hits: Iterable[int], radius: int) -> list[tuple[int, int, list[int]]]:
    """Every hit widened by ``radius`` each side, overlapping or touching ranges merged: ``(start, end, hits)``."""
    merged: list[tuple[int, int, list[int]]] = []
    for hit in sorted(set(hits)):
        start, end = max(0, hit - radius), hit + radius
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end), [*merged[-1][2], hit])
        else:
            merged.append((start, end, [hit]))
    return merged


def build_passages(
    hits: Mapping[int, float], radius: int, records: Mapping[int, StoredRecord], pool: Mapping[int, float]
) -> list[Passage]:
    """Passages around ``hits`` from the fetched ``records`` (indices not among them are gone or out of scope).

    Args:
        hits: Archive index -> score of each hit.
        radius: Neighbours on each side of a hit.
        records: The live records the passages may show.
        pool: Score of every ranked candidate: a passage's score counts those inside it.
    """
    passages = []
    for start, end, inside in merge_ranges(hits, radius):
        run = tuple(records[i] for i in range(start, end + 1) if i in records)
        if not run:
            continue
        scores = sorted((pool[i] for i in range(start, end + 1) if i in pool), reverse=True) or [hits[inside[0]]]
        passages.append(Passage(run, {i: hits[i] for i in inside if i in records}, scores[0] + 0.1 * sum(scores[1:])))
    return passages


def pack_passages(
    passages: Sequence[Passage],
    size: Callable[[StoredRecord], Sequence[int]],
    budgets: Sequence[int | None],
    gap: Sequence[int],
    skip: Callable[[StoredRecord], bool] | None = None,
) -> tuple[list[Passage], list[Passage]]:
    """Choose the messages that fit the budgets: hits first, best first, then neighbours nearest to a chosen one.

    A neighbour is taken only beside a chosen message of its passage, so it is never shown apart; a message that does
    not fit is skipped and smaller, later ones may still be taken; no message is cut. Each run of chosen messages
    after the first costs ``gap`` (the line between passages). Deterministic.

    Args:
        passages: Retrieved passages.
        size: A message's size in each budget's unit (characters, tokens).
        budgets: The most each unit may total (None: no limit).
        gap: The size of the separation between two runs, in each unit.
        skip: Messages never to choose (what the model already sees).

    Returns:
        ``(chosen, dropped)``: the chosen runs in conversation order, and the runs left out, most relevant first.
    """
    units: list[tuple[int, float, float, int, int, int]] = []
    considered: list[list[bool]] = []
    for w, passage in enumerate(passages):
        hit_positions = [p for p, r in enumerate(passage.records) if r.index in passage.hits]
        seen = [False] * len(passage.records)
        for p, record in enumerate(passage.records):
            if skip is not None and skip(record):
                continue
            seen[p] = True
            if record.index in passage.hits:
                units.append((0, -passage.hits[record.index], 0.0, record.index, w, p))
            else:
                distance = min((abs(p - h) for h in hit_positions), default=len(passage.records))
                units.append((1, float(distance), -passage.score, record.index, w, p))
        considered.append(seen)
    units.sort()
    used = [0] * len(budgets)
    runs = 0
    taken = [[False] * len(seen) for seen in considered]
    for kind, _, _, _, w, p in units:
        row = taken[w]
        left, right = p > 0 and row[p - 1], p + 1 < len(row) and row[p + 1]
        if kind == 1 and not (left or right):
            continue
        after = runs + 1 - left - right
        gaps = max(after - 1, 0) - max(runs - 1, 0)
        cost = size(passages[w].records[p])
        trial = [used[d] + cost[d] + gap[d] * gaps for d in range(len(budgets))]
        if all(budget is None or trial[d] <= budget for d, budget in enumerate(budgets)):
            row[p], used, runs = True, trial, after
    chosen: list[Passage] = []
    dropped: list[tuple[float, int, Passage]] = []
    for w, passage in enumerate(passages):
        for flags, out in ((taken[w], None), ([s and not t for s, t in zip(considered[w], taken[w], strict=True)], w)):
            for run in _runs(flags):
                part = passage.subset(run)
                if out is None:
                    chosen.append(part)
                else:
                    dropped.append((-passage.score, w, part))
    chosen.sort(key=lambda passage: passage.start)
    return chosen, [passage for _, _, passage in sorted(dropped, key=lambda item: (item[0], item[1]))]


def _runs(flags: Sequence[bool]) -> list[range]:
    runs: list[range] = []
    start: int | None = None
    for position, flag in enumerate([*flags, False]):
        if flag and start is None:
            start = position
        elif not flag and start is not None:
            runs.append(range(start, position))
            start = None
    return runs
