"""The memory's OpenTelemetry metrics, read with the SDK's in-memory reader (counters and histograms as deltas)."""

from __future__ import annotations

import gc

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.errors import EmbeddingError
from strands_semantic_memory.messages._codec import encode_message
from tests.support.conversations import text_message
from tests.support.embedders import FlakyEmbedder
from tests.support.telemetry import total

QUESTION = "What was my booking reference again?"


def gauge(telemetry, name, archive_type):
    points = telemetry.metric(name, memory__archive__type=archive_type)
    return points[0].value if points else 0


def test_a_turn_records_its_search_time_and_its_injected_tokens(conversation, telemetry):
    agent, model, manager, hook = conversation
    telemetry.collect()  # the conversation's own
    calls = len(model.chat_requests)
    agent(QUESTION)
    calls = len(model.chat_requests) - calls
    telemetry.collect()
    enrichment = hook.last_enrichment
    (searches,) = telemetry.metric("semantic_memory.search.duration", memory__search__method="recall")
    assert searches.count == 1 and searches.sum > 0
    assert dict(searches.attributes) == {
        "memory.search.method": "recall",
        "memory.retrieval": "hybrid",
        "memory.archive.type": "InMemoryArchive",
    }
    (tokens,) = telemetry.metric("semantic_memory.inject.tokens")
    assert dict(tokens.attributes) == {"memory.relevance": enrichment.relevance}
    assert tokens.count == calls >= 1, "one sample per model call the hook acted on"
    assert tokens.sum == enrichment.tokens * calls > 0
    assert gauge(telemetry, "semantic_memory.archive.messages", "InMemoryArchive") >= len(manager.memory)


def test_archiving_forgetting_and_evicting_are_counted(embedder, telemetry):
    memory = SemanticMemory(embedder=embedder, embedding="inline", max_num_archived_messages=3)
    said = ["The parcel locker code is 4417.", "Noted.", "And the gate code is 9021.", "Noted too."]
    tracked = [{**text_message(("user", "assistant")[i % 2], t), "tracking_id": f"m{i}"} for i, t in enumerate(said)]
    first, later = tracked[:2], tracked[1:]  # the second message is offered again
    memory.add(first)
    memory.add(later)
    telemetry.collect()
    kind = {"memory__archive__type": "InMemoryArchive"}
    assert total(telemetry.metric("semantic_memory.archive.added", **kind)) == 4, "a message archived again counts once"
    new = [*first, *later[1:]]
    assert total(telemetry.metric("semantic_memory.archive.added_bytes", **kind)) == sum(
        len(encode_message(m)) for m in new
    )
    assert total(telemetry.metric("semantic_memory.archive.removed", memory__remove__reason="evicted")) == 1
    assert total(telemetry.metric("semantic_memory.embedding.messages", memory__embed__outcome="embedded")) == 4

    memory.forget(query="gate code")
    telemetry.collect()
    assert total(telemetry.metric("semantic_memory.archive.removed", memory__remove__reason="forgotten")) == 1
    assert not telemetry.metric("semantic_memory.archive.removed", memory__remove__reason="evicted")


def test_the_gauges_read_the_size_and_the_backlog_of_the_open_memories(embedder, telemetry, tmp_path):
    gc.collect()  # memories of earlier tests that nothing holds any more are no longer counted
    telemetry.collect()
    size_before = gauge(telemetry, "semantic_memory.archive.messages", "SqliteArchive")
    pending_before = gauge(telemetry, "semantic_memory.embedding.pending", "SqliteArchive")
    flaky = FlakyEmbedder(embedder)
    flaky.failing = True
    memory = SemanticMemory(embedder=flaky, embedding="inline", archive_path=tmp_path / "archive.db")
    memory.add([text_message("user", f"message {i}") for i in range(5)])
    telemetry.collect()
    assert gauge(telemetry, "semantic_memory.archive.messages", "SqliteArchive") - size_before == 5
    assert gauge(telemetry, "semantic_memory.embedding.pending", "SqliteArchive") - pending_before == 5
    (failed,) = telemetry.metric("semantic_memory.embedding.messages", memory__embed__outcome="failed")
    assert failed.value == 5
    (batch,) = telemetry.metric("semantic_memory.embedding.duration", error__type="EmbeddingError")
    assert batch.count == 1

    flaky.failing = False
    memory.embed_pending()
    telemetry.collect()
    assert gauge(telemetry, "semantic_memory.embedding.pending", "SqliteArchive") == pending_before
    memory.close()
    telemetry.collect()
    assert gauge(telemetry, "semantic_memory.archive.messages", "SqliteArchive") == size_before, "a closed one is not"


def test_a_failing_search_is_counted_with_its_error_type(embedder, telemetry):
    flaky = FlakyEmbedder(embedder)
    memory = SemanticMemory(embedder=flaky, retrieval="dense", embedding="inline")
    memory.add([text_message("user", "The parcel locker code is 4417.")])
    flaky.failing = True
    with pytest.raises(EmbeddingError):
        memory.search("locker")
    telemetry.collect()
    (failed,) = telemetry.metric("semantic_memory.search.duration", error__type="EmbeddingError")
    assert failed.count == 1
    assert dict(failed.attributes)["memory.search.method"] == "search"
