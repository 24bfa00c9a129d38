"""Deterministic conversations and Strands agents for tests, from the word lists and messages of the benchmarks."""

from __future__ import annotations

import random

from benchmarks.data.conversations import TOPICS, text_message

__all__ = [
    "PLANTED_TURN",
    "REFERENCE",
    "TOPICS",
    "TOPIC_TURNS",
    "distractor_conversation",
    "make_agent",
    "text_message",
]

_SUBJECTS = TOPICS
_VERBS = [
    "We discussed",
    "Let me explain",
    "Here is an update on",
    "I have a question about",
    "Thanks for the notes on",
]
_DETAILS = [
    "the meeting is on Thursday at 3pm",
    "it needs about 40 minutes",
    "we should compare two options first",
    "the draft has 12 pages",
    "Alice will review it tomorrow",
    "there were 7 open items",
    "the cost was 230 euros",
    "it depends on the weather",
    "I prefer the second approach",
    "version 2 fixed the issue",
]


def distractor_conversation(count: int, seed: int = 7) -> list[dict]:
    """A deterministic conversation of ``count`` messages on varied everyday topics."""
    rng = random.Random(seed)
    messages = []
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"{rng.choice(_VERBS)} {rng.choice(_SUBJECTS)}: {rng.choice(_DETAILS)}, and {rng.choice(_DETAILS)}."
        messages.append(text_message(role, text))
    return messages


REFERENCE = "BK-7731-QZ"
PLANTED_TURN = f"My booking reference is {REFERENCE}. Please keep it out of any summary but remember it exactly."
TOPIC_TURNS = [
    f"Question {i}: how do {a} and {b} compare for {c}?"
    for i, (a, b, c) in enumerate(
        [
            ("hash tables", "binary search trees", "lookups"),
            ("linked lists", "arrays", "insertion"),
            ("heaps", "sorted arrays", "priority queues"),
            ("tries", "hash sets", "prefix search"),
            ("B-trees", "red-black trees", "disk storage"),
            ("quicksort", "mergesort", "stability"),
            ("BFS", "DFS", "shortest paths"),
            ("Dijkstra", "Bellman-Ford", "negative edges"),
            ("union-find", "DFS", "connectivity"),
            ("skip lists", "balanced trees", "concurrency"),
            ("bloom filters", "hash sets", "memory use"),
            ("dynamic programming", "memoized recursion", "knapsack"),
        ]
    )
]


def make_agent(model, manager, hook=None, **kwargs):
    from strands import Agent

    hooks = [hook] if hook is not None else []
    return Agent(model=model, conversation_manager=manager, hooks=hooks, callback_handler=None, **kwargs)
