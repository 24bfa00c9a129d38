"""LoCoMo: recall of evidence turns by mode and question category, against DRAGON, and search latency."""

from __future__ import annotations

from benchmarks.report.cells import spread_cell
from benchmarks.report.figures import LOCOMO, Add, Figure, Part
from benchmarks.results import LocomoResult, Results, at_ks


def _locomo(add: Add, loco: LocomoResult) -> None:
    add("## LoCoMo")
    add("")
    if "skipped" in loco:
        add(loco["skipped"] + ".")
        add("")
        return
    add(
        f"LoCoMo (Maharana et al., ACL 2024; `locomo10.json` of snap-research/LoCoMo, CC BY-NC 4.0, not shipped): "
        f"here the development half, {loco['conversations']} conversations, {loco['messages']:,} turns, "
        f"{loco['questions']} questions with evidence. The metric of the LoCoMo paper (see `benchmarks/measure/locomo.py`): "
        "every turn archived as one message, `search(question, top_k=50)` with the default configuration, recall@k "
        "= share of the question's evidence turns among the first k hits, in percent. DRAGON's figures are the "
        "paper's, on all ten conversations; the held-out half is not measured here."
    )
    add("")
    backend = loco["backend"]["short"] if "backend" in loco else None
    compare = loco["compare"]["backend"]["short"] if "compare" in loco else None
    if "backend" in loco:
        add(
            f"Embedder: the default ({loco['backend']['long']})."
            + (
                f" The rows marked {compare} queries search the same archive (the same document vectors) with "
                f"{compare} embedding the questions (all at once, in batches: recall only, not timed): the "
                "difference is the query path's alone."
                if compare
                else ""
            )
        )
        add("")
    add("| retriever | R@5 | R@10 | R@25 | R@50 |")
    add("| --- | --- | --- | --- | --- |")
    for mode, summary in loco["modes"].items():
        label = f"this library, {mode}" + (f" ({backend} queries)" if compare else "")
        add(f"| {label} | " + " | ".join(f"{value:.1f}" for value in at_ks(summary["all"])) + " |")
    for mode, summary in (loco["compare"]["modes"] if "compare" in loco else {}).items():
        add(
            f"| this library, {mode} ({compare} queries) | "
            + " | ".join(f"{value:.1f}" for value in at_ks(summary["all"]))
            + " |"
        )
    plain = loco.get("lexical_without_context")
    if plain:
        add(
            f"| this library, lexical without conversation context ({backend} queries) | "
            + " | ".join(f"{value:.1f}" for value in at_ks(plain))
            + " |"
        )
    add("| DRAGON (LoCoMo paper, all ten) | " + " | ".join(f"{value:.1f}" for value in at_ks(loco["dragon"])) + " |")
    add("")
    if plain:
        add(
            "Without conversation context: `ranking=RankingOptions(neighbour_hits=0, neighbour_weights=())`, every "
            "message scored alone, as before the ranking of issue 12 (the lexical-only mode of release 1 ranked so)."
        )
        add("")
    modes = list(loco["modes"])
    categories = list(loco["modes"][modes[0]]["categories"])
    add("By question category (R@5 / R@10 / R@25 / R@50):")
    add("")
    add("| category | questions | " + " | ".join(modes) + " |")
    add("| --- | --- |" + " --- |" * len(modes))
    for category in categories:
        cells = []
        for mode in modes:
            row = loco["modes"][mode]["categories"][category]
            cells.append(" / ".join(f"{value:.1f}" for value in at_ks(row)))
        count = loco["modes"][modes[0]]["categories"][category]["questions"]
        add(f"| {category} | {count} | " + " | ".join(cells) + " |")
    add("")
    add("![locomo](locomo.png)")
    add("")
    latency = loco.get("latency_ms")
    if latency:
        add(
            f"`search(q, top_k=50)` ({latency['mode']}, query embedding included) over {latency['searches']} searches: "
            f"p50 {spread_cell(loco.get('latency_spread'))} ms, p95 {latency['p95']:.1f} ms in the first run."
        )
        add("")


def build(results: Results) -> Part | None:
    """The section; "Not run" when LoCoMo was skipped (``--locomo none``), None when it failed (the opening says)."""
    loco = results.get("locomo")
    lines: list[str] = []
    if not loco:
        if "locomo" in results["meta"]["errors"]:
            return None
        return Part(["## LoCoMo", "", "Not run (`--locomo none`).", ""])
    _locomo(lines.append, loco)
    return Part(lines, () if "skipped" in loco else (Figure(LOCOMO, loco),))
