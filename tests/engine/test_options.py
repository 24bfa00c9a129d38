"""MemoryOptions validation, options saved with the state, forget, time filters, and the engine's small paths."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

import pytest

import strands_semantic_memory
from strands_semantic_memory import MemoryOptions, SemanticMemory
from strands_semantic_memory.errors import ConfigurationError
from tests.support.archives import restored as restored_memory
from tests.support.conversations import distractor_conversation, text_message
from tests.support.embedders import CountingEmbedder


@pytest.mark.parametrize(
    "bad",
    [
        {"min_score": 1.5},
        {"min_score": -2},
        {"min_score": float("nan")},
        {"top_k": 0},
        {"context_radius": -1},
        {"retrieval": "fuzzy"},
        {"max_chunks_per_message": 300},
        {"max_num_archived_messages": 0},
        {"embedding_retry_interval": -1},
        {"embedding": "later"},
    ],
)
def test_bad_options_are_refused_with_their_name(bad):
    with pytest.raises(ConfigurationError, match=next(iter(bad))):
        MemoryOptions(**bad)


def test_unknown_option_is_refused(embedder):
    with pytest.raises(ConfigurationError, match="top_kk"):
        SemanticMemory(embedder=embedder, top_kk=3)


def test_from_state_restores_the_saved_options_unless_overridden(embedder):
    memory = SemanticMemory(embedder=embedder, top_k=7, retrieval="dense", max_num_archived_messages=50, min_score=0.1)
    memory.add(distractor_conversation(10))
    state = json.loads(json.dumps(memory.to_state()))
    restored = SemanticMemory.from_state(state, embedder=embedder)
    assert restored.options == memory.options
    assert (restored.options.top_k, restored.options.retrieval, restored.options.max_num_archived_messages) == (
        7,
        "dense",
        50,
    )
    overridden = SemanticMemory.from_state(state, embedder=embedder, top_k=2)
    assert overridden.options.top_k == 2 and overridden.options.retrieval == "dense"


def test_every_public_name_imports_from_the_top_level():
    for name in strands_semantic_memory.__all__:
        assert getattr(strands_semantic_memory, name) is not None, name
    from strands_semantic_memory.archives import Archive, InMemoryArchive, PostgresArchive, SqliteArchive
    from strands_semantic_memory.embeddings import BedrockEmbedder

    assert isinstance(InMemoryArchive(), Archive)
    assert {BedrockEmbedder.__name__, PostgresArchive.__name__, SqliteArchive.__name__}


def test_forget_removes_for_good_on_every_store(make_memory):
    memory = make_memory()
    messages = distractor_conversation(12)
    messages[4] = text_message("user", "my card number is 4111-2222-3333-4444")
    messages[8] = text_message("assistant", "noted the CARD NUMBER 4111-2222-3333-4444")
    memory.add(messages)
    assert memory.forget([2]) == [2]
    assert memory.forget(query="4111-2222-3333-4444") == [4, 8]
    assert memory.forget([2, 99]) == []
    assert all(h.index not in (2, 4, 8) for h in memory.search("card number 4111", top_k=12))
    assert [i for i, _ in memory.messages()] == [0, 1, 3, 5, 6, 7, 9, 10, 11]
    stats = memory.get_memory_usage_stats()
    assert stats["forgotten_count"] == 3 and stats["message_count"] == 9
    restored = restored_memory(memory)
    assert [i for i, _ in restored.messages()] == [0, 1, 3, 5, 6, 7, 9, 10, 11]
    assert all(h.index not in (2, 4, 8) for h in restored.search("card number 4111", top_k=12))
    assert restored.add([text_message("user", "next")]) == [12]


def test_time_and_role_filters(make_memory):
    memory = make_memory()
    day = 86_400.0
    start = datetime(2024, 5, 1, tzinfo=timezone.utc).timestamp()
    messages = [text_message("user" if i % 2 == 0 else "assistant", f"note {i} about the garden") for i in range(10)]
    memory.add(messages, timestamps=[start + i * day for i in range(10)])
    hits = memory.search("garden", top_k=10, since=start + 3 * day, until=start + 6 * day)
    assert sorted(h.index for h in hits) == [3, 4, 5, 6]
    assert all(h.said_at is not None and h.archived_at > 0 for h in hits)
    users = memory.search("garden", top_k=10, roles=["user"], since=datetime(2024, 5, 5, tzinfo=timezone.utc))
    assert sorted(h.index for h in users) == [4, 6, 8]
    passage = memory.retrieve("note 4 about the garden", top_k=1, context_radius=1)[0]
    assert passage.timestamps == [start + 3 * day, start + 4 * day, start + 5 * day]
    assert passage.roles == ["assistant", "user", "assistant"]


def test_a_timestamp_in_the_message_metadata_is_used(embedder):
    memory = SemanticMemory(embedder=embedder)
    message = text_message("user", "dated")
    message["metadata"] = {"custom": {"timestamp": "2024-05-01T12:00:00+00:00"}}
    memory.add([message])
    assert memory.record(0).said_at == datetime(2024, 5, 1, 12, tzinfo=timezone.utc).timestamp()
    assert memory.get(0) == message


def test_clear_evicts_everything_and_indices_go_on(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add(distractor_conversation(5))
    memory.clear()
    assert len(memory) == 0 and memory.search("budget") == []
    assert memory.add([text_message("user", "after clear")]) == [5]


def test_query_cache_evicts_the_least_recent(embedder):
    counting = CountingEmbedder(embedder)
    memory = SemanticMemory(embedder=counting, query_cache_size=2)
    memory.add(distractor_conversation(5))
    for query in ("budget", "chess", "budget", "garden", "chess"):
        memory.search(query)
    assert counting.query_calls == 4  # budget, chess, garden, then chess again (evicted by garden)
    assert memory.get_memory_usage_stats()["query_cache_hits"] == 1


def test_text_beyond_the_last_chunk_is_archived_with_a_warning(embedder, caplog):
    memory = SemanticMemory(embedder=embedder, chunk_chars=50, max_chunks_per_message=2)
    long = text_message("user", "word " * 100 + "the hidden tail")
    with caplog.at_level(logging.WARNING):
        memory.add([long])
    assert "not searchable" in caplog.text
    assert memory.get(0) == long
    assert memory.get_memory_usage_stats()["vector_count"] == 2


def test_configure_refuses_an_unknown_or_bad_option_and_changes_nothing(embedder):
    memory = SemanticMemory(embedder=embedder, top_k=4)
    with pytest.raises(ConfigurationError, match=r"unknown option\(s\) \['topk'\]"):
        memory.configure(topk=3)
    with pytest.raises(ConfigurationError, match="top_k must be an integer >= 1, got '3'"):
        memory.configure(top_k="3", context_radius=0)
    assert memory.options.top_k == 4 and memory.options.context_radius == 2
