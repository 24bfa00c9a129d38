"""LoCoMo across sessions: what a user said in an earlier session must reach the model in a new one (issue 37).

Each conversation of the LoCoMo file is one named user; each of its sessions is played through its own new Strands
``Agent``, with everything built anew as a new process would, over the user's durable SQLite archive, the memory's
clock reading the session's date (``benchmarks.measure.sessions``). After the last session every question with
evidence is asked in a new session, and what it archived is forgotten again. A question scores the share of its
evidence turns whose text is in the input of the call that answers it; what it cost is the tokens the memory added
to that call, measured from the request (and the library's own figure beside it).

Rows (``benchmarks.measure.sessions.ROWS``): Strands alone, Strands' ``MemoryManager`` + ``SemanticMemoryStore``,
this library's manager + ``SemanticMemoryHook()``, Strands' ``ContextManager`` + ``SemanticStorage`` +
``SemanticMemoryHook()``. Windows: 16,000, 32,000 and 800,000 characters (the scripted model's
``context_window_limit`` is a quarter of that in tokens; the largest is a 200,000-token model, where a session never
overflows). Every figure depends on the scripted model: it answers nothing, it shows what reached it.

Run alone: ``python -m benchmarks.measure.cross_session --locomo PATH [--limit N] [--sessions N] [--questions N]
[--windows ...] [--rows ...]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.data.locomo import CATEGORIES, LOCOMO_DEV
from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.sessions import ROWS, Answer, UserArchives, asked_cell, user_archives, users_of
from benchmarks.measure.sizes import FULL_SIZES, CrossSessionSettings
from benchmarks.results import CrossSessionCell, CrossSessionOverall, CrossSessionResult, CrossSessionRow

__all__ = ["CrossSession", "cross_session", "overall", "row_at_window"]


def _category(number: int) -> str:
    return f"{number} {CATEGORIES.get(number, '?')}"


def _percent(scores: Sequence[float]) -> float:
    return round(100 * statistics.fmean(scores), 1) if scores else 0.0


def cell(answers: Sequence[Answer], played: Any) -> CrossSessionCell:
    """One row on one user: delivered and categories in percent, what the answering calls cost, the sessions."""
    by_category: dict[str, list[float]] = {}
    for found in answers:
        by_category.setdefault(_category(found.category), []).append(found.delivered)
    return {
        **asked_cell([found.asked for found in answers]),
        "delivered": _percent([found.delivered for found in answers]),
        "categories": {name: _percent(scores) for name, scores in sorted(by_category.items())},
        "played": played,
    }


def overall(answers: Mapping[str, Sequence[Answer]], cells: Mapping[str, CrossSessionCell]) -> CrossSessionOverall:
    """Every user of one row at one window: each question weighs once, counts are summed."""
    every = [found for found_for_user in answers.values() for found in found_for_user]
    by_category: dict[str, list[float]] = {}
    for found in every:
        by_category.setdefault(_category(found.category), []).append(found.delivered)
    turns = asked_cell([found.asked for found in every])
    played = [c["played"] for c in cells.values()]
    exchanges = sum(p["exchanges"] for p in played)
    sessions = sum(p["sessions"] for p in played)
    return {
        "delivered": _percent([found.delivered for found in every]),
        "lowest": min((c["delivered"] for c in cells.values()), default=0.0),
        "categories": {name: _percent(scores) for name, scores in sorted(by_category.items())},
        "questions": len(every),
        "injected_tokens": turns["injected_tokens"],
        "reported_tokens": turns["reported_tokens"],
        "given_any": turns["given_any"],
        "sessions": sessions,
        "exchanges": exchanges,
        "ms_per_exchange": round(sum(p["ms_per_exchange"] * p["exchanges"] for p in played) / max(1, exchanges), 1),
        "open_ms": round(sum(p["open_ms"] * p["sessions"] for p in played) / max(1, sessions), 1),
        "overflows": sum(p["overflows"] for p in played),
        "question_overflows": turns["overflows"],
        "failed_turns": sum(p["failed_turns"] for p in played) + turns["failed_turns"],
    }


def play_row(
    archives: UserArchives,
    row: str,
    window: int,
    questions: int | None,
    progress: Callable[[str], None] | None = None,
) -> CrossSessionRow:
    """One row at one window: every user's sessions (played once per run), then their questions."""
    try:
        users = archives.users(row, window, progress)
        answers = {c.name: archives.answers(row, window, c, questions) for c, _ in users}
    except Exception as error:  # a row that cannot be built (a keyword it does not take, ...) is named, not fatal
        if progress is not None:
            progress(f"W={window} {row}: failed: {type(error).__name__}: {error}")
        return {"error": f"{type(error).__name__}: {error}"}
    cells = {name: cell(found, archives.played(row, window, name)) for name, found in answers.items()}
    if progress is not None:
        for name, result in cells.items():
            progress(
                f"W={window} {row} {name}: {result['delivered']} % delivered, "
                f"{result['injected_tokens']} tokens injected"
            )
    return {"conversations": cells, "all": overall(answers, cells)}


def cross_session(
    run: Run, rows: Sequence[str] = tuple(ROWS), progress: Callable[[str], None] | None = None
) -> CrossSessionResult:
    """Every row at every window of ``run.sizes.cross`` on the run's LoCoMo file (see the module docstring).

    Returns:
        The results, or ``{"skipped": why}`` without a LoCoMo file.
    """
    conversations = users_of(run)
    if isinstance(conversations, str):
        print(conversations, flush=True)
        return {"skipped": conversations}
    settings = run.sizes.cross
    archives = user_archives(run, conversations)
    started = time.perf_counter()
    windows: dict[str, dict[str, CrossSessionRow]] = {}
    for window in settings.windows:
        windows[str(window)] = {row: play_row(archives, row, window, settings.questions, progress) for row in rows}
    return {
        "windows": windows,
        "rows": list(rows),
        "conversations": [c.name for c in conversations],
        "sessions": {c.name: len(c.sessions) for c in conversations},
        "exchanges": {c.name: c.exchanges for c in conversations},
        "questions": settings.questions,
        "seconds": time.perf_counter() - started,
    }


def row_at_window(result: CrossSessionResult, window: int, row: str) -> CrossSessionRow | None:
    """One row of a result at one window (None when it was not played)."""
    return (result.get("windows") or {}).get(str(window), {}).get(row)


class CrossSession(Measurement):
    """LoCoMo across sessions: every row at every window of ``run.sizes.cross``."""

    name: ClassVar[str] = "cross_session"
    label: ClassVar[str] = "LoCoMo across sessions"

    def measure(self, run: Run) -> CrossSessionResult:
        """Every row, window, user and question of the run's sizes."""
        return cross_session(run, progress=lambda line: print(f"    {line}", flush=True))


def standalone_run(args: argparse.Namespace) -> Run:
    """A run for this module's command line (and the other cross-session modules'): the default embedder, loaded."""
    from strands_semantic_memory.embeddings import resolve_embedder

    embedder = resolve_embedder()
    _ = embedder.dimension
    cross = CrossSessionSettings(
        windows=tuple(args.windows),
        conversations=args.limit,
        sessions=args.sessions,
        questions=args.questions,
        prompts=getattr(args, "prompts", None),
    )
    return Run(sizes=dataclasses.replace(FULL_SIZES, cross=cross), embedder=embedder, locomo=args.locomo)


def arguments(description: str | None) -> argparse.ArgumentParser:
    """The command line shared by the cross-session modules."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DEV)
    parser.add_argument("--windows", type=int, nargs="+", default=list(CrossSessionSettings().windows))
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations (users)")
    parser.add_argument("--sessions", type=int, default=None, help="only the first N sessions of each")
    parser.add_argument("--questions", type=int, default=None, help="only the first N questions of each")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = cross_session(standalone_run(args), rows=args.rows, progress=print)
    for window, per_row in (result.get("windows") or {}).items():
        for row, found in per_row.items():
            summary = found.get("all")
            shown = (
                f"{summary['delivered']} % (lowest {summary['lowest']}), {summary['injected_tokens']} tokens"
                if summary
                else found.get("error")
            )
            print(f"W={window} {row}: {shown}")
    print(f"{time.perf_counter() - started:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
