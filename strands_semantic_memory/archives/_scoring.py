"""The base score of a search candidate, and the index arrays behind it: shared by the archives and the ranking.

An archive that answers a ``ContextRequest`` (``Archive.candidates(..., context=...)``) covers the neighbours of
the candidates of best *base score*: weighted fusion of the cosine similarity (above the dense floor) and the
normalized BM25 score (``fused_scores``, ``strongest``). The in-process archive computes it here, the PostgreSQL
statement the same in SQL (tested against ``strongest``), and ``retrieval._ranking`` ranks with the same
functions, so the three cannot drift apart. The formula and why it is so: ``retrieval._ranking``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.archives._protocol import ContextRequest

__all__ = [
    "FloatArray",
    "IndexArray",
    "above_floor",
    "fused_scores",
    "leading",
    "lookup",
    "lookup_mask",
    "normalized_by_best",
    "sorted_arrays",
    "strongest",
    "unique_ascending",
    "weighted_fusion",
    "within",
]

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.int64]


def normalized_by_best(scores: FloatArray) -> FloatArray:
    """Scores divided by the best one, so the best scores 1 (returned unchanged when no score is positive).

    A higher score never gets a lower share, but two scores may get the same one: division rounds (scores one
    ulp apart, or a subnormal score that becomes 0 next to a best of 2).

    Args:
        scores: Scores (BM25: non-negative).

    Returns:
        The scores, in 0..1 for non-negative input.
    """
    best = float(scores.max()) if len(scores) else 0.0
    return scores / best if best > 0 else scores.copy()


def above_floor(similarity: FloatArray, floor: float) -> FloatArray:
    """How far each cosine similarity rises above ``floor`` (0 at or below it): ``max(similarity - floor, 0)``.

    Args:
        similarity: Cosine similarities.
        floor: The similarity that counts as nothing (the last dense candidate's).

    Returns:
        The excess of each similarity over the floor.
    """
    return np.maximum(similarity - floor, 0.0)


def weighted_fusion(
    dense: FloatArray, lexical_share: FloatArray, dense_weight: float, lexical_power: float = 1.0
) -> FloatArray:
    """Base scores: ``dense_weight * dense + (1 - dense_weight) * lexical_share ** lexical_power``.

    Args:
        dense: Dense score of each message (cosine similarity, or its part above the floor; 0 without a vector).
        lexical_share: BM25 of each message divided by the query's best BM25 (0 without a shared term).
        dense_weight: Weight of the dense score (0..1).
        lexical_power: Exponent of the lexical share.

    Returns:
        The base score of each message, aligned with the inputs.
    """
    return dense_weight * dense + (1.0 - dense_weight) * np.maximum(lexical_share, 0.0) ** lexical_power


def lookup_mask(keys: IndexArray, targets: IndexArray, present: bool = True) -> npt.NDArray[np.bool_]:
    """Which targets are (``present=True``) or are not among ``keys`` (ascending, unique)."""
    if not len(keys):
        return np.full(len(targets), not present)
    position = np.minimum(np.searchsorted(keys, targets), len(keys) - 1)
    found: npt.NDArray[np.bool_] = keys[position] == targets
    return found if present else ~found


def lookup(keys: IndexArray, values: FloatArray, targets: IndexArray) -> FloatArray:
    """``values[keys == target]`` for each target, 0 where a target is not among ``keys`` (ascending, unique)."""
    if not len(keys):
        return np.zeros(len(targets), dtype=np.float64)
    position = np.minimum(np.searchsorted(keys, targets), len(keys) - 1)
    return np.where(keys[position] == targets, values[position], 0.0)


def unique_ascending(values: IndexArray) -> IndexArray:
    """Ascending distinct values (sorting beats ``np.unique``'s hashing at a few hundred values)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def within(indices: Iterable[int], distance: int) -> IndexArray:
    """Every non-negative index at most ``distance`` away from one of ``indices`` (the indices included), ascending."""
    around = indices if isinstance(indices, np.ndarray) else np.fromiter(indices, dtype=np.int64)
    if not len(around):
        return around.astype(np.int64)
    spread = (around[:, None] + np.arange(-distance, distance + 1, dtype=np.int64)).ravel()
    return unique_ascending(spread[spread >= 0])


def fused_scores(
    dense: Mapping[int, float],
    lexical: Mapping[int, float],
    similarity: Mapping[int, float],
    *,
    dense_weight: float,
    lexical_power: float,
    dense_floor: bool,
) -> tuple[IndexArray, FloatArray]:
    """Every index with a known score, ascending, and its base score (weighted fusion, dense floor applied).

    Args:
        dense: Cosine similarity of the dense candidates (their minimum is the floor).
        lexical: Lexical score of the lexical candidates.
        similarity: Cosine similarity of other indices (lexical candidates, neighbours).
        dense_weight: Weight of the dense score (0..1).
        lexical_power: Exponent of the lexical share.
        dense_floor: Whether a similarity counts only above the weakest dense candidate's.

    Returns:
        The indices and their base scores.
    """
    dense_keys, dense_scores = sorted_arrays({**dense, **similarity})
    if dense_floor and len(dense_scores):
        dense_scores = above_floor(dense_scores, min(dense.values(), default=0.0))
    lexical_keys, lexical_scores = sorted_arrays(lexical)
    keys = unique_ascending(np.concatenate([dense_keys, lexical_keys]))
    base = weighted_fusion(
        lookup(dense_keys, dense_scores, keys),
        lookup(lexical_keys, normalized_by_best(lexical_scores), keys),
        dense_weight,
        lexical_power,
    )
    return keys, base


def strongest(
    dense: Mapping[int, float], lexical: Mapping[int, float], similarity: Mapping[int, float], request: ContextRequest
) -> list[int]:
    """The ``request.leading`` candidates (dense or lexical) of best base score, ties by index.

    The formula a ``ContextRequest`` stands for: the candidates whose neighbourhoods ``context_indices`` looks at,
    and those a store answering the request covers (the in-process store calls this; the PostgreSQL statement
    computes the same in SQL, tested against this function). The base score is ``fused_scores``'.
    """
    keys, base = fused_scores(
        dense,
        lexical,
        similarity,
        dense_weight=request.dense_weight,
        lexical_power=request.lexical_power,
        dense_floor=request.dense_floor,
    )
    return [int(i) for i in leading(keys, base, [*dense, *lexical], request.leading)]


def leading(keys: IndexArray, base: FloatArray, found: Iterable[int], count: int) -> IndexArray:
    """The ``count`` indices of ``found`` of best base score (``keys``/``base``), ties by the older index."""
    pool = unique_ascending(np.fromiter(found, dtype=np.int64))
    scores = lookup(keys, base, pool)
    return pool[np.lexsort((pool, -scores))[:count]]


def sorted_arrays(scores: Mapping[int, float]) -> tuple[IndexArray, FloatArray]:
    keys = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
    values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    order = np.argsort(keys)
    return keys[order], values[order]
