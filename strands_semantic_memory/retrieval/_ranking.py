"""Ranking and fusion: pure functions from a store's candidates to one ranked list.

No I/O and no store: given the dense and lexical candidates of a query (see
``Candidates``) and the similarity of their neighbours, decide
the order. Tested without a store (``tests/test_ranking.py``).

The defaults were chosen by leave-one-conversation-out on two development sets: the development half of LoCoMo
(short social chat) and a generated set of long assistant-heavy task conversations with facts that change
(``benchmarks/loo.py``, ``benchmarks/devset.py``; method, tables and ablation in ``docs/retrieval-study.md``).
Four steps:

1. **Weighted fusion of normalized scores** (``weighted_fusion``): a message's base score is
   ``0.5 * dense + 0.5 * (bm25 / best_bm25) ** 2``. BM25 is divided by the query's best BM25, so the best lexical
   match scores 1, and squared, so a partial match (one common word of the question) counts little next to the
   best ones. Fusing scores keeps how *much* better one candidate is than the next, which reciprocal ranks throw
   away (+5 points of recall@5 over reciprocal-rank fusion on the development half).
2. **Dense floor** (``above_floor``): the dense part is the cosine similarity *above* that of the last dense
   candidate (the ``candidate_depth``-th nearest message), i.e. what sets the message apart from the rest of the
   archive. Small sentence models give unrelated text a similarity of 0.1 to 0.3; counted raw, that background
   adds up over the neighbours of step 3, favouring messages in the middle of long runs over one at the edge of
   the archive or next to messages without vectors. Neutral for hybrid on LoCoMo; in dense mode it lifts
   recall@5 from 40.8 to 43.7 there, and keeps exact-code questions of the synthetic benchmark at their previous
   recall (without it, dense recall@5 on them fell from 0.80 to 0.36).
3. **Conversation context** (``spread_to_neighbours``): a message gains a share of its neighbours' base
   scores, by position in the archive: ``score(i) = base(i) + sum(w_d * lift(i + d))``. Evidence in a conversation
   spreads over adjacent turns, and a reply answers the turn before it, so earlier turns weigh more: 0.4 for the
   turn before, 0.3 for the turn after, the next turn each way 0.7 times the nearer one. A
   neighbour lifts by the part of its base score above the 50th best base score of the query (``context_floor``):
   in a long thread on one subject every turn is somewhat relevant, and counted whole that shared background
   outweighed the one turn that answers (on the task conversations +1.7 points of recall@5, LoCoMo's unchanged).
   Leave-one-out chose two turns each way, the floor and BM25 ``b = 0.75`` in every fold (a third turn each way,
   as LoCoMo alone was tuned, gained 0.3 points of mean recall there and lost 0.5 on the task conversations).
4. **Neighbours become candidates** (``context_indices``): a message next to a candidate is ranked too, even
   when neither index found it on its own (the answer to a question that matched, for instance).

Steps 3 and 4 add 11 points of recall@5 and 7 of recall@50 on the development half. Indexing each message together
with the turn it answers ("round-level keys", for BM25 and for the vector) was measured as well: on its own it
reaches most of that gain, but it adds nothing on top of steps 3 and 4, so messages stay indexed alone (no
re-embedding when a neighbour is forgotten). Reciprocal-rank fusion (the previous default) stays available as
``fusion="rrf"``.

**Later first** (``later_first``, ``prefer_later``; off by default): among the leading candidates, a message ranks
below the later messages that score nearly as well, so the later statement of a changed fact (a new deadline, a new
owner) comes first. The two statements of a change rarely match a question about equally, so a small tolerance
changes little and a large one lets runs of near-equal messages sink good matches: at ``prefer_later=0.1`` the
later statement led in 41 of 81 changed facts of the task conversations (29 of 83 without), for 0.2 points of
recall@5 on LoCoMo and 1.1 on the task conversations; at 0.25 in 58 of 76, for 2.5 and 7.7 points. Leave-one-out
did not choose it.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping

import numpy as np

from strands_semantic_memory.archives._protocol import Candidates, ContextRequest
from strands_semantic_memory.archives._scoring import (
    FloatArray,
    IndexArray,
    fused_scores,
    leading,
    lookup,
    lookup_mask,
    unique_ascending,
    within,
)
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.retrieval._ranking_options import (
    DEFAULT_NEIGHBOUR_WEIGHTS as DEFAULT_NEIGHBOUR_WEIGHTS,  # re-exported
)
from strands_semantic_memory.retrieval._ranking_options import RETRIEVAL_MODES, Retrieval
from strands_semantic_memory.retrieval._ranking_options import RankingOptions as RankingOptions  # re-exported

Ranked = list[tuple[int, float, "float | None"]]
"""``(archive index, score, cosine similarity or None)``, best first."""


def candidate_depth(want: int, options: RankingOptions) -> int:
    """How many candidates to ask each index for, when ``want`` hits are wanted: ``max(3 * want, min_depth)``.

    Deep enough that the dense floor (the last dense candidate's similarity) does not depend on ``want``, so a
    search for 5 hits returns the first 5 of a search for 50 whenever ``3 * 50 <= min_depth`` holds.
    """
    return max(3 * want, options.min_depth)


def _ordered(scores: Mapping[int, float]) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def reciprocal_rank_fusion(rankings: list[dict[int, float]], k: int) -> dict[int, float]:
    """Fuse rankings by reciprocal rank: ``sum(1 / (k + rank))`` over the rankings an item appears in.

    Args:
        rankings: Each maps item -> score (higher is better).
        k: The fusion constant (>= 1).

    Returns:
        Item -> fused score.
    """
    fused: dict[int, float] = {}
    for ranking in rankings:
        for position, (index, _) in enumerate(_ordered(ranking)):
            fused[index] = fused.get(index, 0.0) + 1.0 / (k + position + 1)
    return fused


def spread_to_neighbours(
    keys: IndexArray,
    base: FloatArray,
    weights: Iterable[tuple[int, float]],
    targets: IndexArray,
    floor: float = 0.0,
) -> FloatArray:
    """Each target's base score plus a share of its neighbours': ``base(i) + sum(weight * lift(i + offset))``.

    Args:
        keys: Archive indices that have a base score, ascending and unique; any other index counts as 0.
        base: Their base scores.
        weights: ``(offset, weight)`` pairs (offset -1 is the message just before).
        targets: The indices to score.
        floor: A neighbour lifts a target by the part of its base score above this: ``max(base - floor, 0)``.

    Returns:
        The score of each target, aligned with ``targets``.
    """
    pairs = list(weights)
    offsets = np.array([0, *(offset for offset, _ in pairs)], dtype=np.int64)
    # One lookup for every (target, offset), summed in the order of ``weights`` (as one lookup per offset would).
    found = lookup(keys, base, (targets[:, None] + offsets).ravel()).reshape(len(targets), len(offsets))
    scores = found[:, 0]
    lift = np.maximum(found - floor, 0.0) if floor > 0 else found
    for column, (_, weight) in enumerate(pairs, start=1):
        scores = scores + weight * lift[:, column]
    return scores


def nth_best(scores: FloatArray, n: int) -> float:
    """The ``n``-th highest of ``scores`` (0 when ``n`` is 0 or there are fewer than ``n``)."""
    if n <= 0 or len(scores) < n:
        return 0.0
    return float(np.partition(scores, len(scores) - n)[len(scores) - n])


def later_first(indices: IndexArray, scores: FloatArray, tolerance: float) -> FloatArray:
    """Scores lowered so that a message ranks below every later message that scores nearly as well as it does.

    Message ``b`` *follows* message ``a`` when it comes later in the archive and ``s_a / (1 + tolerance) <= s_b <
    s_a`` (``s_a`` positive). Each message takes the lowest score among the messages that follow it, directly or
    through others; sorted by that score, ties going to the later message, every message ranks below each later
    one that follows it. Of two statements that match a query about equally, the later one (the value as it
    stands now) comes first; a clearly better match keeps its place unless a run of near-equal later messages
    links it to a weaker one.

    Args:
        indices: Archive indices of the candidates (distinct).
        scores: Their scores, aligned.
        tolerance: How near counts as nearly as well (0 leaves the scores as they are).

    Returns:
        The new scores, aligned with ``indices``; sort them with ties going to the later message.
    """
    if tolerance == 0 or len(indices) < 2:
        return scores
    own, other = scores[:, None], scores[None, :]
    follows = (indices[None, :] > indices[:, None]) & (other < own) & (other * (1.0 + tolerance) >= own) & (own > 0)
    lowered: FloatArray = scores.copy()
    for a in np.argsort(scores, kind="stable"):  # a message's followers score lower: they are settled before it
        row = follows[a]
        if row.any():
            lowered[a] = min(lowered[a], lowered[row].min())
    return lowered


def _dense_weight(mode: Retrieval, options: RankingOptions) -> float:
    """The dense score's weight in ``mode``'s base score: 1 in dense mode, 0 in lexical mode."""
    return 1.0 if mode == "dense" else 0.0 if mode == "lexical" else options.dense_weight


def _scores_context(mode: Retrieval, want: int, options: RankingOptions) -> bool:
    """Whether the ranking scores the strongest candidates' neighbours (not with reciprocal-rank fusion)."""
    return options.reach > 0 and want > 0 and not (options.fusion == "rrf" and mode == "hybrid")


def context_request(mode: Retrieval, want: int, options: RankingOptions) -> ContextRequest | None:
    """What ``context_indices`` will ask for, for a store that answers it with the candidates (None: nothing).

    The neighbours within ``options.reach`` of the ``context_factor * want`` strongest candidates by base score,
    with the same weights, so a store that follows the request covers exactly those.
    """
    if not _scores_context(mode, want, options):
        return None
    return ContextRequest(
        radius=options.reach,
        leading=options.context_factor * want,
        dense_weight=_dense_weight(mode, options),
        lexical_power=options.lexical_power,
        dense_floor=options.dense_floor,
    )


BaseScores = tuple[IndexArray, FloatArray]
"""Every index with a known score, ascending, and its base score (see ``base_scores``)."""


def base_scores(candidates: Candidates, mode: Retrieval, options: RankingOptions) -> BaseScores:
    """Every index with a known score, ascending, and its base score in ``mode`` (see ``fused_scores``).

    In lexical mode similarities do not count, so adding neighbours' similarities to ``candidates`` leaves these
    unchanged; in the other modes they add the neighbours' scores.
    """
    lexical_only = mode == "lexical"
    return fused_scores(
        {} if lexical_only else candidates.dense,
        {} if mode == "dense" else candidates.lexical,
        {} if lexical_only else candidates.similarity,
        dense_weight=_dense_weight(mode, options),
        lexical_power=options.lexical_power,
        dense_floor=options.dense_floor,
    )


def context_indices(
    candidates: Candidates, *, mode: Retrieval, want: int, options: RankingOptions, base: BaseScores | None = None
) -> list[int]:
    """Indices whose cosine similarity ``rank`` also needs: the neighbours of the strongest candidates.

    The engine asks the store for these (``similarities(vector, indices)``; indices that hold no message, or a
    message without a vector, are simply absent from the answer) and adds them to ``candidates.similarity``.
    Only the neighbourhoods of the ``context_factor * want`` best candidates (by base score) are looked at: the
    neighbours of weak candidates hardly change the first ``want`` places, and each costs a vector fetch.

    Args:
        candidates: What the store found.
        mode: The retrieval mode.
        want: How many hits the search wants.
        options: Ranking tunables (``neighbour_hits``, ``neighbour_weights`` and ``context_factor``).
        base: ``base_scores`` of ``candidates`` when already computed.

    Returns:
        Ascending indices within ``options.reach`` of a strong candidate whose similarity is not known yet.
    """
    if not _scores_context(mode, want, options):
        return []
    keys, scored = base if base is not None else base_scores(candidates, mode, options)
    found = (
        [*candidates.dense, *candidates.lexical]
        if mode == "hybrid"
        else (candidates.dense if mode == "dense" else candidates.lexical)
    )
    strong = leading(keys, scored, found, options.context_factor * want)
    pool = within(strong, options.reach)
    known = unique_ascending(np.fromiter(candidates.similarity, dtype=np.int64, count=len(candidates.similarity)))
    return [int(i) for i in pool[lookup_mask(known, pool, present=False)]]


def rank(
    candidates: Candidates,
    *,
    mode: Retrieval,
    want: int,
    options: RankingOptions,
    eligible: Container[int] | None = None,
    base: BaseScores | None = None,
) -> Ranked:
    """Order a query's candidates (see the module docstring).

    Args:
        candidates: What the store found, with the similarity of the candidates' neighbours added (see
            ``context_indices``); neighbours whose similarity is missing count as 0.
        mode: ``"hybrid"`` (fused), ``"dense"`` (dense score only) or ``"lexical"`` (BM25 only).
        want: How many to return at most.
        options: Ranking tunables. With ``fusion="rrf"``, hybrid mode fuses reciprocal ranks of the candidates
            and ignores the other tunables (the previous behaviour).
        eligible: Which neighbours (indices outside ``candidates.dense`` and ``candidates.lexical``) may be
            returned, e.g. the live ones a search filter accepts. None: those with a known similarity.
        base: ``base_scores`` of ``candidates`` when already computed.

    Returns:
        ``(index, score, similarity)`` best first, ties broken by the older message (by the later one when
        ``options.prefer_later`` is set).

    Raises:
        ConfigurationError: If ``mode`` is unknown.
    """
    if mode not in RETRIEVAL_MODES:
        raise ConfigurationError(f"mode must be 'hybrid', 'dense' or 'lexical', got {mode!r}")
    similarity = candidates.similarity
    found = dict(candidates.dense if mode == "dense" else candidates.lexical)
    if mode == "hybrid":
        found.update(candidates.dense)
    if not found or want <= 0:
        return []
    if options.fusion == "rrf" and mode == "hybrid":
        fused = reciprocal_rank_fusion([dict(candidates.dense), dict(candidates.lexical)], options.rrf_k)
        return [(index, score, similarity.get(index)) for index, score in _ordered(fused)[:want]]
    pool = unique_ascending(np.fromiter(found, dtype=np.int64, count=len(found)))
    if options.widest and options.neighbour_hits:
        around = within(pool, options.neighbour_hits)
        around = around[lookup_mask(pool, around, present=False)]
        if eligible is None:
            known = unique_ascending(np.fromiter(similarity, dtype=np.int64, count=len(similarity)))
            extra = around[lookup_mask(known, around)]
        else:
            extra = np.asarray([i for i in around.tolist() if i in eligible], dtype=np.int64)
        pool = np.concatenate([pool, extra])
    keys, scored = base if base is not None else base_scores(candidates, mode, options)
    floor = nth_best(scored, options.context_floor)
    scores = spread_to_neighbours(keys, scored, options.neighbour_weights, pool, floor)
    if options.prefer_later:
        # Among the leading candidates (comparing every pair of a pool of hundreds would cost more than the
        # ranking itself); ties go to the later message.
        leading = np.lexsort((pool, -scores))[: 2 * want]
        scores = scores.copy()
        scores[leading] = later_first(pool[leading], scores[leading], options.prefer_later)
        best = np.lexsort((-pool, -scores))[:want]
    else:
        best = np.lexsort((pool, -scores))[:want]
    return [(int(pool[i]), float(scores[i]), similarity.get(int(pool[i]))) for i in best]
