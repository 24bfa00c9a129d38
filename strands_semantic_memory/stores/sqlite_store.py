"""The durable SQLite archive, under its former module name.

:class:`SqliteArchive` now lives in the :mod:`~strands_semantic_memory.stores.sqlite` package; this module keeps
``from strands_semantic_memory.stores.sqlite_store import SqliteArchive`` working.
"""

from __future__ import annotations

from .sqlite import FILE_FORMAT, SCHEMA_VERSION, STORE_KIND, SqliteArchive

__all__ = ["FILE_FORMAT", "SCHEMA_VERSION", "STORE_KIND", "SqliteArchive"]
