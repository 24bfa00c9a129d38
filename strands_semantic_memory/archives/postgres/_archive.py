"""PostgreSQL + pgvector as an archive shared by processes (agent workers on many machines).

Install with ``pip install 'strands-semantic-memory[pgvector]'`` (psycopg 3, psycopg_pool and the ``pgvector``
adapter). The schema is described in ``_schema``, the search statement in ``_queries``, reads in
``_reads``, writes in ``_writes``, the HNSW index in ``_hnsw``, opening a user in ``_partition``,
connections and bounded waits in ``_connections``.

Round trips: a search is one statement (``candidates``), fetching the passages' messages another
(``get``); ``has_pending`` is answered from what the last statement reported, for at most
``pending_check_interval`` seconds. So a hook turn costs two round trips, each its own (autocommit) transaction;
archiving a small batch costs two (a pipeline carrying ``BEGIN`` ... ``COMMIT``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from strands_semantic_memory.archives._protocol import (
    ArchiveStats,
    Candidates,
    ContextRequest,
    NewRecord,
    SearchFilter,
    StoredRecord,
)
from strands_semantic_memory.archives.postgres import _reads as reads
from strands_semantic_memory.archives.postgres import _writes as writes
from strands_semantic_memory.archives.postgres._connections import Connections, check_options
from strands_semantic_memory.archives.postgres._hnsw import Builder
from strands_semantic_memory.archives.postgres._partition import Partition
from strands_semantic_memory.archives.postgres._schema import check_reference, reference
from strands_semantic_memory.embeddings._base import Vectors

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


class PostgresArchive:
    """An ``Archive`` in PostgreSQL with pgvector.

    Example:
        ```python
        archive = PostgresArchive("postgresql://app@db/agents", user_id="alice")
        manager = SemanticSummarizingConversationManager(archive=archive)
        ```
    """

    def __init__(
        self,
        dsn: str,
        user_id: str,
        *,
        exact_search_below: int = 8_000,
        connect_timeout: float = 10,
        lock_timeout: float = 5.0,
        statement_timeout: float = 30.0,
        pool_size: int = 4,
        prepare_threshold: int | None = 0,
        pending_check_interval: float = 1.0,
        connection: Any | None = None,
    ) -> None:
        """Configure the archive. The database is contacted on first use.

        Args:
            dsn: A libpq connection string or URI.
            user_id: Whose memory this archive is (a person, or an actor such as an agent id): the partition key.
                One user never sees another's messages; archives of many users share the process's connections.
            exact_search_below: Users with fewer messages are searched exactly; the HNSW index of their
                dimension is built (once, in one pass, in the background) when a search first finds a user
                with this many embedded messages. The default, 8,000, is where the index pays for itself: on
                distinct texts and vectors (load average 4 on 2 cores) a hybrid search took 21 ms exact against
                14 ms with HNSW at 5k messages and 31-38 against 13-16 at 10k (top 10 identical to the exact
                scan in every query, recall@150 0.999), while once the index exists a write of two messages with
                vectors costs about 16 ms instead of 8 (graph inserts).
            connect_timeout: Seconds to wait for a connection (a new one, or a free one from the pool).
            lock_timeout: Seconds a statement may wait for a lock another session holds (a writer blocked by
                another writer); then the call fails with ``ArchiveError`` and nothing is committed.
            statement_timeout: Seconds a statement may run before PostgreSQL cancels it (``ArchiveError``).
            pool_size: Most connections this archive opens (``psycopg_pool``); calls from several threads run
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
        self.exact_search_below, self.pending_check_interval = check_options(
            user_id, exact_search_below, pending_check_interval
        )
        self._user_id = user_id
        self._connections = Connections(
            dsn,
            user_id,
            connect_timeout=connect_timeout,
            lock_timeout=lock_timeout,
            statement_timeout=statement_timeout,
            pool_size=pool_size,
            prepare_threshold=prepare_threshold,
            connection=connection,
        )
        self._partition = Partition(user_id, self._connections)
        self._builder = Builder(self._connections)

    @property
    def user_id(self) -> str:
        """Whose memory this archive is: the partition key of its rows."""
        return self._user_id

    @property
    def _view(self) -> reads.View:
        return self._partition.view

    def _read(self, action: str, read: Callable[..., _T], *args: Any) -> _T:
        """Run one read (a function of ``_reads``) on a connection of its own."""
        self._partition.open()
        with self._connections.read(action) as connection:
            return read(connection, self.user_id, *args)

    def _write(self, action: str, write: Callable[..., list[int]], *args: Any) -> list[int]:
        """Run one write (a function of ``_writes``) in a transaction; what it reported pending is now unknown."""
        self._partition.open()
        with self._connections.write(action) as connection:
            removed = write(connection, self.user_id, *args)
        if removed:
            self._view.saw_pending(None)
        return removed

    @property
    def dsn(self) -> str:
        """The connection string (set it, then ``close``, to move to another server)."""
        return self._connections.dsn

    @dsn.setter
    def dsn(self, value: str) -> None:
        self._connections.dsn = value

    @property
    def dimension(self) -> int | None:
        """The user's vector length as last seen (no query: ``isinstance`` checks read properties)."""
        return self._view.dimension

    @property
    def persistent(self) -> bool:
        """True: the database is the persistence; saved state only references the user."""
        return True

    @property
    def thread_safe(self) -> bool:
        """True with the connection pool: each call takes its own connection, so calls may run concurrently."""
        return self._connections.pooled

    def bind(self, model_id: str) -> None:
        """Bind the user to the embedding model filling it; a user built with another model is refused.

        Raises:
            EmbeddingModelMismatchError: If the user holds another model's vectors (checked now if connected,
                else on first use).
        """
        self._partition.bind(model_id)

    def close(self) -> None:
        """Close the pool; the data stays in the database and the archive reconnects on next use."""
        self._partition.close()

    def add(self, records: Sequence[NewRecord]) -> list[int]:
        """Archive records in one transaction; a record whose key is live gets its existing index (idempotent).

        Raises:
            ArchiveError: If the database cannot commit them (nothing is archived).
        """
        if not records:
            return []
        self._partition.open()
        return writes.archive(self._connections, self.user_id, self._view, records)

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store chunk vectors of still-pending messages (another worker may have done it already).

        Raises:
            DimensionMismatchError: If their length differs from the user's.
        """
        if not vectors:
            return 0
        self._partition.open()
        return writes.store_vectors(self._connections, self.user_id, self._view, vectors)

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest live messages."""
        return self._write("evicting", writes.evict_oldest, count) if count > 0 else []

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict oldest-first while a limit is exceeded, in one transaction."""
        if max_count is None and max_bytes is None:
            return []
        return self._write("enforcing limits", writes.enforce_limits, max_count, max_bytes)

    def forget(self, indices: Sequence[int]) -> list[int]:
        """Delete these messages for good: every row of each (message, text, lexical entry, vectors).

        PostgreSQL reclaims the space of deleted rows at its next (auto)vacuum.
        """
        return self._write("forgetting", writes.forget, sorted({int(i) for i in indices})) if indices else []

    def __len__(self) -> int:
        """Number of live messages in the user (from its counters: one indexed row)."""
        self._view.live = self._read("counting messages", reads.live_count)
        return self._view.live

    def has_pending(self) -> bool:
        """Whether messages wait for vectors: the last statement's report if recent, else a partial-index lookup."""
        recent = self._view.recent_pending(self.pending_check_interval)
        if recent is not None:
            return recent
        waiting = self._read("checking pending messages", reads.any_pending)
        self._view.saw_pending(waiting)
        return waiting

    def pending(self, exclude: set[int], limit: int | None = None) -> list[tuple[int, str]]:
        """``(index, searchable text)`` of messages waiting for vectors, oldest first."""
        waiting = self._read("listing pending messages", reads.pending, exclude, limit)
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
        *,
        context: ContextRequest | None = None,
    ) -> Candidates:
        """Dense and lexical candidates, their similarities and the neighbours asked for, in one statement.

        See ``_queries``. A user found at or over ``exact_search_below`` without its HNSW index gets it
        built in the background (see ``_hnsw``); this search and those until the build ends are exact.
        """
        self._partition.open()
        search = (vector, query, dense_k, lexical_k, search_filter)
        found = reads.candidates(self._connections, self.user_id, self._view, search, self.exact_search_below, context)
        if vector is not None and dense_k > 0:
            self._builder.maybe_start(self._view, self.exact_search_below)
        return found

    def build_index(self, timeout: float | None = None) -> bool:
        """After a bulk load: build the HNSW index now, if this user wants one, instead of at the first search.

        Returns:
            True when the user's dimension has its index afterwards (False: the user is under
            ``exact_search_below``, still embedding, or the build did not end within ``timeout`` seconds).
        """
        len(self)  # refreshes the live count the decision reads
        self._builder.maybe_start(self._view, self.exact_search_below)
        self._builder.wait(timeout)
        return self._view.dimension in self._view.hnsw

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each message's best chunk (messages without vectors left out)."""
        return self._read("computing similarities", reads.similarities, vector, indices) if indices else {}

    def find_keys(self, keys: Sequence[str]) -> dict[str, int]:
        """The live index of each record whose idempotency key is among ``keys`` (one statement, the key index)."""
        return self._read("finding keys", reads.find_keys, list(keys)) if keys else {}

    def get(self, indices: Sequence[int]) -> dict[int, StoredRecord]:
        """Live records by index, with the archived bytes exactly as they were given."""
        return self._read("reading messages", reads.get, indices) if indices else {}

    def find_text(self, needle: str) -> list[int]:
        """Live indices whose text contains ``needle`` under ``str.casefold``, as in process (see ``_reads``)."""
        return self._read("finding text", reads.find_text, needle)

    def bounds(self) -> tuple[int, int] | None:
        """Oldest and newest live index."""
        return self._read("reading bounds", reads.bounds)

    def stats(self) -> ArchiveStats:
        """Counts and bytes, from the database (one statement)."""
        stats = self._read("reading statistics", reads.stats)
        self._view.live = stats.message_count
        return stats

    def export_state(self, model_id: str) -> dict[str, Any]:
        """A reference to the user: the database is the persistence."""
        return reference(self.user_id, model_id, self._view.dimension)

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Check that the state references this user; with ``reembed``, drop its vectors (one transaction).

        Everything is validated before anything changes. Re-embedding binds the user to the model given to
        ``bind`` (the one about to embed it again).

        Raises:
            StateError: If the state is an in-process archive, references another user, or is malformed.
        """
        check_reference(state, self.user_id)
        if reembed:
            self._partition.reembed()

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection inside one transaction, for ad-hoc SQL and diagnostics (errors become ArchiveError)."""
        self._partition.open()
        with self._connections.write("running ad-hoc SQL", pipeline=False) as connection:
            yield connection

    def forget_all(self) -> int:
        """Delete every row of this user for good, in one transaction, its row in ``ssm_users`` included.

        Its messages, vectors and terms go, and its model binding and counters with its row. Nothing of the user is
        left in any table once this returns (PostgreSQL reclaims the space of the deleted rows at its next vacuum).
        Used again, the archive registers its user anew; this process goes on from the indices it handed out.

        Returns:
            How many messages were deleted.
        """
        removed = self._partition.forget_all()
        logger.info("user=<%s>, messages=<%d> | every archived message of the user deleted", self.user_id, removed)
        return removed
