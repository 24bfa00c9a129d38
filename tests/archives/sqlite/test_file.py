"""The open archive file: a committed write reports success even when the clean-up after it fails."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.sqlite import SqliteArchive
from tests.support.conversations import text_message


def deny_checkpoints(action, name, *_):
    """An SQLite authorizer under which the WAL checkpoint fails, as it does on a full disk."""
    if action == sqlite3.SQLITE_PRAGMA and name == "wal_checkpoint":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def test_a_committed_forget_reports_success_when_the_checkpoint_after_it_fails(tmp_path: Path, embedder, caplog):
    path = tmp_path / "archive.sqlite3"
    memory = SemanticMemory(embedder=embedder, archive_path=path)
    memory.add(
        [text_message("user", f"line {n}, card 4111-2222-3333-4444" if n == 1 else f"line {n}") for n in range(3)]
    )
    store = memory.archive
    assert isinstance(store, SqliteArchive)
    store._file.connection.set_authorizer(deny_checkpoints)
    with caplog.at_level(logging.WARNING, logger="strands_semantic_memory.archives.sqlite._file"):
        assert memory.forget([1]) == [1]  # committed: reported as done, not as an error
    assert "checkpoint" in caplog.text and "4111" not in caplog.text
    assert memory.indices == [0, 2]
    assert memory.forget(query="4111-2222") == []  # nothing left to forget, and no error
    store._file.connection.set_authorizer(None)
    store.close()  # closing checkpoints the journal: the forgotten text is in neither file now
    assert not any(b"4111-2222" in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    reopened = SemanticMemory(embedder=embedder, archive_path=path)
    assert reopened.indices == [0, 2]
