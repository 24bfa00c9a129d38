"""Where the archive lives: the ``ArchiveStore`` seam and its implementations.

``PostgresArchive`` and ``SqliteArchive`` are imported lazily (their modules load only when named), so importing
the package never needs their optional dependencies.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.stores._protocol import (
    ArchiveStore,
    Candidates,
    ContextRequest,
    NeighbourContext,
    NewRecord,
    SearchFilter,
    StoredRecord,
    StoreStats,
)
from strands_semantic_memory.stores.in_process._archive import InMemoryArchive

if TYPE_CHECKING:
    from strands_semantic_memory.stores.postgres import PostgresArchive
    from strands_semantic_memory.stores.sqlite import SqliteArchive

__all__ = [
    "ArchiveStore",
    "Candidates",
    "ContextRequest",
    "InMemoryArchive",
    "NeighbourContext",
    "NewRecord",
    "PostgresArchive",
    "SearchFilter",
    "SqliteArchive",
    "StoreStats",
    "StoredRecord",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresArchive":
        from strands_semantic_memory.stores.postgres import PostgresArchive

        return PostgresArchive
    if name == "SqliteArchive":
        from strands_semantic_memory.stores.sqlite import SqliteArchive

        return SqliteArchive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_store(store: ArchiveStore | None, archive_path: str | os.PathLike[str] | None) -> ArchiveStore:
    """The store a memory's ``store=`` and ``archive_path=`` arguments ask for (in process by default).

    Raises:
        ConfigurationError: If both are given, or ``store`` is not an ``ArchiveStore``.
    """
    if store is not None and archive_path is not None:
        raise ConfigurationError("pass either store= or archive_path=, not both")
    if archive_path is not None:
        from strands_semantic_memory.stores.sqlite import SqliteArchive

        return SqliteArchive(archive_path)
    if store is None:
        return InMemoryArchive()
    if not isinstance(store, ArchiveStore):
        raise ConfigurationError(
            "store must be an ArchiveStore (InMemoryArchive, SqliteArchive, PostgresArchive), "
            f"got {type(store).__name__}"
        )
    return store
