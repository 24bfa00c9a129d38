"""The hook's choice of retrieved messages: the same passages and text as formatting every message each time."""

from __future__ import annotations

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.budget import ContextBudget, estimate_tokens
from strands_semantic_memory.hook._options import HookOptions
from strands_semantic_memory.hook._plan import CallPlan
from strands_semantic_memory.hook._selection import select_passages
from tests.support.conversations import TOPICS, distractor_conversation
from tests.support.passages import reference_selection

QUERIES = [f"What did we say about {topic}?" for topic in TOPICS[:6]]
CAPS = [(None, None), (1500, None), (None, 120), (4000, 40), (120, None)]


@pytest.fixture(scope="module")
def archived(embedder):
    memory = SemanticMemory(embedder=embedder)
    messages = [{**m, "tracking_id": f"t{i}"} for i, m in enumerate(distractor_conversation(300))]
    memory.add(messages, timestamps=[1.7e9 + 3600.0 * i for i in range(len(messages))])
    return memory, frozenset(f"t{i}" for i in range(260, 300))


@pytest.mark.parametrize("include_metadata, show_dates", [(False, False), (True, False), (False, True), (True, True)])
def test_the_choice_and_its_text_are_those_of_formatting_every_message_each_time(
    archived, include_metadata, show_dates
):
    memory, recent = archived
    fallback = ContextBudget().memory_tokens(None)
    compared = 0
    for query in QUERIES:
        passages = memory.retrieve(query, top_k=40, context_radius=2)
        for chars, tokens in CAPS:
            options = HookOptions(
                max_context_length=chars,
                max_context_tokens=tokens,
                include_metadata=include_metadata,
                show_dates=show_dates,
            )
            budgets = (chars, fallback if tokens is None else min(fallback, tokens))
            for seen in (frozenset(), recent):
                plan = CallPlan(options=options, budget=ContextBudget(), window=None, used=None, held_ids=seen)
                selection = select_passages(plan, passages)
                chosen, dropped, body = reference_selection(
                    passages, budgets, include_metadata=include_metadata, show_dates=show_dates, seen=seen
                )
                assert (selection.chosen, selection.left_out, selection.body) == (chosen, dropped, body)
                assert selection.tokens == (estimate_tokens(body) if chosen else 0)
                compared += bool(chosen) and bool(dropped)
    assert compared > len(QUERIES) * len(CAPS), "most choices both took and left out messages"
