"""Where the archive lives: the :class:`ArchiveStore` seam and its implementations.

``PgVectorStore`` and ``SqliteArchive`` are imported lazily (their modules load only when named), so importing
the package never needs their optional dependencies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .archive_store import ArchiveStore, Candidates, NewRecord, SearchFilter, StoredRecord, StoreStats
from .in_memory import InMemoryArchive

if TYPE_CHECKING:
    from .pgvector_store import PgVectorStore
    from .sqlite_store import SqliteArchive

__all__ = [
    "ArchiveStore",
    "Candidates",
    "InMemoryArchive",
    "NewRecord",
    "PgVectorStore",
    "SearchFilter",
    "SqliteArchive",
    "StoreStats",
    "StoredRecord",
]


def __getattr__(name: str) -> Any:
    if name == "PgVectorStore":
        from .pgvector_store import PgVectorStore

        return PgVectorStore
    if name == "SqliteArchive":
        from .sqlite_store import SqliteArchive

        return SqliteArchive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
