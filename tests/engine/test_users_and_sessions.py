"""One memory, one user; every record carries its session: on every archive (in process, SQLite, PostgreSQL)."""

from __future__ import annotations

import json

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives import InMemoryArchive
from strands_semantic_memory.errors import ConfigurationError, StateError
from tests.support.archives import new_user_id, reopened
from tests.support.conversations import text_message

MONDAY = "On Monday I told you my locker code is 4417-KESTREL."
FRIDAY = "On Friday we talked about the garden fence."


def two_sessions(memory: SemanticMemory) -> tuple[list[int], list[int], list[int]]:
    monday = memory.add(
        [text_message("user", MONDAY), text_message("assistant", "Noted, 4417-KESTREL.")], session_id="monday"
    )
    friday = memory.add(
        [text_message("user", FRIDAY), text_message("assistant", "The fence, yes.")], session_id="friday"
    )
    unknown = memory.add([text_message("user", "A note archived without a session.")])
    return monday, friday, unknown


def test_every_record_carries_the_session_it_was_said_in(make_memory):
    memory = make_memory(user_id=new_user_id("alice"))
    monday, friday, unknown = two_sessions(memory)
    assert [memory.record(i).session_id for i in monday + friday + unknown] == [
        "monday",
        "monday",
        "friday",
        "friday",
        None,
    ]
    hit = memory.search("What is my locker code?", top_k=1)[0]
    assert (hit.index, hit.session_id) == (monday[0], "monday")
    [passage] = [p for p in memory.retrieve("What is my locker code?", top_k=1, context_radius=10)]
    assert passage.indices == [*monday, *friday, *unknown]
    assert passage.session_ids == ["monday", "monday", "friday", "friday", None], "aligned with indices"


def test_a_message_archived_again_keeps_its_first_session(make_memory):
    memory = make_memory()
    message = {**text_message("user", "the same message twice"), "tracking_id": "t-1"}
    [first] = memory.add([message], session_id="first")
    assert memory.add([message], session_id="second") == [first]
    assert memory.record(first).session_id == "first"


@pytest.mark.parametrize("bad", ["", "x" * 257, "tab\there", "nul\x00", 7, b"bytes"])
def test_session_and_user_ids_are_checked_before_anything_is_archived(make_memory, bad):
    memory = make_memory()
    with pytest.raises(ConfigurationError, match="session_id"):
        memory.add([text_message("user", "never archived")], session_id=bad)
    assert len(memory) == 0
    with pytest.raises(ConfigurationError, match="user_id"):
        SemanticMemory(embedder=memory.embedder, user_id=bad)


def test_the_memory_is_its_archives_user(make_memory):
    alice = new_user_id("alice")
    memory = make_memory(user_id=alice)
    assert memory.user_id == memory.archive.user_id == alice


def test_a_ready_archive_of_another_user_is_refused(embedder):
    with pytest.raises(ConfigurationError, match="'bob'.*'alice'|'alice'.*'bob'"):
        SemanticMemory(embedder=embedder, archive=InMemoryArchive(user_id="bob"), user_id="alice")
    with pytest.raises(ConfigurationError, match="not named for a user"):
        SemanticMemory(embedder=embedder, archive=InMemoryArchive(), user_id="alice")
    assert SemanticMemory(embedder=embedder, archive=InMemoryArchive(user_id="bob")).user_id == "bob"


def test_sessions_and_the_user_survive_a_new_process(make_memory, store_kind):
    alice = new_user_id("alice")
    memory = make_memory(user_id=alice)
    monday, friday, _ = two_sessions(memory)
    if store_kind == "in_memory":
        state = json.loads(json.dumps(memory.to_state()))
        assert state["user_id"] == alice
        again = SemanticMemory.from_state(state, embedder=memory.embedder)
    else:
        again = SemanticMemory(embedder=memory.embedder, archive=reopened(memory.archive))
    assert again.user_id == alice
    assert [again.record(i).session_id for i in monday + friday] == ["monday", "monday", "friday", "friday"]


def test_a_state_of_another_user_is_refused_and_changes_nothing(make_memory):
    alice = make_memory(user_id=new_user_id("alice"))
    alice.add([text_message("user", "alice's own words")], session_id="a")
    bob = SemanticMemory(embedder=alice.embedder, user_id="bob")
    bob.add([text_message("user", "bob's own words")])
    with pytest.raises(StateError, match="user"):
        bob.load_state(alice.to_state())
    assert [m["content"][0]["text"] for _, m in bob.messages()] == ["bob's own words"]


def test_an_unnamed_memory_takes_the_user_of_the_state_it_restores(embedder):
    alice = SemanticMemory(embedder=embedder, user_id="alice")
    alice.add([text_message("user", "hello")], session_id="s-1")
    unnamed = SemanticMemory(embedder=embedder)
    unnamed.load_state(alice.to_state())
    assert unnamed.user_id == "alice" and unnamed.record(0).session_id == "s-1"
    restored = SemanticMemory.from_state(alice.to_state(), embedder=embedder)
    assert restored.user_id == "alice"
