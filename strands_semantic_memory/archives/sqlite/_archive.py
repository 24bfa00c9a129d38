"""A durable archive for one machine: one SQLite file, with the search indexes held in the process.

``SqliteArchive`` keeps every archived message, its times and its vectors in one SQLite file at a path the
caller gives, and answers searches from an ``InMemoryArchive``
rebuilt from that file when it opens (FAISS and BM25 are in-process structures; rebuilding them never calls the
embedder, because the vectors are in the file, nor the tokenizer, because each message's row carries its BM25
terms, nor k-means above the approximate threshold, because the file keeps the approximate index's training: its
centroids and each vector's list). Each change writes only the rows it concerns, in one transaction, so saving a
Strands session stays as cheap with 100k archived messages as with none: the session state holds only a reference
to the file (``export_state``).

The file's layout: ``_schema``; what opening reads: ``_loading``.

Durability: WAL journal, ``synchronous=NORMAL`` by default. A commit has written its pages to the WAL file before
it returns, so a process killed at any point (``kill -9``) loses nothing that was committed, and the file is always
consistent (tested with a killed child process). Only an operating-system crash or power loss can roll back the
last commits; ``synchronous="FULL"`` closes that window with an fsync per commit, which cost 4 ms at the median and
12 ms at p90 per commit on the 2-core test machine (a turn commits two or three times), against 0.01 ms.

A file holds one user's memory: its meta records the user id (``user_id``), and opening it for another user is
refused before anything is written (``ConfigurationError``); a file that records none takes the first one given.

One process owns the file: it is opened in SQLite's exclusive locking mode, so a second process (or a second
``SqliteArchive`` on the same path) fails to open it with ``ArchiveError``
instead of writing behind the first one's in-memory indexes.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from strands_semantic_memory._validation import check_identifier
from strands_semantic_memory.archives._protocol import ArchiveStats, NewRecord, StoredRecord
from strands_semantic_memory.archives._state import STATE_FORMAT, STATE_VERSION, SavedArchive, check_user, load_state
from strands_semantic_memory.archives.in_process._archive import InMemoryArchive
from strands_semantic_memory.archives.in_process._columns import columns_of_saved
from strands_semantic_memory.archives.in_process._records import TextOf, default_text_of
from strands_semantic_memory.archives.in_process.faiss._approximate import ApproximateIndex
from strands_semantic_memory.archives.sqlite import _writes as writes
from strands_semantic_memory.archives.sqlite._file import ARCHIVE_KIND, ArchiveFile, referenced_path
from strands_semantic_memory.archives.sqlite._loading import open_memory, readable_message
from strands_semantic_memory.archives.sqlite._reads import InProcessReads
from strands_semantic_memory.archives.sqlite._schema import SCHEMA_VERSION, set_meta
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import ArchiveError, ConfigurationError, EmbeddingModelMismatchError, StateError
from strands_semantic_memory.messages._codec import vector_id
from strands_semantic_memory.messages._terms import count_terms

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


class SqliteArchive(InProcessReads):
    """The archive in one SQLite file on this machine; searches run on in-process indexes rebuilt at open.

    Writes go to the in-process archive, which decides (indices, duplicates, what the limits evict), and are then
    committed to the file in one transaction: only the rows that changed. If the commit fails, the in-process
    archive is rebuilt from the file (as at open), so a failed call changes nothing and raises
    ``ArchiveError``. The in-process archive decides rather than SQL because it
    owns the rules (idempotency keys, the byte accounting of the limits): the file records exactly what it decided.
    Reads are answered by the in-process archive (``InProcessReads``).

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
        user_id: str | None = None,
        synchronous: str = "NORMAL",
        timeout: float = 5.0,
        text_of: TextOf = default_text_of,
    ) -> None:
        """Open (or create) the archive file and rebuild the search indexes from it.

        Args:
            path: The file, created if missing (its folder must exist: a mistyped folder is refused rather than
                becoming a new, empty archive); ``~`` is expanded.
            user_id: Whose memory the file holds. A new file records it; a file that records another user is
                refused; a file that records none records it; None takes the user the file records.
            synchronous: ``"NORMAL"`` (survives the process being killed) or ``"FULL"`` (also survives power loss,
                at one fsync per commit). See the module docstring.
            timeout: Seconds to wait for another connection to release the file before failing.
            text_of: The searchable text of an archived message's bytes (as for ``InMemoryArchive``).

        Raises:
            ConfigurationError: If ``path``, ``user_id``, ``synchronous`` or ``timeout`` is invalid, the folder does
                not exist, or the file holds another user's memory.
            ArchiveError: If the file or its folder is read-only, or the file cannot be opened, is not an archive,
                has another schema version, or is open in another process.
        """
        check_identifier("user_id", user_id)
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise ConfigurationError(f"path must be a file path (a str or os.PathLike), got {path!r}")
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
        self._training: ApproximateIndex | None = None  # the approximate index whose training the file holds
        self._damaged: dict[int, str] = {}  # rows that cannot be read (see damaged_rows)
        self._unchecked_below, self._checked = 0, bytearray()  # see get
        self._file = ArchiveFile(self._path, mode, self._timeout, user_id)
        self._memory = InMemoryArchive(text_of=text_of)
        try:
            self._rebuild()
        except BaseException:
            self._file.close()
            raise

    # ------------------------------------------------------------------ file

    @property
    def path(self) -> str:
        """The absolute path of the archive file."""
        return self._path

    @property
    def user_id(self) -> str | None:
        """Whose memory the file holds (None: a user not named)."""
        return self._file.user_id

    def _conn(self) -> sqlite3.Connection:
        return self._file.connection

    def _rebuild(self) -> None:
        """Load the in-process archive from the file (no embedding: the vectors and terms are in the file)."""
        self._memory, loaded = open_memory(self._file, self._text_of)
        self._training = self._memory.approximate_index  # what the file holds now
        self._model_id = loaded.meta.get("model_id")
        self._dimension = loaded.meta.get("dimension")
        self._damaged = loaded.damaged
        self._unchecked_below = self._memory.stats().archived_total  # messages read from the file, not written here
        self._checked = bytearray((self._unchecked_below + 7) // 8)  # one bit per index: its message decodes

    @property
    def damaged_rows(self) -> dict[int, str]:
        """Rows of the file that cannot be read, left out of searches and reads: ``{index: what is wrong}``.

        They stay in the file as they are (restore them from a backup); reading one alone raises ``ArchiveError``.
        """
        return dict(self._damaged)

    def _apply(self, change: Callable[[], _T], persist: Callable[[sqlite3.Connection, _T], None]) -> _T:
        """Apply a change in memory, then commit it to the file; if the commit fails, reload memory from the file."""
        with self._lock:
            self._conn()
            result = change()
            try:
                with self._file.transaction() as connection:
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

    @property
    def dimension(self) -> int | None:
        """Vector length, once known (from the in-process index, else from the file)."""
        return self._memory.dimension if self._memory.dimension is not None else self._dimension

    @property
    def persistent(self) -> bool:
        """True: the file is the persistence; saved state only references it."""
        return True

    def bind(self, model_id: str) -> None:
        """Record which embedding model fills this archive; refuse another once the file holds its vectors.

        Raises:
            EmbeddingModelMismatchError: If the file holds vectors of another model.
            ArchiveError: If the file cannot be written.
        """
        with self._lock:
            if self._model_id == model_id:
                return
            if self._model_id is not None and self.dimension is not None:
                raise EmbeddingModelMismatchError(self._model_id, model_id)
            with self._file.transaction() as connection:
                set_meta(connection, {"model_id": model_id})
            self._model_id = model_id

    def close(self) -> None:
        """Close the file (the data stays in it; a new ``SqliteArchive`` on the same path reopens it)."""
        with self._lock:
            self._file.close()

    # ------------------------------------------------------------------ writing

    def add(self, records: Sequence[NewRecord]) -> list[int]:
        """Archive records in order, atomically (see the protocol): one INSERT per new record, one transaction.

        Each record is tokenized once: its terms go to the in-process index and into its row.
        """
        counted = [count_terms(r.text) for r in records]

        def change() -> tuple[list[int], int]:
            before = self._memory.stats().archived_total
            return self._memory.add(records, counted), before

        def persist(connection: sqlite3.Connection, result: tuple[list[int], int]) -> None:
            rows = writes.new_message_rows(records, counted, *result)
            writes.insert_messages(connection, rows, writes.counters(self._memory.stats()))

        return self._apply(change, persist)[0]

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store each pending message's chunk vectors: one row per message, one transaction."""
        with self._lock:
            waiting = self._file.pending_among(list(vectors))
            arrays, dimension = writes.checked_vectors({i: vectors[i] for i in waiting}, self.dimension)

            def change() -> int:
                return self._memory.set_vectors({i: vectors[i] for i in waiting})

            def persist(connection: sqlite3.Connection, updated: int) -> None:
                if updated != len(waiting):
                    raise ArchiveError(
                        f"the in-process archive updated {updated} messages where the file has {len(waiting)} pending"
                    )
                connection.executemany(writes.INSERT_VECTORS, [(i, len(a), a.tobytes()) for i, a in arrays.items()])
                self._persist_training(connection, [vector_id(i, n) for i, a in arrays.items() for n in range(len(a))])
                if dimension is not None and self._dimension != dimension:
                    set_meta(connection, {"dimension": dimension})

            if not waiting:
                return 0
            updated = self._apply(change, persist)
            self._dimension = dimension
            return updated

    def _persist_training(self, connection: sqlite3.Connection, added: list[int]) -> None:
        """Keep the file's training of the approximate index in step (a failed commit rebuilds, resetting it)."""
        self._training = writes.sync_training(connection, self._memory.approximate_index, self._training, added)

    def _persist_eviction(self, connection: sqlite3.Connection, evicted: list[int]) -> None:
        if evicted:  # the oldest messages go first: every live row up to the newest evicted one is evicted
            newest, gone = max(evicted), set(evicted)
            kept = [i for i in self._damaged if i <= newest and i not in gone]  # left out at open: stay as they are
            writes.delete_through(connection, newest, writes.counters(self._memory.stats()), kept)
            self._persist_training(connection, [])
            for index in gone.intersection(self._damaged):
                del self._damaged[index]

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict the oldest messages while a limit is exceeded (the in-process accounting decides)."""
        return self._apply(lambda: self._memory.enforce_limits(max_count, max_bytes), self._persist_eviction)

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest messages."""
        return self._apply(lambda: self._memory.evict_oldest(count), self._persist_eviction)

    def forget(self, indices: Sequence[int]) -> list[int]:
        """Delete these messages for good, from memory and from the file.

        Deleted rows are overwritten with zeros (``secure_delete``) and the WAL is checkpointed and truncated, so
        the forgotten text is no longer anywhere in the archive's files once this returns. Once the deletion is
        committed it is reported as done: if the checkpoint then fails (a full disk), a warning says so and the
        text may remain in the WAL file until the next checkpoint (the next forget, or ``close``).
        """

        def persist(connection: sqlite3.Connection, deleted: list[int]) -> None:
            if deleted:
                writes.delete_messages(connection, deleted, writes.counters(self._memory.stats()))
                self._persist_training(connection, [])
                for index in set(deleted).intersection(self._damaged):
                    del self._damaged[index]

        with self._lock, self._file.erasing():
            return self._apply(lambda: self._memory.forget(indices), persist)

    def forget_all(self) -> int:
        """Delete every message of the file for good, and every vector, term and training with them.

        The rows are deleted with ``secure_delete`` (overwritten with zeros), the file is rebuilt without its free
        pages (``VACUUM``) and the WAL checkpointed and truncated, so the file's bytes hold nothing of the messages
        once this returns. Damaged rows are deleted too. The file keeps its user, model and counters (indices are
        not handed out again).

        Returns:
            How many messages were deleted.
        """

        def change() -> int:
            return self._memory.forget_all() + len(self._damaged)

        def persist(connection: sqlite3.Connection, _: int) -> None:
            stats = self._memory.stats()
            writes.delete_all(connection, writes.counters(stats))
            self._training = None
            self._damaged = {}

        with self._lock, self._file.erasing():
            removed = self._apply(change, persist)
            self._file.vacuum()
        logger.info("path=<%s>, messages=<%d> | every archived message deleted", self._path, removed)
        return removed

    # ------------------------------------------------------------------ reading (the rest: InProcessReads)

    def get(self, indices: Sequence[int]) -> dict[int, StoredRecord]:
        """Live records by index; damaged rows are left out, and a read that finds only damaged rows fails.

        Opening leaves out a message that is not JSON (SQLite's parser checks them all, without decoding them in
        Python: that would double the time to open); a message read from the file is also decoded the first time it
        is read here, so damage that check cannot see is found before a caller decodes it; a bit per index
        remembers those that decoded.

        Raises:
            ArchiveError: If every row found is damaged (the message names the file and the row).
        """
        with self._lock:
            found = self._memory.get(indices)
            checked, below = self._checked, self._unchecked_below
            for index, stored in list(found.items()):
                if index >= below or checked[index >> 3] & (1 << (index & 7)):
                    continue
                reason = readable_message(stored.data)
                if reason is None:
                    checked[index >> 3] |= 1 << (index & 7)
                    continue
                self._damaged[index] = reason
                logger.warning("path=<%s>, row=<%d>, reason=<%s> | damaged archive row", self._path, index, reason)
                del found[index]
            if not found and self._damaged:
                damaged = sorted({int(i) for i in indices if i in self._damaged})
                if damaged:
                    index = damaged[0]
                    raise ArchiveError(
                        f"the archive file '{self._path}' has a damaged row {index}: {self._damaged[index]}. The "
                        "rest of the archive is readable; restore this row from a backup or forget it"
                    )
            return found

    def stats(self) -> ArchiveStats:
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
            "user_id": self.user_id,
            "embedding": {"model_id": model_id, "dimension": self.dimension},
            "archive": {"kind": ARCHIVE_KIND, "path": self._path, "schema_version": SCHEMA_VERSION},
        }

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Restore from saved state; validated first, nothing changes on an error, and nothing archived is deleted.

        A reference to this file changes nothing (memory and file are the same archive). A reference to another
        file is refused: the file the caller configured is the archive used (to open another file, build the
        memory with its path). An in-process archive state (``InMemoryArchive.export_state``) moves into a file
        that has never held a message, in one transaction (this is how a JSON session state moves into a file);
        into a file that already holds every one of its messages, unchanged, it changes nothing (the same session
        restored again); into any other file it is refused, since restoring it would delete what the file holds.

        Args:
            state: Saved state.
            reembed: Drop every vector and mark every message with text pending (another embedding model).

        Raises:
            StateError: If the state is invalid, another user's, references another file or another kind of
                archive, or would replace messages the file holds.
            ArchiveError: If the file cannot be read or written.
        """
        path = referenced_path(state)
        if path is None:
            saved = load_state(state)
            check_user(saved.user_id, self.user_id, f"the archive file '{self._path}'")
            if self._holds_all(saved):
                if reembed:
                    self._drop_vectors()
                return
            self._import(saved, reembed)
            return
        saved_user = state.get("user_id")
        check_user(
            saved_user if isinstance(saved_user, str) else None, self.user_id, f"the archive file '{self._path}'"
        )
        if not self._file.same_file(path):
            raise StateError(
                f"this state references another archive file, '{path}', but this memory's archive is "
                f"'{self._path}': a restore never switches files (build the memory with archive_path='{path}' to "
                "open that one)"
            )
        if reembed:
            self._drop_vectors()

    def _holds_all(self, saved: SavedArchive) -> bool:
        """Whether every message of ``saved`` is live here, at its index, byte for byte.

        Raises:
            StateError: If the file has held messages and does not hold all of these (restoring would delete some).
        """
        with self._lock:
            stats = self._memory.stats()
            if stats.archived_total == 0:
                return False  # a file that never held a message: the state moves in
            live = self._memory.get([r.index for r in saved.records])
            differing = [r.index for r in saved.records if r.index not in live or live[r.index].data != r.data]
        if differing and stats.message_count:
            raise StateError(
                f"the archive file '{self._path}' already holds {stats.message_count} messages and lacks or differs "
                f"at {len(differing)} of the saved state's (first: index {differing[0]}): restoring it would delete "
                "what the file holds. Restore the session into a new archive_path"
            )
        if differing:
            raise StateError(
                f"the archive file '{self._path}' has archived {stats.archived_total} messages before (evicted or "
                "forgotten since): the saved state's indices are taken, and restoring it would delete the file's "
                "history. Restore the session into a new archive_path"
            )
        return True

    def _drop_vectors(self) -> None:
        with self._lock:
            with self._file.transaction() as connection:
                writes.delete_all_vectors(connection)
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
        InMemoryArchive(text_of=self._text_of).load_columns(columns_of_saved(saved, reembed, self._text_of))
        with self._lock:
            with self._file.transaction() as connection:
                writes.replace_all(connection, saved, reembed, self._text_of)
                if self.user_id is None and saved.user_id is not None:
                    set_meta(connection, {"user_id": saved.user_id})
            if self.user_id is None:
                self._file.user_id = saved.user_id
            self._recover_or_raise()
        logger.info("path=<%s>, messages=<%d> | in-process archive state imported into the file", self._path, len(self))


__all__ = ["ARCHIVE_KIND", "SqliteArchive"]
