"""A durable archive for one machine: one SQLite file, with the search indexes held in the process.

:class:`SqliteArchive` keeps every archived message, its times and its vectors in one SQLite file at a path the
caller gives, and answers searches from an :class:`~strands_semantic_memory.stores.in_memory.InMemoryArchive`
rebuilt from that file when it opens (FAISS and BM25 are in-process structures; rebuilding them never calls the
embedder, because the vectors are in the file). Each change writes only the rows it concerns, in one transaction,
so saving a Strands session stays as cheap with 100k archived messages as with none: the session state holds only
a reference to the file (:meth:`SqliteArchive.export_state`).

Layout (schema version 1)::

    ssm_meta(key TEXT PRIMARY KEY, value)   format, schema_version, model_id, dimension,
                                            next_index, evicted_count, forgotten_count
    ssm_messages(idx INTEGER PRIMARY KEY,   the archive index
                 data BLOB,                 the message exactly as archived (compact JSON bytes)
                 role TEXT, archived_at REAL, said_at REAL (NULL: unknown),
                 key TEXT,                  the idempotency key the engine built (NULL: never repeats)
                 has_text INTEGER)          1 when it has text to embed
    ssm_vectors(idx INTEGER PRIMARY KEY,    present once the message is embedded (count may be 0)
                count INTEGER, data BLOB)   count x dimension little-endian float32

A message is pending (waiting for its vectors) while it has text and no ``ssm_vectors`` row.

Durability: WAL journal, ``synchronous=NORMAL`` by default. A commit has written its pages to the WAL file before
it returns, so a process killed at any point (``kill -9``) loses nothing that was committed, and the file is always
consistent (tested with a killed child process). Only an operating-system crash or power loss can roll back the
last commits; ``synchronous="FULL"`` closes that window with an fsync per commit, which cost 4 ms at the median and
12 ms at p90 per commit on the 2-core test machine (a turn commits two or three times), against 0.01 ms.

One process owns the file: it is opened in SQLite's exclusive locking mode, so a second process (or a second
``SqliteArchive`` on the same path) fails to open it with :class:`~strands_semantic_memory.errors.StoreError`
instead of writing behind the first one's in-memory indexes.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from ..archive import CHUNK_BITS, decode_message, record_key
from ..embeddings.base import Vectors
from ..errors import ConfigurationError, DimensionMismatchError, EmbeddingModelMismatchError, StateError, StoreError
from ..state import STATE_FORMAT, STATE_VERSION, SavedArchive, SavedRecord, load_state
from .archive_store import Candidates, NewRecord, SearchFilter, StoredRecord, StoreStats
from .in_memory import InMemoryArchive, TextOf, default_text_of

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
"""Version of the file layout written by this release (see the module docstring)."""

FILE_FORMAT = "strands-semantic-memory/sqlite-archive"
"""The ``format`` value in ``ssm_meta`` that marks a file as ours."""

STORE_KIND = "sqlite"
"""The ``store.kind`` of the state that references a file (see :meth:`SqliteArchive.export_state`)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ssm_meta (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS ssm_messages (
    idx INTEGER PRIMARY KEY,
    data BLOB NOT NULL,
    role TEXT NOT NULL,
    archived_at REAL NOT NULL,
    said_at REAL,
    key TEXT,
    has_text INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ssm_vectors (
    idx INTEGER PRIMARY KEY,
    count INTEGER NOT NULL,
    data BLOB NOT NULL
);
"""

_INSERT_MESSAGE = (
    "INSERT INTO ssm_messages (idx, data, role, archived_at, said_at, key, has_text) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_BATCH = 500  # parameters per IN (...) list, below SQLite's limit
_T = TypeVar("_T")


def _chunks(values: Sequence[int]) -> Iterator[Sequence[int]]:
    for start in range(0, len(values), _BATCH):
        yield values[start : start + _BATCH]


class SqliteArchive:
    """The archive in one SQLite file on this machine; searches run on in-process indexes rebuilt at open.

    Writes go to the in-process archive, which decides (indices, duplicates, what the limits evict), and are then
    committed to the file in one transaction: only the rows that changed. If the commit fails, the in-process
    archive is rebuilt from the file (as at open: about a second per 50k messages), so a failed call changes
    nothing and raises :class:`~strands_semantic_memory.errors.StoreError`. The in-process archive decides rather
    than SQL because it owns the rules (idempotency keys, the byte accounting of the limits): the file records
    exactly what it decided. Reads are answered by the in-process archive.

    Not thread-safe on its own beyond a simple lock: the engine serializes calls (``thread_safe`` is False).

    Example:
        ```python
        memory = SemanticMemory(archive_path="~/.agent/archive.sqlite")  # reopened by the next process
        ```
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "NORMAL",
        timeout: float = 5.0,
        text_of: TextOf = default_text_of,
    ) -> None:
        """Open (or create) the archive file and rebuild the search indexes from it.

        Args:
            path: The file. Created with its folder if missing; ``~`` is expanded.
            synchronous: ``"NORMAL"`` (survives the process being killed) or ``"FULL"`` (also survives power loss,
                at one fsync per commit). See the module docstring.
            timeout: Seconds to wait for another connection to release the file before failing.
            text_of: The searchable text of an archived message's bytes (as for ``InMemoryArchive``).

        Raises:
            ConfigurationError: If ``synchronous`` or ``timeout`` is invalid.
            StoreError: If the file cannot be opened, is not an archive, is newer than this release, or is open in
                another process.
        """
        mode = str(synchronous).upper()
        if mode not in ("NORMAL", "FULL"):
            raise ConfigurationError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        if not isinstance(timeout, (int, float)) or timeout < 0:
            raise ConfigurationError(f"timeout must be a number >= 0, got {timeout!r}")
        self._path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        self._synchronous = mode
        self._timeout = float(timeout)
        self._text_of = text_of
        self._lock = threading.RLock()
        self._model_id: str | None = None
        self._dimension: int | None = None
        self._connection: sqlite3.Connection | None = self._connect()
        self._memory = InMemoryArchive(text_of=text_of)
        try:
            self._rebuild()
        except BaseException:
            self._connection.close()
            self._connection = None
            raise

    # ------------------------------------------------------------------ file

    @property
    def path(self) -> str:
        """The absolute path of the archive file."""
        return self._path

    def _connect(self) -> sqlite3.Connection:
        folder = os.path.dirname(self._path)
        try:
            os.makedirs(folder, exist_ok=True)
            connection = sqlite3.connect(
                self._path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"cannot open the archive file '{self._path}': {error}") from error
        try:
            connection.execute("PRAGMA locking_mode=EXCLUSIVE")  # one owner: its in-memory indexes are the truth
            mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"the archive file '{self._path}' cannot use a WAL journal (got {mode!r})")
            connection.execute(f"PRAGMA synchronous={self._synchronous}")
            connection.execute("BEGIN IMMEDIATE")  # takes the exclusive lock now, not at the first write
            try:
                tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if tables and "ssm_meta" not in tables:
                    raise StoreError(f"'{self._path}' is an SQLite database but not a strands-semantic-memory archive")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        connection.execute(statement)
                meta = dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall())
                if not meta:
                    connection.executemany(
                        "INSERT INTO ssm_meta (key, value) VALUES (?, ?)",
                        [
                            ("format", FILE_FORMAT),
                            ("schema_version", SCHEMA_VERSION),
                            ("next_index", 0),
                            ("evicted_count", 0),
                            ("forgotten_count", 0),
                        ],
                    )
                elif meta.get("format") != FILE_FORMAT:
                    raise StoreError(f"'{self._path}' is not a strands-semantic-memory archive")
                elif not isinstance(meta.get("schema_version"), int) or meta["schema_version"] > SCHEMA_VERSION:
                    raise StoreError(
                        f"the archive file '{self._path}' has schema version {meta.get('schema_version')!r}, newer "
                        f"than this release's {SCHEMA_VERSION}: upgrade strands-semantic-memory"
                    )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as error:
            connection.close()
            if "locked" in str(error) or "busy" in str(error):
                raise StoreError(
                    f"the archive file '{self._path}' is open in another process (or another SqliteArchive): {error}"
                ) from error
            raise StoreError(f"cannot open the archive file '{self._path}': {error}") from error
        except sqlite3.Error as error:
            connection.close()
            raise StoreError(f"cannot open the archive file '{self._path}': {error}") from error
        except BaseException:
            connection.close()
            raise
        return connection

    def _conn(self) -> sqlite3.Connection:
        if self._connection is None:
            raise StoreError(f"the archive file '{self._path}' is closed")
        return self._connection

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        connection = self._conn()
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        except sqlite3.Error as error:
            raise StoreError(f"writing the archive file '{self._path}' failed: {error}") from error

    def _meta(self) -> dict[str, Any]:
        try:
            return dict(self._conn().execute("SELECT key, value FROM ssm_meta").fetchall())
        except sqlite3.Error as error:
            raise StoreError(f"reading the archive file '{self._path}' failed: {error}") from error

    @staticmethod
    def _set_meta(connection: sqlite3.Connection, values: Mapping[str, Any]) -> None:
        connection.executemany(
            "INSERT INTO ssm_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            list(values.items()),
        )

    def _counters(self) -> dict[str, Any]:
        stats = self._memory.stats()
        return {
            "next_index": stats.archived_total,
            "evicted_count": stats.evicted_count,
            "forgotten_count": stats.forgotten_count,
        }

    def _saved(self) -> SavedArchive:
        """Everything in the file, as the in-process archive loads it."""
        connection = self._conn()
        meta = self._meta()
        for key in ("next_index", "evicted_count", "forgotten_count"):
            if not isinstance(meta.get(key), int) or meta[key] < 0:
                raise StoreError(f"the archive file '{self._path}' has an invalid '{key}': {meta.get(key)!r}")
        dimension = meta.get("dimension")
        if dimension is not None and (not isinstance(dimension, int) or dimension <= 0):
            raise StoreError(f"the archive file '{self._path}' has an invalid dimension: {dimension!r}")
        try:
            messages = connection.execute(
                "SELECT idx, data, archived_at, said_at, has_text FROM ssm_messages ORDER BY idx"
            ).fetchall()
            vectors = connection.execute("SELECT idx, count, data FROM ssm_vectors ORDER BY idx").fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"reading the archive file '{self._path}' failed: {error}") from error
        counts = {int(idx): int(count) for idx, count, _ in vectors}
        records = [
            SavedRecord(
                index=int(idx),
                data=bytes(data),
                vectors=counts.get(int(idx), 0),
                pending=bool(has_text) and int(idx) not in counts,
                archived_at=float(archived_at),
                said_at=None if said_at is None else float(said_at),
            )
            for idx, data, archived_at, said_at, has_text in messages
        ]
        live = {r.index for r in records}
        vectors = [row for row in vectors if row[0] in live and row[1]]
        if vectors and dimension is None:
            raise StoreError(f"the archive file '{self._path}' holds vectors but no dimension")
        owners = np.array([row[0] for row in vectors], dtype=np.int64)
        sizes = np.array([row[1] for row in vectors], dtype=np.int64)
        blob = b"".join(row[2] for row in vectors)
        total = int(sizes.sum()) if len(sizes) else 0
        if dimension is not None and len(blob) != total * dimension * 4:
            raise StoreError(f"the archive file '{self._path}' has vector rows of the wrong size")
        starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
        ids = (np.repeat(owners << CHUNK_BITS, sizes) + (np.arange(total, dtype=np.int64) - starts)).astype(np.int64)
        matrix = (
            np.frombuffer(blob, dtype="<f4").reshape(total, dimension).astype(np.float32, copy=False)
            if dimension is not None
            else np.zeros((0, 0), dtype=np.float32)
        )
        return SavedArchive(
            model_id=str(meta.get("model_id") or ""),
            dimension=dimension,
            next_index=meta["next_index"],
            evicted_count=meta["evicted_count"],
            forgotten_count=meta["forgotten_count"],
            records=records,
            vector_ids=ids,
            vectors=matrix,
        )

    def _rebuild(self) -> None:
        """Load the in-process archive from the file (no embedding: the vectors are in the file)."""
        meta = self._meta()
        saved = self._saved()
        fresh = InMemoryArchive(text_of=self._text_of)
        try:
            fresh.load_saved(saved, reembed=False)
        except StateError as error:
            raise StoreError(f"the archive file '{self._path}' is inconsistent: {error}") from error
        self._memory = fresh
        self._model_id = meta.get("model_id")
        self._dimension = meta.get("dimension")
        logger.debug(
            "path=<%s>, messages=<%d>, vectors=<%d> | archive opened", self._path, len(fresh), len(saved.vector_ids)
        )

    def _apply(self, change: Callable[[], _T], persist: Callable[[sqlite3.Connection, _T], None]) -> _T:
        """Apply a change in memory, then commit it to the file; if the commit fails, reload memory from the file."""
        with self._lock:
            self._conn()
            result = change()
            try:
                with self._transaction() as connection:
                    persist(connection, result)
            except BaseException:
                self._recover()
                raise
            return result

    def _recover(self) -> None:
        try:
            self._rebuild()
        except Exception:  # the file cannot be read either: refuse further calls rather than diverge from it
            logger.exception("path=<%s> | could not reload the archive after a failed write; closing it", self._path)
            self.close()

    # ------------------------------------------------------------------ protocol properties

    def __len__(self) -> int:
        """Number of live archived messages."""
        return len(self._memory)

    @property
    def dimension(self) -> int | None:
        """Vector length, once known (from the in-process index, else from the file)."""
        return self._memory.dimension if self._memory.dimension is not None else self._dimension

    @property
    def persistent(self) -> bool:
        """True: the file is the persistence; saved state only references it."""
        return True

    @property
    def thread_safe(self) -> bool:
        """False: the engine's lock serializes calls."""
        return False

    def bind(self, model_id: str) -> None:
        """Record which embedding model fills this archive; refuse another once the file holds its vectors.

        Raises:
            EmbeddingModelMismatchError: If the file holds vectors of another model.
            StoreError: If the file cannot be written.
        """
        with self._lock:
            if self._model_id == model_id:
                return
            if self._model_id is not None and self.dimension is not None:
                raise EmbeddingModelMismatchError(self._model_id, model_id)
            with self._transaction() as connection:
                self._set_meta(connection, {"model_id": model_id})
            self._model_id = model_id

    def close(self) -> None:
        """Close the file (the data stays in it; a new ``SqliteArchive`` on the same path reopens it)."""
        with self._lock:
            if self._connection is not None:
                try:
                    self._connection.close()
                except sqlite3.Error as error:  # closing never loses committed data
                    logger.warning("path=<%s>, error=<%s> | closing the archive file failed", self._path, error)
                self._connection = None

    # ------------------------------------------------------------------ writing

    def add(self, records: Sequence[NewRecord]) -> list[int]:
        """Archive records in order, atomically (see the protocol): one INSERT per new record, one transaction."""

        def change() -> tuple[list[int], int]:
            before = self._memory.stats().archived_total
            return self._memory.add(records), before

        def persist(connection: sqlite3.Connection, result: tuple[list[int], int]) -> None:
            indices, before = result
            rows, seen = [], set()
            for new, index in zip(records, indices, strict=True):
                if index >= before and index not in seen:
                    seen.add(index)
                    key = None if new.key.startswith("u:") else new.key  # a fresh key never matches again
                    rows.append(
                        (index, new.data, new.role, new.archived_at, new.said_at, key, int(bool(new.text.strip())))
                    )
            if rows:
                connection.executemany(
                    _INSERT_MESSAGE,
                    rows,
                )
                self._set_meta(connection, self._counters())

        return self._apply(change, persist)[0]

    def has_pending(self) -> bool:
        """Whether any message waits for its vectors."""
        return self._memory.has_pending()

    def pending(self, exclude: set[int], limit: int | None = None) -> list[tuple[int, str]]:
        """Messages waiting for vectors, oldest first."""
        return self._memory.pending(exclude, limit)

    def _pending_among(self, indices: Sequence[int]) -> list[int]:
        connection = self._conn()
        found: list[int] = []
        try:
            for chunk in _chunks(sorted(set(indices))):
                marks = ",".join("?" * len(chunk))
                found.extend(
                    int(row[0])
                    for row in connection.execute(
                        f"SELECT idx FROM ssm_messages WHERE idx IN ({marks}) AND has_text = 1 "  # noqa: S608
                        f"AND idx NOT IN (SELECT idx FROM ssm_vectors WHERE idx IN ({marks}))",
                        [*chunk, *chunk],
                    )
                )
        except sqlite3.Error as error:
            raise StoreError(f"reading the archive file '{self._path}' failed: {error}") from error
        return found

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store each pending message's chunk vectors: one row per message, one transaction."""
        with self._lock:
            waiting = self._pending_among(list(vectors))
            arrays = {i: np.ascontiguousarray(vectors[i], dtype="<f4") for i in waiting}
            for index, array in arrays.items():
                if array.ndim != 2:
                    raise ValueError(f"vectors of message {index} must be a 2-d array, got shape {array.shape}")
                if len(array) and self.dimension is not None and array.shape[1] != self.dimension:
                    raise DimensionMismatchError(self.dimension, int(array.shape[1]))
            widths = {int(a.shape[1]) for a in arrays.values() if len(a)}
            if len(widths) > 1:
                raise DimensionMismatchError(min(widths), max(widths))
            dimension = self.dimension if self.dimension is not None else (widths.pop() if widths else None)

            def change() -> int:
                return self._memory.set_vectors({i: vectors[i] for i in waiting})

            def persist(connection: sqlite3.Connection, updated: int) -> None:
                if updated != len(waiting):
                    raise StoreError(
                        f"the in-process archive updated {updated} messages where the file has {len(waiting)} pending"
                    )
                connection.executemany(
                    "INSERT INTO ssm_vectors (idx, count, data) VALUES (?, ?, ?)",
                    [(i, len(a), a.tobytes()) for i, a in arrays.items()],
                )
                if dimension is not None and self._dimension != dimension:
                    self._set_meta(connection, {"dimension": dimension})

            if not waiting:
                return 0
            updated = self._apply(change, persist)
            self._dimension = dimension
            return updated

    def _persist_eviction(self, connection: sqlite3.Connection, evicted: list[int]) -> None:
        if evicted:
            newest = max(evicted)  # the oldest messages go first: every live row up to it is evicted
            connection.execute("DELETE FROM ssm_vectors WHERE idx <= ?", (newest,))
            connection.execute("DELETE FROM ssm_messages WHERE idx <= ?", (newest,))
            self._set_meta(connection, self._counters())

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict the oldest messages while a limit is exceeded (the in-process accounting decides)."""
        return self._apply(lambda: self._memory.enforce_limits(max_count, max_bytes), self._persist_eviction)

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest messages."""
        return self._apply(lambda: self._memory.evict_oldest(count), self._persist_eviction)

    def forget(self, indices: Sequence[int]) -> list[int]:
        """Delete these messages for good, from memory and from the file.

        Deleted rows are overwritten with zeros (``secure_delete``) and the WAL is checkpointed and truncated, so
        the forgotten text is no longer anywhere in the archive's files once this returns.
        """

        def persist(connection: sqlite3.Connection, deleted: list[int]) -> None:
            if deleted:
                connection.executemany("DELETE FROM ssm_vectors WHERE idx = ?", [(i,) for i in deleted])
                connection.executemany("DELETE FROM ssm_messages WHERE idx = ?", [(i,) for i in deleted])
                self._set_meta(connection, self._counters())

        with self._lock:
            connection = self._conn()
            try:
                connection.execute("PRAGMA secure_delete=ON")
                deleted = self._apply(lambda: self._memory.forget(indices), persist)
                if deleted:
                    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as error:
                raise StoreError(f"writing the archive file '{self._path}' failed: {error}") from error
            finally:
                if self._connection is not None:
                    self._connection.execute("PRAGMA secure_delete=OFF")
            return deleted

    # ------------------------------------------------------------------ reading (the in-process indexes)

    def candidates(
        self,
        vector: Vectors | None,
        query: str,
        dense_k: int,
        lexical_k: int,
        search_filter: SearchFilter | None = None,
    ) -> Candidates:
        """Dense and lexical candidates and their similarities (see the protocol)."""
        return self._memory.candidates(vector, query, dense_k, lexical_k, search_filter)

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each message's best chunk."""
        return self._memory.similarities(vector, indices)

    def get(self, indices: Sequence[int]) -> dict[int, StoredRecord]:
        """Live records by index."""
        return self._memory.get(indices)

    def find_text(self, needle: str) -> list[int]:
        """Live indices whose searchable text contains ``needle`` (case-insensitive)."""
        return self._memory.find_text(needle)

    def bounds(self) -> tuple[int, int] | None:
        """Oldest and newest live index."""
        return self._memory.bounds()

    def stats(self) -> StoreStats:
        """Counts and bytes (of the in-process indexes; the file is about the size of the messages and vectors)."""
        stats = self._memory.stats()
        if stats.dimension is None and self._dimension is not None:
            return dataclasses.replace(stats, dimension=self._dimension)
        return stats

    # ------------------------------------------------------------------ state

    def export_state(self, model_id: str) -> dict[str, Any]:
        """A reference to the file (a few hundred bytes, whatever the archive's size)."""
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "embedding": {"model_id": model_id, "dimension": self.dimension},
            "store": {"kind": STORE_KIND, "path": self._path, "schema_version": SCHEMA_VERSION},
        }

    def _same_file(self, path: str) -> bool:
        try:
            return os.path.samefile(path, self._path)
        except OSError:
            return os.path.abspath(os.path.expanduser(path)) == self._path

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Restore from saved state; validated first, nothing changes on an error.

        A reference to this file changes nothing (memory and file are the same archive); a reference to another
        file opens that file instead; an in-process archive state (``InMemoryArchive.export_state``) replaces the
        file's content with it, in one transaction (this is how a JSON session state moves into a file).

        Args:
            state: Saved state.
            reembed: Drop every vector and mark every message with text pending (another embedding model).

        Raises:
            StateError: If the state is invalid, references a missing file or another kind of store.
            StoreError: If a file cannot be read or written.
        """
        if not isinstance(state, Mapping):
            raise StateError(f"saved state must be a JSON object, got {type(state).__name__}")
        store = state.get("store")
        if store is None:
            self._import(load_state(state), reembed)
            return
        if not isinstance(store, Mapping) or store.get("kind") != STORE_KIND:
            kind = store.get("kind") if isinstance(store, Mapping) else store
            raise StateError(f"this state references a {kind!r} store, not an SQLite archive file")
        path = store.get("path")
        if not isinstance(path, str) or not path:
            raise StateError(f"saved state field 'store.path' is invalid: {path!r}")
        if not self._same_file(path):
            if not os.path.isfile(os.path.expanduser(path)):
                raise StateError(f"saved state references the archive file '{path}', which does not exist")
            other = SqliteArchive(path, synchronous=self._synchronous, timeout=self._timeout, text_of=self._text_of)
            with self._lock:
                self.close()
                self.__dict__.update({k: v for k, v in other.__dict__.items() if k != "_lock"})
        if reembed:
            self._drop_vectors()

    def _drop_vectors(self) -> None:
        with self._lock:
            with self._transaction() as connection:
                connection.execute("DELETE FROM ssm_vectors")
                connection.execute("DELETE FROM ssm_meta WHERE key = 'dimension'")
            self._dimension = None
            self._recover_or_raise()

    def _recover_or_raise(self) -> None:
        try:
            self._rebuild()
        except Exception:
            self.close()
            raise

    def _import(self, saved: SavedArchive, reembed: bool) -> None:
        """Replace the file's content with a decoded in-process archive, in one transaction."""
        InMemoryArchive(text_of=self._text_of).load_saved(saved, reembed)  # validates the whole archive first
        messages = []
        for record in saved.records:
            message = decode_message(record.data)
            tracking_id = message.get("tracking_id") or None
            messages.append(
                (
                    record.index,
                    record.data,
                    str(message.get("role")),
                    record.archived_at,
                    record.said_at,
                    record_key(tracking_id, record.data) if tracking_id else None,
                    int(bool(self._text_of(record.data).strip())),
                )
            )
        vector_rows = []
        if not reembed and len(saved.vector_ids):
            owners = saved.vector_ids >> CHUNK_BITS
            order = np.argsort(saved.vector_ids, kind="stable")
            ids, matrix, owners = saved.vector_ids[order], saved.vectors[order], owners[order]
            bounds = np.flatnonzero(np.diff(owners)) + 1
            for start, end in zip([0, *bounds.tolist()], [*bounds.tolist(), len(ids)], strict=True):
                vector_rows.append((int(owners[start]), end - start, matrix[start:end].astype("<f4").tobytes()))
        with_vectors = {row[0] for row in vector_rows}
        if not reembed:  # embedded messages whose text gave no vectors keep an empty row (not pending)
            vector_rows.extend(
                (r.index, 0, b"") for r in saved.records if not r.pending and r.index not in with_vectors
            )
        with self._lock:
            with self._transaction() as connection:
                connection.execute("DELETE FROM ssm_vectors")
                connection.execute("DELETE FROM ssm_messages")
                connection.executemany(
                    _INSERT_MESSAGE,
                    messages,
                )
                connection.executemany("INSERT INTO ssm_vectors (idx, count, data) VALUES (?, ?, ?)", vector_rows)
                dimension = None if reembed else saved.dimension
                self._set_meta(
                    connection,
                    {
                        "next_index": saved.next_index,
                        "evicted_count": saved.evicted_count,
                        "forgotten_count": saved.forgotten_count,
                        "dimension": dimension,
                    },
                )
            self._recover_or_raise()
        logger.info("path=<%s>, messages=<%d> | in-process archive state imported into the file", self._path, len(self))


__all__ = ["FILE_FORMAT", "SCHEMA_VERSION", "STORE_KIND", "SqliteArchive"]
