"""The ranking: pure functions from an archive's candidates to one ordered list. The formula lives here only.

No I/O and no archive: given a query's dense and lexical candidates (``Candidates``) and the similarity of their
neighbours, decide the order. The defaults were chosen by leave-one-conversation-out on two development sets (the
development half of LoCoMo, and generated long assistant-heavy task conversations; ``docs/retrieval-study.md``):

1. **Weighted fusion of normalized scores**: a message's base score is ``0.5 * dense + 0.5 * (bm25 / best_bm25) **
   2``. BM25 is divided by the query's best BM25 (the best lexical match scores 1) and squared, so a partial match on
   one common word counts little next to the best ones; fusing scores keeps how much better one candidate is than
   the next, which reciprocal ranks throw away (+5 points of recall@5 over reciprocal-rank fusion on LoCoMo).
2. **Dense floor**: the dense part is the cosine similarity *above* that of the last dense candidate, what sets the
   message apart from the rest of the archive (small sentence models give unrelated text 0.1 to 0.3; counted raw,
   that background adds up over the neighbours of step 3).
3. **Conversation context**: a message gains a share of its neighbours' base scores, by position in the archive:
   ``score(i) = base(i) + sum(w_d * lift(i + d))``; 0.4 for the turn before, 0.3 for the turn after, the next turn
   each way 0.7 times the nearer one. A neighbour lifts by the part of its base score above the query's 50th best
   base score, so the background relevance a whole thread shares does not add up.
4. **Neighbours become candidates**: a message next to a candidate is ranked too (the answer to a question that
   matched, say). Steps 3 and 4 add 11 points of recall@5 and 7 of recall@50 on LoCoMo's development half.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from strands_semantic_memory.archives._protocol import Candidates

__all__ = [
    "RankingOptions",
    "Retrieval",
    "base_scores",
    "candidate_depth",
    "context_indices",
    "favour_span",
    "prefer_statements",
    "rank",
]

Retrieval = Literal["hybrid", "dense", "lexical"]
"""A retrieval mode: lexical and dense fused, or one of them alone."""

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


class RankingOptions(BaseModel):
    """The ranking's tunables (what each does: the module docstring).

    Attributes:
        dense_weight: Weight of the dense score in the base score (0..1); BM25 gets the rest.
        lexical_power: BM25 enters as ``(bm25 / best_bm25) ** lexical_power``.
        dense_floor: Count only the similarity above the last dense candidate's.
        neighbour_weights: ``(offset, weight)`` pairs of step 3 (empty: every message scored alone).
        neighbour_hits: Messages within this distance of a candidate are ranked too (step 4).
        context_factor: The neighbourhoods of the ``context_factor * want`` best candidates are scored.
        min_depth: Each index is asked for at least this many candidates.
        context_floor: Neighbours lift by the part of their base score above the ``context_floor``-th best.
        time_boost: A hit said within the span of time the query names ("last weekend", ``retrieval._time``) scores
            ``1 + time_boost`` times as much (``favour_span``).
        question_weight: A hit that is itself a question (its text ends with ``?``) keeps this share of its score
            (``prefer_statements``): what was said outranks what was asked.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    dense_weight: float = Field(0.5, ge=0.0, le=1.0)
    lexical_power: float = Field(2.0, gt=0.0, le=10.0)
    dense_floor: bool = True
    neighbour_weights: tuple[tuple[int, float], ...] = ((-2, 0.28), (-1, 0.4), (1, 0.3), (2, 0.21))
    neighbour_hits: int = Field(1, ge=0, le=10)
    context_factor: int = Field(2, ge=1, le=100)
    min_depth: int = Field(150, ge=1, le=100_000)
    context_floor: int = Field(50, ge=0, le=100_000)
    question_weight: float = Field(0.6, ge=0.0, le=1.0)
    time_boost: float = Field(1.0, ge=0.0, le=100.0)

    @property
    def reach(self) -> int:
        """How far from a candidate a neighbour's similarity is needed."""
        widest = max((abs(offset) for offset, _ in self.neighbour_weights), default=0)
        return self.neighbour_hits + widest if widest else 0


def candidate_depth(want: int, options: RankingOptions) -> int:
    """Candidates to ask each index for: ``max(3 * want, min_depth)``, so the floor does not depend on ``want``."""
    return max(3 * want, options.min_depth)


def _arrays(scores: Mapping[int, float]) -> tuple[Ints, Floats]:
    keys = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
    values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    order = np.argsort(keys, kind="stable")
    return keys[order], values[order]


def _lookup(keys: Ints, values: Floats, targets: Ints) -> Floats:
    """``values`` at each target's place in ``keys`` (ascending, unique); 0 where a target is absent."""
    if not len(keys):
        return np.zeros(len(targets), dtype=np.float64)
    position = np.minimum(np.searchsorted(keys, targets), len(keys) - 1)
    return np.where(keys[position] == targets, values[position], 0.0)


def _within(indices: Ints, distance: int) -> Ints:
    spread = (indices[:, None] + np.arange(-distance, distance + 1, dtype=np.int64)).ravel()
    return np.unique(spread[spread >= 0])


def _weights(mode: Retrieval, options: RankingOptions) -> float:
    return 1.0 if mode == "dense" else 0.0 if mode == "lexical" else options.dense_weight


def base_scores(
    candidates: Candidates, similarity: Mapping[int, float], mode: Retrieval, options: RankingOptions
) -> tuple[Ints, Floats]:
    """Every index with a known score, ascending, and its base score (steps 1 and 2)."""
    dense = {} if mode == "lexical" else {**candidates.dense, **similarity}
    lexical = {} if mode == "dense" else candidates.lexical
    dense_keys, dense_values = _arrays(dense)
    if options.dense_floor and len(dense_values):
        dense_values = np.maximum(dense_values - min(candidates.dense.values(), default=0.0), 0.0)
    lexical_keys, lexical_values = _arrays(lexical)
    best = float(lexical_values.max()) if len(lexical_values) else 0.0
    if best > 0:
        lexical_values = lexical_values / best
    keys = np.union1d(dense_keys, lexical_keys).astype(np.int64)
    weight = _weights(mode, options)
    share = np.maximum(_lookup(lexical_keys, lexical_values, keys), 0.0) ** options.lexical_power
    return keys, weight * _lookup(dense_keys, dense_values, keys) + (1.0 - weight) * share


def _found(candidates: Candidates, mode: Retrieval) -> Ints:
    found = set(candidates.lexical if mode != "dense" else ()) | set(candidates.dense if mode != "lexical" else ())
    return np.asarray(sorted(found), dtype=np.int64)


def context_indices(
    candidates: Candidates, *, mode: Retrieval, want: int, options: RankingOptions, known: Iterable[int] = ()
) -> list[int]:
    """The neighbours of the strongest candidates whose similarity the ranking needs and does not know yet."""
    found = _found(candidates, mode)
    if not options.reach or not len(found) or want <= 0 or mode == "lexical":
        return []
    keys, base = base_scores(candidates, {}, mode, options)
    scores = _lookup(keys, base, found)
    strong = found[np.lexsort((found, -scores))[: options.context_factor * want]]
    around = _within(strong, options.reach)
    seen = set(candidates.dense) | set(known)
    return [int(i) for i in around if int(i) not in seen]


def rank(
    candidates: Candidates,
    similarity: Mapping[int, float],
    *,
    mode: Retrieval,
    want: int,
    options: RankingOptions,
    eligible: Container[int] | None = None,
) -> list[tuple[int, float]]:
    """Order a query's candidates (see the module docstring).

    Args:
        candidates: What the archive found.
        similarity: The similarity of other indices (the candidates' neighbours, from ``context_indices``).
        mode: The retrieval mode.
        want: How many to return at most.
        options: The tunables.
        eligible: Which neighbours (indices the archive did not return as candidates) may be ranked, e.g. the live
            ones the search's scope accepts as hits. None: those with a known similarity.

    Returns:
        ``(index, score)`` best first, ties to the older message.
    """
    found = _found(candidates, mode)
    if not len(found) or want <= 0:
        return []
    pool = found
    if options.neighbour_hits and options.neighbour_weights:
        around = np.setdiff1d(_within(found, options.neighbour_hits), found)
        admitted = similarity if eligible is None else eligible
        pool = np.concatenate([found, np.asarray([i for i in around.tolist() if i in admitted], dtype=np.int64)])
    keys, base = base_scores(candidates, similarity, mode, options)
    floor = 0.0
    if options.context_floor and len(base) >= options.context_floor:
        floor = float(np.partition(base, len(base) - options.context_floor)[len(base) - options.context_floor])
    scores = _lookup(keys, base, pool)
    for offset, weight in options.neighbour_weights:
        scores = scores + weight * np.maximum(_lookup(keys, base, pool + offset) - floor, 0.0)
    best = np.lexsort((pool, -scores))[:want]
    return [(int(pool[i]), float(scores[i])) for i in best]


def prefer_statements(
    ranked: list[tuple[int, float]], texts: Mapping[int, str], weight: float
) -> list[tuple[int, float]]:
    """``ranked`` again with each question's score times ``weight``: what was said before what was asked.

    A memory in use holds the user's own earlier questions, which resemble a new question more than the evidence that
    answers it does, and crowd the evidence out of the budget; a question carries no fact of its own.
    """
    if weight == 1.0:
        return ranked
    scored = [(i, s * weight if texts.get(i, "").rstrip().endswith("?") else s) for i, s in ranked]
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def favour_span(
    ranked: list[tuple[int, float]], times: Mapping[int, float], span: tuple[float, float] | None, boost: float
) -> list[tuple[int, float]]:
    """``ranked`` again with the messages said within ``span`` (``since``, ``until``) scoring ``1 + boost`` times."""
    if span is None or boost == 0:
        return ranked
    since, until = span
    scored = [(i, s * (1 + boost) if since <= times.get(i, -1.0) < until else s) for i, s in ranked]
    return sorted(scored, key=lambda item: (-item[1], item[0]))
