"""Opening a damaged archive file: counters that claim too much, rows that do not decode; the rest stays readable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from strands_semantic_memory.archives.sqlite import SqliteArchive
from strands_semantic_memory.errors import ArchiveError
from tests.support.records import message, record, unit_vectors


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "archive.sqlite3"


def three_messages(path: Path) -> None:
    archive = SqliteArchive(path)
    archive.add([record(message(f"harbour note {n}")) for n in range(3)])
    archive.set_vectors({i: unit_vectors(i, 1) for i, _ in archive.pending(set())})
    archive.close()


def edit(path: Path, *statements: tuple[str, tuple]) -> None:
    """Change the file behind the library's back (a damaged disk, another program)."""
    connection = sqlite3.connect(path)
    for sql, parameters in statements:
        connection.execute(sql, parameters)
    connection.commit()
    connection.close()


@pytest.mark.parametrize("next_index", [10, 2**25, 2**40])
def test_counters_claiming_more_than_the_file_holds_are_refused_before_anything_is_allocated(path, next_index):
    three_messages(path)
    edit(path, ("UPDATE ssm_meta SET value = ? WHERE key = 'next_index'", (next_index,)))
    with pytest.raises(ArchiveError, match=f"'{path}'.*claim {next_index}"):
        SqliteArchive(path)


DAMAGE = {
    "message as text": ("UPDATE ssm_messages SET data = 'not bytes' WHERE idx = 1", ()),
    "message not UTF-8": ("UPDATE ssm_messages SET data = ? WHERE idx = 1", (b"\xff\xfe\x00garbage",)),
    "message cut short": ("UPDATE ssm_messages SET data = ? WHERE idx = 1", (b'{"role":"user","content":[{"te',)),
    "message not a message": ("UPDATE ssm_messages SET data = ? WHERE idx = 1", (b"[1, 2, 3]",)),
    "role not text": ("UPDATE ssm_messages SET role = x'ff00' WHERE idx = 1", ()),
    "time as text": ("UPDATE ssm_messages SET archived_at = 'yesterday' WHERE idx = 1", ()),
    "key not hex": ("UPDATE ssm_messages SET key = 't:not-a-hex-key!' WHERE idx = 1", ()),
    "terms not UTF-8": ("UPDATE ssm_messages SET terms = ? WHERE idx = 1", (b"harbour \xff\xfe",)),
    "terms as text": ("UPDATE ssm_messages SET terms = 'harbour note' WHERE idx = 1", ()),
    "counts cut short": ("UPDATE ssm_messages SET term_counts = ? WHERE idx = 1", (b"\x01\x00\x00",)),
    "counts for other terms": ("UPDATE ssm_messages SET term_counts = ? WHERE idx = 1", (b"\x01\x00\x00\x00",)),
    "vectors cut short": ("UPDATE ssm_vectors SET data = substr(data, 1, 10) WHERE idx = 1", ()),
    "vector count a lie": ("UPDATE ssm_vectors SET count = 3 WHERE idx = 1", ()),
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_a_damaged_row_is_an_archive_error_naming_it_and_the_rest_stays_readable(path, damage):
    three_messages(path)
    edit(path, DAMAGE[damage])
    archive = SqliteArchive(path)  # opens: one damaged row does not make the archive unreadable
    with pytest.raises(ArchiveError, match=f"'{path}'.*row 1"):
        archive.get([1])
    records = archive.get([0, 1, 2])  # a range leaves the damaged row out, as it leaves a forgotten one
    assert sorted(records) == [0, 2]
    assert [records[i].message["content"][0]["text"] for i in (0, 2)] == ["harbour note 0", "harbour note 2"]
    found = archive.candidates(unit_vectors(2, 1), "harbour note", 10, 10)
    assert 2 in found.dense and {0, 2} <= set(found.lexical)
    assert archive.find_text("harbour note") in ([0, 2], [0, 1, 2])  # a damaged message cannot be read, so not matched
    archive.add([record(message("written after the damage"))])
    archive.evict_oldest(1)
    archive.close()
    reopened = SqliteArchive(path)  # the damaged row is kept as it was, and the file still opens
    assert sorted(reopened.get(list(range(5)))) == [2, 3]
    with pytest.raises(ArchiveError, match="row 1"):
        reopened.get([1])
    reopened.evict_oldest(10)  # past the damaged row: the file's counters still account for every row
    reopened.close()
    assert len(SqliteArchive(path)) == 0


UNDECODABLE = [name for name in DAMAGE if name.startswith("message")]


@pytest.mark.parametrize("damage", UNDECODABLE, ids=UNDECODABLE)
def test_a_message_that_does_not_decode_is_left_out_of_the_count_and_listed_when_the_file_opens(path, damage):
    """Issue 39, point 11: before, ``len`` counted such a row until it was read, and ``damaged_rows`` was empty."""
    three_messages(path)
    edit(path, DAMAGE[damage])
    archive = SqliteArchive(path)
    assert list(archive.damaged_rows) == [1], "listed at open, like the other damaged rows"
    assert len(archive) == 2 == len(archive.get([0, 1, 2])), "the count and the reads agree"
    assert archive.stats().message_count == 2
    assert not archive.has_pending()
    archive.close()


def test_a_memory_over_a_file_with_an_undecodable_row_counts_what_it_lists(path, embedder):
    from strands_semantic_memory import SemanticMemory

    memory = SemanticMemory(archive_path=path, embedder=embedder, embedding="inline")
    memory.add([message(f"harbour note {n}") for n in range(120)])
    memory.close()
    edit(path, ("UPDATE ssm_messages SET data = ? WHERE idx = 57", (b'{"role": "user", "content": [ not json',)))
    memory = SemanticMemory(archive_path=path, embedder=embedder, embedding="inline")
    assert len(memory) == len(memory.messages()) == 119  # before: 120 and 119
    assert 57 not in dict(memory.messages())
    memory.close()


def test_a_message_that_sqlite_reads_as_invalid_json_but_that_decodes_is_not_damaged(path):
    """SQLite's JSON check only names candidates: a ``NaN`` in a tool input is not JSON to SQLite, but decodes."""
    archive = SqliteArchive(path)
    odd = message("a tool input with a NaN", extra={"reading": float("nan"), "limit": float("inf")})
    archive.add([record(odd), record(message("plain"))])
    archive.close()
    reopened = SqliteArchive(path)
    assert reopened.damaged_rows == {} and len(reopened) == 2
    assert reopened.get([0])[0].message["extra"]["limit"] == float("inf")
    reopened.close()
