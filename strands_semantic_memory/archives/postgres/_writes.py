"""Writes of ``PostgresArchive``, each one transaction.

Every write first locks the user's row in ``ssm_users`` (``SELECT ... FOR UPDATE``): index allocation,
eviction, forgetting and the counters are then serialized between all writers of the user (threads or
processes), and the lock order is always the user's row first, so writers never deadlock. A writer that cannot get
the lock within ``lock_timeout`` fails with nothing committed.

Small writes send their statements in a pipeline (two round trips); ``add_records`` writes large batches with
``COPY``, in slices so that each statement stays well inside ``statement_timeout``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from strands_semantic_memory.archives._protocol import NewRecord
from strands_semantic_memory.archives.postgres._connections import Connections
from strands_semantic_memory.archives.postgres._reads import View
from strands_semantic_memory.archives.postgres._text_search import storable, storable_key, tsvector_literal
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import ArchiveError, DimensionMismatchError
from strands_semantic_memory.messages._codec import LEXICAL_ENTRY_BYTES, RECORD_OVERHEAD, record_nbytes

logger = logging.getLogger(__name__)

COPY_FROM = 200
"""Batches of at least this many new messages are written with COPY (below: a pipelined multi-row insert)."""

COPY_SLICE = 5000
"""Rows per COPY statement."""

PENDING_COUNT_CAP = 100_000
"""Pending messages are counted up to this (a partial-index scan; the count decides when to build HNSW)."""

LOCK_USER = (
    "SELECT next_index, dimension, next_index - evicted_count - forgotten_count FROM ssm_users "
    "WHERE user_id = %s FOR UPDATE"
)

_COLUMNS = (
    "user_id, idx, chunk, data, role, tracking_id, key, archived_at, said_at, session_id, body, tsv, pending, nbytes, "
    "lexical_terms"
)
_INSERT = (
    f"INSERT INTO ssm_archive ({_COLUMNS}) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s, %s, %s)"
)
_REMOVED = (
    "SELECT idx FROM gone WHERE chunk = 0 ORDER BY idx"  # the messages (chunk 0 rows) a DELETE ... RETURNING removed
)


def archive(connections: Connections, user_id: str, view: View, records: Sequence[NewRecord]) -> list[int]:
    """Archive records in one transaction (``add_records``: COPY for large batches) and note what is pending."""
    with connections.write("archiving", pipeline=len(records) < COPY_FROM) as connection:
        indices, pending = add_records(connection, user_id, records)
    if pending:
        view.saw_pending(True)
    if len(records) >= COPY_FROM:
        refresh_statistics(connections, len(records))
    return indices


def refresh_statistics(connections: Connections, added: int) -> None:
    """``ANALYZE`` the table after a bulk write that is large next to the rows the planner knows of.

    Autovacuum analyzes a growing table only after its nap (a minute by default); until then the planner takes
    the table for nearly empty, and the vector writes that follow a bulk load (``idx = ANY(...)`` lookups) scanned
    the whole table each: a 100k bulk load took 64-68 s instead of 19 s. A message is about two rows (its own and
    one per vector chunk), so this analyzes while the table holds fewer than four rows per added message: a few
    times per bulk load, at most. A failure (no permission, say) is logged and changes nothing else. Then the
    full-text index's pending list is flushed (``flush_lexical_pending``).
    """
    try:
        with connections.write("refreshing planner statistics", pipeline=False) as connection:
            (known,) = connection.execute(
                "SELECT reltuples FROM pg_class WHERE oid = 'ssm_archive'::regclass", prepare=False
            ).fetchone()
            if known < 4 * added:
                connection.execute("ANALYZE ssm_archive", prepare=False)
    except ArchiveError as error:
        logger.debug("error=<%s> | could not refresh the planner statistics", error)
    flush_lexical_pending(connections)


def flush_lexical_pending(connections: Connections) -> None:
    """Move the full-text index's pending entries into the index proper, after a bulk write.

    GIN's fast update appends new entries to a pending list that every search scans linearly (see
    ``_schema`` on its size limit): a bulk load left up to 4 MB of it, and at 100k messages the lexical
    match of a hook turn took 46-73 ms instead of 18 ms (load average 5 on 2 cores) until it was flushed. The
    flush is the work the next insert over the limit would do anyway. A failure is logged and changes nothing.
    """
    try:
        with connections.write("flushing the full-text index", pipeline=False) as connection:
            connection.execute("SELECT gin_clean_pending_list('ssm_archive_tsv'::regclass)", prepare=False)
    except ArchiveError as error:
        logger.debug("error=<%s> | could not flush the full-text index's pending list", error)


def store_vectors(connections: Connections, user_id: str, view: View, vectors: Mapping[int, Vectors]) -> int:
    """Store chunk vectors in one transaction (``set_vectors``) and note what the user reported.

    Raises:
        DimensionMismatchError: If their length differs from the user's as last seen (checked before
            connecting) or as stored.
    """
    for offered in {int(v.shape[1]) for v in vectors.values() if len(v)}:
        if view.dimension is not None and offered != view.dimension:
            raise DimensionMismatchError(view.dimension, offered)
    chunks = sum(len(v) for v in vectors.values())
    with connections.write("storing vectors", pipeline=chunks < COPY_FROM) as connection:
        updated, dimension, pending, live = set_vectors(connection, user_id, vectors)
    view.dimension, view.live, view.pending_count = dimension, live, pending
    view.saw_pending(pending > 0)
    return updated


def add_records(connection: Any, user_id: str, records: Sequence[NewRecord]) -> tuple[list[int], bool]:
    """Archive records in order; a record whose key is live (or repeated in the batch) gets the existing index.

    Must run inside a transaction (a pipeline is fine below ``COPY_FROM`` records).

    Args:
        connection: The connection.
        user_id: The user_id.
        records: The records.

    Returns:
        The index of each record, and whether any record added is waiting for vectors.
    """
    keys = [storable_key(r.key) for r in records]
    lookup = set(keys)
    locked = connection.execute(LOCK_USER, (user_id,))
    found = connection.execute(
        "SELECT key, idx FROM ssm_archive WHERE user_id = %s AND chunk = 0 AND key = ANY(%s::text[])",
        (user_id, sorted(lookup)),
    )
    (next_index, _, _) = locked.fetchone()
    known: dict[str, int] = {str(k): int(i) for k, i in found.fetchall()}
    indices: list[int] = []
    rows: list[tuple[Any, ...]] = []
    for record, key in zip(records, keys, strict=True):
        existing = known.get(key)
        if existing is not None:
            indices.append(existing)
            continue
        index = next_index
        next_index += 1
        known[key] = index
        body = storable(record.text)
        tsv, terms = tsvector_literal(body)
        tracking_id = storable(record.tracking_id) if record.tracking_id is not None else None
        row = (user_id, index, 0, record.data, storable(record.role), tracking_id, key, record.archived_at)
        pending = bool(body.strip())
        nbytes = record_nbytes(len(record.data), 0, 0, terms)
        session_id = storable(record.session_id) if record.session_id is not None else None
        rows.append((*row, record.said_at, session_id, body, tsv, pending, nbytes, terms))
        indices.append(index)
    if rows:
        _insert(connection, rows)
        connection.execute("UPDATE ssm_users SET next_index = %s WHERE user_id = %s", (next_index, user_id))
    return indices, any(row[12] for row in rows)


def _insert(connection: Any, rows: list[tuple[Any, ...]]) -> None:
    with connection.cursor() as cursor:
        if len(rows) < COPY_FROM:
            cursor.executemany(_INSERT, rows)
            return
        for start in range(0, len(rows), COPY_SLICE):
            with cursor.copy(f"COPY ssm_archive ({_COLUMNS}) FROM STDIN") as copy:
                for row in rows[start : start + COPY_SLICE]:
                    copy.write_row(row)


_VECTOR_COLUMNS = "user_id, idx, chunk, dimension, embedding, role, archived_at, said_at, session_id"
_VECTOR_TYPES = ["text", "int8", "int4", "int4", "vector", "text", "float8", "float8", "text"]


def _insert_vectors(connection: Any, rows: list[tuple[Any, ...]]) -> None:
    with connection.cursor() as cursor:
        if len(rows) < COPY_FROM:
            if rows:
                cursor.executemany(
                    f"INSERT INTO ssm_archive ({_VECTOR_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", rows
                )
            return
        for start in range(0, len(rows), COPY_SLICE):
            # Binary: formatting each float as text in Python took most of a bulk load's vector writes.
            with cursor.copy(f"COPY ssm_archive ({_VECTOR_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(_VECTOR_TYPES)
                for row in rows[start : start + COPY_SLICE]:
                    copy.write_row(row)


def set_vectors(connection: Any, user_id: str, vectors: Mapping[int, Vectors]) -> tuple[int, int | None, int, int]:
    """Store the chunk vectors of still-pending messages (another worker may have stored them already).

    Returns:
        How many messages were updated, the user's dimension, how many messages still wait for vectors
        (counted up to ``PENDING_COUNT_CAP``), and how many messages the user holds.

    Raises:
        DimensionMismatchError: If the vectors' length differs from the user's (nothing is written).
    """
    locked = connection.execute(LOCK_USER, (user_id,))
    live_rows = connection.execute(
        "SELECT idx, octet_length(data), lexical_terms, role, archived_at, said_at, session_id FROM ssm_archive "
        "WHERE user_id = %s AND chunk = 0 AND pending AND idx = ANY(%s::bigint[]) FOR UPDATE",
        (user_id, list(vectors)),
    )
    (_, dimension, live_count) = locked.fetchone()
    for offered in {int(v.shape[1]) for v in vectors.values() if len(v)}:
        if dimension is None:
            connection.execute("UPDATE ssm_users SET dimension = %s WHERE user_id = %s", (offered, user_id))
            dimension = offered
        elif offered != dimension:
            raise DimensionMismatchError(dimension, offered)
    live = live_rows.fetchall()
    indices: list[int] = []
    sizes: list[int] = []
    rows: list[tuple[Any, ...]] = []
    for index, data_len, terms, role, archived_at, said_at, session_id in live:
        chunks = np.asarray(vectors[int(index)], dtype=np.float32)
        indices.append(int(index))
        sizes.append(record_nbytes(int(data_len), len(chunks), dimension or 0, int(terms)))
        # Vector n of a message is row chunk n + 1: the message row (chunk 0) stays narrow, so full-text ranking
        # reads few pages, and storing vectors never rewrites it beyond its flag.
        # Each vector row carries the message's role, times and session, so a filtered or scoped scan needs no join.
        row = (user_id, index)
        times = (archived_at, said_at, session_id)
        rows.extend((*row, n + 1, dimension, vector, role, *times) for n, vector in enumerate(chunks))
    if indices:
        connection.execute(
            "UPDATE ssm_archive AS a SET pending = false, nbytes = u.nbytes "
            "FROM unnest(%s::bigint[], %s::bigint[]) AS u(idx, nbytes) "
            "WHERE a.user_id = %s AND a.idx = u.idx AND a.chunk = 0",
            (indices, sizes, user_id),
        )
    _insert_vectors(connection, rows)
    (pending,) = connection.execute(
        "SELECT count(*) FROM (SELECT 1 FROM ssm_archive WHERE user_id = %s AND pending LIMIT %s) AS waiting",
        (user_id, PENDING_COUNT_CAP),
    ).fetchone()
    return len(live), dimension, int(pending), int(live_count)


def _delete_where(connection: Any, user_id: str, condition: str, params: dict[str, Any], counter: str) -> list[int]:
    """Delete every row of the messages matching ``condition`` and count them in ``counter``; one statement."""
    rows = connection.execute(
        f"WITH gone AS (DELETE FROM ssm_archive WHERE user_id = %(user)s AND {condition} RETURNING idx, chunk), "
        f"counted AS (UPDATE ssm_users SET {counter} = {counter} + (SELECT count(*) FROM gone WHERE chunk = 0) "
        f"WHERE user_id = %(user)s) {_REMOVED}",
        {"user": user_id, **params},
    ).fetchall()
    return [int(i) for (i,) in rows]


def forget(connection: Any, user_id: str, indices: Sequence[int]) -> list[int]:
    """Delete these messages for good (every row: message, vectors, lexical entry). Returns them, ascending."""
    connection.execute(LOCK_USER, (user_id,))
    return _delete_where(
        connection, user_id, "idx = ANY(%(indices)s::bigint[])", {"indices": list(indices)}, "forgotten_count"
    )


def forget_user(connection: Any, user_id: str) -> tuple[int, tuple[int, int, int]]:
    """Delete every row of the user: its messages, vectors and terms, and its row in ``ssm_users``.

    Returns:
        How many messages were deleted, and the counters to register the user with again (every index so far
        counted as evicted or forgotten).
    """
    row = connection.execute(
        "SELECT next_index, evicted_count FROM ssm_users WHERE user_id = %s FOR UPDATE", (user_id,)
    ).fetchone()
    (removed,) = connection.execute(
        "WITH gone AS (DELETE FROM ssm_archive WHERE user_id = %s RETURNING chunk) "
        "SELECT count(*) FILTER (WHERE chunk = 0) FROM gone",
        (user_id,),
    ).fetchone()
    connection.execute("DELETE FROM ssm_users WHERE user_id = %s", (user_id,))
    next_index, evicted = (0, 0) if row is None else (int(row[0]), int(row[1]))
    return int(removed), (next_index, evicted, next_index - evicted)


def evict_oldest(connection: Any, user_id: str, count: int) -> list[int]:
    """Evict the ``count`` oldest live messages."""
    connection.execute(LOCK_USER, (user_id,))
    condition = (
        "idx < coalesce((SELECT idx FROM ssm_archive WHERE user_id = %(user)s AND chunk = 0 "
        "ORDER BY idx OFFSET %(count)s LIMIT 1), 9223372036854775807)"
    )
    return _delete_where(connection, user_id, condition, {"count": count}, "evicted_count")


def enforce_limits(connection: Any, user_id: str, max_count: int | None, max_bytes: int | None) -> list[int]:
    """Evict oldest-first while a limit is exceeded (the newest message is kept whatever its size)."""
    connection.execute(LOCK_USER, (user_id,))
    if max_count is not None and max_count <= 0:
        return _delete_where(connection, user_id, "true", {}, "evicted_count")
    if max_bytes is None:
        # Keep the newest max_count: everything below the max_count-th newest goes (an index scan, no sum).
        cutoff = (
            "(SELECT idx FROM ssm_archive WHERE user_id = %(user)s AND chunk = 0 "
            "ORDER BY idx DESC OFFSET greatest(%(max_count)s - 1, 0) LIMIT 1)"
        )
    else:
        # For each message, newest first: how many messages and bytes from it to the newest.
        cutoff = """(SELECT min(idx) FROM (
                SELECT idx, row_number() OVER w AS kept, sum(nbytes) OVER w AS kept_bytes
                FROM ssm_archive WHERE user_id = %(user)s AND chunk = 0 WINDOW w AS (ORDER BY idx DESC)
            ) AS suffix
            WHERE (%(max_count)s::bigint IS NULL OR kept <= %(max_count)s::bigint)
              AND (kept_bytes <= %(max_bytes)s::bigint OR kept = 1))"""
    params = {"max_count": max_count, "max_bytes": max_bytes}
    return _delete_where(connection, user_id, f"idx < {cutoff}", params, "evicted_count")


def reembed(connection: Any, user_id: str, model_id: str | None) -> None:
    """Drop every vector of the user and mark each message with text pending (restore with another model)."""
    connection.execute(LOCK_USER, (user_id,))
    connection.execute("DELETE FROM ssm_archive WHERE user_id = %s AND chunk > 0", (user_id,))
    connection.execute(
        "UPDATE ssm_archive SET embedding = NULL, dimension = NULL, pending = coalesce(body ~ '[^[:space:]]', false), "
        "nbytes = octet_length(data) + lexical_terms * %s + %s WHERE user_id = %s",
        (LEXICAL_ENTRY_BYTES, RECORD_OVERHEAD, user_id),
    )
    connection.execute(
        "UPDATE ssm_users SET dimension = NULL, model_id = coalesce(%s, model_id) WHERE user_id = %s",
        (model_id, user_id),
    )


def reindex_terms(connection: Any) -> int:
    """Rebuild every message's ``tsvector`` from its stored searchable text (the tokenizer changed).

    Runs inside the caller's transaction (the schema lock's), without ``statement_timeout``; every user of the
    table is re-indexed at once, in batches through a temporary table. HNSW indexes are dropped first and built
    again later in one pass (see ``build_hnsw``).

    Returns:
        How many messages were re-indexed.
    """
    connection.execute("SET LOCAL statement_timeout = 0", prepare=False)
    # Every updated row would otherwise be inserted into the HNSW graphs again, one by one (far slower than a new
    # build): drop them; the next archive to open a large user builds its index again in one pass.
    for (name,) in connection.execute(
        "SELECT c.relname FROM pg_class AS c JOIN pg_index AS i ON i.indexrelid = c.oid "
        "WHERE c.relname LIKE 'ssm_archive_hnsw_%'"
    ).fetchall():
        connection.execute(f'DROP INDEX IF EXISTS "{name}"', prepare=False)
    connection.execute(
        "CREATE TEMP TABLE ssm_terms (user_id text, idx bigint, tsv text, terms integer) ON COMMIT DROP",
        prepare=False,
    )
    count = 0
    with connection.cursor(name="ssm_reindex") as source, connection.cursor() as sink:
        source.execute("SELECT user_id, idx, body FROM ssm_archive WHERE chunk = 0 AND body IS NOT NULL")
        while rows := source.fetchmany(COPY_SLICE):
            with sink.copy("COPY ssm_terms (user_id, idx, tsv, terms) FROM STDIN") as copy:
                for user_id, index, body in rows:
                    copy.write_row((user_id, index, *tsvector_literal(body)))
            count += len(rows)
    connection.execute(
        "UPDATE ssm_archive AS a SET tsv = t.tsv::tsvector, lexical_terms = t.terms, "
        "nbytes = a.nbytes + (t.terms - a.lexical_terms) * %s "
        "FROM ssm_terms AS t WHERE a.user_id = t.user_id AND a.idx = t.idx AND a.chunk = 0",
        (LEXICAL_ENTRY_BYTES,),
        prepare=False,
    )
    return count
