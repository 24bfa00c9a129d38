"""Opening a file: a file that is not an archive, or an archive missing its tables, is refused and never modified."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from strands_semantic_memory.archives.sqlite import SqliteArchive
from strands_semantic_memory.errors import ArchiveError
from tests.support.records import message, record


def database(path: Path, *statements: str) -> Path:
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()
    return path


def files_of(path: Path) -> dict[str, bytes]:
    """The bytes of a database and of any journal beside it."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.glob(path.name + "*"))}


def journal_mode(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        return str(connection.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        connection.close()


@pytest.mark.parametrize(
    "statements",
    [
        ("CREATE TABLE users (name TEXT)", "INSERT INTO users VALUES ('ada')"),
        ("CREATE TABLE ssm_meta (key TEXT PRIMARY KEY, value)", "CREATE TABLE users (name TEXT)"),
        (
            "CREATE TABLE ssm_meta (key TEXT PRIMARY KEY, value)",
            "INSERT INTO ssm_meta VALUES ('format', 'someone-else/cache')",
        ),
        ("CREATE TABLE ssm_meta (key TEXT PRIMARY KEY, value)",),
    ],
    ids=["another application", "empty meta beside other tables", "another format", "meta table only"],
)
def test_a_database_that_is_not_an_archive_is_refused_and_never_modified(tmp_path: Path, statements):
    path = database(tmp_path / "their.db", *statements)
    before = files_of(path)
    with pytest.raises(ArchiveError, match=f"'{path}'.*not a strands-semantic-memory archive"):
        SqliteArchive(path)
    assert files_of(path) == before
    assert journal_mode(path) == "delete", "not switched to WAL"


@pytest.mark.parametrize("table", ["ssm_messages", "ssm_vectors", "ssm_lists"])
def test_an_archive_missing_a_table_is_refused_and_never_modified(tmp_path: Path, table):
    path = tmp_path / "archive.sqlite3"
    archive = SqliteArchive(path)
    archive.add([record(message("kept"))])
    archive.close()
    database(path, f"DROP TABLE {table}")
    before = files_of(path)
    with pytest.raises(ArchiveError, match=f"'{path}'.*{table}"):
        SqliteArchive(path)
    assert files_of(path) == before


def test_a_new_file_and_an_empty_file_become_archives(tmp_path: Path):
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    for path in (tmp_path / "archive.sqlite3", empty):
        archive = SqliteArchive(path)
        archive.add([record(message("first"))])
        archive.close()
        assert len(SqliteArchive(path)) == 1
