"""The durable archive on one machine: one SQLite file, the search indexes in the process.

Modules by job: ``_schema`` (layout, opening), ``_writes`` (rows written per change),
``_loading`` (what opening reads), ``_reads`` (reads forwarded to the in-process archive) and
``_archive`` (``SqliteArchive`` itself).
"""

from __future__ import annotations

from strands_semantic_memory.archives.sqlite._archive import ARCHIVE_KIND, SqliteArchive
from strands_semantic_memory.archives.sqlite._schema import FILE_FORMAT, SCHEMA_VERSION

__all__ = ["FILE_FORMAT", "SCHEMA_VERSION", "ARCHIVE_KIND", "SqliteArchive"]
