"""Long messages for chunking tests: handover notes of several paragraphs, a fact placed in the last one."""

from __future__ import annotations

import random

_SENTENCES = (
    "The nightly export runs at two in the morning and writes its files to the shared bucket.",
    "Most of the alerts from the staging cluster can be ignored unless they fire for more than an hour.",
    "The billing dashboard is slow on Mondays because the weekly reports are generated then.",
    "If a customer asks for a refund, check the ledger first and confirm the payment actually settled.",
    "We moved the design documents to the new wiki last month, but some links still point to the old one.",
    "The mobile release train leaves every second Thursday, and the cutoff is noon the day before.",
    "Keep an eye on the disk usage of the log servers; they filled up twice this quarter.",
    "The vendor contract renews automatically unless someone cancels it sixty days ahead.",
    "New joiners should pair with someone from the platform team during their first on-call week.",
    "The retry settings for the payment client were tuned after the outage in the spring.",
    "Database migrations go through the review channel and never run on Fridays.",
    "The quarterly planning spreadsheet has one tab per team and a summary tab that nobody edits by hand.",
    "Our load tests use recorded traffic from a normal Tuesday, scaled up three times.",
    "Support tickets tagged urgent are routed to the duty engineer within fifteen minutes.",
    "The feature flag service caches its answers for thirty seconds, so changes are not instant.",
    "Expense reports are due by the fifth of each month and need a receipt for anything over fifty dollars.",
)


def handover_note(seed: int, fact: str, paragraphs: int = 6) -> str:
    """A note of about 100 words per paragraph, ``fact`` closing the last paragraph (deterministic for a seed)."""
    rng = random.Random(seed)
    body = [" ".join(rng.sample(_SENTENCES, 6)) for _ in range(paragraphs)]
    body[-1] = f"{body[-1]} {fact}"
    return "\n\n".join(body)
