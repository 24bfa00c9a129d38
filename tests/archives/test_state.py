import base64
import copy
import json

import numpy as np
import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.errors import EmbeddingModelMismatchError, StateError
from tests.support.conversations import distractor_conversation, text_message
from tests.support.embedders import CountingEmbedder
from tests.support.scores import assert_same_hits

QUERIES = ["What about the kitchen renovation?", "tax deductions cost", "who reviews the draft?"]


@pytest.fixture
def saved(embedder):
    memory = SemanticMemory(embedder=embedder, max_num_archived_messages=150)
    messages = distractor_conversation(200)
    messages[190] = {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x00\x01binary"}}}]}
    memory.add(messages)
    return memory


def test_round_trip_gives_identical_results_without_embedding(saved, embedder):
    state = json.loads(json.dumps(saved.to_state()))  # through real JSON
    counting = CountingEmbedder(embedder)
    restored = SemanticMemory.from_state(state, embedder=counting, max_num_archived_messages=150)
    assert counting.document_calls == 0 and counting.query_calls == 0
    assert list(restored.indices) == list(saved.indices) == list(range(50, 200))
    assert restored.get(190) == saved.get(190)
    for query in QUERIES:
        assert restored.search(query, top_k=8) == saved.search(query, top_k=8)
        assert restored.retrieve(query) == saved.retrieve(query)
    assert counting.document_calls == 0
    assert restored.add([text_message("user", "new")]) == [200]
    assert restored.get_memory_usage_stats()["evicted_count"] == 51


def test_from_state_defaults_to_the_archives_model(saved):
    restored = SemanticMemory.from_state(saved.to_state())
    assert restored.embedder.model_id == saved.embedder.model_id


def test_pending_messages_survive_a_round_trip(embedder):
    from tests.support.embedders import FlakyEmbedder

    flaky = FlakyEmbedder(embedder)
    flaky.failing = True
    memory = SemanticMemory(embedder=flaky)
    memory.add([text_message("user", "the locker code is 4412")])
    restored = SemanticMemory.from_state(json.loads(json.dumps(memory.to_state())), embedder=embedder)
    assert restored.get_memory_usage_stats()["pending_embedding_count"] == 1
    assert restored.search("locker code")[0].index == 0


def test_other_model_is_refused_unless_reembedding(saved, embedder):
    state = saved.to_state()
    state["embedding"]["model_id"] = "some-other-model"
    with pytest.raises(EmbeddingModelMismatchError, match="reembed=True"):
        SemanticMemory.from_state(state, embedder=embedder)
    counting = CountingEmbedder(embedder)
    restored = SemanticMemory.from_state(state, embedder=counting, reembed=True)
    assert counting.documents_embedded >= 149  # every text message embedded again
    # Embedded again, in other batches: the same hits, their scores equal up to float32 rounding.
    assert_same_hits(restored.search(QUERIES[0], top_k=5), saved.search(QUERIES[0], top_k=5))


def _corruptions(state):
    def mutate(fn):
        broken = copy.deepcopy(state)
        fn(broken)
        return broken

    yield "not a dict", [1, 2, 3]
    yield "foreign format", {"format": "something-else", "version": 1}
    yield "future version", mutate(lambda s: s.update(version=99))
    yield "another version", mutate(lambda s: s.update(version=2))
    yield "version as text", mutate(lambda s: s.update(version="1"))
    yield "no forgotten count", mutate(lambda s: s.pop("forgotten_count"))
    yield "a record without its archive time", mutate(lambda s: s["records"][0].pop("archived_at"))
    yield "missing records", mutate(lambda s: s.pop("records"))
    yield "record not a message", mutate(lambda s: s["records"][0].update(message={"x": 1}))
    yield "unsorted indices", mutate(lambda s: s["records"].reverse())
    yield "bad base64", mutate(lambda s: s["vectors"].update(data="***"))
    yield "truncated vectors", mutate(lambda s: s["vectors"].update(data=s["vectors"]["data"][:-8]))
    yield "vector count lie", mutate(lambda s: s["records"][0].update(vectors=3))
    yield "wrong dimension", mutate(lambda s: s["embedding"].update(dimension=383))
    yield (
        "nan vectors",
        mutate(
            lambda s: s["vectors"].update(
                data=base64.b64encode(
                    np.full(len(base64.b64decode(s["vectors"]["data"])) // 4, np.nan, dtype="<f4").tobytes()
                ).decode()
            )
        ),
    )
    yield "index type", mutate(lambda s: s["records"][0].update(index="12"))


def test_corrupt_or_foreign_state_is_a_clear_error(saved, embedder):
    state = saved.to_state()
    for name, broken in _corruptions(state):
        try:
            SemanticMemory.from_state(broken, embedder=embedder)
        except StateError:
            continue
        pytest.fail(f"corrupt state ({name}) was accepted")
    assert len(SemanticMemory.from_state(state, embedder=embedder)) == 150


def test_load_state_replaces_existing_content(saved, embedder):
    other = SemanticMemory(embedder=embedder)
    other.add([text_message("user", "stale message about zebras")])
    other.load_state(saved.to_state())
    assert all(h.index >= 50 for h in other.search("zebras", top_k=20))
    assert len(other) == 150


# ------------------------------------------------------------------ what a state may claim


def small_state(embedder):
    """A three-message in-process state (records 0..2, nothing evicted or forgotten), through real JSON."""
    memory = SemanticMemory(embedder=embedder)
    memory.add([text_message("user", f"note {n} about the harbour") for n in range(3)])
    return json.loads(json.dumps(memory.to_state()))


def test_counters_claiming_more_than_the_state_holds_are_refused(embedder):
    state = small_state(embedder)
    claims = [{"next_index": 10}, {"evicted_count": 4}, {"forgotten_count": 2}, {"next_index": 10, "evicted_count": 8}]
    for claim in claims:
        with pytest.raises(StateError, match="claim"):
            SemanticMemory.from_state({**state, **claim}, embedder=embedder)
    # Counters that account for every index are what a real archive saves: seven forgotten after the three.
    consistent = {**state, "next_index": 10, "forgotten_count": 7}
    restored = SemanticMemory.from_state(consistent, embedder=embedder)
    assert restored.indices == [0, 1, 2]
    assert restored.add([text_message("user", "next")]) == [10]


@pytest.mark.parametrize("gap", [2**21 + 1, 2**40])
def test_a_huge_index_gap_is_refused_before_anything_is_allocated(embedder, gap):
    """A few bytes of state cannot claim millions of slots: the holes a restore would allocate are bounded."""
    state = small_state(embedder)
    forged = {**state, "next_index": 3 + gap, "forgotten_count": gap}
    memory = SemanticMemory(embedder=embedder)
    memory.add([text_message("user", "kept")])
    with pytest.raises(StateError, match="holes"):
        memory.load_state(forged)
    assert [m["content"][0]["text"] for _, m in memory.messages()] == ["kept"]


def test_forgotten_messages_leave_holes_a_restore_accepts(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add([text_message("user", f"line {n}") for n in range(40)])
    memory.forget([n for n in range(1, 39)])  # everything between the first and the last
    restored = SemanticMemory.from_state(json.loads(json.dumps(memory.to_state())), embedder=embedder)
    assert restored.indices == [0, 39]
    assert restored.get_memory_usage_stats()["forgotten_count"] == 38
