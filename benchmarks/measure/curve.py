"""The curve: evidence delivered against tokens injected, across sessions, for the default and other settings (issue 38).

At the largest window of the run (a 200,000-token model), the questions of LoCoMo across sessions
(``benchmarks.measure.cross_session``) are asked again through this library's manager + hook row under each setting
of :data:`SETTINGS`: the default; the hook injecting on every turn (``inject_when="always"``) with a budget capped at
1,000 to 8,000 tokens; the default with other caps; and the hook as it was before this round (``inject_when="always",
context_radius=2, show_dates=False``, a cap of 8,000 tokens and a search depth of 200, which is what a 200,000-token
window got). A setting changes only what the hook injects, so every setting reads the same archives (the users'
sessions are played once, with the defaults). Each point is the share of evidence delivered against the mean tokens
the memory added to the answering calls, measured from the requests.

Run alone: ``python -m benchmarks.measure.curve --locomo PATH [--limit N] [--questions N]``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import ClassVar

from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.cross_session import cell, overall
from benchmarks.measure.sessions import DEFAULT_ROW, Tuning, UserArchives, user_archives, users_of
from benchmarks.results import CurvePoint, CurveResult

__all__ = ["DEFAULT", "SETTINGS", "TODAY", "TokenCurve", "curve"]

ALWAYS = {"inject_when": "always"}
DEFAULT = Tuning("default")
TODAY = Tuning(
    "before this round (always, radius 2, no dates, cap 8,000, depth 200)",
    {"inject_when": "always", "context_radius": 2, "show_dates": False, "top_k": 200},
    8_000,
)
"""The hook before this round, at a 200,000-token window."""
SETTINGS: tuple[Tuning, ...] = (
    DEFAULT,
    *(Tuning(f"default, cap {cap:,}", {}, cap) for cap in (1_500, 2_250, 3_000)),
    *(Tuning(f"always, cap {cap:,}", ALWAYS, cap) for cap in (1_000, 2_000, 4_000, 8_000)),
    TODAY,
)
"""The points of the curve, in the order they are measured."""


def _role(tuning: Tuning) -> str:
    return "default" if tuning is DEFAULT else "today" if tuning is TODAY else "setting"


def point(archives: UserArchives, row: str, window: int, questions: int | None, tuning: Tuning) -> CurvePoint:
    """One setting: every user's questions asked through ``row`` at ``window`` under ``tuning``."""
    try:
        users = archives.users(row, window)
        answers = {c.name: archives.answers(row, window, c, questions, tuning) for c, _ in users}
    except Exception as error:  # a row that cannot be built is named, not fatal
        return {
            "label": tuning.label,
            "role": _role(tuning),
            "delivered": 0.0,
            "lowest": 0.0,
            "conversations": {},
            "injected_tokens": 0.0,
            "reported_tokens": None,
            "given_any": 0.0,
            "questions": 0,
            "error": f"{type(error).__name__}: {error}",
        }
    cells = {name: cell(found, archives.played(row, window, name)) for name, found in answers.items()}
    summary = overall(answers, cells)
    return {
        "label": tuning.label,
        "role": _role(tuning),
        "delivered": summary["delivered"],
        "lowest": summary["lowest"],
        "conversations": {name: c["delivered"] for name, c in cells.items()},
        "injected_tokens": summary["injected_tokens"],
        "reported_tokens": summary["reported_tokens"],
        "given_any": summary["given_any"],
        "questions": summary["questions"],
    }


def curve(
    run: Run,
    settings: Sequence[Tuning] = SETTINGS,
    row: str = DEFAULT_ROW,
    progress: Callable[[str], None] | None = None,
) -> CurveResult:
    """Every setting at the run's largest window, on ``row``.

    Returns:
        The points, or ``{"skipped": why}`` without a LoCoMo file or when the run's sizes leave the curve out.
    """
    conversations = users_of(run)
    if isinstance(conversations, str):
        return {"skipped": conversations.replace("LoCoMo across sessions", "The curve")}
    sizes = run.sizes.cross
    if not sizes.curve:
        return {"skipped": "The curve was not run at these sizes"}
    window = max(sizes.windows)
    archives = user_archives(run, conversations)
    started = time.perf_counter()
    points = []
    for tuning in settings:
        found = point(archives, row, window, sizes.questions, tuning)
        if progress is not None:
            progress(
                f"curve, {tuning.label}: "
                + (
                    found["error"]
                    if "error" in found
                    else f"{found['delivered']} % delivered, {found['injected_tokens']} tokens"
                )
            )
        points.append(found)
    return {"row": row, "window": window, "points": points, "seconds": time.perf_counter() - started}


class TokenCurve(Measurement):
    """Delivered against injected tokens for the default and the other settings, at the largest window."""

    name: ClassVar[str] = "token_curve"
    label: ClassVar[str] = "delivered against injected tokens"

    def measure(self, run: Run) -> CurveResult:
        """Every setting of :data:`SETTINGS` on the manager + hook row."""
        return curve(run, progress=lambda line: print(f"    {line}", flush=True))


def main(argv: list[str] | None = None) -> int:
    from benchmarks.measure.cross_session import arguments, standalone_run
    from benchmarks.measure.sessions import HOOK_ROWS

    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--row", default=DEFAULT_ROW, choices=list(HOOK_ROWS))
    args = parser.parse_args(argv)
    curve(standalone_run(args), row=args.row, progress=print)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
