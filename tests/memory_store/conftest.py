"""An archive larger than the budget: ferry booking notes, each between six messages about something else."""

from __future__ import annotations

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.embeddings import Embedder

TOPICS = ["the garden", "a film", "the weather", "a recipe", "football", "a novel"]


@pytest.fixture(scope="session", autouse=True)
def warm(embedder: Embedder) -> None:
    """The model loaded before the first search (a search waits two seconds at most for its query vector)."""
    embedder.embed_queries(["warm up"])


@pytest.fixture(scope="session")
def ferries(embedder: Embedder) -> SemanticMemory:
    """40 notes, each its own passage (six other messages apart: more than two context radii), embedded."""
    memory = SemanticMemory(embedder=embedder, embedding="inline")
    messages = []
    for i in range(40):
        note = f"Ferry booking note {i}: the ferry leaves from pier {i}, booking code FB-{i:04d}; bring the ticket."
        chat = [f"Chat {i}-{j}: we talked about {TOPICS[j]} for a while, nothing to remember." for j in range(6)]
        for position, words in enumerate([note, *chat]):
            messages.append({"role": "user" if position % 2 == 0 else "assistant", "content": [{"text": words}]})
    memory.add(messages)
    return memory
