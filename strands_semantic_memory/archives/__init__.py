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


def resolve_archive(archive: Archive | None, archive_path: str | os.PathLike[str] | None) -> Archive:
    """The archive a memory's ``archive=`` and ``archive_path=`` arguments ask for (in process by default).

    Raises:
        ConfigurationError: If both are given, or ``archive`` is not an ``Archive``.
    """
    if archive is not None and archive_path is not None:
        raise ConfigurationError("pass either archive= or archive_path=, not both")
    if archive_path is not None:
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        return SqliteArchive(archive_path)
    if archive is None:
        return InMemoryArchive()
    if not isinstance(archive, Archive):
        raise ConfigurationError(
            "archive must be an Archive (InMemoryArchive, SqliteArchive, PostgresArchive), "
            f"got {type(archive).__name__}"
        )
    return archive
