"""The PostgreSQL + pgvector archive: ``PostgresArchive``, one user's archive shared by every worker of that user.

- ``_archive``: ``PostgresArchive`` itself (the ``Archive`` protocol): searches, writes, forgetting, saved references;
- ``_schema``: the tables, their version, and the HNSW index of each dimension;
- ``_pool``: one connection pool per DSN and options in the process, bounded waits, retries after lost connections.

Needs the ``pgvector`` extra (psycopg 3, psycopg-pool and pgvector's Python package).
"""

from strands_semantic_memory.errors import MissingDependencyError

for _package in ("psycopg", "psycopg_pool", "pgvector"):
    try:
        __import__(_package)
    except ImportError as _error:
        raise MissingDependencyError("PostgresArchive", "pgvector", _package) from _error

from strands_semantic_memory.archives.postgres._archive import PostgresArchive  # noqa: E402
from strands_semantic_memory.archives.postgres._schema import SCHEMA_VERSION  # noqa: E402

__all__ = ["SCHEMA_VERSION", "PostgresArchive"]
