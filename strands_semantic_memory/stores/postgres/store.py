"""PostgreSQL + pgvector as an archive store shared by processes (agent workers on many machines).

Install with ``pip install 'strands-semantic-memory[pgvector]'`` (psycopg 3, psycopg_pool and the ``pgvector``
adapter). The schema is described in :mod:`.schema`, the search statement in :mod:`.queries`, reads in
:mod:`.reads`, writes in :mod:`.writes`, connections and bounded waits in :mod:`.connections`.

Round trips: a search is one statement (:meth:`PgVectorStore.candidates`), fetching the windows' messages another
(:meth:`PgVectorStore.get`); ``has_pending`` is answered from what the last statement reported, for at most
``pending_check_interval`` seconds. So a hook turn costs two round trips, each its own (autocommit) transaction;
archiving a small batch costs two (a pipeline carrying ``BEGIN`` ... ``COMMIT``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ...embeddings.base import Vectors
from ...errors import ConfigurationError, DimensionMismatchError, MissingDependencyError
from ..archive_store import Candidates, NewRecord, SearchFilter, StoredRecord, StoreStats
from . import reads, writes
from .connections import Connections
from .namespace import Namespace
from .schema import check_reference, ensure_hnsw, reference, wants_hnsw

logger = logging.getLogger(__name__)


class PgVectorStore:
    """An :class:`~strands_semantic_memory.stores.ArchiveStore` in PostgreSQL with pgvector.

    Example:
        ```python
        store = PgVectorStore(dsn="postgresql://app@db/agents", namespace=f"session-{session_id}")
        manager = SemanticSummarizingConversationManager(store=store)
        ```
    """

    def __init__(
        self,
        dsn: str,
        namespace: str,
        *,
        exact_search_below: int = 50_000,
        connect_timeout: float = 10,
        lock_timeout: float = 5.0,
        statement_timeout: float = 30.0,
        pool_size: int = 4,
        prepare_threshold: int | None = 0,
        pending_check_interval: float = 1.0,
        connection: Any | None = None,
    ) -> None:
        """Configure the store. The database is contacted on first use.

        Args:
            dsn: A libpq connection string or URI.
            namespace: The archive's key (a session id, an agent id): one namespace never sees another's messages.
            exact_search_below: Namespaces with fewer messages are searched exactly; the HNSW index of their
                dimension is built (once, concurrently) when a namespace first reaches this many embedded messages.
            connect_timeout: Seconds to wait for a connection (a new one, or a free one from the pool).
            lock_timeout: Seconds a statement may wait for a lock another session holds (a writer blocked by
                another writer); then the call fails with ``StoreError`` and nothing is committed.
            statement_timeout: Seconds a statement may run before PostgreSQL cancels it (``StoreError``).
            pool_size: Most connections this store opens (``psycopg_pool``); calls from several threads run
                concurrently up to this number.
            prepare_threshold: psycopg's ``prepare_threshold``: 0 prepares each statement on first use; None never
                prepares (needed behind PgBouncer in transaction mode).
            pending_check_interval: How long (seconds) ``has_pending`` may answer from the last statement's report
                instead of asking the database; 0 asks every time.
            connection: A ready psycopg 3 connection to use instead of a pool (calls are then serialized, and the
                store is not ``thread_safe``). The timeouts are set on it.

        Raises:
            ConfigurationError: If an option is invalid.
            MissingDependencyError: If psycopg or pgvector is not installed.
        """
        if not isinstance(namespace, str) or not namespace:
            raise ConfigurationError(f"namespace must be a non-empty string, got {namespace!r}")
        if not isinstance(pending_check_interval, (int, float)) or not pending_check_interval >= 0:
            raise ConfigurationError(f"pending_check_interval must be >= 0, got {pending_check_interval!r}")
        try:
            import psycopg  # noqa: F401
            from pgvector.psycopg import register_vector  # noqa: F401
        except ImportError as error:
            raise MissingDependencyError("PgVectorStore", "pgvector", "psycopg and pgvector") from error
        self.namespace = namespace
        if isinstance(exact_search_below, bool) or not isinstance(exact_search_below, int) or exact_search_below < 0:
            raise ConfigurationError(f"exact_search_below must be an integer >= 0, got {exact_search_below!r}")
        self.exact_search_below = exact_search_below
        self.pending_check_interval = float(pending_check_interval)
        self._connections = Connections(
            dsn,
            namespace,
            connect_timeout=connect_timeout,
            lock_timeout=lock_timeout,
            statement_timeout=statement_timeout,
            pool_size=pool_size,
            prepare_threshold=prepare_threshold,
            connection=connection,
        )
        self._namespace = Namespace(namespace, self._connections)

    @property
    def _view(self) -> reads.View:
        return self._namespace.view

    def _ensure(self) -> None:
        if self._namespace.ready:
            return
        self._namespace.open()
        view = self._view
        if view.dimension is not None and view.dimension not in view.hnsw:
            if wants_hnsw(view.live, self._namespace.pending_at_open, self.exact_search_below):
                ensure_hnsw(self._connections, view, view.dimension)  # missing, or dropped by a re-index

    # ------------------------------------------------------------------ configuration and connection

    @property
    def dsn(self) -> str:
        """The connection string (set it, then :meth:`close`, to move to another server)."""
        return self._connections.dsn

    @dsn.setter
    def dsn(self, value: str) -> None:
        self._connections.dsn = value

    @property
    def dimension(self) -> int | None:
        """The namespace's vector length as last seen (no query: ``isinstance`` checks read properties)."""
        return self._view.dimension

    @property
    def persistent(self) -> bool:
        """True: the database is the persistence; saved state only references the namespace."""
        return True

    @property
    def thread_safe(self) -> bool:
        """True with the connection pool: each call takes its own connection, so calls may run concurrently."""
        return self._connections.pooled

    def bind(self, model_id: str) -> None:
        """Bind the namespace to the embedding model filling it; a namespace built with another model is refused.

        Raises:
            EmbeddingModelMismatchError: If the namespace holds another model's vectors (checked now if connected,
                else on first use).
        """
        self._namespace.bind(model_id)

    def close(self) -> None:
        """Close the pool; the data stays in the database and the store reconnects on next use."""
        self._namespace.close()

    # ------------------------------------------------------------------ writing

    def add(self, records: Sequence[NewRecord]) -> list[int]:
        """Archive records in one transaction; a record whose key is live gets its existing index (idempotent).

        Raises:
            StoreError: If the database cannot commit them (nothing is archived).
        """
        if not records:
            return []
        self._ensure()
        with self._connections.write("archiving", pipeline=len(records) < writes.COPY_FROM) as connection:
            indices, pending = writes.add_records(connection, self.namespace, records, self._view.legacy)
        if pending:
            self._view.saw_pending(True)
        return indices

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store chunk vectors of still-pending messages (another worker may have done it already).

        Raises:
            DimensionMismatchError: If their length differs from the namespace's.
        """
        if not vectors:
            return 0
        self._ensure()
        view = self._view
        for offered in {int(v.shape[1]) for v in vectors.values() if len(v)}:
            if view.dimension is not None and offered != view.dimension:
                raise DimensionMismatchError(view.dimension, offered)
        chunks = sum(len(v) for v in vectors.values())
        with self._connections.write("storing vectors", pipeline=chunks < writes.COPY_FROM) as connection:
            updated, dimension, pending, live = writes.set_vectors(connection, self.namespace, vectors)
        view.dimension, view.live = dimension, live
        view.saw_pending(pending > 0)
        if dimension is not None and wants_hnsw(live, pending, self.exact_search_below):
            ensure_hnsw(self._connections, view, dimension)
        return updated

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest live messages."""
        if count <= 0:
            return []
        self._ensure()
        with self._connections.write("evicting") as connection:
            evicted = writes.evict_oldest(connection, self.namespace, count)
        self._view.saw_pending(None)
        return evicted

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict oldest-first while a limit is exceeded, in one transaction."""
        if max_count is None and max_bytes is None:
            return []
        self._ensure()
        with self._connections.write("enforcing limits") as connection:
            evicted = writes.enforce_limits(connection, self.namespace, max_count, max_bytes)
        if evicted:
            self._view.saw_pending(None)
        return evicted

    def forget(self, indices: Sequence[int]) -> list[int]:
        """Delete these messages for good: every row of each (message, text, lexical entry, vectors).

        PostgreSQL reclaims the space of deleted rows at its next (auto)vacuum.
        """
        if not indices:
            return []
        self._ensure()
        with self._connections.write("forgetting") as connection:
            removed = writes.forget(connection, self.namespace, sorted({int(i) for i in indices}))
        self._view.saw_pending(None)
        return removed

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        """Number of live messages in the namespace (from its counters: one indexed row)."""
        self._ensure()
        with self._connections.read("counting messages") as connection:
            self._view.live = reads.live_count(connection, self.namespace)
        return self._view.live

    def has_pending(self) -> bool:
        """Whether messages wait for vectors: the last statement's report if recent, else a partial-index lookup."""
        recent = self._view.recent_pending(self.pending_check_interval)
        if recent is not None:
            return recent
        self._ensure()
        with self._connections.read("checking pending messages") as connection:
            waiting = reads.any_pending(connection, self.namespace)
        self._view.saw_pending(waiting)
        return waiting

    def pending(self, exclude: set[int], limit: int | None = None) -> list[tuple[int, str]]:
        """``(index, searchable text)`` of messages waiting for vectors, oldest first."""
        self._ensure()
        with self._connections.read("listing pending messages") as connection:
            waiting = reads.pending(connection, self.namespace, exclude, limit)
        if not waiting and not exclude and (limit is None or limit > 0):
            self._view.saw_pending(False)
        return waiting

    def candidates(
        self,
        vector: Vectors | None,
        query: str,
        dense_k: int,
        lexical_k: int,
        search_filter: SearchFilter | None = None,
    ) -> Candidates:
        """Dense and lexical candidates and their similarities in one statement (see :mod:`.queries`)."""
        self._ensure()
        search = (vector, query, dense_k, lexical_k, search_filter)
        return reads.candidates(self._connections, self.namespace, self._view, search, self.exact_search_below)

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each message's best chunk (messages without vectors left out)."""
        if not indices:
            return {}
        self._ensure()
        with self._connections.read("computing similarities") as connection:
            return reads.similarities(connection, self.namespace, vector, indices)

    def get(self, indices: Sequence[int]) -> dict[int, StoredRecord]:
        """Live records by index, with the archived bytes exactly as they were given."""
        if not indices:
            return {}
        self._ensure()
        with self._connections.read("reading messages") as connection:
            return reads.get(connection, self.namespace, indices)

    def find_text(self, needle: str) -> list[int]:
        """Live indices whose searchable text contains ``needle``, case-insensitively (PostgreSQL's ``lower``)."""
        self._ensure()
        with self._connections.read("finding text") as connection:
            return reads.find_text(connection, self.namespace, needle)

    def bounds(self) -> tuple[int, int] | None:
        """Oldest and newest live index."""
        self._ensure()
        with self._connections.read("reading bounds") as connection:
            return reads.bounds(connection, self.namespace)

    def stats(self) -> StoreStats:
        """Counts and bytes, from the database (one statement)."""
        self._ensure()
        with self._connections.read("reading statistics") as connection:
            stats = reads.stats(connection, self.namespace)
        self._view.live = stats.message_count
        return stats

    # ------------------------------------------------------------------ state

    def export_state(self, model_id: str) -> dict[str, Any]:
        """A reference to the namespace: the database is the persistence."""
        return reference(self.namespace, model_id, self._view.dimension)

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Check that the state references this namespace; with ``reembed``, drop its vectors (one transaction).

        Everything is validated before anything changes. Re-embedding binds the namespace to the model given to
        :meth:`bind` (the one about to embed it again).

        Raises:
            StateError: If the state is an in-process archive, references another namespace, or is malformed.
        """
        check_reference(state, self.namespace)
        if reembed:
            self._namespace.open(rebinding=True)  # the namespace is re-bound to this store's model below
            with self._connections.write("dropping vectors to embed again") as connection:
                writes.reembed(connection, self.namespace, self._namespace.model_id)
            self._view.dimension = None
            self._view.saw_pending(None)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection inside one transaction, for ad-hoc SQL and diagnostics (errors become StoreError)."""
        self._ensure()
        with self._connections.write("running ad-hoc SQL", pipeline=False) as connection:
            yield connection

    _transaction = connection  # the name tests/support.vector_owners used before version 2

    def drop_namespace(self) -> None:
        """Delete this namespace's archive and bookkeeping from the database."""
        self._ensure()
        with self._connections.write("dropping the namespace") as connection:
            connection.execute("DELETE FROM ssm_archive WHERE namespace = %s", (self.namespace,))
            connection.execute("DELETE FROM ssm_namespaces WHERE namespace = %s", (self.namespace,))
        self.close()
