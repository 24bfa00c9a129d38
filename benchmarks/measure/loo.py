"""Leave-one-conversation-out: choose ranking constants on some conversations, score them on the one left out.

Constants chosen on every question of a development set and scored on the same questions overstate what a
held-out set will show (the LoCoMo ranking lost four points between the halves). This module measures a set of
candidate configurations the way ``benchmarks.measure.locomo`` does (every turn archived in order through the
public API, ``search(question, top_k=50)``, recall@5/10/25/50 of the evidence turns), then, for each fold:

- the fold's conversations are left out (conversation ``j`` of each dataset is in fold ``j % folds``);
- the candidate with the best *training* objective (mean of R@5/10/25/50 over the other conversations' questions,
  the datasets weighted equally) is chosen;
- the left-out conversations are scored with it.

Pooling the left-out questions of all folds gives an estimate of what the *procedure* (choose on four, apply to a
fifth) reaches on unseen conversations; the per-fold figures give its spread. A candidate chosen in every fold is a
rule the data agrees on; one chosen in some folds only was fitted to those.

Each dataset is embedded once (``strands_semantic_memory.testing.DiskCachedEmbedder``: vectors on disk, keyed by
model and text), each conversation is archived once per archive-shaping option (``chunk_chars``), and a candidate
only re-ranks (``SemanticMemory.configure``). Run it niced: ``nice -n 15 python -m benchmarks.measure.loo --locomo PATH --devset``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from strands.types.content import Message

from benchmarks.data.locomo import Question, load_conversations
from benchmarks.measure.locomo import recall_at
from benchmarks.results import KS
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.testing import DiskCachedEmbedder

logger = logging.getLogger(__name__)

DEFAULT_CACHE = Path("/tmp/ssm-vectors")
"""Where embeddings are cached unless ``--cache`` says otherwise."""


class Corpus(Protocol):
    """A conversation to evaluate: messages in archive order and questions with evidence positions."""

    @property
    def name(self) -> str:
        """A name unique within its dataset."""
        ...

    @property
    def messages(self) -> list[Message]:
        """The messages, archived in this order."""
        ...

    @property
    def questions(self) -> list[Question]:
        """The questions."""
        ...


@dataclass(frozen=True)
class Dataset:
    """A named list of conversations."""

    name: str
    conversations: Sequence[Corpus]


@dataclass(frozen=True)
class Candidate:
    """A configuration to measure: ``SemanticMemory`` options, and optionally BM25's ``k1``/``b``.

    ``bm25`` reaches into the in-process archive's lexical index (a study knob, not a public option).
    """

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    bm25: tuple[float, float] | None = None


REBUILD = ("chunk_chars", "max_chunks_per_message")
"""Options that shape what is embedded: a conversation is archived again for each combination."""

Rows = list[list[float]]
"""One ``[r5, r10, r25, r50]`` per question (fractions)."""
Scores = dict[str, dict[str, dict[str, Rows]]]
"""candidate -> dataset -> conversation -> rows."""
Orders = dict[str, dict[str, dict[str, list[tuple[int, int]]]]]
"""candidate -> dataset -> conversation -> for each knowledge update, the best rank (0-based, -1: not in the 50
hits) of a turn stating the current value and of one stating an older value."""


@dataclass
class Measured:
    """What ``measure`` found: recall rows, and the order of later and earlier statements of changed facts."""

    scores: Scores
    orders: Orders


def _rebuild_key(candidate: Candidate) -> tuple[tuple[str, Any], ...]:
    return tuple((name, candidate.options[name]) for name in REBUILD if name in candidate.options)


def timestamps_of(conversation: Corpus) -> Sequence[float] | None:
    """The conversation's message times when it has them (the second development set does; LoCoMo does not)."""
    times = getattr(conversation, "timestamps", None)
    return list(times) if times is not None else None


def measure(
    datasets: Sequence[Dataset], candidates: Sequence[Candidate], embedder: Any, *, log: bool = True
) -> Measured:
    """Recall rows of every question of every conversation under every candidate, and update orders.

    Args:
        datasets: The development sets.
        candidates: The configurations (names unique).
        embedder: The embedder (a ``DiskCachedEmbedder`` makes sweeps cheap).
        log: Print one line per dataset and rebuild group.

    Returns:
        ``scores[candidate][dataset][conversation]``: one row of recalls per question; ``orders`` likewise, one
        pair per knowledge update of a conversation that records them (``updates``).
    """
    scores: Scores = {c.name: {d.name: {} for d in datasets} for c in candidates}
    orders: Orders = {c.name: {d.name: {} for d in datasets} for c in candidates}
    groups: dict[tuple[tuple[str, Any], ...], list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault(_rebuild_key(candidate), []).append(candidate)
    for dataset in datasets:
        for key, members in groups.items():
            if log:
                print(f"  {dataset.name}: {dict(key) or 'default chunking'}: {len(members)} candidates", flush=True)
            for conversation in dataset.conversations:
                memory = SemanticMemory(embedder=embedder, **dict(key))
                memory.add(conversation.messages, timestamps=timestamps_of(conversation))
                lexical = getattr(memory.archive, "_lexical", None)
                defaults: tuple[float, float] = (lexical.k1, lexical.b) if lexical is not None else (0.0, 0.0)
                for candidate in members:
                    options = {k: v for k, v in candidate.options.items() if k not in REBUILD}
                    memory.configure(**{"retrieval": "hybrid", "ranking": {}, **options})
                    if lexical is not None:  # a study knob: the in-process index's own k1 and b
                        lexical.k1, lexical.b = candidate.bm25 or defaults
                    rows = []
                    found: dict[str, list[int]] = {}
                    for question in conversation.questions:
                        hits = found[question.text] = [h.index for h in memory.search(question.text, top_k=50)]
                        rows.append([recall_at(hits, question.evidence, k) for k in KS])
                    scores[candidate.name][dataset.name][conversation.name] = rows
                    orders[candidate.name][dataset.name][conversation.name] = [
                        (best_rank(found[u.question], u.later), best_rank(found[u.question], u.earlier))
                        for u in getattr(conversation, "updates", [])
                        if u.question in found
                    ]
        flush = getattr(embedder, "flush", None)
        if flush is not None:
            flush()
    return Measured(scores, orders)


def best_rank(hits: Sequence[int], turns: Iterable[int]) -> int:
    """The best (0-based) rank among ``hits`` of any of ``turns``; -1 when none is there."""
    ranks = [hits.index(t) for t in turns if t in hits]
    return min(ranks) if ranks else -1


def update_summary(orders: Mapping[str, Mapping[str, list[tuple[int, int]]]]) -> tuple[int, int, int]:
    """``(updates, both found, later ranked first)`` over one candidate's conversations of every dataset."""
    pairs = [p for by_conversation in orders.values() for ps in by_conversation.values() for p in ps]
    both = [(later, earlier) for later, earlier in pairs if later >= 0 and earlier >= 0]
    return len(pairs), len(both), sum(1 for later, earlier in both if later < earlier)


def fold_of(datasets: Sequence[Dataset], folds: int) -> dict[tuple[str, str], int]:
    """``(dataset, conversation) -> fold``: conversation ``j`` of each dataset is in fold ``j % folds``."""
    return {(d.name, c.name): j % folds for d in datasets for j, c in enumerate(d.conversations)}


def pooled(rows_by_conversation: Mapping[str, Rows], names: Iterable[str]) -> list[float]:
    """Mean recall in percent at each k over the questions of the named conversations."""
    rows = [row for name in names for row in rows_by_conversation.get(name, [])]
    if not rows:
        return [0.0] * len(KS)
    return [float(v) for v in np.mean(np.asarray(rows), axis=0) * 100]


def objective(scores: Mapping[str, Mapping[str, Rows]], keep: Mapping[str, Sequence[str]]) -> float:
    """Mean of R@5/10/25/50 (percent) over the kept conversations' questions, datasets weighted equally."""
    values = [statistics.fmean(pooled(scores[d], names)) for d, names in keep.items() if names]
    return statistics.fmean(values) if values else 0.0


@dataclass(frozen=True)
class Fold:
    """One fold: what was chosen on the training conversations, and how it scored on the left-out ones."""

    number: int
    chosen: str
    training: float
    held_out: dict[str, list[float]]
    reference: dict[str, list[float]]
    close: list[str]


def leave_one_out(
    scores: Scores,
    datasets: Sequence[Dataset],
    *,
    folds: int = 5,
    reference: str = "",
    tolerance: float = 0.1,
    among: Sequence[str] | None = None,
) -> list[Fold]:
    """Choose the best candidate on each fold's training conversations and score it on the fold's own.

    Args:
        scores: What ``measure`` returned.
        datasets: The datasets it measured.
        folds: How many folds (5: one LoCoMo conversation each).
        reference: A candidate to score beside the chosen one (the current default).
        tolerance: Candidates within this many points of the best training objective are listed as ``close``.
        among: The candidates to choose from (default: all of ``scores``).

    Returns:
        One ``Fold`` per fold. Ties on the training objective go to the candidate listed first.
    """
    where = fold_of(datasets, folds)
    result = []
    for number in range(folds):
        train = {d.name: [c.name for c in d.conversations if where[(d.name, c.name)] != number] for d in datasets}
        test = {d.name: [c.name for c in d.conversations if where[(d.name, c.name)] == number] for d in datasets}
        pool = list(among) if among is not None else list(scores)
        ranked = sorted(pool, key=lambda name: -objective(scores[name], train))  # stable: first listed wins ties
        best = objective(scores[ranked[0]], train)
        close = [name for name in ranked if objective(scores[name], train) >= best - tolerance]

        def held(name: str, test: dict[str, list[str]] = test) -> dict[str, list[float]]:
            return {d: pooled(scores[name][d], names) for d, names in test.items() if names}

        result.append(Fold(number, ranked[0], round(best, 2), held(ranked[0]), held(reference or ranked[0]), close))
    return result


def pooled_held_out(
    scores: Scores, datasets: Sequence[Dataset], fold_list: Sequence[Fold], folds: int
) -> dict[str, list[float]]:
    """Every left-out question scored with its own fold's choice, pooled: the procedure's estimate per dataset."""
    where = fold_of(datasets, folds)
    chosen = {f.number: f.chosen for f in fold_list}
    out = {}
    for dataset in datasets:
        rows = [
            row
            for c in dataset.conversations
            for row in scores[chosen[where[(dataset.name, c.name)]]][dataset.name][c.name]
        ]
        out[dataset.name] = [float(v) for v in np.mean(np.asarray(rows), axis=0) * 100] if rows else [0.0] * len(KS)
    return out


def _fmt(values: Sequence[float]) -> str:
    return " | ".join(f"{v:.1f}" for v in values)


def summary_table(scores: Scores, datasets: Sequence[Dataset], names: Sequence[str] | None = None) -> str:
    """Per-candidate recall on each whole dataset and the spread over its conversations (max - min of R@5..50)."""
    lines = []
    for dataset in datasets:
        conversations = [c.name for c in dataset.conversations]
        lines += [
            "",
            f"{dataset.name} ({len(conversations)} conversations, "
            f"{sum(len(c.questions) for c in dataset.conversations)} questions): all questions, and per conversation",
            "",
            "| candidate | R@5 | R@10 | R@25 | R@50 | mean | " + " | ".join(f"{c} mean" for c in conversations) + " |",
            "| --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in conversations) + " |",
        ]
        for name in names or list(scores):
            rows = scores[name][dataset.name]
            whole = pooled(rows, conversations)
            per = [statistics.fmean(pooled(rows, [c])) for c in conversations]
            lines.append(f"| {name} | {_fmt(whole)} | {statistics.fmean(whole):.1f} | {_fmt(per)} |")
    return "\n".join(lines)


def category_table(
    scores: Scores, datasets: Sequence[Dataset], names: Sequence[str], labels: Mapping[str, Mapping[int, str]]
) -> str:
    """R@5 and R@50 of the named candidates by question category, per dataset."""
    lines = []
    for dataset in datasets:
        by_category: dict[int, list[tuple[str, int]]] = {}
        for conversation in dataset.conversations:
            for number, question in enumerate(conversation.questions):
                by_category.setdefault(question.category, []).append((conversation.name, number))
        lines += [
            "",
            f"{dataset.name} by category: R@5 / R@50",
            "",
            "| category | questions | " + " | ".join(names) + " |",
            "| --- | --- | " + " | ".join("---" for _ in names) + " |",
        ]
        for category, members in sorted(by_category.items()):
            cells = []
            for name in names:
                rows = np.asarray([scores[name][dataset.name][c][n] for c, n in members]) * 100
                cells.append(f"{rows[:, 0].mean():.1f} / {rows[:, -1].mean():.1f}")
            label = labels.get(dataset.name, {}).get(category, str(category))
            lines.append(f"| {label} | {len(members)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fold_table(fold_list: Sequence[Fold], datasets: Sequence[Dataset], reference: str) -> str:
    """The per-fold table: chosen candidate, training objective, left-out recall of it and of the reference."""
    lines = []
    for dataset in datasets:
        lines += [
            "",
            f"{dataset.name}, left-out conversations of each fold: the candidate chosen on the other folds, "
            f"and `{reference}`",
            "",
            "| fold | chosen | training mean | R@5 | R@10 | R@25 | R@50 | reference R@5 | R@10 | R@25 | R@50 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for fold in fold_list:
            if dataset.name in fold.held_out:
                lines.append(
                    f"| {fold.number} | {fold.chosen} | {fold.training:.2f} | {_fmt(fold.held_out[dataset.name])} | "
                    f"{_fmt(fold.reference[dataset.name])} |"
                )
        for label, pick in (("chosen", "held_out"), ("reference", "reference")):
            values = np.asarray([getattr(f, pick)[dataset.name] for f in fold_list if dataset.name in f.held_out])
            if len(values):
                spread = values.max(axis=0) - values.min(axis=0)
                lines.append(f"| spread ({label}, max - min) | | | " + _fmt(spread) + " | | | | |")
    return "\n".join(lines)


def load_datasets(locomo: Path | None, devset: bool, devset_seed: int = 0) -> list[Dataset]:
    """The development sets asked for: the LoCoMo file given, and the generated second set."""
    datasets = []
    if locomo is not None:
        datasets.append(Dataset("locomo", load_conversations(locomo)))
    if devset:
        from benchmarks.data.devset import build_devset

        datasets.append(Dataset("devset", build_devset(seed=devset_seed)))
    return datasets


def cached_default_embedder(directory: Path) -> DiskCachedEmbedder:
    """The library's default embedder behind a disk cache."""
    from strands_semantic_memory.embeddings import resolve_embedder

    return DiskCachedEmbedder(resolve_embedder(), directory)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.measure.loo [--locomo PATH] [--devset] [--grid NAME] [--json OUT]``."""
    from .loo_grids import GRIDS, REFERENCE, references

    parser = argparse.ArgumentParser(description="Leave-one-conversation-out choice of ranking constants")
    parser.add_argument("--locomo", type=Path, default=None, help="LoCoMo file (the development half)")
    parser.add_argument("--devset", action="store_true", help="also the generated second development set")
    parser.add_argument("--grid", default="final", choices=sorted(GRIDS), help="which candidates to measure")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="embedding cache folder")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw scores here")
    parser.add_argument("--from-json", type=Path, default=None, help="report scores measured earlier (no search)")
    parser.add_argument("--references", action="store_true", help="also measure the references (not chosen from)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    datasets = load_datasets(args.locomo, args.devset)
    if not datasets:
        parser.error("nothing to measure: give --locomo PATH and/or --devset")
    candidates = GRIDS[args.grid]()
    shown = [*candidates, *(references() if args.references else [])]
    if args.from_json is not None:
        saved = json.loads(args.from_json.read_text(encoding="utf-8"))
        measured = Measured(saved["scores"], saved.get("orders", {}))
        shown = [c for c in shown if c.name in measured.scores]
    else:
        measured = measure(datasets, shown, cached_default_embedder(args.cache))
        if args.json is not None:
            args.json.write_text(json.dumps({"scores": measured.scores, "orders": measured.orders}), encoding="utf-8")
    scores = measured.scores
    choosable = [c.name for c in candidates if c.name in scores]
    reference = next((name for name in ("previous default", REFERENCE) if name in scores), choosable[0])
    fold_list = leave_one_out(scores, datasets, folds=args.folds, reference=reference, among=choosable)
    print(summary_table(scores, datasets, [c.name for c in shown]))
    from benchmarks.data.devset import CATEGORIES as DEVSET_CATEGORIES
    from benchmarks.data.locomo import CATEGORIES as LOCOMO_CATEGORIES

    labels = {"locomo": LOCOMO_CATEGORIES, "devset": DEVSET_CATEGORIES}
    picked = list(
        dict.fromkeys([reference, *(f.chosen for f in fold_list), *(c.name for c in shown[len(candidates) :])])
    )
    print(category_table(scores, datasets, picked, labels))
    print(fold_table(fold_list, datasets, reference))
    estimate = pooled_held_out(scores, datasets, fold_list, args.folds)
    print("\nLeft-out questions pooled (each scored with its fold's choice):")
    for name, values in estimate.items():
        print(f"- {name}: {_fmt(values)}")
    chosen = [f.chosen for f in fold_list]
    print(
        f"\nChosen per fold: {chosen}; within 0.1 of the best in every fold: "
        f"{sorted(set.intersection(*(set(f.close) for f in fold_list)))}"
    )
    if measured.orders:
        print("\nKnowledge updates (devset): the later statement ranked above the earlier one, when both are hits")
        for candidate in shown:
            total, both, first = update_summary(measured.orders.get(candidate.name, {}))
            if total:
                print(f"- {candidate.name}: {first} of {both} (of {total} updates)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
