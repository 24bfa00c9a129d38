"""The archive file's layout and opening it.

Layout (schema version 1)::

    ssm_meta(key TEXT PRIMARY KEY, value)   format, schema_version, user_id (absent: a user not named),
                                            model_id, dimension,
                                            next_index, evicted_count, forgotten_count,
                                            ivf_centroids (BLOB: nlist x dimension little-endian float32,
                                            present while the vectors are in the approximate tier)
    ssm_messages(idx INTEGER PRIMARY KEY,   the archive index
                 data BLOB,                 the message exactly as archived (compact JSON bytes)
                 role TEXT, archived_at REAL, said_at REAL (NULL: unknown),
                 session_id TEXT,           the session it was said in (NULL: unknown)
                 key TEXT,                  the idempotency key the engine built (NULL: never repeats)
                 has_text INTEGER,          1 when it has text to embed
                 terms BLOB,                its distinct BM25 terms, UTF-8, separated by spaces
                 term_counts BLOB,          each term's count, little-endian uint32
                 tokenizer INTEGER)         the TOKENIZER_VERSION that produced them
    ssm_vectors(idx INTEGER PRIMARY KEY,    present once the message is embedded (count may be 0)
                count INTEGER, data BLOB)   count x dimension little-endian float32
    ssm_lists(idx INTEGER PRIMARY KEY,      while ivf_centroids is present, for each message with vectors:
              lists BLOB)                   the inverted list of each of its vectors, little-endian int32

A file holds one user's messages: the user id it records is checked at every open (``check_user``). A message is
pending (waiting for its vectors) while it has text and no ``ssm_vectors`` row. A file of another
schema version is refused (nothing released wrote another one, so there is nothing to migrate). Terms written by
another ``TOKENIZER_VERSION`` are tokenized again at open and written back (``_loading``), so a later change of
the tokenizer needs no new schema.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from typing import Any

from strands_semantic_memory.errors import ArchiveError, ConfigurationError

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
    session_id TEXT,
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


def check_user(path: str, recorded: Any, user_id: str | None) -> str | None:
    """The user a file is opened for: the one it records, or the one given (recorded if the file has none).

    Args:
        path: The file, for the message.
        recorded: The ``user_id`` its meta records (None: none).
        user_id: The user the caller opens it for (None: whoever the file records).

    Raises:
        ConfigurationError: If the file records another user than the one given (nothing is written).
        ArchiveError: If the recorded user id is not text.
    """
    if recorded is not None and not isinstance(recorded, str):
        raise ArchiveError(f"the archive file '{path}' records an invalid user id: {recorded!r}")
    if recorded is not None and user_id is not None and recorded != user_id:
        raise ConfigurationError(
            f"the archive file '{path}' holds user {recorded!r}'s memory, not user {user_id!r}'s: one file holds "
            "one user (give each user a file of their own, or open this one with its user)"
        )
    return recorded if user_id is None else user_id


def _prepare(connection: sqlite3.Connection, meta: dict[str, Any] | None, user_id: str | None) -> None:
    """Create the tables of a new file, or record the user of a file that has none (inside a transaction)."""
    if meta is not None:
        if user_id is not None and meta.get("user_id") is None:
            set_meta(connection, {"user_id": user_id})
        return
    for statement in _TABLES.split(";"):
        if statement.strip():
            connection.execute(statement)
    values: dict[str, Any] = {
        "format": FILE_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "next_index": 0,
        "evicted_count": 0,
        "forgotten_count": 0,
    }
    if user_id is not None:
        values["user_id"] = user_id
    set_meta(connection, values)


def check_location(path: str) -> None:
    """Refuse a file whose folder is missing, and say so when the file or its folder is read-only.

    A mistyped folder would otherwise become a new, empty archive (so missing folders are never created), and
    SQLite reports a read-only location as "unable to open database file".

    Raises:
        ConfigurationError: If the folder does not exist, or the path is a folder.
        ArchiveError: If the file, or the folder a new file or its journal would be written in, is read-only.
    """
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise ConfigurationError(
            f"the folder of the archive file '{path}' does not exist ('{folder}'): create it first (a missing folder "
            "is not created, so that a mistyped path does not start a new, empty archive)"
        )
    if os.path.isdir(path):
        raise ConfigurationError(f"the archive path '{path}' is a folder; give a file in it")
    read_only = read_only_part(path)
    if read_only is not None:
        raise ArchiveError(read_only)


def read_only_part(path: str) -> str | None:
    """What makes ``path`` unusable as an archive file because it cannot be written, or None.

    The file must be writable, and so must its folder: SQLite writes its journal (``-wal``) beside the file.
    """
    folder = os.path.dirname(path)
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"the archive file '{path}' is read-only: the archive needs to write it"
    if not os.access(folder, os.W_OK | os.X_OK):
        what = "its journal ('-wal' file)" if os.path.exists(path) else "a new archive file and its journal"
        return f"the folder '{folder}' of the archive file '{path}' is read-only: {what} cannot be written there"
    return None


def _reason(path: str, error: BaseException) -> str:
    """SQLite's error, or what it means when the location is read-only (SQLite says "unable to open")."""
    return read_only_part(path) or str(error)


def connect(path: str, synchronous: str, timeout: float, user_id: str | None) -> tuple[sqlite3.Connection, str | None]:
    """Open the archive file exclusively for a user, creating its tables if it is new.

    Returns:
        The connection, and the file's user (the one given, or the one it records).

    Raises:
        ConfigurationError: If the file holds another user's memory (see ``check_user``).
        ArchiveError: If the file cannot be opened, is not an archive, has another schema version, or is open in
            another process.
    """
    check_location(path)
    try:
        connection = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as error:
        raise ArchiveError(f"cannot open the archive file '{path}': {_reason(path, error)}") from error
    try:
        connection.execute("PRAGMA locking_mode=EXCLUSIVE")  # one owner: its in-memory indexes are the truth
        meta = _inspect(connection, path)  # before anything is written: a file that is not ours stays as it is
        owner = check_user(path, None if meta is None else meta.get("user_id"), user_id)
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise ArchiveError(f"the archive file '{path}' cannot use a WAL journal (got {mode!r})")
        connection.execute(f"PRAGMA synchronous={synchronous}")
        connection.execute("BEGIN IMMEDIATE")  # takes the exclusive lock now, not at the first write
        try:
            _prepare(connection, meta, owner)
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
        raise ArchiveError(f"cannot open the archive file '{path}': {_reason(path, error)}") from error
    except sqlite3.Error as error:
        connection.close()
        raise ArchiveError(f"cannot open the archive file '{path}': {_reason(path, error)}") from error
    except BaseException:
        connection.close()
        raise
    return connection, owner
