"""SemanticMemory.add against real stores and the real model: the commit, then the whole archive step."""

from __future__ import annotations

import logging

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives import InMemoryArchive, SqliteArchive
from strands_semantic_memory.engine._intake import new_records

LOGGER = "strands_semantic_memory.engine._memory"


def _message(text: str, role: str = "user") -> dict:
    """A message with a tracking id: archiving it again is recognized (without one it is archived each time)."""
    return {"role": role, "content": [{"text": text}], "tracking_id": f"id-{text}"}


@pytest.fixture(params=["in_memory", "sqlite"])
def store(request, tmp_path):
    return InMemoryArchive() if request.param == "in_memory" else SqliteArchive(tmp_path / "archive.sqlite3")


@pytest.fixture
def memory(store, embedder):
    return SemanticMemory(embedder=embedder, archive=store)


def _committed(caplog, memory, messages) -> tuple[list[int], int]:
    """Archive ``messages``; returns their indices and how many the commit counted as new (its debug line)."""
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        indices = memory.add(messages)
    counts = [r.args[0] for r in caplog.records if r.name == LOGGER and r.msg == "archived=<%d> | messages archived"]
    return indices, sum(counts)


def test_new_records_are_committed_and_counted(memory, store, caplog):
    indices, count = _committed(caplog, memory, [_message("the order number is 4417"), _message("thanks", "assistant")])
    assert indices == [0, 1]
    assert count == 2
    assert len(store) == 2
    assert {i: r.role for i, r in store.get(indices).items()} == {0: "user", 1: "assistant"}


def test_recommitting_the_same_messages_returns_their_indices_and_counts_nothing(memory, store, caplog):
    messages = [_message("first"), _message("second")]
    first, _ = _committed(caplog, memory, messages)
    again, count = _committed(caplog, memory, [messages[1], _message("third")])
    assert again == [first[1], 2]
    assert count == 1
    assert _committed(caplog, memory, messages) == (first, 0)
    assert len(store) == 3


def test_a_message_added_by_another_writer_since_counts_as_new(memory, store, caplog):
    """The horizon is read once; an index above it that this memory never handed out is still a change."""
    _committed(caplog, memory, [_message("ours")])
    store.add(new_records([_message("someone else's")]))  # bypasses this memory, as another process would
    indices, count = _committed(caplog, memory, [_message("ours again")])
    assert indices == [2]
    assert count == 1


def test_the_commit_is_logged_only_when_something_is_new(memory, caplog):
    messages = [_message("logged once")]
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        memory.add(messages)
        memory.add(messages)
    logged = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert logged == ["archived=<1> | messages archived"]


def test_archive_commits_embeds_and_enforces_the_limits_counting_each_change(store, embedder):
    """The whole archive step: one change per step that changed something (add, embed, evict)."""
    memory = SemanticMemory(embedder=embedder, archive=store, max_num_archived_messages=2)
    indices = memory.add([_message("one"), _message("two"), _message("three")])
    assert indices == [0, 1, 2]
    assert sorted(store.get([0, 1, 2])) == [1, 2], "the oldest message was evicted by the limit"
    assert not store.has_pending() and store.stats().vector_count == 2
    assert memory.version == 3
    assert memory.add([_message("three")]) == [2]
    assert memory.version == 3, "archiving a message again changes nothing"
