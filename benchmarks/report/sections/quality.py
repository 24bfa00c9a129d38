"""Retrieval quality on the synthetic set: recall by mode and question kind, and at equal turn budgets."""

from __future__ import annotations

from benchmarks.report.cells import KIND_LABELS
from benchmarks.report.figures import RECALL, Add, Figure, Part
from benchmarks.results import QualityResult, Results, RunMeta


def _quality(add: Add, quality: QualityResult, meta: RunMeta) -> None:
    add("## Retrieval quality: the synthetic set")
    add("")
    add(
        f"The retrieval set (`benchmarks/data/synthetic.py`, seed {meta['seed']}): one conversation of "
        f"{quality['messages']} messages with {quality['questions']} questions whose answers sit in specific earlier "
        "user turns, among look-alike distractors. Recall@k is the share of evidence turns among the top k hits "
        "(averaged over questions). It is saturated and synthetic; LoCoMo below is the yardstick."
    )
    add("")
    kinds = ["all", *quality["kinds"]]
    add("| mode | " + " | ".join(f"{KIND_LABELS.get(k, k)} R@5 | R@10" for k in kinds) + " |")
    add("| --- |" + " --- | --- |" * len(kinds))
    for mode, data in quality["modes"].items():
        add(f"| {mode} | " + " | ".join(f"{data[k]['r5']:.2f} | {data[k]['r10']:.2f}" for k in kinds) + " |")
    add("")
    add("![recall](recall.png)")
    add("")
    add(
        "Windows at equal turn budgets: recall of evidence turns inside the retrieved windows when the windows may "
        "hold at most 10 or 20 turns in total (`top_k = budget // (2 * radius + 1)`)."
    )
    add("")
    window_keys = list(next(iter(quality["windows"].values())))
    add("| mode | " + " | ".join(window_keys) + " |")
    add("| --- |" + " --- |" * len(window_keys))
    for mode, windows in quality["windows"].items():
        add(f"| {mode} | " + " | ".join(f"{windows[k]:.2f}" for k in window_keys) + " |")
    add("")


def build(results: Results) -> Part | None:
    """The section, or None when the measurement did not run."""
    quality = results.get("quality")
    if not quality:
        return None
    lines: list[str] = []
    _quality(lines.append, quality, results["meta"])
    return Part(lines, (Figure(RECALL, quality),))
