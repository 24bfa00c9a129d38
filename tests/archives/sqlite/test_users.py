"""A file holds one user: it records the user id, refuses another before writing anything, and adopts a first one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.sqlite import SqliteArchive
from strands_semantic_memory.errors import ConfigurationError, StateError
from tests.support.records import message, record


def recorded_user(path: Path) -> object:
    connection = sqlite3.connect(path)
    try:
        row = connection.execute("SELECT value FROM ssm_meta WHERE key = 'user_id'").fetchone()
    finally:
        connection.close()
    return None if row is None else row[0]


def files_of(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.parent.glob(path.name + "*"))}


def test_a_new_file_records_its_user_and_reopens_as_that_users(tmp_path: Path):
    path = tmp_path / "alice.sqlite3"
    archive = SqliteArchive(path, user_id="alice")
    archive.add([record(message("alice's first words"))])
    archive.close()
    assert recorded_user(path) == "alice"
    again = SqliteArchive(path)  # opened without a user: the file's
    assert again.user_id == "alice"
    again.close()
    same = SqliteArchive(path, user_id="alice")
    assert len(same) == 1
    same.close()


def test_a_file_of_another_user_is_refused_naming_both_before_anything_is_written(tmp_path: Path):
    path = tmp_path / "alice.sqlite3"
    archive = SqliteArchive(path, user_id="alice")
    archive.add([record(message("alice's secret"))])
    archive.close()
    before = files_of(path)
    with pytest.raises(ConfigurationError, match=r"'alice'.*'bob'"):
        SqliteArchive(path, user_id="bob")
    assert files_of(path) == before, "nothing written, not even the WAL"
    with pytest.raises(ConfigurationError, match=r"'alice'.*'bob'"):
        SemanticMemory(archive_path=path, user_id="bob")
    assert files_of(path) == before


def test_a_file_without_a_user_takes_the_first_one_given(tmp_path: Path):
    path = tmp_path / "shared.sqlite3"
    unnamed = SqliteArchive(path)
    unnamed.add([record(message("said before anyone was named"))])
    unnamed.close()
    assert recorded_user(path) is None
    named = SqliteArchive(path, user_id="carol")
    assert named.user_id == "carol" and len(named) == 1
    named.close()
    assert recorded_user(path) == "carol"
    with pytest.raises(ConfigurationError, match="'carol'"):
        SqliteArchive(path, user_id="dave")


def test_a_state_of_another_user_is_refused(tmp_path: Path):
    alice = SqliteArchive(tmp_path / "alice.sqlite3", user_id="alice")
    reference = alice.export_state("model-a")
    assert reference["user_id"] == "alice"
    bob = SqliteArchive(tmp_path / "bob.sqlite3", user_id="bob")
    with pytest.raises(StateError, match="'alice'"):
        bob.load_state(reference, reembed=False)
    alice.add([record(message("alice's words"))])
    from strands_semantic_memory.archives import InMemoryArchive

    source = InMemoryArchive(user_id="alice")
    source.add([record(message("alice's words"))])
    with pytest.raises(StateError, match="'alice'"):
        bob.load_state(source.export_state("model-a"), reembed=False)
    assert len(bob) == 0
    unnamed = SqliteArchive(tmp_path / "new.sqlite3")
    unnamed.load_state(source.export_state("model-a"), reembed=False)  # moves in, with its user
    assert unnamed.user_id == "alice" and len(unnamed) == 1
    for archive in (alice, bob, unnamed):
        archive.close()
    assert recorded_user(tmp_path / "new.sqlite3") == "alice"
