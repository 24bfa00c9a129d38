"""The durable archive against JSON state, and the vector index and the engine from 1k to 1M messages."""

from __future__ import annotations

from benchmarks.report.cells import number, spread_cell
from benchmarks.report.figures import DURABLE, INDEX, Add, Figure, Part
from benchmarks.results import LargeResult, Results


def _large(add: Add, large: LargeResult) -> None:
    add("## Durable archive and 1k..1M messages")
    add("")
    add(
        "From `benchmarks/measure/durable.py`, `vector_index.py` and `engine.py`. Cells are medians; where a target depends on a cell, its rounds follow in "
        "parentheses (median, min to max of the rounds)."
    )
    add("")
    for caveat in large.get("caveats", []):
        add(f"- {caveat}")
    add("")
    turns, opens = large.get("session_turns") or [], large.get("durable_open") or []
    if turns:
        add(
            "One agent turn (real `Agent`, scripted model: no model time) with Strands' `FileSessionManager` saving "
            "the agent state on every message, the archive kept in the JSON session state or in a durable SQLite "
            "file (`archive_path=`):"
        )
        add("")
        add(
            "| archived | JSON state: ms per turn | overhead vs empty | agent.json bytes | durable: ms per turn | "
            "overhead vs empty (rounds: round i minus round i of the empty archive) | agent.json bytes |"
        )
        add("| --- | --- | --- | --- | --- | --- | --- |")
        for turn_row in turns:
            overhead = turn_row.get("sqlite_overhead_rounds")
            durable = (
                spread_cell(overhead, 1)
                if overhead and turn_row["size"]
                else number(turn_row.get("sqlite_overhead_ms"), 1)
            )
            add(
                f"| {turn_row['size']:,} | {turn_row['json_turn_ms']:.1f} | "
                f"{number(turn_row.get('json_overhead_ms'), 1)} | {turn_row['json_agent_json_bytes']:,} | "
                f"{turn_row['sqlite_turn_ms']:.1f} | {durable} | {turn_row['sqlite_agent_json_bytes']:,} |"
            )
        add("")
    if opens:
        add(
            "| archived | SQLite fill, ms per message | reopen SQLite (s) | SQLite files | JSON save (s) | JSON restore (s) | JSON state |"
        )
        add("| --- | --- | --- | --- | --- | --- | --- |")
        for opened in opens:
            reopen = opened.get("sqlite_open_spread")
            add(
                f"| {opened['size']:,} | {opened['sqlite_fill_ms_per_message']:.3f} | "
                f"{spread_cell(reopen, 3) if reopen else number(opened['sqlite_open_seconds'], 3)} | "
                f"{opened['sqlite_file_bytes'] / 1e6:.1f} MB | {opened['json_save_seconds']:.3f} | "
                f"{opened['json_restore_seconds']:.3f} | {opened['json_state_bytes'] / 1e6:.1f} MB |"
            )
        add("")
    crossover = large.get("crossover")
    if crossover:
        turn, opening = crossover["turn_size"], crossover["open_size"]
        add(
            "Crossover (interpolated between measured sizes): a turn costs more with JSON state than with the durable "
            f"archive above {number(turn, 0) if turn else 'no measured size'} messages; restoring JSON takes longer "
            f"than reopening the file above {number(opening, 0) if opening else 'no measured size'} messages."
        )
        add("")
    if turns and opens:
        add("![durable](durable.png)")
        add("")
    index, engine = large.get("vector_index") or [], large.get("engine") or []
    if index:
        add("The vector store alone (`FaissIndex`, 1 search thread), grown in batches of 10,000:")
        add("")
        add(
            "| vectors | tier | build (s) | search p50 / p99 (ms) | CPU p50 (ms) | recall@10 vs exact | bytes per vector (store) | RSS per vector |"
        )
        add("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for vectors in index:
            add(
                f"| {vectors['size']:,} | {vectors['tier']} | {vectors['build_seconds']:.1f} | "
                f"{vectors['search_p50_ms']:.2f} / {vectors['search_p99_ms']:.2f} | "
                f"{vectors['search_cpu_p50_ms']:.2f} | {vectors['recall_at_10']:.3f} | "
                f"{vectors['store_bytes_per_vector']:,.0f} | {vectors['rss_bytes_per_vector']:,.0f} |"
            )
        add("")
    if engine:
        add(
            "The whole engine (`SemanticMemory.retrieve`: query embedding, dense and lexical search, windows; no "
            "formatting) at scale:"
        )
        add("")
        add(
            "| archived | mode | queries embedded by | build (s) | retrieve p50 / p99 (ms) | retrieve p50 rounds | "
            "query embedding p50 | search + windows CPU p50 | approximate index |"
        )
        add("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for retrieval in engine:
            rounds = retrieval.get("rounds")
            add(
                f"| {retrieval['size']:,} | {retrieval['mode']} | {retrieval.get('queries', 'default')} | "
                f"{retrieval['build_seconds']:.0f} | "
                f"{retrieval['retrieve_p50_ms']:.2f} / {retrieval['retrieve_p99_ms']:.2f} | "
                f"{spread_cell(rounds) if rounds and rounds['runs'] > 1 else 'one round'} | "
                f"{retrieval['query_embedding_p50_ms']:.2f} | "
                f"{retrieval['search_and_windows_cpu_p50_ms']:.2f} | {'yes' if retrieval['approximate'] else 'no'} |"
            )
        add("")
    if index and engine:
        add("![index](index.png)")
        add("")


def build(results: Results) -> Part | None:
    """The section, or None when none of its four measurements ran."""
    large = results.get("large")
    if not large:
        return None
    lines: list[str] = []
    _large(lines.append, large)
    turns, opens = large.get("session_turns") or [], large.get("durable_open") or []
    index, engine = large.get("vector_index") or [], large.get("engine") or []
    figures = []
    if turns and opens:
        figures.append(Figure(DURABLE, (turns, opens)))
    if index and engine:
        figures.append(Figure(INDEX, (index, engine)))
    return Part(lines, tuple(figures))
