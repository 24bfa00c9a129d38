"""LoCoMo in the loop: what reaches the model, per row and window, overall and per conversation."""

from __future__ import annotations

from benchmarks.report.figures import LOCOMO_LOOP, Add, Figure, Part
from benchmarks.report.targets import LOOP_BASELINE_ROW, LOOP_TARGET_ROWS
from benchmarks.results import LocomoLoopResult, Results


def _locomo_loop(add: Add, result: LocomoLoopResult) -> None:
    """LoCoMo in the loop: overall and per-conversation tables per window, missing rows named, the plot."""
    add("## LoCoMo in the loop: what reaches the model")
    add("")
    if "skipped" in result:
        add(result["skipped"] + ".")
        add("")
        return
    windows = result.get("windows") or {}
    names = result.get("conversations") or []
    exchanges = result.get("exchanges") or {}
    questions = result.get("questions")
    add(
        "`benchmarks/measure/locomo_loop.py`: each conversation of the LoCoMo file is played through a real Strands `Agent` "
        "(speaker A's turns are the user's messages; a scripted model replies with speaker B's turns), whose model "
        "has a window of W characters (`context_window_limit` = W / 4 tokens): a longer call raises Strands' "
        "`ContextWindowOverflowException`, which drives Strands' real reduction path. Summaries, for every manager, "
        "are written by the same scripted model and are deliberately lossy (the 12 most frequent long words), so "
        "what reaches the model beyond the recent window must come from the memory. Then every question with "
        "evidence is asked as a user turn (history and archive put back after each), and a question scores the "
        "share of its evidence turns whose text is in the input of the call that answers it. Delivered is the mean "
        "over questions (each question weighs once overall), in percent; the lowest conversation is the row's "
        "worst conversation."
    )
    add("")
    add(
        f"This run: {len(names)} conversation(s) ("
        + ", ".join(f"{name}: {exchanges[name]} exchanges" if name in exchanges else name for name in names)
        + "), "
        + (f"the first {questions} questions of each" if questions else "every question with evidence")
        + ". **Delivered, overflows and input sizes are deterministic** (scripted model, the archive settled "
        "before the questions): the same on every run of the same code and data, except in the rows with Strands' "
        "`MemoryManager`, which vary by a few tenths of a point between runs (Strands' summarizing manager "
        "compresses from the previous call's reported usage, which includes what the store injected, and during "
        "the conversation that depends on how far the store's background embedding has got). **ms per exchange** is the "
        "conversation phase's wall time over its exchanges, averaged over the conversations, in one run (no "
        "repeats): read it as a ratio to Strands' rows in the same run. Overflowed calls count every refused "
        "call (chat and summary), during the conversation and during the questions."
    )
    add("")
    played = result.get("rows") or []
    for window, rows in windows.items():
        missing = [row for row in (*LOOP_TARGET_ROWS, LOOP_BASELINE_ROW) if row not in rows]
        if missing:
            add(
                f"**Rows missing at W = {int(window):,}**: "
                + ", ".join(f"'{row}'" for row in missing)
                + " (named by the targets, not in this run's results; rows played: "
                + ", ".join(f"'{row}'" for row in (played or list(rows)))
                + "). Their targets read n/a."
            )
            add("")
    for window, rows in windows.items():
        categories = sorted({c for row in rows.values() for c in row["all"]["categories"]})
        add(f"### W = {int(window):,} characters ({int(window) // 4:,} tokens)")
        add("")
        header = [
            "row",
            "delivered %",
            "lowest conversation %",
            *categories,
            "overflowed calls: conversation",
            "questions",
            "answering input (chars)",
            "ms / exchange",
            "failed turns",
        ]
        add("| " + " | ".join(header) + " |")
        add("|" + " --- |" * len(header))
        for name, row in rows.items():
            overall = row["all"]
            add(
                f"| {name} | {overall['delivered']:.1f} | {overall['lowest']:.1f} | "
                + "".join(
                    f"{overall['categories'][c]:.1f} | " if c in overall["categories"] else "- | " for c in categories
                )
                + f"{overall['overflows']} | {overall['question_overflows']} | {overall['input_chars']:,} | "
                f"{overall['ms_per_exchange']:.1f} | {overall['failed_turns']} |"
            )
        add("")
        add(f"Per conversation, W = {int(window):,}:")
        add("")
        header = [
            "row",
            "conversation",
            "questions",
            "delivered %",
            *categories,
            "overflowed calls: conversation",
            "questions",
            "answering input (chars)",
            "ms / exchange",
        ]
        add("| " + " | ".join(header) + " |")
        add("|" + " --- |" * len(header))
        for name, row in rows.items():
            for conversation, cell in row["conversations"].items():
                add(
                    f"| {name} | {conversation} | {cell['questions']} | {cell['delivered']:.1f} | "
                    + "".join(
                        f"{cell['categories'][c]:.1f} | " if c in cell["categories"] else "- | " for c in categories
                    )
                    + f"{cell['overflows']} | {cell['question_overflows']} | {cell['input_chars']:,} | "
                    f"{cell['ms_per_exchange']:.1f} |"
                )
        add("")
    if windows:
        add(f"![locomo-loop]({LOCOMO_LOOP})")
        add("")


def build(results: Results) -> Part | None:
    """The section, or None when the measurement did not run; the figure draws the rows played at every window."""
    result = results.get("locomo_loop")
    if not result:
        return None
    lines: list[str] = []
    _locomo_loop(lines.append, result)
    windows = result.get("windows") or {}
    if not windows:
        return Part(lines)
    everywhere = [row for row in next(iter(windows.values())) if all(row in rows for rows in windows.values())]
    drawn = {"windows": {window: {row: rows[row] for row in everywhere} for window, rows in windows.items()}}
    return Part(lines, (Figure(LOCOMO_LOOP, drawn),))
