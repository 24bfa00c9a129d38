"""Reference versions of the passage packing and the hook's selection, written plainly, to check the fast ones.

``reference_pack_passages`` keeps a set of chosen ``(passage, position)`` pairs and asks for every size;
``reference_selection`` formats every message it sizes and the chosen passages again for the body. The library's
versions keep per-message texts and flags instead; the tests check that both give the same passages and text.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from strands_semantic_memory.budget import estimate_tokens
from strands_semantic_memory.formatting._block import GAP, format_body, format_passage_message
from strands_semantic_memory.retrieval._passages import Passage


def reference_subset_passage(passage: Passage, positions: Sequence[int], score: float | None = None):
    indices = [passage.indices[p] for p in positions]
    chosen = set(indices)
    pairs = [(i, s) for i, s in zip(passage.hit_indices, passage.hit_scores, strict=False) if i in chosen]
    aligned = len(passage.indices) == len(passage.messages)
    return Passage(
        start=indices[0],
        end=indices[-1],
        messages=[passage.messages[p] for p in positions] if aligned else [],
        hit_indices=[i for i, _ in pairs],
        score=score if score is not None else max((s for _, s in pairs), default=passage.score),
        indices=indices,
        hit_scores=[s for _, s in pairs],
        roles=[passage.roles[p] for p in positions] if len(passage.roles) == len(passage.indices) else [],
        timestamps=[passage.timestamps[p] for p in positions]
        if len(passage.timestamps) == len(passage.indices)
        else [],
    )


def _runs(positions: Iterable[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for position in sorted(positions):
        if runs and position == runs[-1][-1] + 1:
            runs[-1].append(position)
        else:
            runs.append([position])
    return runs


def reference_pack_passages(passages, sizes, budgets, *, gap, skip=None):
    """``pack_passages``' rule, step by step: hits best first, then neighbours nearest a chosen message first."""
    units = []
    for w, passage in enumerate(passages):
        hit_score = dict(zip(passage.hit_indices, passage.hit_scores, strict=False))
        hit_positions = [p for p, index in enumerate(passage.indices) if index in hit_score]
        for p, index in enumerate(passage.indices):
            if skip is not None and skip(passage, p):
                continue
            if index in hit_score:
                key = (0, -hit_score[index], 0.0, index)
            else:
                distance = min((abs(p - h) for h in hit_positions), default=len(passage.indices))
                key = (1, float(distance), -passage.score, index)
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
        size = sizes(passages[w], p)
        trial = [
            used[d] + size[d] + gap[d] * (max(0, runs_after - 1) - max(0, runs_total - 1)) for d in range(len(budgets))
        ]
        if all(budget is None or trial[d] <= budget for d, budget in enumerate(budgets)):
            chosen.add((w, p))
            used, runs_total = trial, runs_after
    picked, dropped = [], []
    considered = {(w, p) for _, w, p in units}
    for w, passage in enumerate(passages):
        mine = [p for p in range(len(passage.indices)) if (w, p) in chosen]
        rest = [p for p in range(len(passage.indices)) if (w, p) in considered and (w, p) not in chosen]
        picked.extend(reference_subset_passage(passage, run) for run in _runs(mine))
        dropped.extend((-passage.score, w, reference_subset_passage(passage, run)) for run in _runs(rest))
    picked.sort(key=lambda passage: passage.start)
    return picked, [passage for _, _, passage in sorted(dropped, key=lambda item: (item[0], item[1]))]


def reference_selection(
    passages: Sequence[Passage],
    budgets: tuple[int | None, int],
    *,
    include_metadata: bool,
    show_dates: bool,
    seen: Collection[str] = frozenset(),
) -> tuple[list[Passage], list[Passage], str]:
    """The hook's choice within ``(characters, tokens)``, every message formatted each time it is needed."""

    def sizes(passage: Passage, position: int) -> tuple[int, int]:
        text = format_passage_message(passage, position, include_metadata=include_metadata, show_dates=show_dates)
        text += "\n\n"
        return len(text), estimate_tokens(text)

    def skip(passage: Passage, position: int) -> bool:
        tracking_id = passage.messages[position].get("tracking_id")
        return isinstance(tracking_id, str) and tracking_id in seen

    gap = GAP + "\n"
    usable = [w for w in passages if len(w.indices) == len(w.messages)]
    chosen, dropped = reference_pack_passages(
        usable, sizes, list(budgets), gap=(len(gap), estimate_tokens(gap)), skip=skip
    )
    body = format_body(chosen, include_metadata=include_metadata, show_dates=show_dates)
    return chosen, dropped, body
