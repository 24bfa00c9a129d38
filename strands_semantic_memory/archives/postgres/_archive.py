"""PostgresArchive: one user's archive in PostgreSQL with pgvector, shared by every worker of that user.

The contract of ``SqliteArchive`` (``archives._protocol``), each call one statement or one transaction on a pooled
connection (``_pool``): the archive is safe from any number of threads, and a search never queues behind a writer.

- **Writes** first lock the user's counter row (``ssm_owners``, made by ``INSERT ... ON CONFLICT`` if missing), so
  every writer of the user, in any process, is serialized in one lock order. Nothing per user is cached between
  calls: another process may forget the user, or delete its rows, and the next call goes on from what is stored.
- **Lexical search** is PostgreSQL's full text over the library's own terms (``messages._terms``; the ``tsvector``
  literal is built here, a term over PostgreSQL's 2,046-byte lexeme limit indexed and queried as a digest); a query
  is an OR of its terms, and ``ts_rank`` gives the raw scores. The ranking stays in ``retrieval._ranking``.
- **Dense search** scans a user's vectors exactly below ``exact_search_below``; above, it asks the partial HNSW index
  of the dimension (built in the background by the first search that finds the user that large) for ``4 * depth``
  chunks, and scans exactly when fewer than ``depth`` of them are hits the scope admits: pgvector filters after its
  index scan, so a narrow scope, or a small user sharing the table with large ones, would otherwise come back short.
- **Forgetting** deletes the messages (their vectors by cascade) and keeps their keyed digests under the user's HMAC;
  ``forget_all`` also deletes the user's model row: no row names the user afterwards, yet copies are still refused
  and indices keep counting. PostgreSQL reclaims the deleted rows' space at its next vacuum.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from strands_semantic_memory.archives._protocol import (
    EMBEDDED,
    NOTHING_TO_EMBED,
    PENDING,
    STATEMENT_CHUNK,
    ArchiveStats,
    Candidates,
    NewRecord,
    Scope,
    StoredRecord,
)
from strands_semantic_memory.archives.postgres._pool import PoolOptions, acquire, release
from strands_semantic_memory.archives.postgres._schema import build_hnsw, hnsw_name, prepare
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import (
    ArchiveError,
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    StateError,
)
from strands_semantic_memory.messages._codec import forget_digest, searchable_text
from strands_semantic_memory.messages._session import check_user_id
from strands_semantic_memory.messages._terms import tokenize

__all__ = ["PostgresArchive"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

EXACT_SEARCH_BELOW = 10_000
"""Vectors of a user below which dense search is an exact scan (about 5 ms at 10,000 384-dimension vectors)."""
MAX_LEXEME_BYTES = 2046
MAX_TSVECTOR_BYTES = 1_000_000
"""PostgreSQL refuses a ``tsvector`` over 1 MB: a huge message's lexical index covers its first terms."""

_COLUMNS = "m.idx, m.data, m.role, m.text, m.archived_at, m.said_at, m.session_id"
_LOCK = (
    "INSERT INTO ssm_owners (owner) VALUES (%s) ON CONFLICT (owner) "
    "DO UPDATE SET next_index = ssm_owners.next_index RETURNING next_index"
)
_BIND = (
    "INSERT INTO ssm_users VALUES (%s, %s, %s) ON CONFLICT (user_id) DO UPDATE SET "
    "model_id = coalesce(ssm_users.model_id, excluded.model_id), "
    "dimension = coalesce(ssm_users.dimension, excluded.dimension) RETURNING model_id, dimension"
)
_INSERT = "INSERT INTO ssm_messages VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector)"
_EMBEDDED = (
    "UPDATE ssm_messages m SET embedded = %s, nbytes = octet_length(m.data) + u.size "
    "FROM unnest(%s::bigint[], %s::bigint[]) AS u(idx, size) WHERE m.user_id = %s AND m.idx = u.idx RETURNING m.idx"
)
_LEXICAL = (
    "SELECT m.idx, ts_rank(m.terms, q.q)::float8 AS score FROM ssm_messages m, (SELECT %s::tsquery AS q) q "
    "WHERE m.user_id = %s AND m.terms @@ q.q{conditions} ORDER BY score DESC, m.idx LIMIT %s"
)
_EXACT = (
    "SELECT v.idx, max(-(v.embedding <#> %s)) AS score FROM ssm_vectors v "
    "JOIN ssm_messages m ON m.user_id = v.user_id AND m.idx = v.idx "
    "WHERE v.user_id = %s AND v.chunk {chunks}{conditions} GROUP BY v.idx ORDER BY score DESC, v.idx LIMIT %s"
)
_HNSW = (  # the index is on embedding::vector(d) WHERE dimension = d: the query names both
    "WITH near AS MATERIALIZED (SELECT v.idx, -(v.embedding::vector({d}) <#> %s::vector({d})) AS score "
    "FROM ssm_vectors v WHERE v.dimension = {d} AND v.user_id = %s AND v.chunk {chunks} "
    "ORDER BY v.embedding::vector({d}) <#> %s::vector({d}) LIMIT %s) "
    "SELECT n.idx, max(n.score) AS score FROM near n JOIN ssm_messages m ON m.user_id = %s AND m.idx = n.idx "
    "WHERE true{conditions} GROUP BY n.idx ORDER BY score DESC, n.idx LIMIT %s"
)
_EVICT = (
    "DELETE FROM ssm_messages WHERE user_id = %s AND idx IN (SELECT idx FROM (SELECT idx, "
    "row_number() OVER w AS kept, sum(nbytes) OVER w AS total FROM ssm_messages WHERE user_id = %s "
    "WINDOW w AS (ORDER BY idx DESC)) AS newest WHERE kept > %s OR total > %s) RETURNING idx"
)
_STATS = (
    f"SELECT count(*), count(*) FILTER (WHERE embedded = {PENDING}), coalesce(sum(nbytes), 0), min(idx), "
    "(SELECT next_index FROM ssm_owners WHERE owner = %s), (SELECT dimension FROM ssm_users WHERE user_id = %s), "
    "(SELECT model_id FROM ssm_users WHERE user_id = %s) FROM ssm_messages WHERE user_id = %s"
)


def _lexeme(term: str) -> str:
    raw = term.encode("utf-8")
    return term if len(raw) <= MAX_LEXEME_BYTES else "#" + hashlib.blake2b(raw, digest_size=16).hexdigest()


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(text: str) -> str:
    """The ``tsvector`` literal of a text's terms, with positions (at most 256 per lexeme, within about 1 MB)."""
    positions: dict[str, list[int]] = {}
    size = 0
    for position, term in enumerate(tokenize(text)[:16383], 1):  # PostgreSQL's last position
        lexeme = _lexeme(term)
        found = positions.get(lexeme)
        if found is None:
            size += len(lexeme.encode("utf-8")) + 8
            if size > MAX_TSVECTOR_BYTES:
                break
            positions[lexeme] = [position]
        elif len(found) < 256:
            size += 2
            found.append(position)
    return " ".join(f"{_quoted(lexeme)}:{','.join(map(str, where))}" for lexeme, where in positions.items())


def _conditions(scope: Scope | None, hits: bool = True) -> tuple[str, list[Any]]:
    """SQL conditions on ``ssm_messages m`` (each starting with AND): the sessions read, and with ``hits`` the rest."""
    parts: list[str] = []
    params: list[Any] = []
    if scope is None:
        return "", params
    if scope.sessions is not None:
        named = "m.session_id = ANY(%s::text[])"
        parts.append(f" AND ({named} OR m.session_id IS NULL)" if None in scope.sessions else f" AND {named}")
        params.append(sorted(s for s in scope.sessions if s is not None))
    if hits and scope.roles is not None:
        parts.append(" AND m.role = ANY(%s::text[])")
        params.append(sorted(scope.roles))
    for bound, operator in ((scope.since, ">="), (scope.until, "<=")) if hits else ():
        if bound is not None:
            parts.append(f" AND coalesce(m.said_at, m.archived_at) {operator} %s")
            params.append(bound)
    if hits and scope.exclude:
        parts.append(" AND NOT m.idx = ANY(%s::bigint[])")
        params.append(sorted(scope.exclude))
    return "".join(parts), params


def _record(row: Sequence[Any]) -> StoredRecord:
    return StoredRecord(int(row[0]), bytes(row[1]), row[2], row[3], row[4], row[5], row[6])


def _database(dsn: str) -> dict[str, str]:
    """The DSN's connection parameters without the password (what a saved reference records)."""
    return {k: str(v) for k, v in conninfo_to_dict(dsn).items() if k != "password" and v is not None}


def _checked(name: str, value: Any, low: float, integer: bool = False) -> Any:
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)) or not low <= value < 1e9:
        raise ConfigurationError(f"{name} must be {'an integer' if integer else 'a number'} >= {low}, got {value!r}")
    return value


class PostgresArchive:
    """One user's archive in PostgreSQL + pgvector (see the module docstring).

    Example:
        ```python notest
        from strands_semantic_memory import SemanticMemory
        from strands_semantic_memory.archives import PostgresArchive

        memory = SemanticMemory(archive=PostgresArchive("postgresql://app@db/agents", "alice"))
        ```
    """

    def __init__(
        self,
        dsn: str,
        user_id: str,
        *,
        pool_size: int = 4,
        connect_timeout: float = 5.0,
        statement_timeout: float = 30.0,
        lock_timeout: float = 5.0,
        pool_timeout: float = 5.0,
        exact_search_below: int = EXACT_SEARCH_BELOW,
    ) -> None:
        """Open the user's archive, creating the schema if the database has none.

        Args:
            dsn: A libpq connection string or URI.
            user_id: Whose archive it is (required: the user is the partition).
            pool_size: Most connections of the process's pool for this DSN and these options.
            connect_timeout: Seconds to wait for a new connection.
            statement_timeout: Seconds any statement may run.
            lock_timeout: Seconds a statement may wait for another session's lock.
            pool_timeout: Seconds a call may wait for a working connection (a free one, or the server back after a
                restart: a call that failed on a lost connection is run again within them).
            exact_search_below: Vectors of the user below which dense search is exact (above: HNSW).

        Raises:
            ConfigurationError: If an option is invalid.
            ArchiveError: If the database cannot be reached, or holds another schema (left as it is).
        """
        if not isinstance(dsn, str) or not dsn.strip():
            raise ConfigurationError(f"dsn must be a PostgreSQL connection string, got {dsn!r:.80}")
        if check_user_id(user_id) is None:
            raise ConfigurationError("PostgresArchive needs a user_id: the user is the archive's partition")
        try:
            self._reference = _database(dsn)
        except Exception as error:
            raise ConfigurationError(f"dsn is not a PostgreSQL connection string: {error}") from None
        timeouts = {"connect_timeout": connect_timeout, "statement_timeout": statement_timeout}
        timeouts.update(lock_timeout=lock_timeout, pool_timeout=pool_timeout)
        seconds = [float(_checked(name, value, 0.001)) for name, value in timeouts.items()]
        options = PoolOptions(dsn, _checked("pool_size", pool_size, 1, integer=True), *seconds)
        self._user_id = user_id
        self._exact_below: int = _checked("exact_search_below", exact_search_below, 0, integer=True)
        self._large_until = 0.0
        self._shared = acquire(options, user_id, prepare)
        self._owner = hmac.new(self._shared.secret, user_id.encode("utf-8"), hashlib.sha256).digest()
        self._release = weakref.finalize(self, release, self._shared)  # an archive dropped without close
        self._release.atexit = False

    # ------------------------------------------------------------------ running statements

    def _run(self, action: str, work: Callable[[Any], T], write: bool = False) -> T:
        if not self._release.alive:
            raise ArchiveError(f"the PostgreSQL archive of user {self._user_id!r} is closed")
        return self._shared.run(action, self._user_id, work, write)

    def _rows(self, action: str, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._run(action, lambda connection: connection.execute(sql, params).fetchall())

    def _write(self, action: str, work: Callable[[Any, int], T]) -> T:
        """``work(connection, next index)`` in one transaction, once the user's counter row is locked."""
        return self._run(action, lambda c: work(c, int(c.execute(_LOCK, (self._owner,)).fetchone()[0])), write=True)

    # ------------------------------------------------------------------ the protocol

    @property
    def user_id(self) -> str:
        """Whose archive this is."""
        return self._user_id

    def bind(self, model_id: str, dimension: int | None) -> None:
        """Record the embedding model (and its dimension once known); refuse another model or dimension."""

        def check(row: Sequence[Any] | None) -> bool:
            recorded, stored = (None, None) if row is None else row
            if recorded is not None and recorded != model_id:
                raise EmbeddingModelMismatchError(recorded, model_id)
            if dimension is not None and stored is not None and int(stored) != dimension:
                raise DimensionMismatchError(int(stored), dimension)
            return recorded is not None and (dimension is None or stored is not None)

        found = self._rows("binding", "SELECT model_id, dimension FROM ssm_users WHERE user_id = %s", (self._user_id,))
        if not check(found[0] if found else None):  # unbound, or no dimension yet: written, and checked again
            bound = (self._user_id, model_id, dimension)
            self._run("binding", lambda connection: check(connection.execute(_BIND, bound).fetchone()), write=True)

    def add(self, records: Sequence[NewRecord]) -> list[int | None]:
        """Archive records in one transaction (see ``Archive.add``)."""
        digests = [forget_digest(self._shared.secret, record.data) for record in records]
        keys = [record.key for record in records]

        def work(connection: Any, start: int) -> list[int | None]:
            sql = "SELECT key, idx FROM ssm_messages WHERE user_id = %s AND key = ANY(%s::text[])"
            known: dict[str, int] = dict(connection.execute(sql, (self._user_id, keys)).fetchall())
            sql = "SELECT digest FROM ssm_forgotten WHERE owner = %s AND digest = ANY(%s::bytea[])"
            forgotten = {bytes(row[0]) for row in connection.execute(sql, (self._owner, digests))}
            results: list[int | None] = []
            rows: list[tuple[Any, ...]] = []
            for record, digest in zip(records, digests, strict=True):
                if record.key in known or digest in forgotten:
                    results.append(known.get(record.key))
                    continue
                index = known[record.key] = start + len(rows)
                text = searchable_text(record.text)  # text cannot hold NUL or lone surrogates; ``data`` keeps them
                embedded = PENDING if text.strip() else NOTHING_TO_EMBED
                row = (self._user_id, index, record.key, record.data, record.role, text, record.archived_at)
                rows.append(
                    (*row, record.said_at, record.session_id, embedded, len(record.data), tsvector_literal(text))
                )
                results.append(index)
            if rows:
                connection.cursor().executemany(_INSERT, rows)
                sql = "UPDATE ssm_owners SET next_index = %s WHERE owner = %s"
                connection.execute(sql, (start + len(rows), self._owner))
            return results

        return self._write("archiving", work) if records else []

    def set_vectors(self, vectors: Mapping[int, Vectors], statements: Mapping[int, Vectors] | None = None) -> None:
        """Store each message's chunk vectors and its self-statements' (chunks from ``STATEMENT_CHUNK`` on)."""
        if not vectors:
            return
        dimension = int(next(iter(vectors.values())).shape[1])
        said = statements or {}
        indices = [int(i) for i in vectors]
        sizes = [(vectors[i].size + (said[i].size if i in said else 0)) * 4 for i in indices]

        def work(connection: Any, _: int) -> None:
            (stored,) = connection.execute(_BIND, (self._user_id, None, dimension)).fetchone()[1:]
            if stored != dimension:
                raise DimensionMismatchError(int(stored), dimension)
            rows = connection.execute(_EMBEDDED, (EMBEDDED, indices, sizes, self._user_id)).fetchall()
            live = sorted(int(row[0]) for row in rows)
            sql = "DELETE FROM ssm_vectors WHERE user_id = %s AND idx = ANY(%s::bigint[])"
            connection.execute(sql, (self._user_id, live))
            chunks = [(index, chunk, vector) for index in live for chunk, vector in enumerate(vectors[index])]
            chunks += [(i, STATEMENT_CHUNK + n, vector) for i in live if i in said for n, vector in enumerate(said[i])]
            connection.cursor().executemany(
                "INSERT INTO ssm_vectors VALUES (%s, %s, %s, %s, %s)",
                [(self._user_id, i, c, dimension, np.asarray(vector, dtype=np.float32)) for i, c, vector in chunks],
            )

        self._write("storing vectors", work)

    def pending(self, limit: int, exclude: Iterable[int] = ()) -> list[StoredRecord]:
        """Up to ``limit`` records waiting for their vectors, oldest first."""
        sql = f"SELECT {_COLUMNS} FROM ssm_messages m WHERE m.user_id = %s AND m.embedded = {PENDING} "
        sql += "AND NOT m.idx = ANY(%s::bigint[]) ORDER BY m.idx LIMIT %s"
        rows = self._rows("reading pending messages", sql, (self._user_id, sorted({int(i) for i in exclude}), limit))
        return [_record(row) for row in rows]

    def candidates(
        self, terms: Sequence[str], vector: Vectors | None, depth: int, scope: Scope, statements: bool = False
    ) -> Candidates:
        """The ``depth`` nearest messages by vector (by self-statement with ``statements``) and best by ``ts_rank``."""
        conditions, params = _conditions(scope)
        lexical: dict[int, float] = {}
        if terms and depth > 0 and not statements:
            query = " | ".join(_quoted(_lexeme(term)) for term in dict.fromkeys(terms))
            sql = _LEXICAL.format(conditions=conditions)
            rows = self._rows("searching", sql, (query, self._user_id, *params, depth))
            lexical = {int(index): float(score) for index, score in rows}
        if vector is None or depth <= 0:
            return Candidates(dense={}, lexical=lexical)
        near = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        chunks = f">= {STATEMENT_CHUNK}" if statements else f"< {STATEMENT_CHUNK}"  # statements, or the text's chunks
        dense = self._run("searching", lambda c: self._dense(c, near, depth, chunks, conditions, params))
        return Candidates(dense=dense, lexical=lexical)

    def _dense(
        self, connection: Any, vector: Any, depth: int, chunks: str, conditions: str, params: list[Any]
    ) -> dict[int, float]:
        """The exact scan, or the HNSW index when the user is large and it gives enough hits."""
        dimension, fetch = len(vector), min(1000, depth * 4)  # pgvector's largest ef_search is 1000
        if time.monotonic() >= self._large_until:  # counted at most that far, again a minute after it was large
            sql = "SELECT count(*) >= %s FROM (SELECT 1 FROM ssm_vectors WHERE user_id = %s LIMIT %s) v"
            if connection.execute(sql, (self._exact_below, self._user_id, self._exact_below)).fetchone()[0]:
                self._large_until = time.monotonic() + 60.0
        if time.monotonic() < self._large_until and self._index_ready(connection, dimension):
            with connection.transaction():
                connection.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(fetch),))
                sql = _HNSW.format(d=dimension, chunks=chunks, conditions=conditions)
                rows = connection.execute(sql, (vector, self._user_id, vector, fetch, self._user_id, *params, depth))
                found = {int(index): float(score) for index, score in rows}
            if len(found) >= depth:
                return found
        sql = _EXACT.format(chunks=chunks, conditions=conditions)
        rows = connection.execute(sql, (vector, self._user_id, *params, depth))
        return {int(index): float(score) for index, score in rows}

    def _index_ready(self, connection: Any, dimension: int) -> bool:
        """Whether the dimension's HNSW index is valid; if not, build it in the background (once a minute at most)."""
        shared = self._shared
        if dimension in shared.indexes:
            return True
        sql = "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = %s"
        valid = connection.execute(sql, (hnsw_name(dimension),)).fetchone()
        with shared.lock:
            if valid is not None and valid[0]:
                shared.indexes.add(dimension)
                return True
            if time.monotonic() < shared.builds.get(dimension, 0.0):
                return False
            shared.builds[dimension] = time.monotonic() + 60.0
        threading.Thread(target=self.build_index, args=(dimension,), name="ssm-hnsw-build", daemon=True).start()
        return False

    def build_index(self, dimension: int | None = None) -> bool:
        """Build the HNSW index of the user's dimension now (after a bulk load, say); True once it is valid.

        Runs on a connection of its own, outside the pool, without blocking writers; a failure is logged.
        """
        dimension = dimension or self.stats().dimension
        if dimension is None:
            return False
        try:
            with self._shared.options.connect() as connection:
                built = build_hnsw(connection, dimension)
        except Exception as error:  # searches stay exact; the next search of a large user tries again later
            logger.warning("dimension=<%d>, error=<%s> | HNSW index not built; searching exactly", dimension, error)
            return False
        if built:
            with self._shared.lock:
                self._shared.indexes.add(dimension)
        return built

    def similarities(self, vector: Vectors, indices: Iterable[int]) -> dict[int, float]:
        """Best-chunk cosine similarity of each index that has vectors."""
        sql = f"SELECT idx, max(-(embedding <#> %s)) FROM ssm_vectors WHERE user_id = %s AND chunk < {STATEMENT_CHUNK} "
        sql += "AND idx = ANY(%s::bigint[]) "
        near = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        wanted = sorted({int(i) for i in indices})
        rows = self._rows("searching", sql + "GROUP BY idx", (near, self._user_id, wanted)) if wanted else []
        return {int(index): float(score) for index, score in rows}

    def eligible(self, indices: Iterable[int], scope: Scope) -> set[int]:
        """The live indices among ``indices`` that may be hits in ``scope`` (no record is read)."""
        conditions, params = _conditions(scope)
        sql = f"SELECT m.idx FROM ssm_messages m WHERE m.user_id = %s AND m.idx = ANY(%s::bigint[]){conditions}"
        rows = self._rows("searching", sql, (self._user_id, sorted({int(i) for i in indices}), *params))
        return {int(row[0]) for row in rows}

    def get(self, indices: Iterable[int], scope: Scope | None = None) -> list[StoredRecord]:
        """The live records among ``indices`` that ``scope`` may read, in index order."""
        conditions, params = _conditions(scope, hits=False)
        sql = f"SELECT {_COLUMNS} FROM ssm_messages m WHERE m.user_id = %s AND m.idx = ANY(%s::bigint[]){conditions}"
        rows = self._rows(
            "reading", sql + " ORDER BY m.idx", (self._user_id, sorted({int(i) for i in indices}), *params)
        )
        return [_record(row) for row in rows]

    def find_keys(self, keys: Iterable[str]) -> dict[str, int]:
        """The live index of each idempotency key that is archived."""
        sql = "SELECT key, idx FROM ssm_messages WHERE user_id = %s AND key = ANY(%s::text[])"
        return {key: int(index) for key, index in self._rows("reading", sql, (self._user_id, list(set(keys))))}

    def find_text(self, text: str, scope: Scope | None, limit: int) -> list[int]:
        """Indices of up to ``limit`` live messages whose text contains ``text`` (case-insensitive), oldest first."""
        conditions, params = _conditions(scope)
        sql = "SELECT m.idx FROM ssm_messages m WHERE m.user_id = %s AND strpos(lower(m.text), lower(%s)) > 0"
        sql += f"{conditions} ORDER BY m.idx LIMIT %s"
        return [
            int(row[0]) for row in self._rows("reading", sql, (self._user_id, searchable_text(text), *params, limit))
        ]

    def records(self, after: int, limit: int) -> list[StoredRecord]:
        """Up to ``limit`` live records with an index above ``after``, in index order."""
        sql = f"SELECT {_COLUMNS} FROM ssm_messages m WHERE m.user_id = %s AND m.idx > %s ORDER BY m.idx LIMIT %s"
        return [_record(row) for row in self._rows("reading", sql, (self._user_id, after, limit))]

    def _remember(self, connection: Any, sql: str, params: Sequence[Any]) -> int:
        """Run a ``DELETE ... RETURNING data`` and keep the digests of what it removed; how many went."""
        digests = [forget_digest(self._shared.secret, bytes(row[0])) for row in connection.cursor().stream(sql, params)]
        keep = "INSERT INTO ssm_forgotten SELECT %s, unnest(%s::bytea[]) ON CONFLICT DO NOTHING"
        connection.execute(keep, (self._owner, digests))
        return len(digests)

    def forget(self, indices: Iterable[int]) -> int:
        """Remove these messages for good, remembering their digests; how many were removed."""
        wanted = sorted({int(i) for i in indices})
        sql = "DELETE FROM ssm_messages WHERE user_id = %s AND idx = ANY(%s::bigint[]) RETURNING data"
        return self._write("forgetting", lambda c, _: self._remember(c, sql, (self._user_id, wanted))) if wanted else 0

    def forget_all(self) -> int:
        """Remove every message and row of the user for good (their digests kept under its HMAC, nothing else)."""

        def work(connection: Any, _: int) -> int:
            removed = self._remember(
                connection, "DELETE FROM ssm_messages WHERE user_id = %s RETURNING data", [self._user_id]
            )
            connection.execute("DELETE FROM ssm_users WHERE user_id = %s", (self._user_id,))
            return removed

        return self._write("forgetting the user", work)

    def evict(self, max_messages: int | None, max_bytes: int | None) -> int:
        """Remove the oldest messages until both limits hold (not remembered as forgotten); how many went."""
        if max_messages is None and max_bytes is None:
            return 0
        params = [self._user_id, self._user_id, *(1 << 62 if n is None else n for n in (max_messages, max_bytes))]
        return self._write("evicting", lambda c, _: len(c.execute(_EVICT, params).fetchall()))

    def stats(self) -> ArchiveStats:
        """What the archive holds."""
        row = self._rows("reading statistics", _STATS, (self._owner, self._user_id, self._user_id, self._user_id))[0]
        count, pending, nbytes, oldest, next_index, dimension, model_id = row
        oldest = None if oldest is None else int(oldest)
        return ArchiveStats(int(count), int(pending), int(nbytes), int(next_index or 0), dimension, model_id, oldest)

    def get_note(self, key: str) -> str | None:
        """A small value the engine kept with the user's archive (in the user's row: ``forget_all`` removes it)."""
        rows = self._rows(
            "reading a note", "SELECT notes ->> %s FROM ssm_users WHERE user_id = %s", (key, self._user_id)
        )
        return rows[0][0] if rows else None

    def set_note(self, key: str, value: str) -> None:
        """Keep a small value with the user's archive."""
        sql = (
            "INSERT INTO ssm_users (user_id, notes) VALUES (%s, jsonb_build_object(%s::text, %s::text)) "
            "ON CONFLICT (user_id) DO UPDATE SET notes = coalesce(ssm_users.notes, '{}') || excluded.notes"
        )
        self._run("writing a note", lambda c: c.execute(sql, (self._user_id, key, value)), write=True)

    # ------------------------------------------------------------------ saved state

    def to_state(self) -> dict[str, Any]:
        """A reference to the user's archive: ``{"kind": "pgvector", "dsn": <without password>, "user_id": ...}``."""
        return {"kind": "pgvector", "dsn": make_conninfo("", **self._reference), "user_id": self._user_id}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Check that a saved reference names this user's archive in this database (the database is the state).

        Raises:
            StateError: If it is an in-process state, or names another kind of archive, database or user.
        """
        if not isinstance(state, Mapping) or state.get("kind") != "pgvector":
            kind = state.get("kind") if isinstance(state, Mapping) else None
            what = f"a {kind!r} reference" if kind is not None else "an in-process state"
            raise StateError(
                f"a PostgresArchive restores only a reference to its own user, not {what} (to migrate, open the "
                "saved state in process and add its messages to this archive)"
            )
        try:
            same = isinstance(state.get("dsn"), str) and _database(state["dsn"]) == self._reference
        except Exception:
            same = False
        if not same:
            raise StateError(f"the state references another database ({state.get('dsn')!r:.120}); open it there")
        if state.get("user_id") != self._user_id:
            raise StateError(f"the state is of user {state.get('user_id')!r}, this archive of user {self._user_id!r}")

    def close(self) -> None:
        """Give back this archive's reference to the pool (the last closes it); idempotent."""
        self._release()

    def __repr__(self) -> str:
        where = " ".join(f"{k}={v}" for k, v in self._reference.items() if k in ("host", "port", "dbname"))
        return f"PostgresArchive({where or 'default'}, user_id={self._user_id!r})"
