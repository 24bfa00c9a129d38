"""The ranking's tunables: ``RankingOptions``, validated (what each one does: ``_ranking``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, get_args

from strands_semantic_memory.errors import ConfigurationError

Retrieval = Literal["hybrid", "dense", "lexical"]
"""A retrieval mode: ``"hybrid"`` (lexical and dense fused), ``"dense"`` or ``"lexical"``."""
RETRIEVAL_MODES: tuple[Retrieval, ...] = get_args(Retrieval)
Fusion = Literal["weighted", "rrf"]
"""How hybrid retrieval fuses its two rankings: weighted normalized scores, or reciprocal ranks."""
FUSIONS: tuple[Fusion, ...] = get_args(Fusion)
DEFAULT_NEIGHBOUR_WEIGHTS: tuple[tuple[int, float], ...] = (
    (-2, 0.28),
    (-1, 0.4),
    (1, 0.3),
    (2, 0.21),
)
"""``(offset, weight)``: the turn before counts 0.4, the turn after 0.3, the next turn each way 0.7 times the nearer
one (two turns each way: see ``_ranking``)."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class RankingOptions:
    """Tunables of the ranking (defaults chosen by leave-one-conversation-out on two development sets).

    What each one does, and the measurements behind the defaults: ``_ranking``.

    Attributes:
        fusion: ``"weighted"`` (normalized scores, weighted; the default) or ``"rrf"`` (reciprocal ranks).
        dense_weight: Weight of the dense score in weighted fusion (0..1); BM25 gets ``1 - dense_weight``.
        lexical_power: BM25 enters weighted fusion as ``(bm25 / best_bm25) ** lexical_power`` (> 0).
        dense_floor: Count only the similarity above the last dense candidate's (see ``above_floor``).
        rrf_k: The constant of reciprocal-rank fusion: each ranking contributes ``1 / (rrf_k + rank)``.
        neighbour_weights: ``(offset, weight)`` pairs: a message gains ``weight`` times the base score of the message
            ``offset`` positions away. Empty: every message is scored alone.
        neighbour_hits: Messages within this distance of a candidate are ranked too (0: only the candidates).
        context_factor: The neighbourhoods of the ``context_factor * want`` best candidates are fetched (see
            ``context_indices``).
        min_depth: Each index is asked for at least this many candidates (see ``candidate_depth``).
        context_floor: Neighbours lift a message only by the part of their base score above the
            ``context_floor``-th best base score of the query (0: by all of it), so the background relevance that
            a whole thread shares does not add up.
        prefer_later: Near-equal candidates, later first (0..1): a message takes the score of the later messages
            that reach ``1 / (1 + prefer_later)`` of its own and ranks after them (see ``later_first``). 0 (the
            default) ranks by relevance alone: measured, the preference cost more recall than it gained.
    """

    fusion: Fusion = "weighted"
    dense_weight: float = 0.5
    lexical_power: float = 2.0
    dense_floor: bool = True
    rrf_k: int = 10
    neighbour_weights: tuple[tuple[int, float], ...] = field(default=DEFAULT_NEIGHBOUR_WEIGHTS)
    neighbour_hits: int = 1
    context_factor: int = 2
    min_depth: int = 150
    context_floor: int = 50
    prefer_later: float = 0.0

    def __post_init__(self) -> None:
        """Validate every field; the error names the option and the value."""
        if self.fusion not in FUSIONS:
            raise ConfigurationError(f"fusion must be 'weighted' or 'rrf', got {self.fusion!r}")
        if not _is_number(self.dense_weight) or not 0.0 <= self.dense_weight <= 1.0:
            raise ConfigurationError(f"dense_weight must be a number in 0..1, got {self.dense_weight!r}")
        if not _is_number(self.lexical_power) or not 0.0 < self.lexical_power <= 10.0:
            raise ConfigurationError(f"lexical_power must be a number in (0, 10], got {self.lexical_power!r}")
        if not _is_number(self.prefer_later) or not 0.0 <= self.prefer_later <= 1.0:
            raise ConfigurationError(f"prefer_later must be a number in 0..1, got {self.prefer_later!r}")
        if not isinstance(self.dense_floor, bool):
            raise ConfigurationError(f"dense_floor must be True or False, got {self.dense_floor!r}")
        for name in ("rrf_k", "min_depth", "context_factor"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigurationError(f"{name} must be an integer >= 1, got {value!r}")
        try:
            pairs = tuple((offset, weight) for offset, weight in self.neighbour_weights)
        except (TypeError, ValueError):
            pairs = ((0, -1.0),)  # reported below
        for offset, weight in pairs:
            valid_offset = isinstance(offset, int) and not isinstance(offset, bool) and offset != 0
            if not valid_offset or not _is_number(weight) or weight < 0:
                raise ConfigurationError(
                    f"neighbour_weights must be (non-zero offset, weight >= 0) pairs, got {self.neighbour_weights!r}"
                )
        if len({offset for offset, _ in pairs}) != len(pairs):
            raise ConfigurationError(f"neighbour_weights repeats an offset: {self.neighbour_weights!r}")
        object.__setattr__(self, "neighbour_weights", pairs)
        floor = self.context_floor
        if not isinstance(floor, int) or isinstance(floor, bool) or floor < 0:
            raise ConfigurationError(f"context_floor must be an integer >= 0, got {floor!r}")
        hits = self.neighbour_hits
        if not isinstance(hits, int) or isinstance(hits, bool) or hits < 0:
            raise ConfigurationError(f"neighbour_hits must be an integer >= 0, got {hits!r}")

    @property
    def widest(self) -> int:
        """The largest distance of a neighbour whose score counts (0 without neighbour weights)."""
        return max((abs(offset) for offset, _ in self.neighbour_weights), default=0)

    @property
    def reach(self) -> int:
        """How far from a candidate ``context_indices`` looks: ``neighbour_hits`` plus ``widest``."""
        return self.neighbour_hits + self.widest if self.widest else 0
