"""Choose which retrieved windows fit into one model call, within character and token budgets.

Whole windows are kept, most relevant first; a window too large on its own is replaced by its hit messages, each
alone; a message is never cut. Token counts come from the model's ``count_tokens`` and are cached per turn.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, fields
from typing import Any

from strands_semantic_memory.formatting._block import context_block, format_body, format_window
from strands_semantic_memory.hook._turn import Turn
from strands_semantic_memory.retrieval._windows import ContextWindow

__all__ = ["InjectionSettings", "Selection", "count_tokens", "select_windows", "single_message_window"]

logger = logging.getLogger(__name__)

_WINDOW_FIELDS = {f.name for f in fields(ContextWindow)}
GAP_PROBE = "[... 999999999 messages not shown ...]"  # the longest gap line, to bound its token count
OVERHEAD = context_block("", "")  # the block's own lines


@dataclass(frozen=True)
class InjectionSettings:
    """The hook's options that shape the injected block (read from the hook on every call: they may change)."""

    max_context_length: int | None
    max_context_tokens: int | None
    include_metadata: bool
    show_dates: bool
    keep_injected_context: bool


@dataclass
class Selection:
    """Windows chosen for one call (conversation order), those left out, the body text and its tokens."""

    chosen: list[ContextWindow]
    dropped: list[ContextWindow]
    body: str
    tokens: int | None


def single_message_window(window: ContextWindow, position: int, score: float) -> ContextWindow:
    """A window of one message of ``window`` (a hit shown on its own when its whole window does not fit)."""
    index = window.indices[position]
    values: dict[str, Any] = {
        "start": index,
        "end": index,
        "messages": [window.messages[position]],
        "hit_indices": [index],
        "score": score,
        "indices": [index],
        "hit_scores": [score],
    }
    for name in ("roles", "timestamps"):
        aligned = getattr(window, name, None)
        if name in _WINDOW_FIELDS and aligned is not None and len(aligned) == len(window.messages):
            values[name] = [aligned[position]]
    return ContextWindow(**values)


async def count_tokens(model: Any, turn: Turn | None, text: str) -> int:
    """Tokens of ``text`` as the model counts them, cached per turn.

    Without a model, or if counting fails, characters / 4 (Strands' own fallback estimate).
    """
    cache = turn.tokens if turn is not None else {}
    if text not in cache:
        try:
            if model is None:
                raise LookupError("no model to count with")
            cache[text] = await model.count_tokens([{"role": "user", "content": [{"text": text}]}])
        except Exception as error:  # a provider's counter must not break the call
            logger.debug("error=<%s> | token counting failed; estimating characters / 4", error)
            cache[text] = math.ceil(len(text) / 4)
    return cache[text]


async def _token_budget(
    settings: InjectionSettings, model: Any, projected: int | None, turn: Turn, kept_extra: int
) -> int | None:
    """The most tokens the injected lines may take on this call, or None when no token limit applies."""
    budget = settings.max_context_tokens
    if turn.token_cap is not None:
        budget = turn.token_cap if budget is None else min(budget, turn.token_cap)
    limit = getattr(model, "context_window_limit", None)
    if isinstance(limit, int) and limit > 0 and projected is not None:
        overhead = await count_tokens(model, turn, OVERHEAD)
        room = max(0, limit - projected - overhead - kept_extra)
        budget = room if budget is None else min(budget, room)
    return budget


class _Texts:
    """Each window's formatted text, computed once per selection.

    Keyed by ``id(window)``; the cache holds each window too, so a short-lived window's id is never reused by
    another window while the cache lives (which would return the wrong text).
    """

    def __init__(self, settings: InjectionSettings) -> None:
        self._settings = settings
        self._texts: dict[int, tuple[ContextWindow, str]] = {}

    def __call__(self, window: ContextWindow) -> str:
        key = id(window)
        if key not in self._texts:
            text = format_window(
                window, include_metadata=self._settings.include_metadata, show_dates=self._settings.show_dates
            )
            self._texts[key] = (window, text)
        return self._texts[key][1]


def _candidates(turn: Turn, char_budget: int | None, token_budget: int | None, text_of: _Texts) -> list[ContextWindow]:
    """Windows most relevant first; one too large on its own is replaced by its hits, each alone."""
    ranked = sorted(turn.windows, key=lambda w: (-w.score, w.start))
    candidates: list[ContextWindow] = []
    for window in ranked:
        text = text_of(window)
        fits = (char_budget is None or len(text) <= char_budget) and (
            token_budget is None or turn.tokens.get(text, 0) <= token_budget
        )
        if fits or not window.hit_indices:
            candidates.append(window)
            continue
        positions = {index: p for p, index in enumerate(window.indices)}
        hits = sorted(zip(window.hit_scores, window.hit_indices, strict=False), key=lambda p: (-p[0], p[1]))
        candidates.extend(single_message_window(window, positions[i], s) for s, i in hits if i in positions)
    return candidates


async def select_windows(
    settings: InjectionSettings, model: Any, projected: int | None, turn: Turn, kept_extra: int
) -> Selection:
    """Choose windows for this call within the character and token budgets.

    Args:
        settings: The hook's current options.
        model: The model that counts tokens (None: characters / 4).
        projected: Strands' projected input tokens of the call, when known.
        turn: The turn, with its retrieved windows, caps and token cache.
        kept_extra: Tokens already taken by earlier turns' kept context.

    Returns:
        The chosen windows in conversation order, those left out, the body text, and its tokens (None when no
        token budget applied or nothing was chosen).
    """
    char_budget = settings.max_context_length
    if turn.char_cap is not None:
        char_budget = turn.char_cap if char_budget is None else min(char_budget, turn.char_cap)
    token_budget = await _token_budget(settings, model, projected, turn, kept_extra)
    text_of = _Texts(settings)
    if token_budget is not None:  # count every possible piece once per turn (cached)
        await count_tokens(model, turn, GAP_PROBE)
        for window in turn.windows:
            await count_tokens(model, turn, text_of(window))
            positions = {index: p for p, index in enumerate(window.indices)}
            for score, index in zip(window.hit_scores, window.hit_indices, strict=False):
                if index in positions:
                    await count_tokens(model, turn, text_of(single_message_window(window, positions[index], score)))
    candidates = _candidates(turn, char_budget, token_budget, text_of)
    chosen: list[ContextWindow] = []
    body, tokens = "", 0
    for candidate in candidates:
        trial = sorted([*chosen, candidate], key=lambda w: w.start)
        trial_texts = [text_of(w) for w in trial]
        trial_body = format_body(
            trial, include_metadata=settings.include_metadata, show_dates=settings.show_dates, texts=trial_texts
        )
        if char_budget is not None and len(trial_body) > char_budget:
            continue
        trial_tokens = 0
        if token_budget is not None:
            counted = [await count_tokens(model, turn, t) for t in trial_texts]
            trial_tokens = sum(counted) + (len(trial) - 1) * turn.tokens[GAP_PROBE]
            if trial_tokens > token_budget:
                continue
        chosen, body, tokens = trial, trial_body, trial_tokens
    chosen_ids = {id(w) for w in chosen}
    dropped = [w for w in candidates if id(w) not in chosen_ids]
    return Selection(chosen, dropped, body, tokens if token_budget is not None and chosen else None)
