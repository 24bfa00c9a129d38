"""SemanticMemory: archiving byte for byte, one search with passages, forgetting for good, state, bounded waits."""

from __future__ import annotations

import json
import time

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.errors import (
    ConfigurationError,
    EmbeddingError,
    InvalidMessageError,
    InvalidMessageTypeError,
    MessageNotFoundError,
    SemanticMemoryError,
    StateError,
)
from tests.support.faults import Faulty, text

FACTS = [
    text("user", "Our staging database is db-stg-04, port 6432.", "t0"),
    text("assistant", "Noted: db-stg-04 on port 6432.", "t1"),
    text("user", "Which sorting algorithms are stable?", "t2"),
    text("assistant", "Merge sort and insertion sort are stable; quicksort is not.", "t3"),
    text("user", "My daughter Mia starts school in September.", "t4"),
    text("assistant", "Exciting! September is a big month.", "t5"),
]


@pytest.fixture(scope="module")
def memory(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add(FACTS)
    yield memory
    memory.close()


def test_messages_come_back_byte_for_byte(embedder):
    hostile = text("user", "nul \x00 lone \ud800 surrogate " + "x" * 3000, "h")
    hostile["content"].append({"toolUse": {"toolUseId": "1", "name": "t", "input": {"__bytes_encoded__": True}}})
    hostile["content"].append({"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00"}}})
    memory = SemanticMemory(embedder=embedder)
    [index] = memory.add([hostile])
    assert memory.get(index) == hostile
    restored = SemanticMemory.from_state(json.loads(json.dumps(memory.to_state())), embedder=embedder)
    assert restored.get(index) == hostile


def test_search_finds_by_meaning_and_by_words_with_passages(memory):
    by_words = memory.search("db-stg-04")
    assert by_words[0].index in (0, 1)
    by_meaning = memory.search("when does the kid begin her classes?", top_k=1)
    assert by_meaning[0].index == 4 and by_meaning[0].similarity is not None
    passage = next(p for p in by_meaning.passages if 4 in p.hits)
    assert passage.indices == [2, 3, 4, 5]  # the hit widened by context_radius=2, within the archive
    assert by_meaning.relevance == "relevant"
    assert memory.search("what is the capital of France").relevance in ("unrelated", "uncertain")


def test_scope_sessions_roles_times_and_exclusions(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add([text("user", "the blue door code is 1234")], session_id="a", said_at=100.0)
    memory.add([text("user", "the red door code is 9876")], session_id="b", said_at=200.0)
    assert [h.index for h in memory.search("door code", sessions=["a"])] == [0]
    assert [h.index for h in memory.search("door code", exclude=[0])] == [1]
    assert [h.index for h in memory.search("door code", since=150)] == [1]
    assert [h.index for h in memory.search("door code", until=150)] == [0]
    assert memory.search("door code", roles=["assistant"]) == []
    long_id = "s" * 300  # kept as a digest, never as "no session"
    memory.add([text("user", "the green door code is 5555")], session_id=long_id)
    assert [h.record.text for h in memory.search("door code", sessions=[long_id])] == ["the green door code is 5555"]
    assert memory.search("door code", sessions=["s" * 299]) == []


def test_bad_input_changes_nothing(embedder):
    memory = SemanticMemory(embedder=embedder)
    with pytest.raises(InvalidMessageTypeError) as raised:
        memory.add(text("user", "a dict, not a list"))  # type: ignore[arg-type]
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, SemanticMemoryError)
    with pytest.raises(InvalidMessageError):
        memory.add([text("user", "fine"), {"role": "user", "content": "not a list"}])
    with pytest.raises(InvalidMessageError):
        memory.add([{"role": "stored", "content": [{"text": "a storage entry in disguise"}]}])
    assert len(memory) == 0
    with pytest.raises(ConfigurationError, match="top_k"):
        SemanticMemory(embedder=embedder, top_k=0)
    with pytest.raises(MessageNotFoundError):
        memory.get(5)


def test_idempotent_and_forgotten_copies_never_come_back(embedder):
    memory = SemanticMemory(embedder=embedder)
    first = memory.add(FACTS[:2])
    assert memory.add(FACTS[:2]) == first  # a retry archives nothing twice
    assert memory.forget(query="db-stg-04") == first
    assert memory.add(FACTS[:2]) == [None, None]  # the live context's copies are refused
    assert memory.search("staging database") == []
    changed = dict(FACTS[0], content=[{"text": "Our staging database is db-stg-05 now."}])
    assert memory.add([changed]) != [None]  # a new message, even with the same tracking id, is archived


def test_forget_all_and_the_memory_goes_on(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add(FACTS)
    assert memory.forget_all() == len(FACTS)
    assert len(memory) == 0 and memory.search("database") == []
    assert memory.add(FACTS[:1]) == [None]
    [index] = memory.add([text("user", "a new start")])
    assert index == len(FACTS)  # indices are never handed out again


def test_a_bad_state_changes_nothing(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add(FACTS[:2])
    state = memory.to_state()
    bad = json.loads(json.dumps(state))
    bad["archive"]["next_index"] = 1  # does not account for its records
    with pytest.raises(StateError):
        memory.load_state(bad)
    other = json.loads(json.dumps(state))
    other["archive"]["user_id"] = "mallory"
    with pytest.raises(StateError):
        memory.load_state(other)
    assert len(memory) == 2 and memory.get(0) == FACTS[0]


def test_a_failing_embedder_loses_nothing_and_search_falls_back_to_words(embedder):
    faulty = Faulty(embedder, model_id="faulty-model")
    faulty.failing = True
    memory = SemanticMemory(embedder=faulty, retry_interval=0.0)
    memory.add([text("user", "kept although the service is down")])
    assert memory.stats().pending == 1
    found = memory.search("service down")
    assert found[0].index == 0 and found.lexical_only
    with pytest.raises(EmbeddingError) as raised:
        memory.embed_pending()
    assert isinstance(raised.value.__cause__, ConnectionError)
    faulty.failing = False
    assert memory.embed_pending() == 0


def test_one_rejected_text_leaves_only_that_message_pending(embedder):
    faulty = Faulty(embedder, model_id="rejecting-model")
    faulty.reject = "POISON"
    memory = SemanticMemory(embedder=faulty)
    memory.add([text("user", f"message {i}" + (" POISON" if i == 3 else "")) for i in range(8)])
    deadline = time.monotonic() + 30
    while memory.stats().pending > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert memory.stats().pending == 1


def test_a_hung_embedder_bounds_every_search(embedder):
    faulty = Faulty(embedder, model_id="hanging-model")
    memory = SemanticMemory(embedder=faulty, embedding="background", embed_timeout=0.5)
    memory.add([text("user", "the quarterly report is due on Friday")])
    memory.embed_pending(timeout=30)
    faulty.hang = True
    try:
        started = time.monotonic()
        found = memory.search("when is the quarterly report due?")  # new query: the lane hangs on it
        assert found[0].index == 0 and found.lexical_only
        again = memory.search("what about the weekly report?")  # the lane is stalled: no wait at all
        assert again.lexical_only
        assert time.monotonic() - started < 3.0
    finally:
        faulty.hang = False
        faulty.release.set()


def test_only_what_the_user_said_becomes_their_statement_never_a_tool_result_or_a_question(embedder):
    memory = SemanticMemory(embedder=embedder)
    page = "I live in Berlin and I own a Tesla Model 3."
    memory.add([
        {"role": "user", "content": [{"text": "What is my car insurance renewal date?"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "fetch", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success",
                                                     "content": [{"text": page}]}}]},
        {"role": "user", "content": [{"text": "I drive a 2019 Subaru Outback to work."}]},
    ])  # fmt: skip
    said = [s.sentences for s in memory.statements("Which tyres should I buy for my car?")]
    assert said == [("I drive a 2019 Subaru Outback to work.",)]
    memory.close()


def test_options_named_when_restoring_win_over_the_saved_ones(embedder):
    memory = SemanticMemory(embedder=embedder, top_k=4)
    memory.add([text("user", "the blue gate code is 2020")])
    state = memory.to_state()
    memory.close()
    restored = SemanticMemory.from_state(state, embedder=embedder, top_k=9)
    assert restored.options.top_k == 9 and restored.search("gate code")[0].record.text == "the blue gate code is 2020"
    again = SemanticMemory.from_state(state, embedder=embedder)
    assert again.options.top_k == 4
    restored.close()
    again.close()


def test_a_bulk_add_beyond_the_worker_queue_is_embedded_in_full_without_warnings(embedder, monkeypatch, caplog):
    from strands_semantic_memory.embeddings import _worker

    monkeypatch.setattr(_worker, "MAX_QUEUED_TEXTS", 40)  # a small queue: most batches are refused at first
    memory = SemanticMemory(embedder=embedder, embedding="background", embedding_batch_size=16)
    with caplog.at_level("WARNING", logger="strands_semantic_memory"):
        for start in range(0, 300, 50):
            memory.add([text("user", f"bulk message number {n} about topic {n % 7}") for n in range(start, start + 50)])
        assert memory.embed_pending() == 0
    assert memory.stats().pending == 0 and not caplog.records
    memory.close()
