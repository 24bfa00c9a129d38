"""archiving.py against real stores and the real model: the commit step, then the whole archive step."""

from __future__ import annotations

import logging

import pytest

from strands_semantic_memory import MemoryOptions
from strands_semantic_memory.engine._archiving import archive_messages, commit
from strands_semantic_memory.engine._intake import AddedCounter, new_records
from strands_semantic_memory.engine._wiring import MemoryParts
from strands_semantic_memory.stores import InMemoryArchive, SqliteArchive


def _message(text: str, role: str = "user") -> dict:
    """A message with a tracking id: archiving it again is recognized (without one it is archived each time)."""
    return {"role": role, "content": [{"text": text}], "tracking_id": f"id-{text}"}


@pytest.fixture(params=["in_memory", "sqlite"])
def store(request, tmp_path):
    return InMemoryArchive() if request.param == "in_memory" else SqliteArchive(tmp_path / "archive.sqlite3")


def test_new_records_are_committed_and_counted(store):
    added = AddedCounter()
    records = new_records([_message("the order number is 4417"), _message("thanks", "assistant")])
    indices, count = commit(store, added, records)
    assert indices == [0, 1]
    assert count == 2
    assert len(store) == 2
    assert {i: r.role for i, r in store.get(indices).items()} == {0: "user", 1: "assistant"}


def test_recommitting_the_same_messages_returns_their_indices_and_counts_nothing(store):
    added = AddedCounter()
    messages = [_message("first"), _message("second")]
    first, _ = commit(store, added, new_records(messages))
    again, count = commit(store, added, new_records([messages[1], _message("third")]))
    assert again == [first[1], 2]
    assert count == 1
    assert commit(store, added, new_records(messages)) == (first, 0)
    assert len(store) == 3


def test_a_message_added_by_another_writer_since_counts_as_new(store):
    """The horizon is read once; an index above it that this counter never handed out is still a change."""
    added = AddedCounter()
    commit(store, added, new_records([_message("ours")]))
    store.add(new_records([_message("someone else's")]))  # bypasses this counter, as another process would
    indices, count = commit(store, added, new_records([_message("ours again")]))
    assert indices == [2]
    assert count == 1


def test_the_commit_is_logged_only_when_something_is_new(store, caplog):
    added = AddedCounter()
    records = new_records([_message("logged once")])
    with caplog.at_level(logging.DEBUG, logger="strands_semantic_memory.engine._archiving"):
        commit(store, added, records)
        commit(store, added, records)
    logged = [r.getMessage() for r in caplog.records if r.name == "strands_semantic_memory.engine._archiving"]
    assert logged == ["archived=<1> | messages archived"]


def test_archive_messages_commits_embeds_and_enforces_the_limits_counting_each_change(store, embedder):
    """The whole archive step over MemoryParts: one change per step that changed something (add, embed, evict)."""
    options = MemoryOptions(max_num_archived_messages=2)
    parts = MemoryParts.build(store, embedder, lambda: options, None)
    indices = archive_messages(parts, options, [_message("one"), _message("two"), _message("three")], None)
    assert indices == [0, 1, 2]
    assert sorted(store.get([0, 1, 2])) == [1, 2], "the oldest message was evicted by the limit"
    assert not store.has_pending() and store.stats().vector_count == 2
    assert parts.version == 3
    assert archive_messages(parts, options, [_message("three")], None) == [2]
    assert parts.version == 3, "archiving a message again changes nothing"
