"""Opening a damaged archive file: counters that claim too much, rows that do not decode; the rest stays readable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from strands_semantic_memory.errors import StoreError
from strands_semantic_memory.stores.sqlite import SqliteArchive
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
    with pytest.raises(StoreError, match=f"'{path}'.*claim {next_index}"):
        SqliteArchive(path)
