"""PostgreSQL + pgvector archive store: :class:`PgVectorStore` and the modules behind it.

- :mod:`.store`: the store (the :class:`~strands_semantic_memory.stores.archive_store.ArchiveStore` protocol);
- :mod:`.schema`: tables, indexes, versions and the migration from schema version 1;
- :mod:`.queries`: the one-statement search;
- :mod:`.writes`: archiving, vectors, eviction and forgetting, each one transaction;
- :mod:`.connections`: the connection pool, bounded waits, errors;
- :mod:`.text`: what PostgreSQL's text search can hold (NUL, lone surrogates, huge tokens).
"""

from .schema import SCHEMA_VERSION
from .store import PgVectorStore

__all__ = ["SCHEMA_VERSION", "PgVectorStore"]
