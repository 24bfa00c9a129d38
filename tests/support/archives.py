"""Archive factories for the behavioural suite that runs over every archive."""

from __future__ import annotations

import itertools
import os
from typing import Any

ARCHIVES = ["in_memory", "sqlite", "pgvector"]

_namespace_counter = itertools.count()


def new_namespace(prefix: str = "test") -> str:
    """A namespace no other test uses."""
    return f"{prefix}-{os.getpid()}-{next(_namespace_counter)}"


def archive_for(kind: str, request: Any) -> Any:
    """A fresh archive of the given kind (None means the default in-process archive)."""
    if kind == "in_memory":
        return None
    if kind == "sqlite":
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        return SqliteArchive(request.getfixturevalue("tmp_path") / f"{new_namespace('archive')}.sqlite3")
    from strands_semantic_memory.archives.postgres import PostgresArchive

    return PostgresArchive(request.getfixturevalue("pg_uri"), new_namespace())


def durable_archive(kind: str, path: str, uri: str, namespace: str) -> Any:
    """The archive that outlives its process: the SQLite file at ``path`` (``kind`` "sqlite"), else the PostgreSQL
    namespace at ``uri``. A child process and the test that reopens after it name the same one."""
    if kind == "sqlite":
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        return SqliteArchive(path)
    from strands_semantic_memory.archives.postgres import PostgresArchive

    return PostgresArchive(uri, namespace)


def vector_owners(memory: Any) -> tuple[set[int], int]:
    """(archive indices that own vectors, number of vectors), read from the store itself."""
    from strands_semantic_memory.messages._codec import message_index

    store = memory.archive
    inner = getattr(store, "_memory", store)  # SqliteArchive keeps its search indexes in an InMemoryArchive
    vectors = getattr(inner, "_vectors", None)
    if hasattr(inner, "_vectors"):
        if vectors is None:
            return set(), 0
        ids, _ = vectors.export()
        assert len(ids) == len(vectors)
        return {message_index(i) for i in ids.tolist()}, len(ids)
    if hasattr(store, "connection"):  # PostgresArchive: ask the database
        with store.connection() as connection:
            rows = connection.execute(
                "SELECT idx FROM ssm_archive WHERE namespace = %s AND embedding IS NOT NULL", (store.namespace,)
            ).fetchall()
        return {int(i) for (i,) in rows}, len(rows)
    return set(), 0


def restored(memory: Any) -> Any:
    """A new memory restored from ``memory``'s saved state, as a new process would (the original is closed when its
    store persists itself: a durable file has one owner; PostgreSQL is reopened on the same namespace)."""
    import json

    from strands_semantic_memory import SemanticMemory

    state = json.loads(json.dumps(memory.to_state()))
    store = memory.archive
    if not store.persistent:
        return SemanticMemory.from_state(state, embedder=memory.embedder)
    store.close()
    if type(store).__name__ == "PostgresArchive":
        from strands_semantic_memory.archives.postgres import PostgresArchive

        return SemanticMemory.from_state(
            state, embedder=memory.embedder, archive=PostgresArchive(store.dsn, store.namespace)
        )
    return SemanticMemory.from_state(state, embedder=memory.embedder)
