"""The recall path's pure helpers (the engine's store calls are in ``test_store_calls.py``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from strands_semantic_memory.retrieval._recall import split_covered
from strands_semantic_memory.stores._protocol import Candidates, NeighbourContext


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
