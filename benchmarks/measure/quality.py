"""Retrieval quality on the synthetic set: recall of evidence turns by mode and question kind, and at turn budgets.

The set (``benchmarks.data.synthetic``) is one long conversation with planted facts of four kinds among look-alike
distractors; each question's evidence turns are known by construction. It is saturated and synthetic: LoCoMo
(``benchmarks.measure.locomo``) is the yardstick.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from benchmarks.data.synthetic import Dataset, build_dataset
from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.tools import PrecomputedEmbedder, build_memory
from benchmarks.results import QualityResult
from strands_semantic_memory.messages import render_message
from strands_semantic_memory.retrieval import Retrieval

SEED = 13
"""Seed of the synthetic set (the report names it)."""
MODES: tuple[Retrieval, ...] = ("dense", "lexical", "hybrid")


def retrieval_quality(dataset: Dataset, embedder: Any) -> QualityResult:
    """Recall@5/@10 of evidence turns per mode and question kind; window recall at equal turn budgets."""
    kinds = sorted({q.kind for q in dataset.questions})
    results: QualityResult = {
        "modes": {},
        "windows": {},
        "questions": len(dataset.questions),
        "messages": len(dataset.messages),
        "kinds": kinds,
    }
    texts = [render_message(m) for m in dataset.messages]
    shared = PrecomputedEmbedder(embedder, texts, embedder.embed_documents(texts))  # embed once, for all modes
    for mode in MODES:
        memory = build_memory(shared, dataset.messages, retrieval=mode)
        per_kind: dict[str, dict[str, list[float]]] = {k: {"r5": [], "r10": []} for k in ["all", *kinds]}
        for question in dataset.questions:
            hits = [h.index for h in memory.search(question.text, top_k=10)]
            evidence = set(question.evidence)
            r5 = len(evidence & set(hits[:5])) / len(evidence)
            r10 = len(evidence & set(hits[:10])) / len(evidence)
            for key in ("all", question.kind):
                per_kind[key]["r5"].append(r5)
                per_kind[key]["r10"].append(r10)
        results["modes"][mode] = {k: {m: float(np.mean(v)) for m, v in d.items()} for k, d in per_kind.items()}
        windows: dict[str, float] = {}
        for budget in (10, 20):
            for radius in (0, 1, 2):
                top_k = max(1, budget // (2 * radius + 1))
                scores = []
                for question in dataset.questions:
                    covered: set[int] = set()
                    for window in memory.retrieve(question.text, top_k=top_k, context_radius=radius):
                        covered.update(window.indices)
                    assert len(covered) <= budget
                    evidence = set(question.evidence)
                    scores.append(len(evidence & covered) / len(evidence))
                windows[f"budget {budget}, radius {radius} (top_k {top_k})"] = float(np.mean(scores))
        results["windows"][mode] = windows
    return results


class RetrievalQuality(Measurement):
    """Recall@5/@10 on the synthetic set per mode and question kind; window recall at equal turn budgets."""

    name: ClassVar[str] = "quality"
    label: ClassVar[str] = "retrieval quality"

    def measure(self, run: Run) -> QualityResult:
        """The synthetic set of ``run.sizes.run.per_kind`` questions per kind, with the run's embedder."""
        return retrieval_quality(build_dataset(SEED, per_kind=run.sizes.run.per_kind), run.embedder)
