"""Candidate configurations for ``benchmarks.measure.loo``: small named families, a few dozen candidates at most."""

from __future__ import annotations

from collections.abc import Callable

from .loo import Candidate

REFERENCE = "default"
"""The candidate every fold is compared with: the library's default configuration."""


ALONE = {"neighbour_weights": (), "neighbour_hits": 0}
"""Each message scored on its own (no conversation context)."""
WEIGHTS = ((-3, 0.2), (-2, 0.28), (-1, 0.4), (1, 0.3), (2, 0.21), (3, 0.15))
"""Neighbour weights three turns each way (the previous default): the turn before 0.4, the turn after 0.3, each
further turn 0.7 times the nearer one."""
PREVIOUS = {"context_floor": 0, "prefer_later": 0.0, "neighbour_weights": WEIGHTS}
"""The ranking before this study."""


def _weights(scale: float, reach: int) -> tuple[tuple[int, float], ...]:
    """The neighbour weights up to ``reach`` turns each way, times ``scale``."""
    return tuple((o, round(w * scale, 4)) for o, w in WEIGHTS if abs(o) <= reach)


def chunking() -> list[Candidate]:
    """Chunk sizes (characters), with the default ranking and with dense search alone."""
    out = []
    for size in (1000, 800, 600, 400, 250):
        out += [
            Candidate(f"chunks {size}", {"chunk_chars": size}),
            Candidate(f"dense only, chunks {size}", {"chunk_chars": size, "retrieval": "dense", "ranking": ALONE}),
        ]
    return out


def context() -> list[Candidate]:
    """Conversation context around the default: its strength (a factor on the weights) and reach (turns each way)."""
    out = [Candidate("default")]
    for scale in (0.0, 0.5, 1.0):
        for reach in (1, 2, 3) if scale else (0,):
            if (scale, reach) != (1.0, 3):
                ranking = {"neighbour_weights": _weights(scale, reach), "neighbour_hits": 1 if scale else 0}
                out.append(Candidate(f"context x{scale} reach {reach}", {"ranking": ranking}))
    return out


def references() -> list[Candidate]:
    """What the choice is compared with: the default, the previous default, plain BM25 (no context, no vectors)."""
    return [
        Candidate("default"),
        Candidate("previous default", {"chunk_chars": 1000, "ranking": PREVIOUS}, bm25=(0.9, 0.4)),
        Candidate("plain BM25 (k1 0.9, b 0.4)", {"retrieval": "lexical", "ranking": ALONE}, bm25=(0.9, 0.4)),
        Candidate("plain BM25 (k1 0.9, b 0.75)", {"retrieval": "lexical", "ranking": ALONE}, bm25=(0.9, 0.75)),
        Candidate("plain BM25 (k1 1.2, b 0.75)", {"retrieval": "lexical", "ranking": ALONE}, bm25=(1.2, 0.75)),
    ]


def final() -> list[Candidate]:
    """The grid the defaults are chosen from: BM25 ``b`` x context floor x context reach, and later-first and the
    fusion weights around the middle of it (the references are measured beside it, not chosen from)."""
    out = []
    for b in (0.4, 0.75):
        for n in (0, 50):
            for reach in (3, 2):
                ranking = {**PREVIOUS, "context_floor": n, "neighbour_weights": _weights(1.0, reach)}
                out.append(Candidate(f"b {b}, floor {n}, reach {reach}", {"ranking": ranking}, bm25=(0.9, b)))
    base = {**PREVIOUS, "context_floor": 50, "neighbour_weights": _weights(1.0, 2)}
    for label, change in (
        ("later 0.05", {"prefer_later": 0.05}),
        ("later 0.1", {"prefer_later": 0.1}),
        ("later 0.25", {"prefer_later": 0.25}),
        ("dense 0.6", {"dense_weight": 0.6}),
        ("power 1.5", {"lexical_power": 1.5}),
    ):
        out.append(Candidate(f"b 0.75, floor 50, reach 2, {label}", {"ranking": {**base, **change}}, bm25=(0.9, 0.75)))
    return out


def ablation() -> list[Candidate]:
    """What each part of the default adds: one part removed (or the ranking built up) at a time."""
    return [
        Candidate("default"),
        Candidate("BM25 only", {"retrieval": "lexical", "ranking": ALONE}),
        Candidate("dense only", {"retrieval": "dense", "ranking": ALONE}),
        Candidate("fusion, no context", {"ranking": ALONE}),
        Candidate("fusion + context, no floor", {"ranking": {"context_floor": 0}}),
        Candidate("context three turns each way (was)", {"ranking": {"neighbour_weights": WEIGHTS}}),
        Candidate("BM25 + context", {"retrieval": "lexical"}),
        Candidate("dense + context", {"retrieval": "dense"}),
        Candidate("BM25 b 0.4 (was)", bm25=(0.9, 0.4)),
        Candidate("1000-character chunks (was)", {"chunk_chars": 1000}),
        Candidate("+ later first 0.1", {"ranking": {"prefer_later": 0.1}}),
    ]


def probes() -> list[Candidate]:
    """Single changes to the default, each measured against it fold by fold (none won on every fold of both sets):
    candidate depth, the context floor, the fusion weights, BM25's ``k1``/``b``, neighbours as candidates, and a
    slight preference for later statements."""
    out = [Candidate("default")]
    for depth in (300, 600):
        out.append(Candidate(f"min_depth {depth}", {"ranking": {"min_depth": depth}}))
    out.append(Candidate("context_factor 4", {"ranking": {"context_factor": 4}}))
    for label, ranking in (
        ("floor 100", {"context_floor": 100}),
        ("dense 0.6", {"dense_weight": 0.6}),
        ("power 1.5", {"lexical_power": 1.5}),
        ("no neighbour candidates", {"neighbour_hits": 0}),
        ("later 0.02", {"prefer_later": 0.02}),
    ):
        out.append(Candidate(label, {"ranking": ranking}))
    for k1, b in ((0.9, 0.6), (1.2, 0.75), (0.9, 0.9)):
        out.append(Candidate(f"BM25 k1 {k1} b {b}", bm25=(k1, b)))
    return out


GRIDS: dict[str, Callable[[], list[Candidate]]] = {
    "final": final,
    "references": references,
    "ablation": ablation,
    "chunking": chunking,
    "context": context,
    "probes": probes,
}
