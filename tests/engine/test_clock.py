"""The memory's clock: every record's ``archived_at`` comes from it, and time filters see it."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.errors import ConfigurationError
from tests.support.conversations import text_message

MONDAY = datetime(2023, 5, 8, 9, 30, tzinfo=timezone.utc).timestamp()
FRIDAY = datetime(2023, 5, 12, 18, 0, tzinfo=timezone.utc).timestamp()


def test_the_clock_stamps_every_record_and_time_filters_read_it(make_memory):
    now = [MONDAY]
    memory = make_memory(clock=lambda: now[0])
    [monday] = memory.add([text_message("user", "On Monday the heating engineer came about the boiler.")])
    now[0] = FRIDAY
    [friday] = memory.add([text_message("user", "On Friday the boiler was fixed for good.")])
    [said] = memory.add([text_message("user", "The boiler warranty runs out next year.")], timestamps=[MONDAY - 60])
    assert [memory.record(i).archived_at for i in (monday, friday, said)] == [MONDAY, FRIDAY, FRIDAY]
    assert memory.record(said).time == MONDAY - 60, "a time the caller gives is when it was said"
    assert {h.index for h in memory.search("boiler", top_k=10, since=FRIDAY - 1)} == {friday}
    assert {h.index for h in memory.search("boiler", top_k=10, until=MONDAY)} == {monday, said}
    [passage] = memory.retrieve("boiler", top_k=3, context_radius=3)
    assert passage.timestamps == [MONDAY, FRIDAY, MONDAY - 60]


def test_the_clock_must_be_callable_and_tell_the_time(embedder):
    with pytest.raises(ConfigurationError, match="clock"):
        SemanticMemory(embedder=embedder, clock=1_700_000_000.0)
    for broken in (lambda: float("nan"), lambda: "tuesday", lambda: None, lambda: True):
        memory = SemanticMemory(embedder=embedder, clock=broken)
        with pytest.raises(ConfigurationError, match="clock"):
            memory.add([text_message("user", "never archived")])
        assert len(memory) == 0


def test_the_clock_is_not_saved_with_the_state(embedder):
    memory = SemanticMemory(embedder=embedder, clock=lambda: MONDAY)
    memory.add([text_message("user", "said on Monday")])
    state = json.loads(json.dumps(memory.to_state()))
    assert "clock" not in json.dumps(state["options"])
    restored = SemanticMemory.from_state(state, embedder=embedder)
    assert restored.clock is not memory.clock and restored.record(0).archived_at == MONDAY
    later = SemanticMemory.from_state(state, embedder=embedder, clock=lambda: FRIDAY)
    [index] = later.add([text_message("user", "said on Friday")])
    assert later.record(index).archived_at == FRIDAY
