"""The PostgreSQL + pgvector archive: ``PostgresArchive`` and the modules behind it.

- ``_archive``: ``PostgresArchive`` itself (the ``Archive`` protocol);
- ``_schema``: tables, indexes and versions;
- ``_partition``: opening a user on first use (schema check, model binding), re-embedding, dropping it;
- ``_queries``: the one-statement search;
- ``_reads``: searches and reads, each one statement, and what the archive remembers between them;
- ``_writes``: archiving, vectors, eviction and forgetting, each one transaction;
- ``_hnsw``: when a user wants its dimension's HNSW index, and building it in one pass;
- ``_connections``: the connection pool, bounded waits, errors;
- ``_text_search``: what PostgreSQL's text search can hold (NUL, lone surrogates, huge tokens).
"""

from strands_semantic_memory.archives.postgres._archive import PostgresArchive
from strands_semantic_memory.archives.postgres._schema import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "PostgresArchive"]
