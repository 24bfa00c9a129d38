"""The archive file's layout and opening it.

Layout (schema version 1)::

    ssm_meta(key TEXT PRIMARY KEY, value)   format, schema_version, model_id, dimension,
                                            next_index, evicted_count, forgotten_count,
                                            ivf_centroids (BLOB: nlist x dimension little-endian float32,
                                            present while the vectors are in the approximate tier)
    ssm_messages(idx INTEGER PRIMARY KEY,   the archive index
                 data BLOB,                 the message exactly as archived (compact JSON bytes)
                 role TEXT, archived_at REAL, said_at REAL (NULL: unknown),
                 key TEXT,                  the idempotency key the engine built (NULL: never repeats)
                 has_text INTEGER,          1 when it has text to embed
                 terms BLOB,                its distinct BM25 terms, UTF-8, separated by spaces
                 term_counts BLOB,          each term's count, little-endian uint32
                 tokenizer INTEGER)         the TOKENIZER_VERSION that produced them
    ssm_vectors(idx INTEGER PRIMARY KEY,    present once the message is embedded (count may be 0)
                count INTEGER, data BLOB)   count x dimension little-endian float32
    ssm_lists(idx INTEGER PRIMARY KEY,      while ivf_centroids is present, for each message with vectors:
              lists BLOB)                   the inverted list of each of its vectors, little-endian int32

A message is pending (waiting for its vectors) while it has text and no ``ssm_vectors`` row. A file of another
schema version is refused (nothing released wrote another one, so there is nothing to migrate). Terms written by
another ``TOKENIZER_VERSION`` are tokenized again at open and written back (``_loading``), so a later change of
the tokenizer needs no new schema.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from typing import Any

from strands_semantic_memory.errors import ArchiveError

SCHEMA_VERSION = 1
"""Version of the file layout this release writes and reads (see the module docstring)."""

FILE_FORMAT = "strands-semantic-memory/sqlite-archive"
"""The ``format`` value in ``ssm_meta`` that marks a file as ours."""

_TABLES = """
CREATE TABLE ssm_meta (key TEXT PRIMARY KEY, value);
CREATE TABLE ssm_messages (
    idx INTEGER PRIMARY KEY,
    data BLOB NOT NULL,
    role TEXT NOT NULL,
    archived_at REAL NOT NULL,
    said_at REAL,
    key TEXT,
    has_text INTEGER NOT NULL,
    terms BLOB,
    term_counts BLOB,
    tokenizer INTEGER
);
CREATE TABLE ssm_vectors (
    idx INTEGER PRIMARY KEY,
    count INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE ssm_lists (
    idx INTEGER PRIMARY KEY,
    lists BLOB NOT NULL
);
"""


def set_meta(connection: sqlite3.Connection, values: Mapping[str, Any]) -> None:
    """Write ``ssm_meta`` values (inside the caller's transaction)."""
    connection.executemany(
        "INSERT INTO ssm_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        list(values.items()),
    )


_REQUIRED_TABLES = ("ssm_meta", "ssm_messages", "ssm_vectors", "ssm_lists")
"""The tables of an archive file."""


def _inspect(connection: sqlite3.Connection, path: str) -> dict[str, Any] | None:
    """Read what the file is, writing nothing: None for a file without tables (a new archive), else its meta.

    Raises:
        ArchiveError: If the file is a database but not an archive, has another schema version, or is an archive
            missing one of its tables.
    """
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return None
    meta = dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall()) if "ssm_meta" in tables else {}
    if meta.get("format") != FILE_FORMAT:
        raise ArchiveError(f"'{path}' is an SQLite database but not a strands-semantic-memory archive")
    version = meta.get("schema_version")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise ArchiveError(
            f"the archive file '{path}' has schema version {version!r}, newer than this release's "
            f"{SCHEMA_VERSION}: upgrade strands-semantic-memory"
        )
    if version != SCHEMA_VERSION:
        raise ArchiveError(
            f"the archive file '{path}' has schema version {version!r}; this release reads version {SCHEMA_VERSION} "
            "only. It was left as it is"
        )
    missing = [t for t in _REQUIRED_TABLES if t not in tables]
    if missing:
        raise ArchiveError(
            f"the archive file '{path}' is damaged: it has no {', '.join(missing)} table; it was left as it is "
            "(restore it from a backup)"
        )
    return meta


def _prepare(connection: sqlite3.Connection, meta: dict[str, Any] | None) -> None:
    """Create the tables of a new file (inside a transaction); an archive checked by ``_inspect`` is left as it is."""
    if meta is not None:
        return
    for statement in _TABLES.split(";"):
        if statement.strip():
            connection.execute(statement)
    set_meta(
        connection,
        {
            "format": FILE_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "next_index": 0,
            "evicted_count": 0,
            "forgotten_count": 0,
        },
    )


def connect(path: str, synchronous: str, timeout: float) -> sqlite3.Connection:
    """Open the archive file exclusively, creating its tables if it is new.

    Raises:
        ArchiveError: If the file cannot be opened, is not an archive, has another schema version, or is open in
            another process.
    """
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        connection = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as error:
        raise ArchiveError(f"cannot open the archive file '{path}': {error}") from error
    try:
        connection.execute("PRAGMA locking_mode=EXCLUSIVE")  # one owner: its in-memory indexes are the truth
        meta = _inspect(connection, path)  # before anything is written: a file that is not ours stays as it is
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise ArchiveError(f"the archive file '{path}' cannot use a WAL journal (got {mode!r})")
        connection.execute(f"PRAGMA synchronous={synchronous}")
        connection.execute("BEGIN IMMEDIATE")  # takes the exclusive lock now, not at the first write
        try:
            _prepare(connection, meta)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    except sqlite3.OperationalError as error:
        connection.close()
        if "locked" in str(error) or "busy" in str(error):
            raise ArchiveError(
                f"the archive file '{path}' is open in another process (or another SqliteArchive): {error}"
            ) from error
        raise ArchiveError(f"cannot open the archive file '{path}': {error}") from error
    except sqlite3.Error as error:
        connection.close()
        raise ArchiveError(f"cannot open the archive file '{path}': {error}") from error
    except BaseException:
        connection.close()
        raise
    return connection
