"""Unrelated prompts: 200 turns nothing in a user's archive answers, to price what a memory injects for them.

``unrelated_prompts.json`` beside this module (one ``{"kind", "text", "length"}`` object per prompt), written by hand
for the relevance gate's study: 30 arithmetic, 40 coding, 35 trivia, 30 creative writing, 25 small talk and 40
instructions, none about a LoCoMo conversation or a generated one (no speaker, person, place or event of theirs, and
nothing asking what was said before). Small talk and creative prompts resemble chat archives the most: they are
where a relevance gate is tested hardest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

PROMPTS_FILE = Path(__file__).with_name("unrelated_prompts.json")


@dataclass(frozen=True)
class Prompt:
    """One prompt: its kind, its text, and its length class (words: short <= 5, medium 6-14, long >= 15)."""

    kind: str
    text: str
    length: str


def load(count: int | None = None) -> list[Prompt]:
    """The prompts in the file's order; ``count`` of them taken in turn from each kind (None: all)."""
    prompts = [Prompt(str(p["kind"]), str(p["text"]), str(p["length"])) for p in json.loads(PROMPTS_FILE.read_text())]
    if count is None or count >= len(prompts):
        return prompts
    kinds: dict[str, list[Prompt]] = {}
    for prompt in prompts:
        kinds.setdefault(prompt.kind, []).append(prompt)
    spread = [p for depth in range(len(prompts)) for group in kinds.values() for p in group[depth : depth + 1]]
    return spread[:count]
