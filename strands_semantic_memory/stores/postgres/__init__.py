"""PostgreSQL + pgvector archive store: :class:`PgVectorStore` and the modules behind it.

- :mod:`.store`: the store (the :class:`~strands_semantic_memory.stores.archive_store.ArchiveStore` protocol);
- :mod:`.schema`: tables, indexes, versions and the migration from schema version 1;
- :mod:`.namespace`: opening a namespace on first use (schema check, model binding), re-embedding, dropping it;
- :mod:`.queries`: the one-statement search;
- :mod:`.reads`: searches and reads, each one statement, and what the store remembers between them;
- :mod:`.writes`: archiving, vectors, eviction and forgetting, each one transaction;
- :mod:`.hnsw`: when a namespace wants its dimension's HNSW index, and building it in one pass;
- :mod:`.connections`: the connection pool, bounded waits, errors;
- :mod:`.text`: what PostgreSQL's text search can hold (NUL, lone surrogates, huge tokens).
"""

from .schema import SCHEMA_VERSION
from .store import PgVectorStore

__all__ = ["SCHEMA_VERSION", "PgVectorStore"]
