"""SqliteArchive: one user's archive in an SQLite database, a durable file or in process.

One engine serves both: ``SqliteArchive("alice.db")`` is a durable file, ``SqliteArchive()`` a database in memory
whose contents travel in ``to_state`` (a Strands session's JSON). Lexical search over the library's
own terms (``messages._terms``) is BM25 in the process (``_lexical``: why not FTS5 is measured there), and the vectors
are searched in process too (``_vectors``); both are built at open from what the file keeps (the terms and the
vectors, so nothing is tokenized or embedded again) and kept in step with writes by other processes (``PRAGMA
data_version``).

Layout (schema 1)::

    ssm_meta(key, value)        format, schema, tokenizer, user_id, model_id, dimension, next_index, epoch, secret
    ssm_messages(idx, key, data, role, text, terms, archived_at, said_at, session_id, embedded)
    ssm_vectors(seq, idx, chunk, vector)   float32 little-endian, one row per chunk
    ssm_forgotten(digest)       keyed digests of forgotten messages (never their text)

Opening reads what a file is before writing anything: a database that is not an archive, or an archive of another
schema, is refused and left as it is; a missing folder is refused, never created. A file records its user when it is
created and refuses any other (``user_id=None`` opens a file as the user it records). Writes run in ``BEGIN
IMMEDIATE`` transactions (WAL, ``synchronous=NORMAL``: a killed process loses nothing committed); forgetting uses
``secure_delete`` and truncates the WAL (``forget_all`` also vacuums), so no page keeps the forgotten text.
"""

from __future__ import annotations

import base64
import logging
import os
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from strands_semantic_memory.archives._lexical import LexicalIndex
from strands_semantic_memory.archives._protocol import (
    EMBEDDED,
    NOTHING_TO_EMBED,
    PENDING,
    STATEMENT_CHUNK,
    ArchiveStats,
    Candidates,
    NewRecord,
    Scope,
    StoredRecord,
)
from strands_semantic_memory.archives._vectors import APPROXIMATE_ABOVE, VectorIndex
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import (
    ArchiveError,
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    StateError,
)
from strands_semantic_memory.messages._codec import forget_digest
from strands_semantic_memory.messages._session import check_user_id
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION

__all__ = ["STATE_FORMAT", "SqliteArchive"]

logger = logging.getLogger(__name__)

FILE_FORMAT = "strands-semantic-memory/archive"
SCHEMA_VERSION = 1
STATE_FORMAT = "strands-semantic-memory/state"
STATE_VERSION = 1
MAX_STATE_RECORDS = 10_000_000
"""The most records a saved state may claim (checked before anything is allocated)."""

_SCHEMA = """
CREATE TABLE ssm_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE ssm_messages (
    idx INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, data BLOB NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL,
    terms TEXT NOT NULL, archived_at REAL NOT NULL, said_at REAL, session_id TEXT, embedded INTEGER NOT NULL
);
CREATE INDEX ssm_pending ON ssm_messages (idx) WHERE embedded = 0;
CREATE TABLE ssm_vectors (seq INTEGER PRIMARY KEY, idx INTEGER NOT NULL, chunk INTEGER NOT NULL, vector BLOB NOT NULL);
CREATE INDEX ssm_vectors_idx ON ssm_vectors (idx);
CREATE TABLE ssm_forgotten (digest BLOB PRIMARY KEY) WITHOUT ROWID;
"""
_TABLES = ("ssm_meta", "ssm_messages", "ssm_vectors", "ssm_forgotten")
_COLUMNS = "idx, data, role, text, archived_at, said_at, session_id"


def whose(user_id: str | None) -> str:
    """A user for a message: ``user 'alice'`` or ``a user not named`` (never ``'alice''s``)."""
    return "a user not named" if user_id is None else f"user {user_id!r}"


def _record(row: Sequence[Any]) -> StoredRecord:
    return StoredRecord(row[0], bytes(row[1]), row[2], row[3], row[4], row[5], row[6])


def _hit_sql(scope: Scope, alias: str = "m") -> tuple[str, list[Any]]:
    """SQL conditions (each starting with AND) a hit must meet, and their parameters."""
    parts: list[str] = []
    params: list[Any] = []
    if scope.sessions is not None:
        named = [s for s in scope.sessions if s is not None]
        marks = ",".join("?" * len(named))
        clause = f"{alias}.session_id IN ({marks})" if named else "0"
        parts.append(f" AND ({clause} OR {alias}.session_id IS NULL)" if None in scope.sessions else f" AND {clause}")
        params.extend(named)
    if scope.roles is not None:
        parts.append(f" AND {alias}.role IN ({','.join('?' * len(scope.roles))})")
        params.extend(sorted(scope.roles))
    time = f"coalesce({alias}.said_at, {alias}.archived_at)"
    if scope.since is not None:
        parts.append(f" AND {time} >= ?")
        params.append(scope.since)
    if scope.until is not None:
        parts.append(f" AND {time} <= ?")
        params.append(scope.until)
    if scope.exclude:
        parts.append(f" AND {alias}.idx NOT IN ({','.join('?' * len(scope.exclude))})")
        params.extend(sorted(scope.exclude))
    return "".join(parts), params


class SqliteArchive:
    """One user's archive in SQLite: a durable file (``path``) or in process (see the module docstring).

    Example:
        ```python
        from strands_semantic_memory import SemanticMemory
        from strands_semantic_memory.archives import SqliteArchive

        memory = SemanticMemory(archive=SqliteArchive("alice.db", user_id="alice"))
        memory.close()
        ```
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        user_id: str | None = None,
        busy_timeout: float = 5.0,
        approximate_above: int = APPROXIMATE_ABOVE,
        read_only: bool = False,
    ) -> None:
        """Open (or create) the archive.

        Args:
            path: The file (its folder must exist); None keeps the archive in process, in memory.
            user_id: Whose archive it is; a file refuses any user but the one it records (None: the file's user).
            busy_timeout: Seconds to wait for another process's write lock before ``ArchiveError``.
            approximate_above: Vectors above which dense search is approximate (see ``_vectors``).
            read_only: Open an existing file for reading only (``mode=ro``): the file is never written, not even the
                model on ``bind``, and ``pending`` hands nothing to embed (the vectors could not be stored). SQLite
                itself may leave the ``-wal`` and ``-shm`` companions of the file behind.

        Raises:
            ConfigurationError: If the path or user id is invalid, or the file is another user's.
            ArchiveError: If the file cannot be opened, is not an archive, or is of another schema.
        """
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise ConfigurationError(f"archive_path must be a path, got {type(path).__name__}")
        user_id = check_user_id(user_id)
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float)) or not busy_timeout >= 0:
            raise ConfigurationError(f"busy_timeout must be a number of seconds >= 0, got {busy_timeout!r}")
        self.path = None if path is None else str(Path(path).expanduser().absolute())
        if read_only and (self.path is None or not os.path.isfile(self.path)):
            raise ArchiveError(f"no archive file at '{self.path}' to open read-only")
        self._read_only = read_only
        self._lock = threading.RLock()
        self._approximate_above = approximate_above
        self._connection = self._open(busy_timeout)
        try:
            meta = self._meta()
            if meta is None and read_only:
                raise ArchiveError(f"'{self.path}' is empty: it is not an archive yet; left as it is")
            if meta is None:
                meta = self._create(user_id)
            elif user_id is not None and meta.get("user_id") != user_id:
                raise ConfigurationError(
                    f"'{self.path}' is the archive of {whose(meta.get('user_id'))}, not of user {user_id!r}: open it "
                    "as its user"
                )
        except BaseException:
            self._connection.close()
            raise
        self._user_id: str | None = meta.get("user_id")
        self._secret = bytes.fromhex(meta["secret"])
        self._version = -1
        self._epoch: int | None = None
        self._vectors: VectorIndex | None = None
        self._statements: VectorIndex | None = None  # the messages' self-statements (messages._profile)
        self._lexical = LexicalIndex()
        self._vector_seq = 0
        self._last_index = -1  # the newest message the lexical index holds
        self._closed = False
        self._refresh()

    # ------------------------------------------------------------------ opening

    def _open(self, busy_timeout: float) -> sqlite3.Connection:
        if self.path is None:
            connection = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            connection.execute("PRAGMA secure_delete = ON")
            return connection
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise ConfigurationError(f"the folder of the archive file '{self.path}' does not exist (it is not created)")
        if self._read_only:
            try:
                uri = f"{Path(self.path).as_uri()}?mode=ro"
                return sqlite3.connect(uri, busy_timeout, check_same_thread=False, isolation_level=None, uri=True)
            except sqlite3.Error as error:
                raise ArchiveError(f"cannot open the archive file '{self.path}': {error}") from error
        exists = os.path.exists(self.path)
        if (exists and not os.access(self.path, os.W_OK)) or not os.access(folder, os.W_OK):
            what = f"the archive file '{self.path}'" if exists else f"the folder '{folder}'"
            raise ArchiveError(f"{what} is read-only: the archive needs to write it")
        try:
            connection = sqlite3.connect(self.path, timeout=busy_timeout, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as error:
            raise ArchiveError(f"cannot open the archive file '{self.path}': {error}") from error
        try:
            self._read_meta(connection)  # refuses a file that is not ours before anything is written to it
            connection.execute("PRAGMA secure_delete = ON")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
        except BaseException as error:
            connection.close()
            if isinstance(error, sqlite3.Error):
                raise ArchiveError(f"cannot open the archive file '{self.path}': {error}") from error
            raise
        return connection

    def _read_meta(self, connection: sqlite3.Connection) -> dict[str, Any] | None:
        """What the database is, reading only: None when it has no tables (a new archive), else its meta.

        Raises:
            ArchiveError: If it is a database but not an archive of this schema, or is missing a table.
        """
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return None
        where = f"'{self.path}'"
        meta = dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall()) if "ssm_meta" in tables else {}
        if meta.get("format") != FILE_FORMAT:
            raise ArchiveError(
                f"{where} is an SQLite database but not a strands-semantic-memory archive; left as it is"
            )
        if meta.get("schema") != SCHEMA_VERSION or meta.get("tokenizer") != TOKENIZER_VERSION:
            raise ArchiveError(
                f"{where} has schema {meta.get('schema')!r} (tokenizer {meta.get('tokenizer')!r}); this release reads "
                f"schema {SCHEMA_VERSION} (tokenizer {TOKENIZER_VERSION}) only; left as it is"
            )
        missing = [table for table in _TABLES if table not in tables]
        if missing:
            raise ArchiveError(f"{where} is damaged: it has no {', '.join(missing)} table; left as it is")
        return meta

    def _meta(self) -> dict[str, Any] | None:
        try:
            return self._read_meta(self._connection)
        except sqlite3.Error as error:
            raise ArchiveError(f"cannot read the archive file '{self.path}': {error}") from error

    def _create(self, user_id: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "format": FILE_FORMAT,
            "schema": SCHEMA_VERSION,
            "tokenizer": TOKENIZER_VERSION,
            "next_index": 0,
            "epoch": 0,
            "secret": secrets.token_hex(32),
        }
        if user_id is not None:
            meta["user_id"] = user_id
        with self._write() as connection:
            if self._read_meta(connection) is None:  # another process may have created it meanwhile
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        connection.execute(statement)
                connection.executemany("INSERT INTO ssm_meta VALUES (?, ?)", list(meta.items()))
        created = self._meta()
        assert created is not None
        return created

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``), rolled back on any error."""
        with self._lock:
            if getattr(self, "_closed", False):
                raise ArchiveError("the archive is closed")
            if self._read_only:
                raise ArchiveError(f"the archive '{self.path}' is open read-only")
            connection = self._connection
            try:
                connection.execute("BEGIN IMMEDIATE")
                yield connection
                connection.execute("COMMIT")
            except BaseException as error:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                if isinstance(error, sqlite3.Error):
                    raise ArchiveError(
                        f"the archive '{self.path or 'in process'}' could not commit: {error}"
                    ) from error
                raise

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            if self._closed:
                raise ArchiveError("the archive is closed")
            try:
                return self._connection.execute(sql, params).fetchall()
            except sqlite3.Error as error:
                raise ArchiveError(f"the archive '{self.path or 'in process'}' could not be read: {error}") from error

    def _value(self, key: str) -> Any:
        rows = self._read("SELECT value FROM ssm_meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def _refresh(self) -> None:
        """Bring the in-process vectors in step with what other processes committed to the file.

        ``PRAGMA data_version`` changes with another connection's commit only: this archive's own writes update the
        vectors directly. A removal elsewhere (the ``epoch`` changed) reloads every vector; otherwise the vectors
        stored since the last look are added.
        """
        with self._lock:
            version = self._connection.execute("PRAGMA data_version").fetchone()[0]
            if version == self._version:
                return
            self._version = version
            epoch, dimension = self._value("epoch"), self._value("dimension")
            if epoch != self._epoch:  # first load, or something was removed elsewhere: everything again
                self._lexical = LexicalIndex()
                self._last_index = -1
                self._vectors = self._statements = None
                self._epoch = epoch
            rows = self._read(
                "SELECT idx, terms, session_id FROM ssm_messages WHERE idx > ? ORDER BY idx", (self._last_index,)
            )
            for index, terms, session in rows:
                self._lexical.add(index, terms.split(), session)
                self._last_index = index
            if dimension is None:
                return
            if self._vectors is None or self._statements is None:
                self._vectors = VectorIndex(int(dimension), self._approximate_above)
                self._statements = VectorIndex(int(dimension), self._approximate_above)
                self._vector_seq = 0
            rows = self._read(
                "SELECT v.seq, v.idx, v.chunk, v.vector, m.session_id FROM ssm_vectors v "
                "JOIN ssm_messages m ON m.idx = v.idx WHERE v.seq > ? ORDER BY v.idx, v.chunk",
                (self._vector_seq,),
            )
            by_message: dict[tuple[int, bool], tuple[list[bytes], str | None]] = {}
            for seq, index, chunk, blob, session in rows:
                by_message.setdefault((index, chunk >= STATEMENT_CHUNK), ([], session))[0].append(blob)
                self._vector_seq = max(self._vector_seq, seq)
            for (index, statement), (blobs, session) in by_message.items():
                target = self._statements if statement else self._vectors
                rows_of = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
                target.add(index, rows_of, session, STATEMENT_CHUNK if statement else 0)

    def _removed_here(self, indices: Iterable[int]) -> None:
        """Messages removed through this archive: their terms and vectors go, and the new epoch counts as seen."""
        with self._lock:
            self._lexical.remove(indices)
            for index in (self._vectors, self._statements):
                if index is not None:
                    index.remove(indices)
            self._epoch = self._value("epoch")

    # ------------------------------------------------------------------ the protocol

    @property
    def user_id(self) -> str | None:
        """Whose archive this is (None: a user not named)."""
        return self._user_id

    def bind(self, model_id: str, dimension: int | None) -> None:
        """Record the embedding model (and its dimension once known); refuse another model or dimension."""
        recorded, stored = self._value("model_id"), self._value("dimension")
        if recorded is not None and recorded != model_id:
            raise EmbeddingModelMismatchError(recorded, model_id)
        if dimension is not None and stored is not None and int(stored) != dimension:
            raise DimensionMismatchError(int(stored), dimension)
        if not self._read_only and (recorded is None or (dimension is not None and stored is None)):
            with self._write() as connection:
                connection.execute("INSERT OR REPLACE INTO ssm_meta VALUES ('model_id', ?)", (model_id,))
                if dimension is not None:
                    connection.execute("INSERT OR REPLACE INTO ssm_meta VALUES ('dimension', ?)", (dimension,))

    def rebind(self, model_id: str) -> None:
        """Record another embedding model: every vector is dropped and every message waits for its new ones.

        The messages stay, found by their words until embedded again (``strands-semantic-memory reembed``).
        """
        with self._write() as connection:
            connection.execute("DELETE FROM ssm_vectors")
            connection.execute("UPDATE ssm_messages SET embedded = ? WHERE embedded = ?", (PENDING, EMBEDDED))
            connection.execute("DELETE FROM ssm_meta WHERE key = 'dimension'")
            connection.execute("INSERT OR REPLACE INTO ssm_meta VALUES ('model_id', ?)", (model_id,))
            connection.execute("UPDATE ssm_meta SET value = value + 1 WHERE key = 'epoch'")
        with self._lock:
            self._vectors = self._statements = None
            self._vector_seq = 0
            self._epoch = self._value("epoch")

    def add(self, records: Sequence[NewRecord]) -> list[int | None]:
        """Archive records in one transaction (see ``Archive.add``)."""
        from strands_semantic_memory.messages._terms import tokenize

        results: list[int | None] = []
        added: list[tuple[int, list[str], str | None]] = []
        with self._write() as connection:
            next_index = int(connection.execute("SELECT value FROM ssm_meta WHERE key = 'next_index'").fetchone()[0])
            start = next_index
            for record in records:
                found = connection.execute("SELECT idx FROM ssm_messages WHERE key = ?", (record.key,)).fetchone()
                if found is not None:
                    results.append(int(found[0]))
                    continue
                digest = forget_digest(self._secret, record.data)
                if connection.execute("SELECT 1 FROM ssm_forgotten WHERE digest = ?", (digest,)).fetchone():
                    results.append(None)
                    continue
                embedded = PENDING if record.text.strip() else NOTHING_TO_EMBED
                terms = tokenize(record.text)
                connection.execute(
                    "INSERT INTO ssm_messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (next_index, record.key, record.data, record.role, record.text, " ".join(terms),
                     record.archived_at, record.said_at, record.session_id, embedded),
                )  # fmt: skip
                added.append((next_index, terms, record.session_id))
                results.append(next_index)
                next_index += 1
            if next_index != start:
                connection.execute("UPDATE ssm_meta SET value = ? WHERE key = 'next_index'", (next_index,))
            with self._lock:  # committed just below, under the same lock: no search sees the index before the rows
                for index, terms, session in added:
                    self._lexical.add(index, terms, session)
                    self._last_index = max(self._last_index, index)
        return results

    def set_vectors(self, vectors: Mapping[int, Vectors], statements: Mapping[int, Vectors] | None = None) -> None:
        """Store each message's chunk vectors and its self-statements'; indices no longer live are ignored."""
        if not vectors:
            return
        dimension = next(iter(vectors.values())).shape[1]
        stored: list[tuple[int, Vectors, str | None, int]] = []
        with self._write() as connection:
            known = connection.execute("SELECT value FROM ssm_meta WHERE key = 'dimension'").fetchone()
            if known is None:
                connection.execute("INSERT INTO ssm_meta VALUES ('dimension', ?)", (dimension,))
            elif int(known[0]) != dimension:
                raise DimensionMismatchError(int(known[0]), dimension)
            for index, rows in vectors.items():
                live = connection.execute(
                    "UPDATE ssm_messages SET embedded = ? WHERE idx = ? RETURNING session_id", (EMBEDDED, index)
                ).fetchone()
                if live is None:
                    continue
                connection.execute("DELETE FROM ssm_vectors WHERE idx = ?", (index,))
                for first, block in ((0, rows), (STATEMENT_CHUNK, (statements or {}).get(index))):
                    if block is None or not len(block):
                        continue
                    connection.executemany(
                        "INSERT INTO ssm_vectors (idx, chunk, vector) VALUES (?, ?, ?)",
                        [(index, first + chunk, row.astype("<f4").tobytes()) for chunk, row in enumerate(block)],
                    )
                    stored.append((index, block, live[0], first))
            with self._lock:
                if self._vectors is None or self._statements is None:
                    self._vectors = VectorIndex(dimension, self._approximate_above)
                    self._statements = VectorIndex(dimension, self._approximate_above)
                    self._epoch = connection.execute("SELECT value FROM ssm_meta WHERE key = 'epoch'").fetchone()[0]
                for index, block, session, first in stored:
                    (self._statements if first else self._vectors).add(index, block, session, first)

    def pending(self, limit: int, exclude: Iterable[int] = ()) -> list[StoredRecord]:
        """Up to ``limit`` records waiting for their vectors, oldest first (none when open read-only)."""
        if self._read_only:
            return []
        skip = sorted(set(exclude))
        marks = ",".join("?" * len(skip))
        rows = self._read(
            f"SELECT {_COLUMNS} FROM ssm_messages WHERE embedded = 0 AND idx NOT IN ({marks}) ORDER BY idx LIMIT ?",
            (*skip, limit),
        )
        return [_record(row) for row in rows]

    def candidates(
        self, terms: Sequence[str], vector: Vectors | None, depth: int, scope: Scope, statements: bool = False
    ) -> Candidates:
        """The ``depth`` best messages by vector and by BM25 that may be hits in ``scope`` (see ``Archive``)."""
        self._refresh()
        lexical: dict[int, float] = {}
        if terms and not statements:
            with self._lock:
                words = self._lexical
                allowed = None if scope.sessions is None else words.session_codes(scope.sessions)
                lexical = self._best_hits(lambda fetch: words.search(terms, fetch, allowed), depth, scope)
        if vector is None:
            return Candidates(dense={}, lexical=lexical)
        with self._lock:
            vectors = self._statements if statements else self._vectors
            if vectors is None or not len(vectors):
                return Candidates(dense={}, lexical=lexical)
            index, codes = vectors, None if scope.sessions is None else vectors.session_codes(scope.sessions)
            found = self._best_hits(lambda fetch: index.search(vector, fetch, codes), depth, scope)
        return Candidates(dense=found, lexical=lexical)

    def _best_hits(self, search: Callable[[int], dict[int, float]], depth: int, scope: Scope) -> dict[int, float]:
        """The ``depth`` best of ``search(fetch)`` that may be hits in ``scope`` (roles, times, exclusions).

        A narrow scope fetches four times more until enough are hits or nothing is left, so it never comes back short.
        One that only excludes indices (what a model call holds: every hooked turn) is filtered here, with no query:
        ``depth`` more than it excludes is enough (the indexes hold live messages of the scope's sessions only).
        """
        if scope.exclude and scope.roles is None and scope.since is None and scope.until is None:
            found = search(depth + len(scope.exclude))
            return dict(list(((i, s) for i, s in found.items() if i not in scope.exclude))[:depth])
        fetch = depth * 4 if scope.narrows_hits else depth
        while True:
            found = search(fetch)
            kept = self.eligible(found, scope) if scope.narrows_hits and found else found
            hits = {i: s for i, s in found.items() if i in kept}
            if len(hits) >= depth or len(found) < fetch:
                return dict(list(hits.items())[:depth])
            fetch *= 4

    def similarities(self, vector: Vectors, indices: Iterable[int]) -> dict[int, float]:
        """Best-chunk cosine similarity of each index that has vectors."""
        self._refresh()
        with self._lock:
            return {} if self._vectors is None else self._vectors.similarities(vector, indices)

    def eligible(self, indices: Iterable[int], scope: Scope) -> set[int]:
        """The live indices among ``indices`` that may be hits in ``scope`` (no record is read)."""
        wanted = sorted({int(i) for i in indices})
        conditions, params = _hit_sql(scope)
        found: set[int] = set()
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            rows = self._read(
                f"SELECT idx FROM ssm_messages m WHERE idx IN ({','.join('?' * len(part))}){conditions}",
                (*part, *params),
            )
            found.update(int(row[0]) for row in rows)
        return found

    def get(self, indices: Iterable[int], scope: Scope | None = None) -> list[StoredRecord]:
        """The live records among ``indices`` that ``scope`` may read, in index order."""
        wanted = sorted({int(i) for i in indices})
        records: list[StoredRecord] = []
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            rows = self._read(f"SELECT {_COLUMNS} FROM ssm_messages WHERE idx IN ({','.join('?' * len(part))})", part)
            records.extend(_record(row) for row in rows)
        records.sort(key=lambda r: r.index)
        return records if scope is None else [r for r in records if scope.reads(r.session_id)]

    def find_keys(self, keys: Iterable[str]) -> dict[str, int]:
        """The live index of each idempotency key that is archived."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, int] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            rows = self._read(f"SELECT key, idx FROM ssm_messages WHERE key IN ({','.join('?' * len(part))})", part)
            found.update((key, int(index)) for key, index in rows)
        return found

    def find_text(self, text: str, scope: Scope | None, limit: int) -> list[int]:
        """Indices of up to ``limit`` live messages whose text contains ``text`` (case-insensitive), oldest first."""
        conditions, params = _hit_sql(scope or Scope())
        rows = self._read(
            f"SELECT idx FROM ssm_messages m WHERE instr(lower(m.text), lower(?)) > 0{conditions} ORDER BY idx LIMIT ?",
            (text, *params, limit),
        )
        return [int(row[0]) for row in rows]

    def records(self, after: int, limit: int) -> list[StoredRecord]:
        """Up to ``limit`` live records with an index above ``after``, in index order."""
        rows = self._read(f"SELECT {_COLUMNS} FROM ssm_messages WHERE idx > ? ORDER BY idx LIMIT ?", (after, limit))
        return [_record(row) for row in rows]

    def _remove(self, connection: sqlite3.Connection, indices: Sequence[int], remember: bool) -> int:
        removed = 0
        for start in range(0, len(indices), 500):
            part = list(indices[start : start + 500])
            marks = ",".join("?" * len(part))
            rows = connection.execute(f"DELETE FROM ssm_messages WHERE idx IN ({marks}) RETURNING data", part)
            digests = [(forget_digest(self._secret, bytes(row[0])),) for row in rows.fetchall()]
            removed += len(digests)
            if remember:
                connection.executemany("INSERT OR IGNORE INTO ssm_forgotten VALUES (?)", digests)
            connection.execute(f"DELETE FROM ssm_vectors WHERE idx IN ({marks})", part)
        if removed:
            connection.execute("UPDATE ssm_meta SET value = value + 1 WHERE key = 'epoch'")
        return removed

    def _scrub(self) -> None:
        """Leave no page of the file holding removed text (``secure_delete`` zeroed it; the WAL is truncated)."""
        with self._lock:
            if self.path is None:
                return
            try:
                self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as error:  # the removal is committed: a busy reader delays the truncation only
                logger.warning("error=<%s> | the write-ahead log could not be truncated yet", error)

    def forget(self, indices: Iterable[int]) -> int:
        """Remove these messages for good, remembering their digests; how many were removed."""
        wanted = sorted({int(i) for i in indices})
        with self._write() as connection:
            removed = self._remove(connection, wanted, remember=True)
        if removed:
            self._removed_here(wanted)
            self._scrub()
        return removed

    def forget_all(self) -> int:
        """Remove every message for good (their digests kept, nothing else)."""
        with self._write() as connection:
            indices = [int(row[0]) for row in connection.execute("SELECT idx FROM ssm_messages")]
            removed = self._remove(connection, indices, remember=True)
        with self._lock:
            if self.path is not None:
                self._connection.execute("VACUUM")
                self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._removed_here(indices)
        return removed

    def evict(self, max_messages: int | None, max_bytes: int | None) -> int:
        """Remove the oldest messages until both limits hold; how many went."""
        if max_messages is None and max_bytes is None:
            return 0
        with self._write() as connection:
            rows = connection.execute(
                "SELECT m.idx, length(m.data) + coalesce((SELECT sum(length(v.vector)) FROM ssm_vectors v "
                "WHERE v.idx = m.idx), 0) FROM ssm_messages m ORDER BY m.idx DESC"
            ).fetchall()
            kept, total, cut = 0, 0, len(rows)
            for position, (_, size) in enumerate(rows):
                if (max_messages is not None and kept + 1 > max_messages) or (
                    max_bytes is not None and total + size > max_bytes
                ):
                    cut = position
                    break
                kept, total = kept + 1, total + size
            evicted = [int(r[0]) for r in rows[cut:]]
            removed = self._remove(connection, evicted, remember=False)
        if removed:
            self._removed_here(evicted)
        return removed

    def stats(self) -> ArchiveStats:
        """What the archive holds."""
        count, pending, size, oldest = self._read(
            "SELECT count(*), coalesce(sum(embedded = 0), 0), coalesce(sum(length(data)), 0), min(idx) "
            "FROM ssm_messages"
        )[0]
        vector_bytes = self._read("SELECT coalesce(sum(length(vector)), 0) FROM ssm_vectors")[0][0]
        dimension = self._value("dimension")
        return ArchiveStats(
            count=int(count),
            pending=int(pending),
            nbytes=int(size) + int(vector_bytes),
            next_index=int(self._value("next_index")),
            dimension=None if dimension is None else int(dimension),
            model_id=self._value("model_id"),
            oldest=None if oldest is None else int(oldest),
        )

    def get_note(self, key: str) -> str | None:
        """A small value the engine kept with the archive (``ssm_meta``), or None."""
        value = self._value("note:" + key)
        return None if value is None else str(value)

    def set_note(self, key: str, value: str) -> None:
        """Keep a small value with the archive (a read-only archive keeps nothing)."""
        if self._read_only:
            return
        with self._write() as connection:
            connection.execute("INSERT OR REPLACE INTO ssm_meta VALUES (?, ?)", ("note:" + key, value))

    # ------------------------------------------------------------------ saved state

    def to_state(self) -> dict[str, Any]:
        """In process: the whole archive as JSON; a file: a reference to it (``{"kind": "sqlite", "path": ...}``)."""
        if self.path is not None:
            return {"kind": "sqlite", "path": self.path, "user_id": self._user_id}
        rows = self._read(
            "SELECT idx, key, data, role, text, archived_at, said_at, session_id, embedded "
            "FROM ssm_messages ORDER BY idx"
        )
        vectors: dict[int, tuple[list[int], list[bytes]]] = {}
        for index, chunk, blob in self._read("SELECT idx, chunk, vector FROM ssm_vectors ORDER BY idx, chunk"):
            found = vectors.setdefault(int(index), ([], []))
            found[0].append(int(chunk))
            found[1].append(bytes(blob))
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "user_id": self._user_id,
            "model_id": self._value("model_id"),
            "dimension": self._value("dimension"),
            "next_index": int(self._value("next_index")),
            "secret": self._secret.hex(),
            "records": [
                [
                    index,
                    key,
                    bytes(data).decode("utf-8", "surrogatepass"),
                    role,
                    text,
                    archived,
                    said,
                    session,
                    embedded,
                ]
                for index, key, data, role, text, archived, said, session, embedded in rows
            ],
            "vectors": {
                str(i): {"chunks": chunks, "data": base64.b64encode(b"".join(blobs)).decode("ascii")}
                for i, (chunks, blobs) in vectors.items()
            },
            "forgotten": [row[0].hex() for row in self._read("SELECT digest FROM ssm_forgotten")],
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Replace the archive with a saved one; a reference must name this archive (see the module docstring).

        A file accepts an in-process state only while it holds no message, or when it holds exactly the state's
        messages already (a restore never deletes archived data).

        Raises:
            StateError: If the state is corrupt, another user's, or names another archive; nothing changed.
        """
        if not isinstance(state, Mapping):
            raise StateError(f"archive state must be a dict, got {type(state).__name__}")
        if state.get("kind") is not None:
            if state.get("kind") != "sqlite" or state.get("path") != self.path:
                raise StateError(
                    f"the state references another archive ({state.get('kind')!r} {state.get('path')!r}); build the "
                    f"memory with archive_path={state.get('path')!r} to restore it"
                )
            if state.get("user_id") != self._user_id:
                theirs, ours = whose(state.get("user_id")), whose(self._user_id)
                raise StateError(f"the state is of {theirs}, this archive of {ours}")
            return
        loaded = _checked_state(state, self._user_id)
        with self._write() as connection:
            live = {row[0]: bytes(row[1]) for row in connection.execute("SELECT key, data FROM ssm_messages")}
            if self.path is not None and live:
                same = len(live) == len(loaded["records"]) and all(live.get(r[1]) == r[2] for r in loaded["records"])
                if not same:
                    raise StateError(
                        f"the archive file '{self.path}' already holds messages: a saved in-process state is restored "
                        "into a file only while it is empty (a restore never deletes archived data)"
                    )
                return
            for table in ("ssm_messages", "ssm_vectors", "ssm_forgotten"):
                connection.execute(f"DELETE FROM {table}")
            self._insert_state(connection, loaded)
        with self._lock:
            self._epoch = None  # everything is read again
            self._version = -1
            self._refresh()
            self._epoch = self._value("epoch")

    def _insert_state(self, connection: sqlite3.Connection, loaded: dict[str, Any]) -> None:
        from strands_semantic_memory.messages._terms import terms_text

        connection.executemany(
            "INSERT INTO ssm_messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*r[:5], terms_text(r[4]), *r[5:]) for r in loaded["records"]],
        )
        connection.executemany(
            "INSERT INTO ssm_vectors (idx, chunk, vector) VALUES (?, ?, ?)",
            [
                (i, c, row.tobytes())
                for i, (chunks, rows) in loaded["vectors"].items()
                for c, row in zip(chunks, rows, strict=False)
            ],
        )
        connection.executemany("INSERT INTO ssm_forgotten VALUES (?)", [(d,) for d in loaded["forgotten"]])
        for key in ("model_id", "dimension"):
            connection.execute("DELETE FROM ssm_meta WHERE key = ?", (key,))
            if loaded[key] is not None:
                connection.execute("INSERT INTO ssm_meta VALUES (?, ?)", (key, loaded[key]))
        connection.execute("UPDATE ssm_meta SET value = ? WHERE key = 'next_index'", (loaded["next_index"],))
        connection.execute("UPDATE ssm_meta SET value = value + 1 WHERE key = 'epoch'")
        if loaded["secret"] is not None:
            connection.execute("UPDATE ssm_meta SET value = ? WHERE key = 'secret'", (loaded["secret"].hex(),))
            self._secret = loaded["secret"]

    def close(self) -> None:
        """Close the database (idempotent). An in-process archive's contents are gone unless saved with ``to_state``."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._connection.close()

    def __repr__(self) -> str:
        return f"SqliteArchive({self.path or 'in process'!s}, user_id={self._user_id!r})"


def _checked_state(state: Mapping[str, Any], user_id: str | None) -> dict[str, Any]:
    """A saved in-process state, validated whole before anything changes.

    Raises:
        StateError: If anything is missing, of the wrong type, inconsistent, or another user's.
    """
    if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
        raise StateError(
            f"not a saved archive of this release (format {state.get('format')!r}, version {state.get('version')!r};"
            f" expected {STATE_FORMAT!r} version {STATE_VERSION})"
        )
    if state.get("user_id") != user_id:
        raise StateError(f"the state is of {whose(state.get('user_id'))}, this archive of {whose(user_id)}")
    records, vectors_in = state.get("records"), state.get("vectors")
    next_index, dimension = state.get("next_index"), state.get("dimension")
    if not isinstance(records, list) or len(records) > MAX_STATE_RECORDS or not isinstance(vectors_in, Mapping):
        raise StateError("the state's records or vectors are missing or too many")
    if not isinstance(next_index, int) or isinstance(next_index, bool) or not len(records) <= next_index < 1 << 53:
        raise StateError(f"the state's next_index {next_index!r} does not account for its {len(records)} records")
    if dimension is not None and (not isinstance(dimension, int) or not 0 < dimension <= 65536):
        raise StateError(f"the state's dimension {dimension!r} is not a positive integer")
    checked: list[tuple[Any, ...]] = []
    previous = -1
    try:
        for row in records:
            index, key, data, role, text, archived, said, session, embedded = row
            if not isinstance(index, int) or not previous < index < next_index:
                raise StateError(f"record index {index!r} is out of order or beyond next_index")
            if not all(isinstance(v, str) for v in (key, data, role, text)) or embedded not in (0, 1, 2):
                raise StateError(f"record {index} has a field of the wrong type")
            if not isinstance(archived, (int, float)) or not (said is None or isinstance(said, (int, float))):
                raise StateError(f"record {index} has a time that is not a number")
            if session is not None and not isinstance(session, str):
                raise StateError(f"record {index} has a session id that is not a string")
            previous = index
            checked.append((index, key, data.encode("utf-8", "surrogatepass"), role, text, archived, said, session,
                            embedded))  # fmt: skip
        vectors: dict[int, tuple[list[int], np.ndarray]] = {}
        live = {r[0] for r in checked}
        for key, entry in vectors_in.items():
            index = int(key)
            raw = base64.b64decode(entry["data"], validate=True)
            chunks = [int(c) for c in entry["chunks"]]
            if index not in live or dimension is None or len(raw) != 4 * dimension * len(chunks):
                raise StateError(f"the vectors of record {key!r} do not fit the state")
            if len(set(chunks)) != len(chunks) or not all(0 <= c < 256 for c in chunks):
                raise StateError(f"the vectors of record {key!r} have invalid chunk numbers")
            vectors[index] = (chunks, np.frombuffer(raw, dtype="<f4").reshape(-1, dimension).astype(np.float32))
        forgotten = [bytes.fromhex(d) for d in state.get("forgotten", [])]
        secret = state.get("secret")
        secret_bytes = None if secret is None else bytes.fromhex(secret)
    except StateError:
        raise
    except (TypeError, ValueError) as error:
        raise StateError(f"the state is corrupt: {error}") from error
    return {
        "records": checked,
        "vectors": vectors,
        "forgotten": forgotten,
        "secret": secret_bytes,
        "next_index": next_index,
        "dimension": dimension,
        "model_id": state.get("model_id"),
    }
