"""The open archive file: its connection, transactions, and the few questions writes ask the file itself."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from strands_semantic_memory.archives.sqlite._schema import connect
from strands_semantic_memory.errors import ArchiveError, StateError

logger = logging.getLogger(__name__)

ARCHIVE_KIND = "sqlite"
"""The ``archive.kind`` of the state that references a file (see ``SqliteArchive.export_state``)."""

_BATCH = 500  # parameters per IN (...) list, below SQLite's limit


class ArchiveFile:
    """One archive file, opened exclusively (see ``connect``)."""

    def __init__(self, path: str, synchronous: str, timeout: float, user_id: str | None) -> None:
        """Open (or create) the file at the absolute ``path`` for a user (None: whoever it records).

        Raises:
            ConfigurationError: If the file holds another user's memory.
            ArchiveError: If it cannot be opened (see ``connect``).
        """
        self.path = path
        self._connection: sqlite3.Connection | None
        self._connection, self.user_id = connect(path, synchronous, timeout, user_id)

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection.

        Raises:
            ArchiveError: If the file is closed.
        """
        if self._connection is None:
            raise ArchiveError(f"the archive file '{self.path}' is closed")
        return self._connection

    @property
    def closed(self) -> bool:
        """Whether the file was closed."""
        return self._connection is None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; rolled back if the block raises.

        Raises:
            ArchiveError: If SQLite fails.
        """
        connection = self.connection
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
            raise ArchiveError(f"writing the archive file '{self.path}' failed: {error}") from error

    def vacuum(self) -> None:
        """Rebuild the file without its free pages (after a deletion of everything); a failure is logged."""
        try:
            self.connection.execute("VACUUM")
        except sqlite3.Error as error:
            logger.warning(
                "path=<%s>, error=<%s> | VACUUM after erasing failed; the deleted rows are zeroed", self.path, error
            )

    @contextmanager
    def erasing(self) -> Iterator[None]:
        """Deletes in the block overwrite their rows with zeros; the WAL is checkpointed and truncated after it.

        The block's own commit decides the outcome: once it has committed, a failing checkpoint (a full disk, say)
        is logged, not raised, since the deletion is done. The deleted text may then remain in old frames of the WAL
        file until the next checkpoint: the next forget, or closing the archive.

        Raises:
            ArchiveError: If erasing cannot be switched on (nothing was deleted).
        """
        connection = self.connection
        try:
            connection.execute("PRAGMA secure_delete=ON")
        except sqlite3.Error as error:
            raise ArchiveError(f"writing the archive file '{self.path}' failed: {error}") from error
        try:
            yield
        finally:
            self._after_erasing()

    def _after_erasing(self) -> None:
        """Checkpoint and truncate the WAL, and stop erasing; failures are logged (the deletion is committed)."""
        if self._connection is None:
            return
        for statement, what in (
            (
                "PRAGMA wal_checkpoint(TRUNCATE)",
                "the WAL checkpoint after a deletion failed; deleted text may remain "
                "in the WAL file until the next checkpoint (the next forget, or closing the archive)",
            ),
            ("PRAGMA secure_delete=OFF", "switching secure_delete off failed"),
        ):
            try:
                self._connection.execute(statement)
            except sqlite3.Error as error:
                logger.warning("path=<%s>, error=<%s> | %s", self.path, error, what)

    def close(self) -> None:
        """Close the connection (the data stays in the file)."""
        if self._connection is not None:
            try:
                self._connection.close()
            except sqlite3.Error as error:  # closing never loses committed data
                logger.warning("path=<%s>, error=<%s> | closing the archive file failed", self.path, error)
            self._connection = None

    def pending_among(self, indices: Sequence[int]) -> list[int]:
        """Which of these messages have text and no vectors in the file.

        Raises:
            ArchiveError: If the file cannot be read.
        """
        connection, wanted, found = self.connection, sorted(set(indices)), list[int]()
        try:
            for start in range(0, len(wanted), _BATCH):
                chunk = wanted[start : start + _BATCH]
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
            raise ArchiveError(f"reading the archive file '{self.path}' failed: {error}") from error
        return found

    def same_file(self, path: str) -> bool:
        """Whether ``path`` names this file."""
        try:
            return os.path.samefile(path, self.path)
        except OSError:
            return os.path.abspath(os.path.expanduser(path)) == self.path


def referenced_path(state: Mapping[str, Any]) -> str | None:
    """The archive file a saved state references, or None for an in-process archive's state.

    Raises:
        StateError: If the state is not an object, references another kind of archive or a missing file.
    """
    if not isinstance(state, Mapping):
        raise StateError(f"saved state must be a JSON object, got {type(state).__name__}")
    reference = state.get("archive")
    if reference is None:
        return None
    if not isinstance(reference, Mapping) or reference.get("kind") != ARCHIVE_KIND:
        kind = reference.get("kind") if isinstance(reference, Mapping) else reference
        raise StateError(f"this state references a {kind!r} archive, not an SQLite archive file")
    path = reference.get("path")
    if not isinstance(path, str) or not path:
        raise StateError(f"saved state field 'archive.path' is invalid: {path!r}")
    return path
