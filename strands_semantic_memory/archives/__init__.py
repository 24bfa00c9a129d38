"""Where a memory keeps its messages verbatim: the ``Archive`` protocol and its implementations.

Modules: ``_protocol`` (the ``Archive`` protocol and the records it takes and returns), ``_state`` (the saved
archive's versioned JSON layout and its checks), ``_scoring`` (the base score of a candidate, which an archive
answering a ``ContextRequest`` computes as the ranking does); ``in_process/``, ``sqlite/`` and ``postgres/`` (the
three archives).

``PostgresArchive`` and ``SqliteArchive`` are imported lazily (their modules load only when named), so importing
the package never needs their optional dependencies.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from strands_semantic_memory._validation import check_identifier
from strands_semantic_memory.archives._protocol import (
    Archive,
    ArchiveStats,
    Candidates,
    ContextRequest,
    NeighbourContext,
    NewRecord,
    SearchFilter,
    StoredRecord,
)
from strands_semantic_memory.archives.in_process._archive import InMemoryArchive
from strands_semantic_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from strands_semantic_memory.archives.postgres import PostgresArchive
    from strands_semantic_memory.archives.sqlite import SqliteArchive

__all__ = [
    "Archive",
    "Candidates",
    "ContextRequest",
    "InMemoryArchive",
    "NeighbourContext",
    "NewRecord",
    "PostgresArchive",
    "SearchFilter",
    "SqliteArchive",
    "ArchiveStats",
    "StoredRecord",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresArchive":
        from strands_semantic_memory.archives.postgres import PostgresArchive

        return PostgresArchive
    if name == "SqliteArchive":
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        return SqliteArchive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_archive(
    archive: Archive | None, archive_path: str | os.PathLike[str] | None, user_id: str | None = None
) -> Archive:
    """The archive a memory's ``archive=``, ``archive_path=`` and ``user_id=`` arguments ask for.

    Args:
        archive: A ready archive (its user must be ``user_id`` when that is given).
        archive_path: A durable SQLite file, opened for ``user_id``.
        user_id: Whose memory it is (None: the archive's, or a user not named).

    Returns:
        The archive: ``archive``, else the file at ``archive_path``, else a new in-process archive.

    Raises:
        ConfigurationError: If both ``archive`` and ``archive_path`` are given, ``archive`` is not an ``Archive``,
            ``user_id`` is not a valid id, or the archive (or file) is another user's.
    """
    check_identifier("user_id", user_id)
    if archive is not None and archive_path is not None:
        raise ConfigurationError("pass either archive= or archive_path=, not both")
    if archive_path is not None:
        if not isinstance(archive_path, (str, os.PathLike)) or not os.fspath(archive_path):
            raise ConfigurationError(f"archive_path must be a file path (a str or os.PathLike), got {archive_path!r}")
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        return SqliteArchive(archive_path, user_id=user_id)
    if archive is None:
        return InMemoryArchive(user_id=user_id)
    if not isinstance(archive, Archive):
        raise ConfigurationError(
            "archive must be an Archive (InMemoryArchive, SqliteArchive, PostgresArchive), "
            f"got {type(archive).__name__}"
        )
    if user_id is not None and archive.user_id != user_id:
        raise ConfigurationError(
            f"user_id={user_id!r} but the archive given is {_whose(archive.user_id)}: a memory is one user's; build "
            f"the archive for that user (for example InMemoryArchive(user_id={user_id!r}))"
        )
    return archive


def _whose(user_id: str | None) -> str:
    return "not named for a user" if user_id is None else f"user {user_id!r}'s"
