"""LoCoMo across sessions: what reaches a new session, per row and window; the unrelated prompts; the curve."""

from __future__ import annotations

from benchmarks.report.cells import number
from benchmarks.report.figures import CROSS_SESSION, TOKEN_CURVE, Add, Figure, Part
from benchmarks.report.targets import CROSS_BASELINE_ROW, CROSS_TARGET_ROWS, UNRELATED_TOKENS
from benchmarks.results import CrossSessionResult, CrossSessionRow, CurveResult, Results, UnrelatedResult

TITLE = "## LoCoMo across sessions: what an earlier session said, in a new one"


def _ran(row: CrossSessionRow) -> bool:
    return "all" in row


def _cross_session(add: Add, result: CrossSessionResult) -> None:
    """The rows per window, overall and per conversation, rows that failed or are missing named, the plot."""
    if "skipped" in result:
        add(result["skipped"] + ".")
        add("")
        return
    windows = result.get("windows") or {}
    names = result.get("conversations") or []
    sessions = result.get("sessions") or {}
    exchanges = result.get("exchanges") or {}
    questions = result.get("questions")
    add(
        "`benchmarks/measure/cross_session.py` (users and sessions: `benchmarks/measure/sessions.py`): each "
        "conversation of the LoCoMo file is one named user (`user_id`) with a durable SQLite archive of their own. "
        "Each of its sessions is played through its own new Strands `Agent`, everything built anew over the user's "
        "file as a new process would (model, conversation manager, hook, store, storage), the memory's `clock` "
        "reading the session's date (a minute later per exchange); speaker A's turns are the user's messages and a "
        "scripted model replies with speaker B's turns (the model of LoCoMo in the loop, with a window of W "
        "characters). After the last session, every question with evidence is asked in a new session a day later, "
        "and what that turn archived is forgotten again, so every question meets the same archive. A question "
        "scores the share of its evidence turns whose text is in the input of the call that answers it; delivered "
        "is the mean over questions (each weighs once overall), in percent. **Tokens injected** is what the memory "
        "added to the answering call, measured from the request (its input less what the same call holds without "
        "the memory, 4 characters per token), mean per question; the library's own count (`hook.enrichment(agent)` "
        "or the store's `last_enrichment`) is beside it. **ms / exchange** times the agents' calls during the "
        "sessions; **ms / session opening** is building a session's agent over the user's file and closing it."
    )
    add("")
    add(
        f"This run: {len(names)} user(s) ("
        + ", ".join(
            f"{name}: {sessions.get(name, '?')} sessions, {exchanges.get(name, '?')} exchanges" for name in names
        )
        + "), "
        + (f"the first {questions} questions of each" if questions else "every question with evidence")
        + ". Delivered and tokens are deterministic for a given code and data (scripted model, embeddings on the "
        "CPU, each session's archive settled before the next); timings are one run, no repeats. A scripted model "
        "answers nothing: every figure says what reached the model, not what it would answer."
    )
    add("")
    played = result.get("rows") or []
    for window, rows in windows.items():
        failed = {row: found["error"] for row, found in rows.items() if "error" in found}
        for failed_row, error in failed.items():
            add(f"**'{failed_row}' could not run at W = {int(window):,}**: `{error}`. Its targets read n/a.")
            add("")
        empty = [
            row
            for row, found in rows.items()
            if row != CROSS_BASELINE_ROW
            and _ran(found)
            and any(cell["played"]["archived"] == 0 for cell in (found.get("conversations") or {}).values())
        ]
        if empty:
            add(
                f"**Archived nothing at W = {int(window):,}** (for at least one user): "
                + ", ".join(f"'{row}'" for row in empty)
                + ". Such a row has nothing to deliver in a new session: what it keeps stays in the sessions' "
                "agents, which end with them."
            )
            add("")
        missing = [row for row in (*CROSS_TARGET_ROWS, CROSS_BASELINE_ROW) if row not in rows]
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
        ran = {name: row for name, row in rows.items() if _ran(row)}
        categories = sorted({c for row in ran.values() for c in row["all"]["categories"]})
        add(f"### W = {int(window):,} characters ({int(window) // 4:,} tokens)")
        add("")
        header = [
            "row",
            "delivered %",
            "lowest conversation %",
            *categories,
            "questions",
            "tokens injected (measured)",
            "library's count",
            "given any %",
            "ms / exchange",
            "ms / session opening",
            "overflowed calls: sessions",
            "questions",
            "failed turns",
        ]
        add("| " + " | ".join(header) + " |")
        add("|" + " --- |" * len(header))
        for name, played_row in ran.items():
            overall = played_row["all"]
            add(
                f"| {name} | {overall['delivered']:.1f} | {overall['lowest']:.1f} | "
                + "".join(
                    f"{overall['categories'][c]:.1f} | " if c in overall["categories"] else "- | " for c in categories
                )
                + f"{overall['questions']} | {overall['injected_tokens']:,.1f} | "
                f"{number(overall['reported_tokens'], 1)} | {overall['given_any']:.1f} | "
                f"{overall['ms_per_exchange']:.1f} | {overall['open_ms']:.1f} | {overall['overflows']} | "
                f"{overall['question_overflows']} | {overall['failed_turns']} |"
            )
        add("")
        add(f"Per conversation, W = {int(window):,}:")
        add("")
        header = [
            "row",
            "conversation",
            "questions",
            "delivered %",
            "tokens injected",
            "archived messages",
            "ms / exchange",
            "ms / session opening",
        ]
        add("| " + " | ".join(header) + " |")
        add("|" + " --- |" * len(header))
        for name, played_row in ran.items():
            for conversation, cell in (played_row.get("conversations") or {}).items():
                archived = cell["played"]["archived"]
                add(
                    f"| {name} | {conversation} | {cell['turns']} | {cell['delivered']:.1f} | "
                    f"{cell['injected_tokens']:,.1f} | {'-' if archived is None else f'{archived:,}'} | "
                    f"{cell['played']['ms_per_exchange']:.1f} | {cell['played']['open_ms']:.1f} |"
                )
        add("")
    if _drawn(result):
        add(f"![cross-session]({CROSS_SESSION})")
        add("")


def _drawn(result: CrossSessionResult) -> dict[str, dict[str, dict[str, CrossSessionRow]]] | None:
    """The rows that ran at every window, by window (None: no row did)."""
    windows = result.get("windows") or {}
    if not windows:
        return None
    first = next(iter(windows.values()))
    everywhere = [row for row in first if all(row in rows and _ran(rows[row]) for rows in windows.values())]
    if not everywhere:
        return None
    return {"windows": {window: {row: rows[row] for row in everywhere} for window, rows in windows.items()}}


def _unrelated(add: Add, result: UnrelatedResult) -> None:
    """What each memory row adds to prompts nothing archived answers."""
    add("### Unrelated prompts: what a memory adds to a turn nothing archived answers")
    add("")
    if "skipped" in result:
        add(result["skipped"] + ".")
        add("")
        return
    rows = result.get("rows") or {}
    kinds = result.get("kinds") or {}
    lengths = result.get("lengths") or {}
    window = result.get("window")
    add(
        "`benchmarks/measure/unrelated.py`: after each user's sessions (above), each prompt of "
        "`benchmarks/data/unrelated.py` (arithmetic, code, trivia, creative writing, small talk, how-tos: none about "
        f"the conversations) is asked in a new session of each memory row, at W = {window or 0:,} characters, and "
        f"forgotten again. This run: {result.get('prompts', 0)} prompts ("
        + ", ".join(f"{kind} {count}" for kind, count in kinds.items())
        + "; "
        + ", ".join(f"{length} {count}" for length, count in lengths.items())
        + f") for each of {len(result.get('conversations') or [])} user(s). Issue 38's goal: at most "
        f"{UNRELATED_TOKENS:.0f} tokens per prompt on average, ideally none. Tokens are measured from the request "
        "as above; given any is the share of prompts given any injected text."
    )
    add("")
    for row, found in rows.items():
        if "error" in found:
            add(f"**'{row}' could not run**: `{found['error']}`.")
            add("")
    ran = {row: found["all"] for row, found in rows.items() if "all" in found}
    if not ran:
        return
    header = [
        "row",
        "tokens per prompt (measured)",
        "library's count",
        "given any %",
        "most one prompt got",
        *(f"{kind} (tokens)" for kind in kinds),
        "ms / prompt",
        "failed turns",
    ]
    add("| " + " | ".join(header) + " |")
    add("|" + " --- |" * len(header))
    for row, cell in ran.items():
        add(
            f"| {row} | {cell['injected_tokens']:,.1f} | {number(cell['reported_tokens'], 1)} | "
            f"{cell['given_any']:.1f} | {cell['max_tokens']:,.1f} | "
            + "".join(f"{cell['kinds'].get(kind, 0.0):,.1f} | " for kind in kinds)
            + f"{cell['ms_per_turn']:.1f} | {cell['failed_turns']} |"
        )
    add("")


def _curve(add: Add, result: CurveResult) -> None:
    """Each setting of the curve: delivered against tokens, the plot."""
    add("### Delivered against injected tokens")
    add("")
    if "skipped" in result:
        add(result["skipped"] + ".")
        add("")
        return
    window = result.get("window") or 0
    add(
        f"`benchmarks/measure/curve.py`: the questions above asked again through '{result.get('row', '')}' at "
        f"W = {window:,} characters under other settings of what the hook injects (the users' archives are the "
        "same: a setting changes only the answering turn): the library's defaults, other caps on the memory's "
        'tokens, the hook injecting on every turn (`inject_when="always"`) under caps, and the hook as it was '
        "before this round. Each point is the evidence delivered against the mean tokens the memory added to the "
        "answering calls, measured from the requests."
    )
    add("")
    points = result.get("points") or []
    for point in points:
        if "error" in point:
            add(f"**'{point['label']}' could not run**: `{point['error']}`.")
            add("")
    ran = [point for point in points if "error" not in point]
    if not ran:
        return
    add(
        "| setting | delivered % | lowest conversation % | tokens injected (measured) | library's count | given any % |"
    )
    add("| --- | --- | --- | --- | --- | --- |")
    for point in ran:
        label = f"**{point['label']}**" if point["role"] == "default" else point["label"]
        add(
            f"| {label} | {point['delivered']:.1f} | {point['lowest']:.1f} | {point['injected_tokens']:,.1f} | "
            f"{number(point['reported_tokens'], 1)} | {point['given_any']:.1f} |"
        )
    add("")
    add(f"![token-curve]({TOKEN_CURVE})")
    add("")


def build(results: Results) -> Part | None:
    """The section, or None when none of its measurements ran; each part present when its measurement ran."""
    section = results.get("cross_session")
    if not section:
        return None
    lines: list[str] = [TITLE, ""]
    drawn: list[Figure] = []
    cross = section.get("cross_session")
    if cross is not None:
        _cross_session(lines.append, cross)
        data = _drawn(cross)
        if data is not None:
            drawn.append(Figure(CROSS_SESSION, data))
    unrelated = section.get("unrelated_prompts")
    if unrelated is not None:
        _unrelated(lines.append, unrelated)
    curve = section.get("token_curve")
    if curve is not None:
        _curve(lines.append, curve)
        if any("error" not in point for point in curve.get("points") or []):
            drawn.append(Figure(TOKEN_CURVE, curve))
    return Part(lines, tuple(drawn))
