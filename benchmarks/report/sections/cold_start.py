"""Cold start in fresh processes, the first turn over a reopened archive, and the turn that reduces."""

from __future__ import annotations

from benchmarks.report.cells import spread_cell
from benchmarks.report.figures import Add, Part
from benchmarks.results import ColdStartResult, Results, Spread


def _milliseconds(spread: Spread | None) -> str:
    """A spread measured in seconds, shown in milliseconds."""
    if spread is None:
        return "none"
    scaled: Spread = {
        "min": spread["min"] * 1e3,
        "median": spread["median"] * 1e3,
        "max": spread["max"] * 1e3,
        "runs": spread["runs"],
    }
    return spread_cell(scaled, 1)


def _cold_start(add: Add, cold: ColdStartResult) -> None:
    """Cold start in fresh processes, the first turn over a reopened archive, and the turn that reduces."""
    add("## Cold start and the reducing turn")
    add("")
    load = cold["load_average"]
    add(
        "`benchmarks/measure/cold_start.py`. Each figure is the median of repeated runs, then min to max of the runs (run "
        "to run spread): fresh processes for the first `retrieve` and the first turn, turns of one scripted "
        f"conversation for the reducing turn. Load average when the section started: {load[0]:.1f} / "
        f"{load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min)."
    )
    add("")
    add(
        "A new process's first `retrieve`: import the package, build a `SemanticMemory()`, archive 10 messages, "
        "search once. With an empty graph cache (`STRANDS_SEMANTIC_MEMORY_CACHE` pointing at a new folder: the "
        "first-ever run on a machine, which exports the model) and with a warm one. Inside the process: from before "
        "the import to after the search; whole process: interpreter start and exit included, timed from outside."
    )
    add("")
    add("| graph cache | inside the process (s) | import (s) | whole process (s) | exports per run | PyTorch |")
    add("| --- | --- | --- | --- | --- | --- |")
    for row in cold["cold"]:
        add(
            f"| {row['cache']} | {spread_cell(row['first_retrieve'])} | {spread_cell(row['importing'])} | "
            f"{spread_cell(row['process'])} | {', '.join(map(str, row['exports']))} | "
            f"{'imported' if row['torch_imported'] else 'not imported'} |"
        )
    add("")
    if cold["first_turns"]:
        add(
            "The first user turn of a new process that reopens a durable archive of 200 messages (real `Agent`, "
            "scripted model, this library's manager and hook), the turn coming at once or after a pause:"
        )
        add("")
        add("| warm-up | pause (s) | first turn (ms) | building the agent to the answer (s) |")
        add("| --- | --- | --- | --- |")
        for turn in cold["first_turns"]:
            add(
                f"| {'`warm_up=True`' if turn['warm_up'] else 'none'} | {turn['pause']:.1f} | "
                f"{_milliseconds(turn['first_turn'])} | {spread_cell(turn['start_to_answer'])} |"
            )
        add("")
    if cold["turns"]:
        add(
            f"Every turn of one scripted conversation of {cold['turns_per_manager']} user turns through a real "
            "`Agent` in a warm process, the turns that reduce the context apart: this library's manager and hook "
            "with background embedding (the default) and inline, and Strands' `SummarizingConversationManager` "
            "(no archive, no search) as the floor."
        )
        add("")
        add("| manager | reducing turns | reducing turn (ms) | other turns (ms) |")
        add("| --- | --- | --- | --- |")
        for latency in cold["turns"]:
            add(
                f"| {latency['manager']} | {latency['reductions']} | {_milliseconds(latency['reducing'])} | "
                f"{_milliseconds(latency['other'])} |"
            )
        add("")


def build(results: Results) -> Part | None:
    """The section, or None when the measurement did not run."""
    cold = results.get("cold_start")
    if not cold:
        return None
    lines: list[str] = []
    _cold_start(lines.append, cold)
    return Part(lines)
