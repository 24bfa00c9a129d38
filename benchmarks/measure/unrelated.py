"""Unrelated prompts across sessions: what a memory injects for a turn that nothing archived answers (issue 38).

After each user's sessions (``benchmarks.measure.sessions``: LoCoMo conversations as named users over their SQLite
files), each prompt of ``benchmarks.data.unrelated`` is asked in a new session through a real Strands ``Agent`` of
each memory row, at the largest window of the run (a 200,000-token model), and forgotten again. A prompt's cost is
the tokens the memory added to its answering call, measured from the request; the share given any is the share of
prompts that got any injected text at all.

Run alone: ``python -m benchmarks.measure.unrelated --locomo PATH [--limit N] [--prompts N]``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import ClassVar

from benchmarks.data.unrelated import UnrelatedPrompt, counts, load_unrelated_prompts, spread_over_kinds
from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.sessions import MEMORY_ROWS, Asked, User, UserArchives, ask, asked_cell, user_archives, users_of
from benchmarks.results import UnrelatedCell, UnrelatedResult, UnrelatedRow

__all__ = ["UnrelatedPrompts", "unrelated_prompts"]


def unrelated_cell(prompts: Sequence[UnrelatedPrompt], turns: Sequence[Asked]) -> UnrelatedCell:
    """What the prompts cost: as ``asked_cell``, the most one prompt got, and the mean tokens per kind."""
    by_kind: dict[str, list[float]] = {}
    for prompt, turn in zip(prompts, turns, strict=True):
        by_kind.setdefault(prompt.kind, []).append(turn.injected_tokens)
    return {
        **asked_cell(turns),
        "max_tokens": max((t.injected_tokens for t in turns), default=0.0),
        "kinds": {kind: round(statistics.fmean(tokens), 1) for kind, tokens in by_kind.items()},
    }


def ask_prompts(row: str, user: User, prompts: Sequence[UnrelatedPrompt], window: int) -> list[Asked]:
    """Each prompt in a new session of ``row`` over ``user``'s archive (forgotten again after it)."""
    return [ask(row, user, prompt.text, window) for prompt in prompts]


def prompts_row(
    archives: UserArchives,
    row: str,
    window: int,
    prompts: Sequence[UnrelatedPrompt],
    progress: Callable[[str], None] | None = None,
) -> UnrelatedRow:
    """Every prompt for every user of ``row`` (their sessions played first when no measurement has)."""
    try:
        users = archives.users(row, window, progress)
        asked = {conversation.name: ask_prompts(row, user, prompts, window) for conversation, user in users}
    except Exception as error:  # a row that cannot be built is named, not fatal
        return {"error": f"{type(error).__name__}: {error}"}
    cells = {name: unrelated_cell(prompts, turns) for name, turns in asked.items()}
    if progress is not None:
        for name, result in cells.items():
            progress(
                f"unrelated, {row} {name}: {result['injected_tokens']} tokens per prompt, "
                f"{result['given_any']} % given any"
            )
    every_prompt = [prompt for _ in asked for prompt in prompts]
    every_turn = [turn for turns in asked.values() for turn in turns]
    return {"conversations": cells, "all": unrelated_cell(every_prompt, every_turn)}


def unrelated_prompts(
    run: Run, rows: Sequence[str] = MEMORY_ROWS, progress: Callable[[str], None] | None = None
) -> UnrelatedResult:
    """The run's unrelated prompts for every user of each row, at the run's largest window.

    Returns:
        The results, or ``{"skipped": why}`` without a LoCoMo file (the users are its conversations).
    """
    conversations = users_of(run)
    if isinstance(conversations, str):
        return {"skipped": conversations.replace("LoCoMo across sessions was", "The unrelated prompts were")}
    settings = run.sizes.cross
    window = max(settings.windows)
    prompts = spread_over_kinds(load_unrelated_prompts(), settings.prompts)
    archives = user_archives(run, conversations)
    started = time.perf_counter()
    results = {row: prompts_row(archives, row, window, prompts, progress) for row in rows}
    kinds, lengths = counts(prompts)
    return {
        "window": window,
        "rows": results,
        "prompts": len(prompts),
        "kinds": kinds,
        "lengths": lengths,
        "conversations": [c.name for c in conversations],
        "seconds": time.perf_counter() - started,
    }


class UnrelatedPrompts(Measurement):
    """The unrelated prompts over each user's archive, on every memory row."""

    name: ClassVar[str] = "unrelated_prompts"
    label: ClassVar[str] = "unrelated prompts across sessions"

    def measure(self, run: Run) -> UnrelatedResult:
        """Every memory row, at the largest window of ``run.sizes.cross``."""
        return unrelated_prompts(run, progress=lambda line: print(f"    {line}", flush=True))


def main(argv: list[str] | None = None) -> int:
    from benchmarks.measure.cross_session import arguments, standalone_run

    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--prompts", type=int, default=None, help="only N prompts, taken in turn from each kind")
    parser.add_argument("--rows", nargs="+", default=list(MEMORY_ROWS), choices=list(MEMORY_ROWS))
    args = parser.parse_args(argv)
    result = unrelated_prompts(standalone_run(args), rows=args.rows, progress=print)
    for row, found in (result.get("rows") or {}).items():
        summary = found.get("all")
        shown = (
            f"{summary['injected_tokens']} tokens, {summary['given_any']} % given any"
            if summary
            else found.get("error")
        )
        print(f"{row}: {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
