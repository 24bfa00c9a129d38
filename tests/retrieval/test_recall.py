"""The recall path's pure helpers and its per-call options (the engine's store calls: ``test_store_calls.py``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives._protocol import Candidates, NeighbourContext
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.retrieval._recall import split_covered
from tests.support.conversations import distractor_conversation


@settings(max_examples=200, deadline=None)
@given(
    around=st.sets(st.integers(0, 60), max_size=8),
    radius=st.integers(0, 5),
    needed=st.lists(st.integers(0, 70), max_size=30, unique=True),
)
def test_split_covered_is_membership_in_the_covered_neighbourhoods(
    around: set[int], radius: int, needed: list[int]
) -> None:
    context = NeighbourContext(radius=radius, around=frozenset(around), similarity={}, live=frozenset())
    candidates = Candidates(dense={}, lexical={}, similarity={}, context=context)
    covered, missing = split_covered(candidates, sorted(needed))
    inside = {i for a in around for i in range(a - radius, a + radius + 1) if i >= 0}
    assert covered == [i for i in sorted(needed) if i in inside]
    assert missing == [i for i in sorted(needed) if i not in inside]


# ---------------------------------------------------------------------------------------------- per-call options


def test_per_call_options_follow_the_options_own_rules(embedder):
    """``search(top_k=0)`` is refused like ``SemanticMemory(top_k=0)``: one rule, not an empty answer."""
    memory = SemanticMemory(embedder=embedder)
    memory.add(distractor_conversation(10))
    for call, name, value in [
        (lambda: memory.search("hash tables", top_k=0), "top_k", "0"),
        (lambda: memory.search("hash tables", top_k=True), "top_k", "True"),
        (lambda: memory.retrieve("hash tables", top_k=-1), "top_k", "-1"),
        (lambda: memory.retrieve("hash tables", context_radius=-1), "context_radius", "-1"),
        (lambda: memory.search("hash tables", min_score=1.5), "min_score", "1.5"),
    ]:
        with pytest.raises(ConfigurationError, match=rf"{name}.*{value}"):
            call()
    with pytest.raises(ConfigurationError, match="top_k"):
        SemanticMemory(embedder=embedder, top_k=0)
    assert len(memory.search("hash tables", top_k=1)) == 1
    (passage,) = memory.retrieve("hash tables", top_k=1, context_radius=0)
    assert list(passage.indices) == [memory.search("hash tables", top_k=1)[0].index]
