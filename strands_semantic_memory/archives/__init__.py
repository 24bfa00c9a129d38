"""Where a memory keeps its messages verbatim: the ``Archive`` protocol and its two implementations.

- ``_protocol``: the protocol, its records and the contract every archive keeps;
- ``_sqlite``: ``SqliteArchive``, a durable file or in process (words: ``_lexical``, an in-process BM25);
- ``_vectors``: the in-process vector index (exact, then FAISS's IVF);
- ``postgres``: ``PostgresArchive``, PostgreSQL + pgvector shared by many workers (the ``pgvector`` extra).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from strands_semantic_memory.archives._protocol import Archive, ArchiveStats, Candidates, NewRecord, Scope, StoredRecord
from strands_semantic_memory.archives._sqlite import SqliteArchive, whose
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages._session import check_user_id

if TYPE_CHECKING:
    from strands_semantic_memory.archives.postgres import PostgresArchive

__all__ = [
    "Archive",
    "ArchiveStats",
    "Candidates",
    "NewRecord",
    "PostgresArchive",
    "Scope",
    "SqliteArchive",
    "StoredRecord",
    "resolve_archive",
]


def resolve_archive(
    archive: Archive | None, archive_path: str | os.PathLike[str] | None, user_id: str | None
) -> Archive:
    """The archive a memory is built over: the one given (checked to be ``user_id``'s), a file, or one in process.

    Raises:
        ConfigurationError: If both ``archive`` and ``archive_path`` are given, ``archive`` is not an ``Archive``,
            or it is another user's.
    """
    user_id = check_user_id(user_id)
    if archive is not None:
        if archive_path is not None:
            raise ConfigurationError("pass archive= or archive_path=, not both")
        if not isinstance(archive, Archive):
            raise ConfigurationError(f"archive must be an Archive, got {type(archive).__name__}")
        if user_id is not None and archive.user_id != user_id:
            raise ConfigurationError(f"the archive is of {whose(archive.user_id)}, not of user {user_id!r}")
        return archive
    return SqliteArchive(archive_path, user_id=user_id)


def __getattr__(name: str) -> Any:
    if name == "PostgresArchive":
        from strands_semantic_memory.archives.postgres import PostgresArchive

        return PostgresArchive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
