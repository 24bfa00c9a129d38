"""Passage assembly: from ranked hits to ``Passage`` objects.

The index arithmetic (widening, merging) is ``expand_and_merge``; this module
adds the records: it asks the store for every message inside the merged ranges in one call and builds the
passages, scored with every candidate that falls inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from strands_semantic_memory.archives._protocol import StoredRecord
from strands_semantic_memory.messages._codec import decode_message
from strands_semantic_memory.retrieval._passages import IndexRange, Passage, expand_and_merge, passage_score

Fetch = Callable[[Sequence[int]], Mapping[int, StoredRecord]]


def passage_ranges(hits: Mapping[int, float], radius: int, bounds: tuple[int, int] | None) -> list[IndexRange]:
    """The merged index ranges around the hits, clipped to the live archive."""
    if bounds is None or not hits:
        return []
    return expand_and_merge(hits, radius, *bounds)


def build_passages(
    ranges: Sequence[IndexRange],
    records: Mapping[int, StoredRecord],
    hit_scores: Mapping[int, float],
    pool_scores: Mapping[int, float],
) -> list[Passage]:
    """Passages over fetched records (indices that are gone are skipped).

    Args:
        ranges: Merged ranges, ascending.
        records: The live records inside them.
        hit_scores: Score of each hit the passages were built around.
        pool_scores: Score of every candidate (hits and deeper ones); a passage's score counts those inside it.

    Returns:
        Passages in conversation order, each from its first to its last live message.
    """
    passages = []
    for span in ranges:
        inside = [records[i] for i in range(span.start, span.end + 1) if i in records]
        if not inside:
            continue
        passages.append(
            Passage(
                start=inside[0].index,
                end=inside[-1].index,
                messages=[decode_message(r.data) for r in inside],
                hit_indices=list(span.hit_indices),
                score=passage_score([s for i, s in pool_scores.items() if span.start <= i <= span.end]),
                indices=[r.index for r in inside],
                hit_scores=[hit_scores[i] for i in span.hit_indices],
                roles=[r.role for r in inside],
                timestamps=[r.time for r in inside],
                session_ids=[r.session_id for r in inside],
            )
        )
    return passages
