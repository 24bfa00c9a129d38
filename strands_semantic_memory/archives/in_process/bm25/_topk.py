"""Exact top-k BM25 over posting lists, pruned with per-term score bounds (MaxScore).

Scoring every document that shares a term with the query costs time in proportion to the query terms' posting
lists: at a million archived messages a day name or a topic word holds tens of thousands of documents, and merging
them (a sort) dominated the search. Most of those documents cannot reach the top ``k``: a document's score is a sum
of per-term scores, and a term's score never exceeds its bound ``idf * max_tf / (max_tf + k1 * (1 - b))`` (a
document of length 0 with the term's largest count, read from its posting list in one vectorized pass). So:

1. The shortest posting lists (rare, high-idf terms: a name, a number) are scored exactly first ("seeds"): their
   documents' ``k``-th best score is a threshold ``theta`` that the final ``k``-th score is at least. While the
   next shortest list is cheaper to score than the lists pruning would still have to walk, it becomes a seed too.
2. A document holding no seed term scores at most the sum of the other terms' bounds. The terms whose bounds add
   up to less than ``theta`` (the low-idf ones) cannot bring a document into the top ``k`` on their own: only
   documents in the remaining ("essential") terms' lists are candidates, and of those only the ones whose exact
   score for that term plus every other term's bound reaches ``theta``.
3. The other terms are looked up for the candidates one at a time, the largest bound first; a candidate whose
   score so far plus the bounds still to come falls below ``theta`` is dropped.

Only documents whose score is provably below ``theta`` (with a margin for float rounding) are skipped, so the
result is the exhaustive top ``k``. Every score is computed with the same float32 operations and summed in float64
in the same (query-term) order as the exhaustive sum, so scores are bit-identical too. Equal scores at the cut go
to the smaller archive index. Queries whose lists are short (small archives) are scored exhaustively in one
vectorized pass. Nothing is stored for the pruning: the bounds come from the posting lists at query time (0 bytes
per posting or term); a query holds temporary arrays in proportion to the lists it walks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

SEED_BUDGET = 4096
"""Postings scored exactly in step 1 beyond the first ``k`` (more: a better threshold, at a higher fixed cost)."""

EXHAUSTIVE_BELOW = 16384
"""Queries whose posting lists hold fewer entries than this (or than ``4 * k``: most of them wanted) are scored
exhaustively (one vectorized pass beats the pruning's extra steps there: measured at 100k messages)."""

_MARGIN = 1e-5
"""Relative slack on every bound comparison: float32 scores round by ~6e-8 per operation."""

Offsets = npt.NDArray[np.uint32]
Scores = npt.NDArray[np.float32]
Parts = dict[int, Scores]


class TermPostings(NamedTuple):
    """One query term's live postings and its idf."""

    offsets: Offsets
    """Document offsets (ascending, unique)."""
    counts: npt.NDArray[np.uint16]
    """The term's count in each of those documents."""
    idf: float


class Bm25:
    """BM25 scores of documents for one query over their posting lists (lucene variant, as bm25s computes it)."""

    def __init__(
        self,
        terms: Sequence[TermPostings],
        lengths: npt.NDArray[np.uint32],
        shift: int,
        k1: float,
        b: float,
        average: float,
    ) -> None:
        """Prepare a query.

        Args:
            terms: The query's distinct terms that have live postings, in query order (the order scores add up in).
            lengths: Document lengths; document offset ``o`` has length ``lengths[o - shift]``.
            shift: See ``lengths``.
            k1: BM25 term-frequency saturation.
            b: BM25 length normalization.
            average: Average live document length.
        """
        self.terms = list(terms)
        self.lengths = lengths
        self.shift = shift
        self.k1 = k1
        self.b = b
        self.average = average

    def norm(self, offsets: Offsets) -> Scores:
        """The length norm ``k1 * (1 - b + b * length / average)`` of each document."""
        at = offsets - np.uint32(self.shift) if self.shift else offsets  # live offsets are at least the shift
        lengths = self.lengths[at].astype(np.float32)
        norm: Scores = self.k1 * (1 - self.b + self.b * lengths / self.average)
        return norm

    def _scores(self, term: TermPostings, counts: npt.NDArray[np.uint16], norm: Scores) -> Scores:
        """A term's score for these counts and length norms: float32, the exhaustive sum's exact operations."""
        tfs = counts.astype(np.float32)
        scores: Scores = (term.idf * tfs / (tfs + norm)).astype(np.float32)
        return scores

    def scores_in(self, term: int) -> tuple[Scores, Scores]:
        """Term ``term``'s (a position in ``terms``) scores in its posting list's documents, and their norms."""
        postings = self.terms[term]
        norm = self.norm(postings.offsets)
        return self._scores(postings, postings.counts, norm), norm

    def parts(self, documents: Offsets, terms: Iterable[int], norm: Scores | None = None) -> Parts:
        """Each of these terms' (positions in ``terms``) score in each of ``documents`` (ascending, unique).

        Args:
            documents: Document offsets, ascending, unique.
            terms: Positions in ``terms``.
            norm: The documents' ``norm``, if known.

        Returns:
            Term position -> float32 scores aligned with ``documents``, 0 where a document lacks the term.
        """
        found: Parts = {}
        if not len(documents):
            return {t: np.zeros(0, dtype=np.float32) for t in terms}
        norm = self.norm(documents) if norm is None else norm
        last = len(documents) - 1
        for t in terms:
            term = self.terms[t]
            if len(term.offsets) <= len(documents):  # look the term's postings up among the documents
                at = np.minimum(np.searchsorted(documents, term.offsets), last)
                hit = documents[at] == term.offsets
                where, counts = at[hit], term.counts[hit]
            else:  # look the documents up in the term's postings
                at = np.minimum(np.searchsorted(term.offsets, documents), len(term.offsets) - 1)
                hit = term.offsets[at] == documents
                where, counts = np.flatnonzero(hit), term.counts[at[hit]]
            scores = np.zeros(len(documents), dtype=np.float32)
            scores[where] = self._scores(term, counts, norm[where])
            found[t] = scores
        return found

    def bound(self, term: int) -> float:
        """An upper bound on a term's score in any document (of length 0, with the largest count it has)."""
        postings = self.terms[term]
        most = int(postings.counts.max())
        floor = self.k1 * (1 - self.b)
        return postings.idf if most + floor <= 0 else postings.idf * most / (most + floor)


def total(parts: Parts, size: int) -> Scores:
    """Full scores from every term's part (a missing term scores 0).

    Summed in float64 in query order, as the exhaustive sum adds them, then rounded to float32.
    """
    sums = np.zeros(size, dtype=np.float64)
    for t in sorted(parts):
        sums += parts[t]
    return sums.astype(np.float32)


def union(lists: Sequence[Offsets]) -> Offsets:
    """The sorted union of ascending offset arrays."""
    if len(lists) == 1:
        return lists[0]
    merged: Offsets = np.sort(np.concatenate(lists), kind="stable")  # merges the sorted runs
    if len(merged) > 1:  # np.unique is several times slower than this on sorted runs
        keep = np.empty(len(merged), dtype=bool)
        keep[0] = True
        np.not_equal(merged[1:], merged[:-1], out=keep[1:])
        merged = merged[keep]
    return merged


def _outside(documents: Offsets, known: Offsets) -> npt.NDArray[np.bool_]:
    """Which of ``documents`` are not in ``known`` (both ascending)."""
    if not len(known):
        return np.ones(len(documents), dtype=bool)
    at = np.minimum(np.searchsorted(known, documents), len(known) - 1)
    outside: npt.NDArray[np.bool_] = known[at] != documents
    return outside


def best(documents: Offsets, totals: Scores, k: int) -> tuple[Scores, npt.NDArray[np.int64]]:
    """The ``k`` best documents by score, ties by smaller offset: ``(scores, offsets)``, best first."""
    count = min(k, len(documents))
    if count < len(documents):
        kth = np.partition(totals, len(totals) - count)[len(totals) - count]
        above = np.flatnonzero(totals > kth)
        ties = np.flatnonzero(totals == kth)
        ties = ties[np.argsort(documents[ties], kind="stable")][: count - len(above)]
        top: npt.NDArray[Any] = np.concatenate((above, ties))
    else:
        top = np.arange(len(documents))
    order = top[np.lexsort((documents[top], -totals[top]))]
    return totals[order], documents[order].astype(np.int64)


def exhaustive(scorer: Bm25) -> tuple[Offsets, Scores]:
    """Every document holding a query term and its score, in one pass over the concatenated posting lists."""
    terms = scorer.terms
    if len(terms) == 1:
        return terms[0].offsets, scorer.scores_in(0)[0]
    offsets = np.concatenate([t.offsets for t in terms])
    tfs = np.concatenate([t.counts for t in terms]).astype(np.float32)
    idf = np.repeat(np.array([t.idf for t in terms], dtype=np.float32), [len(t.offsets) for t in terms])
    scores = (idf * tfs / (tfs + scorer.norm(offsets))).astype(np.float32)  # as one term at a time computes it
    order = np.argsort(offsets, kind="stable")  # merges the sorted runs (3x faster than np.unique's sort)
    ordered = offsets[order]
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    groups = np.cumsum(first) - 1
    totals = np.bincount(groups, weights=scores[order])  # in float64, a document's terms in query order
    return ordered[first], totals.astype(np.float32)


class _Seeds:
    """Documents of the shortest posting lists, scored exactly."""

    def __init__(self, scorer: Bm25, first: list[int]) -> None:
        self.scorer = scorer
        self.seeded = list(first)
        self.documents = union([scorer.terms[t].offsets for t in first])
        self.totals = total(scorer.parts(self.documents, range(len(scorer.terms))), len(self.documents))

    def add(self, term: int) -> None:
        """Score the term's documents not scored yet (none of them holds an earlier seed's term)."""
        scorer = self.scorer
        new = _outside(scorer.terms[term].offsets, self.documents)
        offsets = scorer.terms[term].offsets[new]
        others = [t for t in range(len(scorer.terms)) if t not in self.seeded and t != term]
        parts = scorer.parts(offsets, others)
        parts[term] = scorer.scores_in(term)[0][new]
        self.seeded.append(term)
        merged = np.concatenate((self.documents, offsets))
        order = np.argsort(merged, kind="stable")
        self.documents = merged[order]
        self.totals = np.concatenate((self.totals, total(parts, len(offsets))))[order]


def top_k(
    scorer: Bm25, k: int, seed_budget: int = SEED_BUDGET, exhaustive_below: int = EXHAUSTIVE_BELOW
) -> tuple[Scores, npt.NDArray[np.int64]]:
    """The exact ``k`` best documents for the scorer's query (see the module docstring): ``(scores, offsets)``."""
    terms = scorer.terms
    every = range(len(terms))
    prunable = scorer.k1 >= 0 and 0 <= scorer.b <= 1  # the bound assumes a length norm of at least k1 * (1 - b)
    if not prunable or sum(len(t.offsets) for t in terms) < max(seed_budget, exhaustive_below):
        return best(*exhaustive(scorer), k)
    rest = sorted(every, key=lambda t: len(terms[t].offsets))
    held, first = 0, 0
    while first < len(rest) and (held < k or held + len(terms[rest[first]].offsets) <= seed_budget):
        held += len(terms[rest[first]].offsets)
        first += 1
    seeds = _Seeds(scorer, rest[:first])
    rest = rest[first:]
    while True:  # score the shortest lists exactly until pruning the others pays
        if not rest or len(seeds.documents) < k:
            if rest:
                seeds.add(rest.pop(0))
                continue
            return best(seeds.documents, seeds.totals, k)
        theta = float(np.partition(seeds.totals, len(seeds.totals) - k)[len(seeds.totals) - k])
        bounds = {t: scorer.bound(t) for t in rest}
        reach = sum(bounds.values())  # the most a document outside the scored lists can score
        low, optional = 0.0, []
        for t in sorted(rest, key=bounds.__getitem__):
            if (low + bounds[t]) * (1 + _MARGIN) >= theta:
                break
            low += bounds[t]  # terms whose bounds together stay below theta cannot lift a document alone
            optional.append(t)
        essential = [t for t in rest if t not in optional]
        if not essential:
            return best(seeds.documents, seeds.totals, k)
        if 2 * len(terms[rest[0]].offsets) > sum(len(terms[t].offsets) for t in essential):
            break
        seeds.add(rest.pop(0))  # cheaper than going through the essential lists: raises theta, lowers the bounds
    if len(essential) == 1:  # the usual case: its documents and scores are at hand
        (t,) = essential
        own, norm = scorer.scores_in(t)
        keep = ((own + (reach - bounds[t])) * (1 + _MARGIN) >= theta) & _outside(terms[t].offsets, seeds.documents)
        more, parts, norm = terms[t].offsets[keep], {t: own[keep]}, norm[keep]
    else:
        lists = []
        for t in essential:
            own, _ = scorer.scores_in(t)
            lists.append(terms[t].offsets[(own + (reach - bounds[t])) * (1 + _MARGIN) >= theta])
        more = union(lists)
        more = more[_outside(more, seeds.documents)]
        norm = scorer.norm(more)
        parts = scorer.parts(more, essential, norm)
    partial = np.zeros(len(more), dtype=np.float64)
    for part in parts.values():
        partial += part
    for t in [-1, *reversed(optional)]:  # add the optional terms, the largest bound first, dropping hopeless ones
        if t >= 0:
            parts.update(scorer.parts(more, [t], norm))
            partial += parts[t]
            low -= bounds[t]
        keep = (partial + low) * (1 + _MARGIN) >= theta
        if not keep.all():
            more, partial, norm = more[keep], partial[keep], norm[keep]
            parts = {u: part[keep] for u, part in parts.items()}
        if not len(more):
            return best(seeds.documents, seeds.totals, k)
    more_totals = total(parts, len(more))  # the seeds' terms score 0 in these documents
    return best(np.concatenate((seeds.documents, more)), np.concatenate((seeds.totals, more_totals)), k)
