"""Candidate configurations for ``benchmarks.loo``: small named families, a few dozen candidates at most."""

from __future__ import annotations

from collections.abc import Callable

from .loo import Candidate

REFERENCE = "default"
"""The candidate every fold is compared with: the library's default configuration."""


def components() -> list[Candidate]:
    """The retrieval modes and the ranking's parts switched off one at a time."""
    return [
        Candidate("default"),
        Candidate("lexical", {"retrieval": "lexical", "ranking": {"neighbour_weights": (), "neighbour_hits": 0}}),
        Candidate("dense", {"retrieval": "dense", "ranking": {"neighbour_weights": (), "neighbour_hits": 0}}),
        Candidate("fusion", {"ranking": {"neighbour_weights": (), "neighbour_hits": 0}}),
        Candidate("lexical+context", {"retrieval": "lexical"}),
        Candidate("dense+context", {"retrieval": "dense"}),
        Candidate("bm25 1.2/0.75", bm25=(1.2, 0.75)),
        Candidate(
            "lexical 1.2/0.75",
            {"retrieval": "lexical", "ranking": {"neighbour_weights": (), "neighbour_hits": 0}},
            bm25=(1.2, 0.75),
        ),
    ]


GRIDS: dict[str, Callable[[], list[Candidate]]] = {"default": components, "components": components}


def chunking() -> list[Candidate]:
    """Chunk sizes (characters), each with the default ranking, no neighbour context, and dense alone."""
    alone = {"neighbour_weights": (), "neighbour_hits": 0}
    out = []
    for size in (1000, 600, 400, 250):
        out += [
            Candidate(f"default c{size}", {"chunk_chars": size}),
            Candidate(f"fusion c{size}", {"chunk_chars": size, "ranking": alone}),
            Candidate(f"dense c{size}", {"chunk_chars": size, "retrieval": "dense", "ranking": alone}),
            Candidate(f"bm25 1.2/0.75 c{size}", {"chunk_chars": size}, bm25=(1.2, 0.75)),
        ]
    return out


GRIDS["chunking"] = chunking


def _weights(scale: float, reach: int) -> tuple[tuple[int, float], ...]:
    """The default neighbour weights up to ``reach`` turns each way, times ``scale``."""
    from strands_semantic_memory.retrieval import RankingOptions

    return tuple((o, round(w * scale, 4)) for o, w in RankingOptions().neighbour_weights if abs(o) <= reach)


def context() -> list[Candidate]:
    """Neighbour context: its strength and reach, with BM25's ``k1``/``b`` at the default and at 1.2/0.75."""
    out = [Candidate("default")]
    for bm25 in ((0.9, 0.4), (1.2, 0.75)):
        tag = "" if bm25 == (0.9, 0.4) else " bm25 1.2/0.75"
        for scale in (0.0, 0.25, 0.5, 1.0):
            for reach in (1, 3) if scale else (0,):
                if (scale, reach, bm25) == (1.0, 3, (0.9, 0.4)):
                    continue  # the default
                ranking = {"neighbour_weights": _weights(scale, reach), "neighbour_hits": 1 if scale else 0}
                out.append(Candidate(f"context x{scale} r{reach}{tag}", {"ranking": ranking}, bm25=bm25))
    return out


GRIDS["context"] = context


def floor() -> list[Candidate]:
    """The context floor (neighbours lift by their score above the n-th best), with both BM25 settings."""
    out = [Candidate("default")]
    for bm25 in ((0.9, 0.4), (1.2, 0.75)):
        tag = "" if bm25 == (0.9, 0.4) else " bm25 1.2/0.75"
        for n in (0, 5, 10, 25, 50):
            if (n, bm25) == (0, (0.9, 0.4)):
                continue
            out.append(Candidate(f"floor {n}{tag}", {"ranking": {"context_floor": n}}, bm25=bm25))
    return out


def recency() -> list[Candidate]:
    """A recency prior, and near-equal candidates later first, on the default ranking."""
    out = [Candidate("default")]
    out += [Candidate(f"recency {r}", {"ranking": {"recency": r}}) for r in (0.05, 0.1, 0.2)]
    out += [Candidate(f"later within {t}", {"ranking": {"prefer_later": t}}) for t in (0.1, 0.25, 0.5)]
    return out


GRIDS["floor"] = floor
GRIDS["recency"] = recency
