"""A fact, its paraphrased question and planning turns for tests of Strands' ``ContextManager`` with the storage."""

from __future__ import annotations

SUMMARY_PROMPT_START = "You are a summarization assistant"  # Strands' ContextManager summary prompt
FACT = "My grandmother grew up in Lisbon, in a small flat above a bakery near the river."
QUESTION = "Which city was my grandma raised in?"  # a paraphrase: no content word of FACT
_PLANNED = [
    "the garden irrigation schedule",
    "the quarterly budget review",
    "the sourdough starter feeding",
    "the database migration steps",
    "the bicycle repair parts",
    "the conference talk outline",
    "the kitchen renovation quotes",
    "the chess opening repertoire",
    "the team dinner booking",
    "the solar panel installation",
    "the invoice backlog triage",
    "the onboarding plan for new hires",
]
_PHASES = ("first pass", "second pass", "third pass")


def planning_turns(passes: int) -> list[str]:
    """User turns that plan twelve topics, ``passes`` times over (1 to 3): filler that pushes a fact out."""
    return [
        f"Let's plan {topic} ({phase}): draft a short checklist, list the open questions, and say who owns each step."
        for phase in _PHASES[:passes]
        for topic in _PLANNED
    ]
