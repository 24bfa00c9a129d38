"""The durable archive on one machine: one SQLite file, the search indexes in the process.

Modules by job: :mod:`.schema` (layout, opening, migrations), :mod:`.writes` (rows written per change),
:mod:`.loading` (what opening reads), :mod:`.reads` (reads forwarded to the in-process archive) and
:mod:`.archive` (:class:`SqliteArchive` itself).
"""

from __future__ import annotations

from .archive import STORE_KIND, SqliteArchive
from .schema import FILE_FORMAT, SCHEMA_VERSION

__all__ = ["FILE_FORMAT", "SCHEMA_VERSION", "STORE_KIND", "SqliteArchive"]
