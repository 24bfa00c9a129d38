"""The archive as one search sees it: pending messages embedded for the search, scored as if their vectors were stored.

``SearchVectors`` holds the chunk vectors a search computed (or found ready) for the newest pending messages.
``PendingView`` answers the three reads the recall path makes (``candidates``, ``similarities``, ``get``) from the
archive, adding those vectors: a message's similarity is its best chunk's, as the archive computes it; it joins
the dense candidates if it is among the ``dense_k`` nearest (and the search filter accepts it), and its similarity
is known wherever the archive would know it (lexical candidates, neighbours). Nothing is written. When a restore
replaced the archive after the vectors were computed, the view adds nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from strands_semantic_memory.archives._protocol import (
    Archive,
    Candidates,
    ContextRequest,
    SearchFilter,
    StoredRecord,
)
from strands_semantic_memory.embeddings._base import Vectors


@dataclass(frozen=True)
class SearchVectors:
    """Chunk vectors of pending messages, for one search.

    Attributes:
        vectors: Index -> the message's chunk vectors (unit rows).
        current: Whether the archive they were computed for is still the memory's (no restore since).
    """

    vectors: dict[int, Vectors]
    current: Callable[[], bool]


class PendingView:
    """The reads of a search (``candidates``, ``similarities``, ``get``), with ``SearchVectors`` added."""

    def __init__(self, archive: Archive, found: SearchVectors) -> None:
        """Wrap ``archive`` for one search."""
        self._archive = archive
        self._found = found

    def as_archive(self) -> Archive:
        """The view, typed as the archive the recall path expects (it calls only the reads the view answers)."""
        return cast(Archive, self)

    def _best(self, vector: Vectors) -> dict[int, float]:
        """Each message's best-chunk cosine similarity to the query (none after a restore)."""
        if not self._found.current():
            return {}
        query = np.asarray(vector, dtype=np.float32)[0]
        return {i: float(np.max(m @ query)) for i, m in self._found.vectors.items() if len(m)}

    def candidates(
        self,
        vector: Vectors | None,
        query: str,
        dense_k: int,
        lexical_k: int,
        search_filter: SearchFilter | None = None,
        *,
        context: ContextRequest | None = None,
    ) -> Candidates:
        """The archive's candidates, with the pending messages' similarities added.

        A pending message outside the search filter's scope is not scored at all, not even as a neighbour.
        """
        answer = self._archive.candidates(vector, query, dense_k, lexical_k, search_filter, context=context)
        best = {} if vector is None else self._best(vector)
        records = self._archive.get(list(best)) if best and search_filter is not None else {}
        if search_filter is not None and search_filter.scoped:
            best = {i: s for i, s in best.items() if i in records and search_filter.in_scope(records[i].session_id)}
        if not best:
            return answer
        dense = answer.dense
        if dense_k > 0:
            eligible = best
            if search_filter is not None:
                accepted = {i for i, r in records.items() if search_filter.accepts_record(r)}
                eligible = {i: s for i, s in best.items() if i in accepted}
            nearest = sorted({**dense, **eligible}.items(), key=lambda item: (-item[1], item[0]))[:dense_k]
            dense = dict(nearest)
        similarity = {**answer.similarity, **{i: s for i, s in best.items() if i in dense or i in answer.lexical}}
        around = answer.context
        if around is not None:
            around = dataclasses.replace(around, similarity={**around.similarity, **best})
        return Candidates(dense=dense, lexical=answer.lexical, similarity=similarity, context=around)

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """The archive's similarities, with the pending messages' added."""
        found = self._archive.similarities(vector, indices)
        best = self._best(vector)
        found.update({i: best[i] for i in indices if i in best})
        return found

    def get(self, indices: Sequence[int]) -> dict[int, StoredRecord]:
        """The archive's records."""
        return self._archive.get(indices)
