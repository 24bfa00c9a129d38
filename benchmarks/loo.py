"""Leave one conversation out: choose among candidate settings on the other conversations, score on the one left out.

Constants chosen on every question of a development set and scored on the same questions overstate what held-out
conversations will show. Here each conversation is a fold: a candidate's figure is computed per question, the
candidate with the best mean over the *other* conversations' questions is chosen for the fold, and the fold's own
questions are scored with it. The held-out figures of the folds, their spread (max - min) and the left-out questions
pooled (each scored with its own fold's choice) say what choosing this way reaches on conversations it has not
seen; a candidate chosen in every fold is one the data agrees on.

A candidate is any :data:`Scorer`: a callable giving one figure per question of a conversation. Two are built here:
:func:`recall_scorer` (the retrieval metric of ``benchmarks.recall`` on a memory a callable builds) and
:func:`delivery_scorer` (delivery across sessions through an agent a ``delivery.Builder`` builds, e.g.
``delivery.manager_and_hook(hook=..., options=...)``). No section runs this by default::

    from benchmarks import loo
    from benchmarks.data import devset, locomo
    conversations = locomo.load(path) + devset.build(0)
    candidates = {"default": loo.recall_scorer(SemanticMemory),
                  "no context": loo.recall_scorer(lambda: SemanticMemory(ranking={"neighbour_weights": ()}))}
    print(loo.report(loo.leave_one_out(conversations, candidates, reference="default")))
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks import delivery
from benchmarks.common import table
from benchmarks.data.locomo import Conversation
from strands_semantic_memory import SemanticMemory

Scorer = Callable[[Conversation], list[float]]
"""One figure per question of a conversation, in its order (higher is better; shares in 0..1)."""


def recall_scorer(
    build: Callable[[], SemanticMemory] = SemanticMemory, k: int | Sequence[int] = (5, 10, 25, 50)
) -> Scorer:
    """Recall of the evidence turns among the first ``k`` hits (several k: their mean), on memories from ``build``."""
    from benchmarks.recall import KS, recall_rows

    wanted = [k] if isinstance(k, int) else list(k)
    columns = [KS.index(n) for n in wanted]

    def scorer(conversation: Conversation) -> list[float]:
        return [statistics.fmean(row[c] for c in columns) for row in recall_rows(conversation, build)]

    return scorer


def delivery_scorer(build: delivery.Builder, window: int = 200_000, keep: bool = False) -> Scorer:
    """The delivered share of each question across sessions (``across_sessions.play``; ``keep``: pile-up)."""
    from benchmarks.across_sessions import play

    mode = "pile-up" if keep else "clean"

    def scorer(conversation: Conversation) -> list[float]:
        with tempfile.TemporaryDirectory(prefix="ssm-loo-") as folder:
            where = delivery.Where("loo", path=Path(folder) / "user.sqlite3")
            played = play(build, [conversation], window, lambda c: where, modes=(mode,))
        return [s.delivered for s in played.scored[mode]]

    return scorer


@dataclass(frozen=True)
class Fold:
    """One fold: the conversation left out, the candidate chosen on the others, and the figures."""

    left_out: str
    chosen: str
    training: float
    held_out: float
    reference: float | None


@dataclass(frozen=True)
class Result:
    """What :func:`leave_one_out` found: every figure, the folds, the pooled held-out figure and the spread."""

    scores: dict[str, dict[str, list[float]]]
    folds: list[Fold]
    pooled: float
    spread: float


def _mean(scores: Mapping[str, list[float]], names: Sequence[str]) -> float:
    values = [v for name in names for v in scores[name]]
    return 100 * statistics.fmean(values) if values else 0.0


def leave_one_out(
    conversations: Sequence[Conversation], candidates: Mapping[str, Scorer], reference: str | None = None
) -> Result:
    """Score every candidate on every conversation, then choose per fold (ties: the candidate listed first).

    Args:
        conversations: The folds (names unique), from one data set or several.
        candidates: The settings to choose among, by name.
        reference: A candidate scored beside the chosen one in every fold (the current default).
    """
    names = [c.name for c in conversations]
    if len(set(names)) != len(names) or len(names) < 2:
        raise ValueError("leave-one-out needs at least two conversations with distinct names")
    scores = {name: {c.name: scorer(c) for c in conversations} for name, scorer in candidates.items()}
    folds = []
    pooled: list[float] = []
    for left in names:
        training = [n for n in names if n != left]
        chosen = max(scores, key=lambda name: (_mean(scores[name], training), -list(scores).index(name)))
        held = _mean(scores[chosen], [left])
        pooled += scores[chosen][left]
        base = _mean(scores[reference], [left]) if reference is not None else None
        folds.append(Fold(left, chosen, round(_mean(scores[chosen], training), 2), round(held, 2), base))
    held_out = [f.held_out for f in folds]
    return Result(
        scores,
        folds,
        round(100 * statistics.fmean(pooled), 2) if pooled else 0.0,
        round(max(held_out) - min(held_out), 2),
    )


def report(result: Result) -> str:
    """The folds as a markdown table, with the pooled figure and the spread."""
    rows = [
        [
            f.left_out,
            f.chosen,
            f"{f.training:.2f}",
            f"{f.held_out:.2f}",
            "" if f.reference is None else f"{f.reference:.2f}",
        ]
        for f in result.folds
    ]
    chosen = {f.chosen for f in result.folds}
    return "\n".join(
        [
            table(["left out", "chosen on the others", "training mean", "held-out", "reference held-out"], rows),
            "",
            f"Left-out questions pooled: {result.pooled:.2f}; spread of the held-out figures: {result.spread:.2f} points; "
            + (
                f"the same candidate in every fold ({next(iter(chosen))})."
                if len(chosen) == 1
                else f"{len(chosen)} different candidates chosen: the choice depends on the fold."
            ),
        ]
    )
