"""Relevance: whether a turn needs the past, and which hits are worth their tokens. Pure functions, no I/O.

Every search returns hits, however unrelated the query: "What is 2+2?" still has a nearest archived message. Two
rules keep such turns from paying for a full budget of archived context:

1. **A turn gate, calibrated on the archive** (``relevance``). ``best_similarity`` is the query's cosine
   similarity to its nearest archived message; the archive's ``floor`` is the ``PROBE_QUANTILE`` quantile of the
   same value for ``PROBES``, generic questions no archive is about (computed per archive: an archive whose
   messages are all alike answers every query closely, a small one answers them loosely). A turn at least
   ``full_margin`` above the floor is ``"relevant"``; one at least ``band_margin`` from it (a margin below zero
   reaches under the floor) is ``"uncertain"`` and gets a small budget, if it shares a word with the archive (an
   uncertain turn without one reads ``"unrelated"``: see below); below, ``"unrelated"``, nothing. Without a
   similarity or a floor (a lexical search, an embedder that is down, an archive with nothing embedded) it is
   ``"unknown"``.
2. **A relative cut** (``relative_cut``): of the hits, keep those scoring at least ``cut`` times the best hit's
   score, so a question with one clear answer brings a few messages, not a budget's worth of near-misses.

Measured on the development half of LoCoMo, each conversation archived whole and every question asked with only
the question in context (leave-one-conversation-out: constants chosen on four conversations, reported on the
fifth; 997 questions, 200 unrelated prompts against each archive): today's hook at a 2,000-token cap delivered
89.6 % of the evidence and gave every unrelated prompt the full cap; with the gate (``full_margin`` 0.05,
``band_margin`` -0.025 on the 0.9 quantile of the probes), the cut at 0.3 and a 2,500-token cap, 90.3 % of the
evidence at 1,901 tokens per question, and 102 tokens per unrelated prompt on average (78 % of them got nothing).
On those archives every real question shared a word with its archive; of the unrelated prompts, 0.3 % were
uncertain with none. On a small archive of a user's own questions about the world (``benchmarks.personal``), a
new question about the world came near the floor by meaning alone ("What is the capital of France?" against
"About 1.609 kilometres."): near the floor, no word in common reads unrelated.
Questions that do not name the people of the conversation ("When did I ...?") resemble the archive less, and the
gate then cost about 5 points of delivery: ``SemanticMemoryHook(inject_when="always")`` turns it off.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._terms import tokenize
from strands_semantic_memory.retrieval._passages import Passage

__all__ = [
    "PROBES",
    "InjectWhen",
    "Relevance",
    "RelevanceRule",
    "budget_share",
    "gated",
    "probe_floor",
    "relative_cut",
    "relevance",
]

InjectWhen = Literal["relevant", "always"]
"""When archived messages are brought into a turn, by the hook or for Strands' injection by the store:
``"relevant"`` (only when the turn resembles what the archive holds more than generic questions do: ``relevance``
is ``"relevant"``, or ``"uncertain"`` within a small budget) or ``"always"`` (every turn, up to the budget)."""

GateReading = tuple["Relevance", float | None, float | None]
"""What the gate reads of a search: its relevance, its best similarity and the archive's floor."""

Relevance = Literal["relevant", "uncertain", "unrelated", "unknown"]
"""How much a turn resembles the archive (see the module docstring)."""

PROBES: tuple[str, ...] = (
    "hi there",
    "thank you very much",
    "can you help me",
    "what do you think?",
    "tell me more",
    "okay, sounds good",
    "what time is it now",
    "I have a question",
    "please continue",
    "that is all",
    "write a function that sorts a list",
    "calculate 12 times 34",
    "fix the bug in my code",
    "draft an email to my manager",
    "translate this sentence into German",
    "explain how a computer works",
    "summarize this article",
    "give me a list of ideas",
    "what is the capital of France",
    "who was the first president",
    "how does electricity work",
    "what is the population of the world",
    "recommend a book",
    "tell me a story",
    "what is the meaning of life",
    "define the word 'entropy'",
    "how do airplanes fly",
    "what is machine learning",
    "convert kilometers to miles",
    "what is the weather like",
)
"""Generic questions no archive is about: how close they get to an archive sets its floor."""

PROBE_QUANTILE = 0.9
"""The quantile of the probes' best similarities that is the archive's floor."""


@dataclass(frozen=True, kw_only=True)
class RelevanceRule:
    """The gate's margins around the archive's floor, and the relative cut.

    Attributes:
        full_margin: A turn this far above the floor or more is ``"relevant"`` (cosine units).
        band_margin: A turn this far from the floor or more (negative: below it) is at least ``"uncertain"``.
        cut: Hits scoring under this share of the best hit's score are left out (0 keeps every hit).
        ramp_margin: A relevant turn gets its full budget from this far above the floor on; nearer the floor its
            budget grows from the uncertain turn's to the full one (``budget_share``).
    """

    full_margin: float = 0.05
    band_margin: float = -0.025
    cut: float = 0.3
    ramp_margin: float = 0.15

    def __post_init__(self) -> None:
        """Check the margins and the cut.

        Raises:
            ConfigurationError: If a value is not a finite number, the band's margin exceeds the full one, or the
                cut is outside 0..1.
        """
        for name in ("full_margin", "band_margin", "cut"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ConfigurationError(f"{name} must be a finite number, got {value!r}")
        if self.band_margin > self.full_margin:
            raise ConfigurationError(
                f"band_margin ({self.band_margin}) must not exceed full_margin ({self.full_margin})"
            )
        if not 0.0 <= self.cut <= 1.0:
            raise ConfigurationError(f"cut must be in 0..1, got {self.cut!r}")


DEFAULT_RULE = RelevanceRule()


def probe_floor(similarities: Sequence[float], quantile: float = PROBE_QUANTILE) -> float | None:
    """The archive's floor: the ``quantile`` of the probes' best similarities (None without any).

    Linear interpolation between the two nearest ranks, as ``numpy.quantile`` does by default.
    """
    values = sorted(s for s in similarities if math.isfinite(s))
    if not values:
        return None
    position = quantile * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def relevance(best_similarity: float | None, floor: float | None, rule: RelevanceRule = DEFAULT_RULE) -> Relevance:
    """How much a turn whose nearest archived message is ``best_similarity`` away resembles the archive."""
    if best_similarity is None or floor is None or not math.isfinite(best_similarity):
        return "unknown"
    if best_similarity >= floor + rule.full_margin:
        return "relevant"
    if best_similarity >= floor + rule.band_margin:
        return "uncertain"
    return "unrelated"


def budget_share(best_similarity: float | None, floor: float | None, rule: RelevanceRule = DEFAULT_RULE) -> float:
    """How much of the full budget a relevant turn gets: 1 at ``ramp_margin`` above the floor or more, else less.

    0 at ``full_margin`` (where the uncertain turn's small budget applies), linearly up to 1. Measured on LoCoMo's
    development half with 200 unrelated prompts per archive: 3 % of the unrelated prompts read as relevant, all of
    them less than 0.15 above the floor, and took most of the tokens unrelated prompts cost; 90 % of the real
    questions are more than 0.15 above it.
    """
    if best_similarity is None or floor is None or rule.ramp_margin <= rule.full_margin:
        return 1.0
    return min(1.0, max(0.0, (best_similarity - floor - rule.full_margin) / (rule.ramp_margin - rule.full_margin)))


def relative_cut(ranked: Sequence[tuple[int, float]], cut: float) -> list[tuple[int, float]]:
    """The ``(index, score)`` pairs (best first) scoring at least ``cut`` times the best score.

    The best hit is always kept. A best score of zero or below keeps every hit (the share means nothing then).
    """
    if not ranked:
        return []
    best = ranked[0][1]
    if cut <= 0 or best <= 0:
        return list(ranked)
    threshold = cut * best
    return [pair for pair in ranked if pair[1] >= threshold]


MIN_TERMS = 2
"""A turn needs at least this many distinct terms (``messages._terms``) to be given earlier messages under the gate:
of 200 unrelated prompts against LoCoMo archives, the greetings and thanks that read as relevant had one at most,
and every question of LoCoMo's development half has two or more, or names someone ("Who is Anthony?")."""


def _says_little(query: str) -> bool:
    """Fewer than ``MIN_TERMS`` terms, a name (a capitalized word after the first) counting as two."""
    names = [w for w in re.findall(r"\w+", query)[1:] if w[:1].isupper()]
    return len(set(tokenize(query))) + len(names) < MIN_TERMS


def gated(
    passages: Sequence[Passage],
    hits: Sequence[tuple[int, float]],
    tokens: int,
    reading: GateReading,
    small: int,
    query: str,
) -> tuple[list[Passage], int, list[Passage]]:
    """What a turn may be given under the gate (``inject_when="relevant"``), for the hook and the store alike.

    Args:
        passages: The search's passages.
        hits: ``(index, score)`` of its hits, best first.
        tokens: The turn's full budget.
        reading: ``(relevance, best_similarity, floor)`` of the search.
        small: The uncertain turn's budget (``ContextBudget.uncertain_memory_tokens``).
        query: The turn's text: one with fewer than ``MIN_TERMS`` terms ("Hi!", "What's up?", "thanks!") says
            nothing to look up, however much an archive of small talk resembles it, and gets nothing.

    Returns:
        The passages whose hits pass the relative cut, the turn's token budget (0 for an unrelated turn, ``small`` for
        an uncertain one, up to ``tokens`` for a relevant one by ``budget_share``), and the passages left out.
    """
    relevance_of, best, floor = reading
    if relevance_of == "unrelated" or _says_little(query):
        return [], 0, list(passages)
    if relevance_of != "relevant":
        tokens = min(tokens, small)
    else:
        tokens = int(min(small, tokens) + max(tokens - small, 0) * budget_share(best, floor))
    kept = {i for i, _ in relative_cut(hits, DEFAULT_RULE.cut)}
    cut = [Passage(p.records, {i: s for i, s in p.hits.items() if i in kept}, p.score) for p in passages]
    return [p for p in cut if p.hits], tokens, []
