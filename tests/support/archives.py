"""Archive factories for the behavioural suite that runs over every archive."""

from __future__ import annotations

import itertools
import os
from typing import Any

ARCHIVES = ["in_memory", "sqlite", "pgvector"]

_user_counter = itertools.count()


def new_user_id(prefix: str = "test") -> str:
    """A user id no other test uses."""
    return f"{prefix}-{os.getpid()}-{next(_user_counter)}"


def archive_for(kind: str, request: Any, user_id: str | None = None) -> Any:
    """A fresh archive of the given kind for ``user_id`` (None means the default in-process archive, built by the
    memory for ``user_id``; a PostgreSQL archive always has a user: a new one when none is given)."""
    if kind == "in_memory":
        return None
    if kind == "sqlite":
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        path = request.getfixturevalue("tmp_path") / f"{new_user_id('archive')}.sqlite3"
        return SqliteArchive(path, user_id=user_id)
    from strands_semantic_memory.archives.postgres import PostgresArchive

    return PostgresArchive(request.getfixturevalue("pg_uri"), user_id or new_user_id())


def reopened(archive: Any) -> Any:
    """Another handle on a durable archive's data, as a new process would open it (the SQLite file is closed
    first: it has one owner)."""
    if type(archive).__name__ == "SqliteArchive":
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        archive.close()
        return SqliteArchive(archive.path)
    from strands_semantic_memory.archives.postgres import PostgresArchive

    return PostgresArchive(archive.dsn, archive.user_id)


def durable_archive(kind: str, path: str, uri: str, user_id: str) -> Any:
    """The archive that outlives its process: the SQLite file at ``path`` (``kind`` "sqlite"), else the PostgreSQL
    user ``user_id`` at ``uri``. A child process and the test that reopens after it name the same one."""
    if kind == "sqlite":
        from strands_semantic_memory.archives.sqlite import SqliteArchive

        return SqliteArchive(path)
    from strands_semantic_memory.archives.postgres import PostgresArchive

    return PostgresArchive(uri, user_id)


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
                "SELECT idx FROM ssm_archive WHERE user_id = %s AND embedding IS NOT NULL", (store.user_id,)
            ).fetchall()
        return {int(i) for (i,) in rows}, len(rows)
    return set(), 0


def restored(memory: Any) -> Any:
    """A new memory restored from ``memory``'s saved state, as a new process would (the original is closed when its
    store persists itself: a durable file has one owner; PostgreSQL is reopened on the same user_id)."""
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
            state, embedder=memory.embedder, archive=PostgresArchive(store.dsn, store.user_id)
        )
    return SemanticMemory.from_state(state, embedder=memory.embedder)
