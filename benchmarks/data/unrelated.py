"""Unrelated prompts: 200 turns that nothing in a user's archive answers, to price what a memory injects for them.

A user's turns are often not about the past: arithmetic, code, trivia, a poem, small talk, a how-to. Issue 38 asks
that such a turn gets at most 100 tokens of archived context on average (ideally none), against real archives. This
set is that test's input (``unrelated_prompts.json`` beside this module, one ``{"kind", "text", "length"}`` object per
prompt).

How it was built: written by hand for the relevance study behind issue 38's gate (a study outside this
repository), by kind:
30 arithmetic, 40 coding, 35 trivia, 30 creative writing, 25 small talk and 40 instructions (how-tos, recipes,
advice); then labelled by length in words: short (at most 5; 54 prompts), medium (6 to 14; 128) and long (15 or
more; 18). None is about the LoCoMo conversations or the generated development set: no prompt names a speaker, a
person, a place or an event of them, or asks what was said before (``tests/benchmarks/data/test_unrelated.py``
checks the names against the LoCoMo file when it is there). Small talk ("Hi!", "How are you today?") and creative
prompts ("Describe a sunset on Mars") are kept on purpose: they resemble chat archives the most, so they are where a
relevance gate is tested hardest.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PROMPTS_FILE = Path(__file__).with_name("unrelated_prompts.json")
"""The set, as JSON."""
KINDS = ("arithmetic", "coding", "trivia", "creative", "smalltalk", "instructions")
"""The kinds of prompt, in the file's order."""
LENGTHS = ("short", "medium", "long")

Length = Literal["short", "medium", "long"]


@dataclass(frozen=True)
class UnrelatedPrompt:
    """One prompt: its kind (one of :data:`KINDS`), its text, and its length class (words: <= 5, 6-14, >= 15)."""

    kind: str
    text: str
    length: Length


def length_of(text: str) -> Length:
    """The length class of a prompt, by its words: short (at most 5), medium (6 to 14), long (15 or more)."""
    words = len(text.split())
    return "short" if words <= 5 else "medium" if words <= 14 else "long"


def load_unrelated_prompts(path: Path = PROMPTS_FILE) -> list[UnrelatedPrompt]:
    """The prompts, in the file's order (kind by kind)."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    return [UnrelatedPrompt(str(item["kind"]), str(item["text"]), length_of(str(item["text"]))) for item in raw]


def spread_over_kinds(prompts: list[UnrelatedPrompt], count: int | None) -> list[UnrelatedPrompt]:
    """``count`` prompts taken in turn from each kind (every kind represented); None or more than there are: all."""
    if count is None or count >= len(prompts):
        return list(prompts)
    by_kind: dict[str, list[UnrelatedPrompt]] = {}
    for prompt in prompts:
        by_kind.setdefault(prompt.kind, []).append(prompt)
    chosen: list[UnrelatedPrompt] = []
    depth = 0
    while len(chosen) < count:
        for kind in by_kind.values():
            if depth < len(kind) and len(chosen) < count:
                chosen.append(kind[depth])
        depth += 1
    return chosen


def counts(prompts: list[UnrelatedPrompt]) -> tuple[dict[str, int], dict[str, int]]:
    """How many prompts of each kind and of each length class."""
    return dict(Counter(p.kind for p in prompts)), dict(Counter(p.length for p in prompts))
