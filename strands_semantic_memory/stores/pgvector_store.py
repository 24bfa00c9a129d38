"""PostgreSQL + pgvector as a shared archive store, for agent workers on many machines.

Install with ``pip install 'strands-semantic-memory[pgvector]'`` (psycopg 3 and the ``pgvector`` adapter).

Schema (created on first use, idempotently, under an advisory lock; version recorded in ``ssm_meta``)::

    ssm_namespaces(namespace PK, model_id, dimension, next_index, evicted_count)
    ssm_archive(namespace, idx, chunk, data, role, tracking_id, body, tsv, pending, nbytes, dimension,
                embedding vector, PRIMARY KEY (namespace, idx, chunk))

One table holds messages and embeddings: row ``chunk = 0`` of an archive index holds the message (exact JSON) and
its first vector; a long message's further chunks add rows with only a vector. ``embedding`` is an untyped
``vector`` so namespaces with different models can share the table; each dimension gets a partial HNSW index on
``embedding::vector(d)`` (pgvector's documented pattern), plus a GIN index on ``tsv`` for full-text search.

Concurrency: archive indices come from ``ssm_namespaces.next_index`` under ``SELECT ... FOR UPDATE`` in the same
transaction as the inserts, so concurrent writers (threads or processes) never produce duplicate or lost indices.

Search: namespaces below ``exact_search_below`` vectors are searched exactly (the namespace's rows are scanned);
larger ones use the HNSW index with ``hnsw.ef_search`` raised to the candidate count. pgvector filters by
namespace after the HNSW scan, so the exact path keeps small namespaces in a large shared table accurate.
Lexical search is PostgreSQL full-text search (``ts_rank`` over this library's tokens), not BM25.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..archive import record_nbytes
from ..embeddings.base import Vectors
from ..errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    MissingDependencyError,
    StateError,
    StoreError,
)
from ..lexical import tokenize
from ..state import STATE_FORMAT, STATE_VERSION
from .archive_store import NewRecord, StoreStats

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_MAX_POSITION = 16383  # PostgreSQL's largest tsvector position

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ssm_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS ssm_namespaces (
    namespace text PRIMARY KEY,
    model_id text,
    dimension integer,
    next_index bigint NOT NULL DEFAULT 0,
    evicted_count bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ssm_archive (
    namespace text NOT NULL,
    idx bigint NOT NULL,
    chunk integer NOT NULL,
    data text,
    role text,
    tracking_id text,
    body text,
    tsv tsvector,
    pending boolean NOT NULL DEFAULT false,
    nbytes bigint NOT NULL DEFAULT 0,
    lexical_terms integer NOT NULL DEFAULT 0,
    dimension integer,
    embedding vector,
    PRIMARY KEY (namespace, idx, chunk)
);
CREATE UNIQUE INDEX IF NOT EXISTS ssm_archive_tracking ON ssm_archive (namespace, tracking_id)
    WHERE tracking_id IS NOT NULL AND chunk = 0;
CREATE INDEX IF NOT EXISTS ssm_archive_pending ON ssm_archive (namespace, idx) WHERE pending;
CREATE INDEX IF NOT EXISTS ssm_archive_tsv ON ssm_archive USING gin (tsv);
"""


def _tsvector(terms: list[str]) -> str:
    """A tsvector literal of this library's terms, with their positions (PostgreSQL's parser is not used)."""
    return " ".join(f"'{t}':{position}" for position, t in enumerate(terms[:_MAX_POSITION], 1))


def _tsquery(text: str) -> str:
    return " | ".join(f"'{t}'" for t in dict.fromkeys(tokenize(text)))


class PgVectorStore:
    """An :class:`~strands_semantic_memory.stores.ArchiveStore` in PostgreSQL with pgvector.

    Example:
        ```python
        store = PgVectorStore(dsn="postgresql://app@db/agents", namespace=f"session-{session_id}")
        manager = SemanticSummarizingConversationManager(store=store)
        ```
    """

    shared = True

    def __init__(
        self,
        dsn: str,
        namespace: str,
        *,
        exact_search_below: int = 50_000,
        connect_timeout: int = 10,
        connection: Any | None = None,
    ) -> None:
        """Configure the store. The database is contacted on first use.

        Args:
            dsn: A libpq connection string or URI.
            namespace: The archive's key (a session id, an agent id): one namespace never sees another's messages.
            exact_search_below: Namespaces with fewer vectors are searched exactly instead of through HNSW.
            connect_timeout: Seconds before a connection attempt fails.
            connection: A ready psycopg 3 connection to use instead of ``dsn`` (it must not be in autocommit).

        Raises:
            ConfigurationError: If the namespace is empty.
            MissingDependencyError: If psycopg or pgvector is not installed.
        """
        if not isinstance(namespace, str) or not namespace:
            raise ConfigurationError(f"namespace must be a non-empty string, got {namespace!r}")
        try:
            import psycopg  # noqa: F401
            from pgvector.psycopg import register_vector  # noqa: F401
        except ImportError as error:
            raise MissingDependencyError("PgVectorStore", "pgvector", "psycopg and pgvector") from error
        self.dsn = dsn
        self.namespace = namespace
        self.exact_search_below = exact_search_below
        self.connect_timeout = connect_timeout
        self._connection = connection
        self._lock = threading.RLock()
        self._model_id: str | None = None
        self._dimension: int | None = None
        self._ready = False
        self._indexed_dimensions: set[int] = set()

    # ------------------------------------------------------------------ connection and schema

    def _connect(self) -> Any:
        import psycopg
        from pgvector.psycopg import register_vector

        if self._connection is None or self._connection.closed:
            try:
                self._connection = psycopg.connect(self.dsn, connect_timeout=self.connect_timeout)
            except psycopg.Error as error:
                raise StoreError(f"cannot connect to PostgreSQL for namespace '{self.namespace}': {error}") from error
            self._ready = False
        if not self._ready:
            with self._connection.transaction():
                self._connection.execute("SELECT pg_advisory_xact_lock(hashtext('strands_semantic_memory_schema'))")
                self._connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
            register_vector(self._connection)
            with self._connection.transaction():
                self._connection.execute("SELECT pg_advisory_xact_lock(hashtext('strands_semantic_memory_schema'))")
                self._connection.execute(_SCHEMA)
                row = self._connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone()
                if row is None:
                    self._connection.execute(
                        "INSERT INTO ssm_meta (key, value) VALUES ('schema_version', %s)", (str(SCHEMA_VERSION),)
                    )
                elif int(row[0]) > SCHEMA_VERSION:
                    raise StoreError(
                        f"the database holds schema version {row[0]}, newer than this library's {SCHEMA_VERSION}: "
                        "upgrade strands-semantic-memory"
                    )
                self._connection.execute(
                    "INSERT INTO ssm_namespaces (namespace) VALUES (%s) ON CONFLICT DO NOTHING", (self.namespace,)
                )
                row = self._connection.execute(
                    "SELECT model_id, dimension FROM ssm_namespaces WHERE namespace = %s", (self.namespace,)
                ).fetchone()
                model_id, dimension = row if row is not None else (None, None)
            self._dimension = dimension
            if self._model_id is not None:
                self._check_model(model_id)
            self._ready = True
        return self._connection

    def _check_model(self, stored: str | None) -> None:
        connection = self._connection
        if connection is None:
            return
        if stored is None:
            connection.execute(
                "UPDATE ssm_namespaces SET model_id = %s WHERE namespace = %s AND model_id IS NULL",
                (self._model_id, self.namespace),
            )
            connection.commit()
        elif stored != self._model_id:
            raise EmbeddingModelMismatchError(stored, self._model_id or "?")

    def bind(self, model_id: str) -> None:
        """Record the embedding model using this namespace; a namespace built with another model is refused.

        Raises:
            EmbeddingModelMismatchError: If already connected and the namespace holds another model's vectors.
        """
        self._model_id = model_id
        if self._ready:
            with self._transaction() as connection:
                (stored,) = connection.execute(
                    "SELECT model_id FROM ssm_namespaces WHERE namespace = %s", (self.namespace,)
                ).fetchone()
            self._check_model(stored)

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        import psycopg

        with self._lock:
            try:
                connection = self._connect()
                with connection.transaction():
                    yield connection
            except psycopg.OperationalError as error:
                self._ready = False
                if self._connection is not None and not self._connection.closed:
                    self._connection.close()
                raise StoreError(f"PostgreSQL operation failed for namespace '{self.namespace}': {error}") from error
            except psycopg.Error as error:
                raise StoreError(f"PostgreSQL operation failed for namespace '{self.namespace}': {error}") from error

    def _ensure_hnsw(self, connection: Any, dimension: int) -> None:
        if dimension in self._indexed_dimensions:
            return
        connection.execute("SELECT pg_advisory_xact_lock(hashtext('strands_semantic_memory_hnsw'))")
        connection.execute(
            f"CREATE INDEX IF NOT EXISTS ssm_archive_hnsw_{dimension} ON ssm_archive "
            f"USING hnsw ((embedding::vector({dimension})) vector_ip_ops) WHERE dimension = {dimension}"
        )
        self._indexed_dimensions.add(dimension)

    # ------------------------------------------------------------------ protocol

    def __len__(self) -> int:
        """Number of archived messages in this namespace (from its counters: indices handed out minus evicted)."""
        with self._transaction() as connection:
            next_index, evicted = connection.execute(
                "SELECT next_index, evicted_count FROM ssm_namespaces WHERE namespace = %s", (self.namespace,)
            ).fetchone()
        return int(next_index) - int(evicted)

    def has_pending(self) -> bool:
        """Whether any message waits for its vectors (a partial-index lookup)."""
        with self._transaction() as connection:
            row = connection.execute(
                "SELECT 1 FROM ssm_archive WHERE namespace = %s AND pending LIMIT 1", (self.namespace,)
            ).fetchone()
        return row is not None

    @property
    def dimension(self) -> int | None:
        """The namespace's vector length, as last read from the database.

        No query here: ``isinstance`` checks against protocols read properties, and must not open connections.
        """
        return self._dimension

    def add(self, records: Sequence[NewRecord]) -> list[int]:
        """Archive records in one transaction (see the module docstring for index allocation)."""
        if not records:
            return []
        with self._transaction() as connection:
            (next_index,) = connection.execute(
                "SELECT next_index FROM ssm_namespaces WHERE namespace = %s FOR UPDATE", (self.namespace,)
            ).fetchone()
            wanted = [r.tracking_id for r in records if r.tracking_id is not None]
            known = (
                dict(
                    connection.execute(
                        "SELECT tracking_id, idx FROM ssm_archive WHERE namespace = %s AND chunk = 0 "
                        "AND tracking_id = ANY(%s)",
                        (self.namespace, wanted),
                    ).fetchall()
                )
                if wanted
                else {}
            )
            indices: list[int] = []
            rows = []
            for record in records:
                if record.tracking_id is not None and record.tracking_id in known:
                    indices.append(int(known[record.tracking_id]))
                    continue
                index = next_index
                next_index += 1
                if record.tracking_id is not None:
                    known[record.tracking_id] = index
                tokens = tokenize(record.text)
                terms = len(set(tokens))
                rows.append(
                    (
                        self.namespace,
                        index,
                        record.data.decode("utf-8"),
                        record.role,
                        record.tracking_id,
                        record.text,
                        _tsvector(tokens),
                        bool(record.text.strip()),
                        record_nbytes(len(record.data), 0, 0, terms),
                        terms,
                    )
                )
                indices.append(index)
            if rows:
                with connection.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO ssm_archive (namespace, idx, chunk, data, role, tracking_id, body, tsv, pending, "
                        "nbytes, lexical_terms) VALUES (%s, %s, 0, %s, %s, %s, %s, %s::tsvector, %s, %s, %s)",
                        rows,
                    )
                connection.execute(
                    "UPDATE ssm_namespaces SET next_index = %s WHERE namespace = %s", (next_index, self.namespace)
                )
        return indices

    def pending(self, exclude: set[int]) -> list[tuple[int, str]]:
        """Messages waiting for vectors, oldest first (at most 5,000 per call)."""
        with self._transaction() as connection:
            rows = connection.execute(
                "SELECT idx, body FROM ssm_archive WHERE namespace = %s AND chunk = 0 AND pending "
                "AND NOT (idx = ANY(%s::bigint[])) ORDER BY idx LIMIT 5000",
                (self.namespace, sorted(exclude)),
            ).fetchall()
        return [(int(i), body or "") for i, body in rows]

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store chunk vectors of still-pending messages (another worker may have done it already)."""
        if not vectors:
            return 0
        dimensions = {int(v.shape[1]) for v in vectors.values() if len(v)}
        with self._transaction() as connection:
            (stored_dimension,) = connection.execute(
                "SELECT dimension FROM ssm_namespaces WHERE namespace = %s FOR UPDATE", (self.namespace,)
            ).fetchone()
            for dimension in dimensions:
                if stored_dimension is None:
                    connection.execute(
                        "UPDATE ssm_namespaces SET dimension = %s WHERE namespace = %s", (dimension, self.namespace)
                    )
                    stored_dimension = dimension
                elif dimension != stored_dimension:
                    raise DimensionMismatchError(stored_dimension, dimension)
            self._dimension = stored_dimension
            if stored_dimension is not None:
                self._ensure_hnsw(connection, stored_dimension)
            live = connection.execute(
                "SELECT idx, octet_length(data), lexical_terms FROM ssm_archive WHERE namespace = %s AND chunk = 0 "
                "AND pending AND idx = ANY(%s::bigint[]) FOR UPDATE",
                (self.namespace, list(vectors)),
            ).fetchall()
            updates: list[tuple[Any, ...]] = []
            inserts: list[tuple[Any, ...]] = []
            for index, data_len, terms in live:
                chunks = vectors[int(index)]
                first = chunks[0] if len(chunks) else None
                nbytes = record_nbytes(int(data_len), len(chunks), stored_dimension or 0, int(terms))
                updates.append((first, stored_dimension if first is not None else None, nbytes, self.namespace, index))
                inserts.extend((self.namespace, index, n, stored_dimension, chunks[n]) for n in range(1, len(chunks)))
            with connection.cursor() as cursor:
                if updates:
                    cursor.executemany(
                        "UPDATE ssm_archive SET embedding = %s, dimension = %s, pending = false, nbytes = %s "
                        "WHERE namespace = %s AND idx = %s AND chunk = 0",
                        updates,
                    )
                if inserts:
                    cursor.executemany(
                        "INSERT INTO ssm_archive (namespace, idx, chunk, dimension, embedding) "
                        "VALUES (%s, %s, %s, %s, %s)",
                        inserts,
                    )
        return len(live)

    def _evict_below(self, connection: Any, cutoff: int) -> list[int]:
        rows = connection.execute(
            "DELETE FROM ssm_archive WHERE namespace = %s AND idx < %s RETURNING idx", (self.namespace, cutoff)
        ).fetchall()
        indices = sorted({int(i) for (i,) in rows})
        if indices:
            connection.execute(
                "UPDATE ssm_namespaces SET evicted_count = evicted_count + %s WHERE namespace = %s",
                (len(indices), self.namespace),
            )
        return indices

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest messages."""
        if count <= 0:
            return []
        with self._transaction() as connection:
            connection.execute("SELECT 1 FROM ssm_namespaces WHERE namespace = %s FOR UPDATE", (self.namespace,))
            row = connection.execute(
                "SELECT idx FROM ssm_archive WHERE namespace = %s AND chunk = 0 ORDER BY idx OFFSET %s LIMIT 1",
                (self.namespace, count),
            ).fetchone()
            cutoff = int(row[0]) if row else 2**62
            return self._evict_below(connection, cutoff)

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict oldest-first while a limit is exceeded, in one transaction."""
        if max_count is None and max_bytes is None:
            return []
        with self._transaction() as connection:
            connection.execute("SELECT 1 FROM ssm_namespaces WHERE namespace = %s FOR UPDATE", (self.namespace,))
            # For each message, newest first: how many messages and bytes from it to the newest.
            row = connection.execute(
                """
                SELECT min(idx) FROM (
                    SELECT idx,
                           row_number() OVER (ORDER BY idx DESC) AS kept,
                           sum(nbytes) OVER (ORDER BY idx DESC) AS kept_bytes
                    FROM ssm_archive WHERE namespace = %s AND chunk = 0
                ) AS suffix
                WHERE (%s::bigint IS NULL OR kept <= %s::bigint)
                  AND (%s::bigint IS NULL OR kept_bytes <= %s::bigint OR kept = 1)
                """,
                (self.namespace, max_count, max_count, max_bytes, max_bytes),
            ).fetchone()
            if row is None or row[0] is None:
                return []
            return self._evict_below(connection, int(row[0]))

    def _current_dimension(self, connection: Any) -> int | None:
        """The namespace's dimension, read again if unknown (another worker may have set it since)."""
        if self._dimension is None:
            row = connection.execute(
                "SELECT dimension FROM ssm_namespaces WHERE namespace = %s", (self.namespace,)
            ).fetchone()
            self._dimension = row[0] if row else None
        return self._dimension

    def _namespace_vectors(self, connection: Any) -> int:
        row = connection.execute(
            "SELECT count(*) FROM ssm_archive WHERE namespace = %s AND embedding IS NOT NULL", (self.namespace,)
        ).fetchone()
        return int(row[0])

    def dense_search(self, vector: Vectors, k: int) -> dict[int, float]:
        """Nearest messages by their best chunk (exact for small namespaces, HNSW for large ones)."""
        if k <= 0:
            return {}
        query = np.asarray(vector[0], dtype=np.float32)
        with self._transaction() as connection:
            dimension = self._current_dimension(connection)
            if dimension is None:
                return {}
            next_index, evicted = connection.execute(
                "SELECT next_index, evicted_count FROM ssm_namespaces WHERE namespace = %s", (self.namespace,)
            ).fetchone()
            total = int(next_index) - int(evicted)  # messages; long ones have a few more vectors
            exact = total < self.exact_search_below
            best: dict[int, float] = {}
            fetch = k
            while True:
                if exact:
                    # No cast to vector(d): the HNSW index is on that expression, so this scan stays exact.
                    sql = (
                        "SELECT idx, -(embedding <#> %s) AS score FROM ssm_archive "
                        "WHERE namespace = %s AND embedding IS NOT NULL ORDER BY score DESC LIMIT %s"
                    )
                else:
                    connection.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, 2 * fetch))}")
                    sql = (
                        f"SELECT idx, -(embedding::vector({dimension}) <#> %s) AS score FROM ssm_archive "
                        f"WHERE dimension = {dimension} AND namespace = %s "
                        f"ORDER BY embedding::vector({dimension}) <#> %s LIMIT %s"
                    )
                params = (query, self.namespace, fetch) if exact else (query, self.namespace, query, fetch)
                rows = connection.execute(sql, params).fetchall()
                best.clear()
                for index, score in rows:
                    if int(index) not in best:
                        best[int(index)] = float(score)
                if len(best) >= k or len(rows) < fetch or fetch >= 4 * total:
                    return dict(list(best.items())[:k])
                fetch *= 2

    def lexical_search(self, query: str, k: int) -> dict[int, float]:
        """Full-text matches ranked by ``ts_rank`` (any query term may match)."""
        tsquery = _tsquery(query)
        if not tsquery or k <= 0:
            return {}
        with self._transaction() as connection:
            rows = connection.execute(
                "SELECT idx, ts_rank(tsv, q) AS rank FROM ssm_archive, to_tsquery('simple', %s) AS q "
                "WHERE namespace = %s AND chunk = 0 AND tsv @@ q ORDER BY rank DESC, idx LIMIT %s",
                (tsquery, self.namespace, k),
            ).fetchall()
        return {int(i): float(r) for i, r in rows}

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each message's best chunk."""
        if not indices:
            return {}
        with self._transaction() as connection:
            dimension = self._current_dimension(connection)
            if dimension is None:
                return {}
            rows = connection.execute(
                f"SELECT idx, max(-(embedding::vector({dimension}) <#> %s)) FROM ssm_archive "
                "WHERE namespace = %s AND idx = ANY(%s::bigint[]) AND embedding IS NOT NULL GROUP BY idx",
                (np.asarray(vector[0], dtype=np.float32), self.namespace, list(indices)),
            ).fetchall()
        return {int(i): float(s) for i, s in rows}

    def get(self, indices: Sequence[int]) -> dict[int, bytes]:
        """Encoded messages by index."""
        if not indices:
            return {}
        with self._transaction() as connection:
            rows = connection.execute(
                "SELECT idx, data FROM ssm_archive WHERE namespace = %s AND chunk = 0 AND idx = ANY(%s::bigint[])",
                (self.namespace, list(indices)),
            ).fetchall()
        return {int(i): data.encode("utf-8") for i, data in rows}

    def bounds(self) -> tuple[int, int] | None:
        """Oldest and newest live index, from the namespace's counters.

        Indices are handed out contiguously and evicted oldest-first, so the live ones are exactly
        ``evicted_count .. next_index - 1``.
        """
        with self._transaction() as connection:
            next_index, evicted = connection.execute(
                "SELECT next_index, evicted_count FROM ssm_namespaces WHERE namespace = %s", (self.namespace,)
            ).fetchone()
        return None if next_index <= evicted else (int(evicted), int(next_index) - 1)

    def stats(self) -> StoreStats:
        """Counts and bytes, from the database."""
        with self._transaction() as connection:
            count, total, message_bytes, pending, low, high = connection.execute(
                "SELECT count(*), coalesce(sum(nbytes), 0), coalesce(sum(octet_length(data)), 0), "
                "count(*) FILTER (WHERE pending), min(idx), max(idx) "
                "FROM ssm_archive WHERE namespace = %s AND chunk = 0",
                (self.namespace,),
            ).fetchone()
            vectors = self._namespace_vectors(connection)
            dimension, next_index, evicted = connection.execute(
                "SELECT dimension, next_index, evicted_count FROM ssm_namespaces WHERE namespace = %s",
                (self.namespace,),
            ).fetchone()
        return StoreStats(
            message_count=int(count),
            total_bytes=int(total),
            message_bytes=int(message_bytes),
            vector_count=vectors,
            dimension=dimension,
            pending_count=int(pending),
            evicted_count=int(evicted),
            archived_total=int(next_index),
            oldest_index=None if low is None else int(low),
            newest_index=None if high is None else int(high),
        )

    def export_state(self, model_id: str) -> dict[str, Any]:
        """A reference to the namespace: the database is the persistence."""
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "embedding": {"model_id": model_id, "dimension": self._dimension},
            "store": {"kind": "pgvector", "namespace": self.namespace, "schema_version": SCHEMA_VERSION},
        }

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Check that the state references this namespace (nothing to load: the data is in the database).

        Raises:
            StateError: If the state is an in-process archive or references another namespace.
        """
        store = state.get("store")
        if not isinstance(store, Mapping) or store.get("kind") != "pgvector":
            raise StateError(
                "this state holds an in-process archive; a PgVectorStore restores only states that reference a "
                "namespace (load it into an in-process SemanticMemory and archive its messages to migrate)"
            )
        if store.get("namespace") != self.namespace:
            raise StateError(
                f"this state references namespace {store.get('namespace')!r}, but the store is configured for "
                f"{self.namespace!r}"
            )
        if reembed:
            with self._transaction() as connection:
                connection.execute("DELETE FROM ssm_archive WHERE namespace = %s AND chunk > 0", (self.namespace,))
                connection.execute(
                    "UPDATE ssm_archive SET embedding = NULL, dimension = NULL, pending = (length(body) > 0) "
                    "WHERE namespace = %s",
                    (self.namespace,),
                )
                connection.execute(
                    "UPDATE ssm_namespaces SET dimension = NULL, model_id = %s WHERE namespace = %s",
                    (self._model_id, self.namespace),
                )
            self._dimension = None

    def drop_namespace(self) -> None:
        """Delete this namespace's archive and bookkeeping from the database."""
        with self._transaction() as connection:
            connection.execute("DELETE FROM ssm_archive WHERE namespace = %s", (self.namespace,))
            connection.execute("DELETE FROM ssm_namespaces WHERE namespace = %s", (self.namespace,))

    def close(self) -> None:
        """Close the connection (it reopens on next use)."""
        with self._lock:
            if self._connection is not None and not self._connection.closed:
                self._connection.close()
            self._ready = False
