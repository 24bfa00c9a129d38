"""Restoring JSON state checks plain records on a fast path: it accepts and builds what the general path does."""

from __future__ import annotations

import copy
import json
from types import MappingProxyType

import numpy as np
import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives._state import load_state
from strands_semantic_memory.errors import StateError

MESSAGES = [
    {"role": "user", "content": [{"text": "plain words"}]},
    {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x00\x01binary"}}}]},
    {"role": "user", "content": [{"text": "a NUL \x00 and a lone surrogate \ud800"}]},
    {"role": "assistant", "content": [{"text": 'the key "__bytes_encoded__" written as text'}]},
    {"role": "user", "content": [{"text": "nested"}], "meta": {"__bytes_encoded__": True, "data": "AAE="}},
    {"role": "user", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": {"a": [1, 2.5, None]}}}]},
]


@pytest.fixture
def state(embedder) -> dict:
    memory = SemanticMemory(embedder=embedder)
    memory.add([*MESSAGES, *({"role": "user", "content": [{"text": f"note {n}"}]} for n in range(20))])
    memory.forget([3])
    return json.loads(json.dumps(memory.to_state()))


def test_plain_and_general_records_decode_alike(state):
    general = copy.deepcopy(state)
    general["records"] = [MappingProxyType(r) for r in general["records"]]  # a Mapping, not JSON's dict
    integral = copy.deepcopy(state)
    for record in integral["records"]:
        record["archived_at"] = int(record["archived_at"])  # valid, but not a float
    fast, slow, times = load_state(state), load_state(general), load_state(integral)
    assert [r.data for r in fast.records] == [r.data for r in slow.records] == [r.data for r in times.records]
    assert fast.records == slow.records
    assert [r.archived_at for r in times.records] == [float(int(r.archived_at)) for r in fast.records]
    assert np.array_equal(fast.vectors, slow.vectors)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["records"][2].update(index=s["records"][1]["index"]), r"records\[2\]\.index"),
        (lambda s: s["records"][1].update(vectors=True), r"records\[1\]\.vectors"),
        (lambda s: s["records"][4].update(archived_at=float("nan")), r"records\[4\]\.archived_at"),
        (lambda s: s["records"][0]["message"].update(role=None), r"records\[0\]\.message"),
        (lambda s: s["records"][5].update(said_at="yesterday"), r"records\[5\]\.said_at"),
        (lambda s: s["records"].__setitem__(1, []), r"records\[1\]"),
    ],
)
def test_an_invalid_record_is_still_named(state, change, message):
    broken = copy.deepcopy(state)
    change(broken)
    with pytest.raises(StateError, match=message):
        load_state(broken)


def test_restored_messages_with_bytes_and_escapes_are_found_and_kept(state, embedder):
    restored = SemanticMemory.from_state(state, embedder=embedder)
    image = restored.get(1)
    assert image is not None and image["content"][0]["image"]["source"]["bytes"] == b"\x00\x01binary"
    assert restored.get(2) == MESSAGES[2]
    assert 2 in [hit.index for hit in restored.search("lone surrogate", top_k=3)]
