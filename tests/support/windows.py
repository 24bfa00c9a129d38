"""Reference versions of the window packing and the hook's selection, written plainly, to check the fast ones.

``reference_pack_windows`` keeps a set of chosen ``(window, position)`` pairs and asks for every size;
``reference_selection`` formats every message it sizes and the chosen windows again for the body. The library's
versions keep per-message texts and flags instead; the tests check that both give the same windows and text.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from strands_semantic_memory.budget import estimate_tokens
from strands_semantic_memory.formatting._block import format_body, format_window_message
from strands_semantic_memory.hook._budget import GAP_PROBE
from strands_semantic_memory.retrieval._windows import ContextWindow


def reference_subset_window(window: ContextWindow, positions: Sequence[int], score: float | None = None):
    indices = [window.indices[p] for p in positions]
    chosen = set(indices)
    pairs = [(i, s) for i, s in zip(window.hit_indices, window.hit_scores, strict=False) if i in chosen]
    aligned = len(window.indices) == len(window.messages)
    return ContextWindow(
        start=indices[0],
        end=indices[-1],
        messages=[window.messages[p] for p in positions] if aligned else [],
        hit_indices=[i for i, _ in pairs],
        score=score if score is not None else max((s for _, s in pairs), default=window.score),
        indices=indices,
        hit_scores=[s for _, s in pairs],
        roles=[window.roles[p] for p in positions] if len(window.roles) == len(window.indices) else [],
        timestamps=[window.timestamps[p] for p in positions] if len(window.timestamps) == len(window.indices) else [],
    )


def _runs(positions: Iterable[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for position in sorted(positions):
        if runs and position == runs[-1][-1] + 1:
            runs[-1].append(position)
        else:
            runs.append([position])
    return runs


def reference_pack_windows(windows, sizes, budgets, *, gap, skip=None):
    """``pack_windows``' rule, step by step: hits best first, then neighbours nearest a chosen message first."""
    units = []
    for w, window in enumerate(windows):
        hit_score = dict(zip(window.hit_indices, window.hit_scores, strict=False))
        hit_positions = [p for p, index in enumerate(window.indices) if index in hit_score]
        for p, index in enumerate(window.indices):
            if skip is not None and skip(window, p):
                continue
            if index in hit_score:
                key = (0, -hit_score[index], 0.0, index)
            else:
                distance = min((abs(p - h) for h in hit_positions), default=len(window.indices))
                key = (1, float(distance), -window.score, index)
            units.append((key, w, p))
    units.sort()
    used = [0] * len(budgets)
    runs_total = 0
    chosen: set[tuple[int, int]] = set()
    for key, w, p in units:
        left, right = (w, p - 1) in chosen, (w, p + 1) in chosen
        if key[0] == 1 and not (left or right):
            continue
        runs_after = runs_total + 1 - left - right
        size = sizes(windows[w], p)
        trial = [
            used[d] + size[d] + gap[d] * (max(0, runs_after - 1) - max(0, runs_total - 1)) for d in range(len(budgets))
        ]
        if all(budget is None or trial[d] <= budget for d, budget in enumerate(budgets)):
            chosen.add((w, p))
            used, runs_total = trial, runs_after
    picked, dropped = [], []
    considered = {(w, p) for _, w, p in units}
    for w, window in enumerate(windows):
        mine = [p for p in range(len(window.indices)) if (w, p) in chosen]
        rest = [p for p in range(len(window.indices)) if (w, p) in considered and (w, p) not in chosen]
        picked.extend(reference_subset_window(window, run) for run in _runs(mine))
        dropped.extend((-window.score, w, reference_subset_window(window, run)) for run in _runs(rest))
    picked.sort(key=lambda window: window.start)
    return picked, [window for _, _, window in sorted(dropped, key=lambda item: (item[0], item[1]))]


def reference_selection(
    windows: Sequence[ContextWindow],
    budgets: tuple[int | None, int],
    *,
    include_metadata: bool,
    show_dates: bool,
    seen: Collection[str] = frozenset(),
) -> tuple[list[ContextWindow], list[ContextWindow], str]:
    """The hook's choice within ``(characters, tokens)``, every message formatted each time it is needed."""

    def sizes(window: ContextWindow, position: int) -> tuple[int, int]:
        text = format_window_message(window, position, include_metadata=include_metadata, show_dates=show_dates)
        text += "\n\n"
        return len(text), estimate_tokens(text)

    def skip(window: ContextWindow, position: int) -> bool:
        tracking_id = window.messages[position].get("tracking_id")
        return isinstance(tracking_id, str) and tracking_id in seen

    gap = GAP_PROBE + "\n"
    usable = [w for w in windows if len(w.indices) == len(w.messages)]
    chosen, dropped = reference_pack_windows(
        usable, sizes, list(budgets), gap=(len(gap), estimate_tokens(gap)), skip=skip
    )
    body = format_body(chosen, include_metadata=include_metadata, show_dates=show_dates)
    return chosen, dropped, body
