"""The archive file's layout, opening it, and migrating files of older releases.

Layout (schema version 3)::

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
                 tokenizer INTEGER)         the TOKENIZER_VERSION that produced them (NULL: not yet)
    ssm_vectors(idx INTEGER PRIMARY KEY,    present once the message is embedded (count may be 0)
                count INTEGER, data BLOB)   count x dimension little-endian float32
    ssm_lists(idx INTEGER PRIMARY KEY,      while ivf_centroids is present, for each message with vectors:
              lists BLOB)                   the inverted list of each of its vectors, little-endian int32

A message is pending (waiting for its vectors) while it has text and no ``ssm_vectors`` row. Version 1 had no
term columns: opening such a file adds them (its messages are tokenized once, at that open, and written back).
Version 2 had no stored training of the approximate index (``ivf_centroids``, ``ssm_lists``): the first open above
the threshold trains it and writes it, later opens rebuild the index from it without training.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from typing import Any

from strands_semantic_memory.errors import ArchiveError

SCHEMA_VERSION = 3
"""Version of the file layout written by this release (see the module docstring)."""

FILE_FORMAT = "strands-semantic-memory/sqlite-archive"
"""The ``format`` value in ``ssm_meta`` that marks a file as ours."""

_TABLES = """
CREATE TABLE IF NOT EXISTS ssm_meta (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS ssm_messages (
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
CREATE TABLE IF NOT EXISTS ssm_vectors (
    idx INTEGER PRIMARY KEY,
    count INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS ssm_lists (
    idx INTEGER PRIMARY KEY,
    lists BLOB NOT NULL
);
"""

_MIGRATIONS = {
    1: [  # 1 -> 2: persisted terms, so opening does not tokenize every message
        "ALTER TABLE ssm_messages ADD COLUMN terms BLOB",
        "ALTER TABLE ssm_messages ADD COLUMN term_counts BLOB",
        "ALTER TABLE ssm_messages ADD COLUMN tokenizer INTEGER",
    ],
    2: [],  # 2 -> 3: the ssm_lists table (created above) and ivf_centroids, written at the next open
}


def set_meta(connection: sqlite3.Connection, values: Mapping[str, Any]) -> None:
    """Write ``ssm_meta`` values (inside the caller's transaction)."""
    connection.executemany(
        "INSERT INTO ssm_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        list(values.items()),
    )


_REQUIRED_TABLES = {1: ("ssm_meta", "ssm_messages", "ssm_vectors"), 3: ("ssm_lists",)}
"""The tables an archive of each schema version has (from that version on)."""


def _inspect(connection: sqlite3.Connection, path: str) -> dict[str, Any] | None:
    """Read what the file is, writing nothing: None for a file without tables (a new archive), else its meta.

    Raises:
        ArchiveError: If the file is a database but not an archive, is newer than this release, or is an archive
            missing one of its tables.
    """
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return None
    meta = dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall()) if "ssm_meta" in tables else {}
    if meta.get("format") != FILE_FORMAT:
        raise ArchiveError(f"'{path}' is an SQLite database but not a strands-semantic-memory archive")
    version = meta.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise ArchiveError(f"the archive file '{path}' has an invalid schema version: {version!r}")
    if version > SCHEMA_VERSION:
        raise ArchiveError(
            f"the archive file '{path}' has schema version {version!r}, newer than this release's "
            f"{SCHEMA_VERSION}: upgrade strands-semantic-memory"
        )
    required = [t for since, names in _REQUIRED_TABLES.items() if version >= since for t in names]
    missing = [t for t in required if t not in tables]
    if missing:
        raise ArchiveError(
            f"the archive file '{path}' is damaged: it has no {', '.join(missing)} table; it was left as it is "
            "(restore it from a backup)"
        )
    return meta


def _prepare(connection: sqlite3.Connection, meta: dict[str, Any] | None) -> None:
    """Create the tables of a new file, or migrate an archive checked by ``_inspect`` (inside a transaction)."""
    if meta is None:
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
        return
    version = int(meta["schema_version"])
    if version < SCHEMA_VERSION:
        for statement in _TABLES.split(";"):  # tables added since: created empty
            if statement.strip():
                connection.execute(statement)
    while version < SCHEMA_VERSION:
        for statement in _MIGRATIONS[version]:
            connection.execute(statement)
        version += 1
        set_meta(connection, {"schema_version": version})


def connect(path: str, synchronous: str, timeout: float) -> sqlite3.Connection:
    """Open the archive file exclusively, creating or migrating its tables.

    Raises:
        ArchiveError: If the file cannot be opened, is not an archive, is newer than this release, or is open in
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
