"""Recall: one query in, ranked hits and passages out.

The path: the query is embedded (cached), the store answers with dense and lexical candidates in one call
(``candidates``), the ranking orders them (``_ranking``, pure), ``min_score`` and an optional reranker apply, and
for passages the hits are widened and merged (``_assembly``).

Store calls per search: ``candidates`` also answers the neighbours the ranking scores (a
``ContextRequest``), so a search is one call and a passage
search two (``candidates``, then ``get`` for the passages' records). A store may leave that request unanswered: the
neighbours it did not cover are then read with ``similarities`` and, for a lexical or filtered search, ``get``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from strands_semantic_memory._validation import check_int, check_score
from strands_semantic_memory.archives._protocol import Archive, Candidates, SearchFilter, StoredRecord
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.embeddings._checked import CheckedEmbedder
from strands_semantic_memory.errors import InvalidMessageTypeError, SemanticMemoryError
from strands_semantic_memory.messages._codec import decode_message
from strands_semantic_memory.messages._text import render_message
from strands_semantic_memory.messages._time import TimeBound, to_epoch
from strands_semantic_memory.retrieval._assembly import build_passages, passage_ranges
from strands_semantic_memory.retrieval._passages import Passage
from strands_semantic_memory.retrieval._ranking import (
    Ranked,
    base_scores,
    candidate_depth,
    context_indices,
    context_request,
    rank,
)
from strands_semantic_memory.retrieval._ranking_options import RankingOptions, Retrieval
from strands_semantic_memory.retrieval._relevance import Relevance, relative_cut
from strands_semantic_memory.retrieval._rerank import Reranker

if TYPE_CHECKING:
    from strands.types.content import Message

logger = logging.getLogger(__name__)


class RecallOptions(Protocol):
    """The options a search reads (the engine's ``MemoryOptions`` has them), re-read on every call."""

    @property
    def top_k(self) -> int:
        """Hits per search."""

    @property
    def context_radius(self) -> int:
        """Neighbours added on each side of a hit."""

    @property
    def min_score(self) -> float | None:
        """The lowest cosine similarity a hit may have (None: any)."""

    @property
    def retrieval(self) -> Retrieval:
        """``"hybrid"``, ``"dense"`` or ``"lexical"``."""

    @property
    def ranking(self) -> RankingOptions:
        """The ranking's tunables."""

    @property
    def rerank_candidates(self) -> int:
        """Candidates handed to the reranker."""


@dataclass(frozen=True, kw_only=True)
class Recollection:
    """What one search brought back for a turn.

    Attributes:
        passages: The passages around the hits that were kept, in conversation order.
        best_similarity: The query's cosine similarity to its nearest archived message (None without a query
            vector, or with nothing embedded): what the relevance gate reads.
        cut: Hits left out by the relative cut.
        floor: The archive's relevance floor (see ``retrieval._relevance``), when the engine computed it.
        relevance: How much the query resembles the archive (``relevance(best_similarity, floor)``).
    """

    passages: list[Passage]
    best_similarity: float | None
    cut: int = 0
    floor: float | None = None
    relevance: Relevance = "unknown"


@dataclass(frozen=True)
class SearchHit:
    """One archived message found by a search.

    Attributes:
        index: The message's archive index.
        score: Its relevance under the retrieval mode (or the reranker's score). Higher is more relevant.
        message: A copy of the archived message, exactly as archived.
        similarity: Cosine similarity of the query to the message's best-matching chunk; None when unknown (no
            vector yet, or the query was not embedded).
        role: The message's role.
        archived_at: When it was archived (seconds since the epoch).
        said_at: When it was said, if the caller gave that time.
    """

    index: int
    score: float
    message: Message
    similarity: float | None
    role: str = ""
    archived_at: float = 0.0
    said_at: float | None = None


def make_filter(roles: Collection[str] | None, since: TimeBound, until: TimeBound) -> SearchFilter | None:
    """The store filter for a search's keyword arguments (None when nothing is filtered)."""
    if isinstance(roles, str):
        roles = [roles]
    search_filter = SearchFilter(
        roles=frozenset(roles) if roles is not None else None,
        since=to_epoch(since, "since"),
        until=to_epoch(until, "until"),
    )
    return None if search_filter.is_empty else search_filter


def per_call(
    options: RecallOptions, top_k: int | None, context_radius: int | None, min_score: float | None
) -> tuple[int, int, float | None]:
    """``(top_k, context_radius, min_score)`` for one call: each argument, or the option when it is None.

    An argument follows the option's own rule (``top_k >= 1``, ``context_radius >= 0``, ``min_score`` in -1..1):
    ``search(top_k=0)`` is refused as ``SemanticMemory(top_k=0)`` is, rather than answered with nothing.

    Raises:
        ConfigurationError: If an argument breaks its option's rule (the message names it and the value).
    """
    k = options.top_k if top_k is None else check_int("top_k", top_k, minimum=1)
    radius = (
        options.context_radius if context_radius is None else check_int("context_radius", context_radius, minimum=0)
    )
    threshold = options.min_score if min_score is None else check_score("min_score", min_score)
    return k, radius, threshold


def split_covered(candidates: Candidates, needed: list[int]) -> tuple[list[int], list[int]]:
    """``(covered, missing)``: the needed indices the store answered in ``candidates.context``, and the others."""
    context = candidates.context
    if context is None or not context.around or not needed:
        return [], needed
    around = np.sort(np.fromiter(context.around, dtype=np.int64, count=len(context.around)))
    wanted = np.asarray(needed, dtype=np.int64)
    after = np.searchsorted(around, wanted)  # the nearest covered candidates are around[after - 1] and around[after]
    nearest = np.minimum(
        np.abs(around[np.minimum(after, len(around) - 1)] - wanted), np.abs(wanted - around[np.maximum(after - 1, 0)])
    )
    hit = (nearest <= context.radius) & (wanted >= 0)
    covered: list[int] = wanted[hit].tolist()
    missing: list[int] = wanted[~hit].tolist()
    return covered, missing


class Recall:
    """Runs searches against one store, under the store lock its ``SemanticMemory`` passes in."""

    def __init__(
        self,
        store: Archive,
        checked: CheckedEmbedder,
        lock: AbstractContextManager[object],
        options: Callable[[], RecallOptions],
        reranker: Reranker | None,
    ) -> None:
        """Create the recall path over a store."""
        self._store = store
        self._checked = checked
        self._lock = lock
        self._options = options
        self.reranker = reranker

    def _query_vector(self, query: str, mode: Retrieval, threshold: float | None) -> Vectors | None:
        if mode == "lexical" and threshold is None:
            return None
        try:
            return self._checked.query(query)
        except SemanticMemoryError as error:
            if mode == "dense":
                raise
            log = logger.debug if self._checked.unavailable else logger.warning  # an unavailable model: logged once
            log("error=<%s> | query embedding failed; using lexical results only", error)
            return None

    def _ranked(
        self,
        query: str,
        k: int,
        threshold: float | None,
        search_filter: SearchFilter | None,
        pool: int,
        seen: dict[int, StoredRecord],
    ) -> tuple[Ranked, float | None]:
        """``(index, score, similarity)`` of the best ``max(k, pool)`` candidates (more for a reranker), best first.

        Records read on the way (to filter the candidates' neighbours) are added to ``seen``.

        Returns:
            The ranked candidates, and the query's best similarity to any archived message the search may return
            (the nearest dense candidate; None without a query vector or dense candidates).
        """
        if not isinstance(query, str):
            raise InvalidMessageTypeError(f"query must be a string, got {type(query).__name__}")
        options = self._options()
        if not query.strip():
            return [], None
        mode = options.retrieval
        ranking = options.ranking
        want = max(k, pool, options.rerank_candidates if self.reranker is not None else 0)
        depth = candidate_depth(want, ranking)
        vector = self._query_vector(query, mode, threshold)
        request = context_request(mode, want, ranking)
        with self._lock:
            candidates = self._store.candidates(
                vector,
                query,
                dense_k=0 if mode == "lexical" or vector is None else depth,
                lexical_k=0 if mode == "dense" else depth,
                search_filter=search_filter,
                context=request,
            )
            # Conversation context: neighbours of the best candidates are scored too (see ranking).
            base = base_scores(candidates, mode, ranking)
            needed = context_indices(candidates, mode=mode, want=want, options=ranking, base=base)
            found, eligible = self._neighbours(candidates, needed, vector, search_filter, seen)
        ranked = rank(
            found,
            mode=mode,
            want=want if threshold is None else 2 * depth,
            options=ranking,
            eligible=eligible,
            base=base if found is candidates or mode == "lexical" else None,  # neighbours' similarities are new
        )
        if threshold is not None:
            # A message without a vector (pending, or nothing to embed) has no similarity; it was found lexically.
            ranked = [(i, s, sim) for i, s, sim in ranked if sim is None or sim >= threshold]
        best = max(candidates.dense.values(), default=None)
        return ranked[:want], best

    def _neighbours(
        self,
        candidates: Candidates,
        needed: list[int],
        vector: Vectors | None,
        search_filter: SearchFilter | None,
        seen: dict[int, StoredRecord],
    ) -> tuple[Candidates, set[int] | None]:
        """The candidates with the needed neighbours' similarities added, and which neighbours may be ranked.

        Neighbours the store answered with the candidates are taken from there; the others are asked for (the
        store's similarities are unfiltered: neighbours are context). Which neighbours may be ranked is only
        needed for a filtered or lexical search (None otherwise: those with a similarity).
        """
        if not needed:
            return candidates, None
        covered, missing = split_covered(candidates, needed)
        context = candidates.context
        similarity: dict[int, float] = {}
        eligible: set[int] | None = None
        if search_filter is not None or vector is None:
            eligible = set()
        if covered and context is not None:
            if vector is not None:
                similarity = {i: context.similarity[i] for i in covered if i in context.similarity}
            if eligible is not None:
                eligible.update(context.live.intersection(covered))
        if missing:
            if vector is not None:
                similarity.update(self._store.similarities(vector, missing))
            if eligible is not None:
                found = self._store.get(missing)
                seen.update(found)
                eligible.update(
                    i for i, r in found.items() if search_filter is None or search_filter.accepts(r.role, r.time)
                )
        if similarity:
            candidates = dataclasses.replace(candidates, similarity={**candidates.similarity, **similarity})
        return candidates, eligible

    def _search(
        self, query: str, k: int, threshold: float | None, search_filter: SearchFilter | None, pool: int
    ) -> tuple[list[SearchHit], dict[int, StoredRecord]]:
        records: dict[int, StoredRecord] = {}
        ranked, _ = self._ranked(query, k, threshold, search_filter, pool, records)
        if not ranked:
            return [], records
        missing = [i for i, _, _ in ranked if i not in records]
        if missing:
            with self._lock:
                records.update(self._store.get(missing))
        hits = [
            SearchHit(
                index=i,
                score=s,
                message=decode_message(records[i].data),
                similarity=sim,
                role=records[i].role,
                archived_at=records[i].archived_at,
                said_at=records[i].said_at,
            )
            for i, s, sim in ranked
            if i in records
        ]
        if self.reranker is not None and hits:
            hits = self._rerank(query, hits)
        return hits, records

    def search(
        self, query: str, top_k: int | None, min_score: float | None, search_filter: SearchFilter | None
    ) -> list[SearchHit]:
        """Hits, best first: at most ``top_k`` (None: the options' ``top_k``; ``min_score`` likewise)."""
        k, _, threshold = per_call(self._options(), top_k, None, min_score)
        return self._search(query, k, threshold, search_filter, 0)[0][:k]

    def _rerank(self, query: str, hits: list[SearchHit]) -> list[SearchHit]:
        assert self.reranker is not None
        scores = self.reranker.rerank(query, [render_message(h.message) for h in hits])
        if len(scores) != len(hits):
            raise SemanticMemoryError(f"reranker returned {len(scores)} scores for {len(hits)} passages")
        rescored = [
            SearchHit(h.index, float(s), h.message, h.similarity, h.role, h.archived_at, h.said_at)
            for h, s in zip(hits, scores, strict=True)
        ]
        return sorted(rescored, key=lambda h: (-h.score, h.index))

    def passages(
        self,
        query: str,
        top_k: int | None,
        context_radius: int | None,
        min_score: float | None,
        search_filter: SearchFilter | None,
    ) -> list[Passage]:
        """Search, widen the best hits by the radius, merge, and build scored passages (None: the option).

        The records are read once, for the merged ranges (which hold the hits); with a reranker, which needs the
        candidates' messages first, the ranges' other records are read in a second call.
        """
        return self.recollect(query, top_k, context_radius, min_score, search_filter).passages

    def recollect(
        self,
        query: str,
        top_k: int | None,
        context_radius: int | None,
        min_score: float | None,
        search_filter: SearchFilter | None,
        *,
        cut: float = 0.0,
    ) -> Recollection:
        """``passages``, with the query's best similarity, after a relative cut of the hits (see ``relative_cut``).

        Args:
            query: The text to look for.
            top_k: Hits at most (None: the option).
            context_radius: Neighbours per hit (None: the option).
            min_score: Minimum cosine similarity (None: the option).
            search_filter: Which messages may be hits.
            cut: Leave out hits scoring under this share of the best hit's score (0: none), before any record
                is read.
        """
        k, radius, threshold = per_call(self._options(), top_k, context_radius, min_score)
        best_similarity: float | None = None
        if self.reranker is None:
            records: dict[int, StoredRecord] = {}
            found, best_similarity = self._ranked(query, k, threshold, search_filter, 3 * k, records)
            ranked = [(i, s) for i, s, _ in found]
        else:
            reranked, records = self._search(query, k, threshold, search_filter, 3 * k)
            ranked = [(h.index, h.score) for h in reranked]
            best_similarity = max((h.similarity for h in reranked if h.similarity is not None), default=None)
        kept_hits = relative_cut(ranked[:k], cut)
        kept, considered = len(kept_hits), min(k, len(ranked))
        ranked = kept_hits + ranked[k:]  # the deeper pool still scores the passages
        return Recollection(
            passages=self._assemble(ranked, kept, radius, records, refill=cut <= 0),
            best_similarity=best_similarity,
            cut=considered - min(considered, kept),
        )

    def nearest(self, vectors: Vectors) -> list[float | None]:
        """Each query vector's best similarity to an archived message (None where nothing is embedded)."""
        found: list[float | None] = []
        for row in vectors:
            with self._lock:
                candidates = self._store.candidates(row.reshape(1, -1), "", dense_k=1, lexical_k=0)
            found.append(max(candidates.dense.values(), default=None))
        return found

    def _assemble(
        self, ranked: list[tuple[int, float]], k: int, radius: int, records: dict[int, StoredRecord], *, refill: bool
    ) -> list[Passage]:
        """Passages around the best ``k`` of ``ranked``, reading the records they need once.

        A hit forgotten between ranking and reading is replaced by the next candidate when ``refill`` is set (a
        relative cut does not refill: the next candidates are below it).
        """
        asked = set(records)
        while True:
            best = dict(ranked[:k])
            if not best:
                return []
            ranges = passage_ranges(best, radius, (max(0, min(best) - radius), max(best) + radius))
            wanted = [i for span in ranges for i in range(span.start, span.end + 1) if i not in asked]
            if wanted:
                asked.update(wanted)
                with self._lock:
                    records.update(self._store.get(wanted))
            gone = {i for i in best if i not in records}
            if not gone:
                return build_passages(ranges, records, best, {i: s for i, s in ranked if i in records})
            # Removed between ranking and reading (forgotten meanwhile): the next candidates move up, or not.
            ranked = [(i, s) for i, s in ranked if i not in gone]
            if not refill:
                k -= len(gone)
