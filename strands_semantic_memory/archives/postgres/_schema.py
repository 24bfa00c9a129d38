"""The PostgreSQL schema: created on first use, under an advisory lock.

Schema version 1::

    ssm_meta(key PK, value)                                   -- schema_version, tokenizer_version
    ssm_users(user_id PK, model_id, dimension, next_index, evicted_count, forgotten_count)
    ssm_archive(user_id, idx, chunk, data bytea, role, tracking_id, key, archived_at, said_at, session_id, body,
                tsv, pending, nbytes, lexical_terms, dimension, embedding vector, PRIMARY KEY (user_id, idx, chunk))

Row ``chunk = 0`` of an archive index holds the message (``data``: the engine's bytes, exactly), its searchable
text (``body``) and its ``tsvector``; its vectors are rows ``chunk = 1, 2, ...`` (one per text chunk). Keeping
vectors out of the message row keeps that row narrow: full-text ranking over 11k matches of a 100k-message user read
9,500 pages with the vector inline.
Every row carries ``role``, ``archived_at``, ``said_at`` and ``session_id``, so filtered and scoped searches need no
join. One user is a partition of the two tables: every row names its ``user_id``, and every statement names one.
``key`` is the engine's idempotency key (unique per user among live messages). ``embedding`` is an untyped ``vector`` so
users with different models can share the table; it is stored ``MAIN`` (in the row unless the row cannot fit
a page otherwise: pgvector's default, ``EXTERNAL``, moved most 384-dimension vectors out of line and made an exact
scan read seven times the pages); each dimension gets a partial HNSW index on
``embedding::vector(d)`` (pgvector's documented pattern), built when a search first finds a user of that
dimension at the archive's ``exact_search_below`` (see ``_hnsw``).

A database of another schema version is refused (nothing released wrote another one, so there is nothing to
migrate).

Terms: the ``tsvector`` holds ``tokenize``'s terms, so when the tokenizer
changes (``TOKENIZER_VERSION``, recorded in ``ssm_meta``) the first newer process re-indexes every message from its
stored searchable text, once, under the same lock (other processes opening meanwhile wait up to their
``lock_timeout``, then fail with ``ArchiveError`` and can retry).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from strands_semantic_memory.archives._state import STATE_FORMAT, STATE_VERSION
from strands_semantic_memory.archives.postgres._writes import reindex_terms
from strands_semantic_memory.errors import ArchiveError, StateError
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
"""The schema version this release creates and reads (see the module docstring)."""

_SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('strands_semantic_memory_schema'))"

_CREATE = """
CREATE TABLE IF NOT EXISTS ssm_users (
    user_id text PRIMARY KEY,
    model_id text,
    dimension integer,
    next_index bigint NOT NULL DEFAULT 0,
    evicted_count bigint NOT NULL DEFAULT 0,
    forgotten_count bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ssm_archive (
    user_id text NOT NULL,
    idx bigint NOT NULL,
    chunk integer NOT NULL,
    data bytea,
    role text,
    tracking_id text,
    key text,
    archived_at double precision,
    said_at double precision,
    session_id text,
    body text,
    tsv tsvector,
    pending boolean NOT NULL DEFAULT false,
    nbytes bigint NOT NULL DEFAULT 0,
    lexical_terms integer NOT NULL DEFAULT 0,
    dimension integer,
    embedding vector,
    PRIMARY KEY (user_id, idx, chunk)
);
ALTER TABLE ssm_archive ALTER COLUMN embedding SET STORAGE MAIN;
CREATE UNIQUE INDEX IF NOT EXISTS ssm_archive_key ON ssm_archive (user_id, key) WHERE chunk = 0 AND key IS NOT NULL;
CREATE INDEX IF NOT EXISTS ssm_archive_pending ON ssm_archive (user_id, idx) WHERE pending;
CREATE INDEX IF NOT EXISTS ssm_archive_tsv ON ssm_archive USING gin (tsv) WITH (gin_pending_list_limit = {limit});
"""


@dataclass(frozen=True)
class PartitionInfo:
    """What an archive learns about its user when it first connects.

    Attributes:
        model_id: The embedding model bound to the user, if any.
        dimension: Its vector length, once known.
        live: Its number of live messages.
        hnsw_dimensions: Dimensions that already have an HNSW index.
        pending: Messages waiting for vectors (counted up to 100,000).
        reindexed: Whether this opening re-indexed the terms (the table then wants a VACUUM).
    """

    model_id: str | None
    dimension: int | None
    live: int
    hnsw_dimensions: frozenset[int]
    pending: int = 0
    reindexed: bool = False


GIN_PENDING_LIST_KB = 64
"""``gin_pending_list_limit`` of the full-text index (kB; PostgreSQL's default is 4 MB, its least 64 kB).

New entries wait in GIN's pending list until it passes this size, and every full-text search scans that list
linearly: with the default, a search at 100k messages spent 46-73 ms on a full list against 18 ms on an empty one,
and the lexical side of a 20k archive 2-3 ms on 50 pending pages against 0.8-1 ms on one. At 64 kB, writes of two
messages per turn cost the same within the noise (3.9-4.8 ms) and a 15k bulk load 10-20% more (load average 5 on
2 cores); bulk writes also flush the list when they end (``flush_lexical_pending``).
"""


def _check_tokenizer(connection: Any) -> bool:
    """Re-index the stored terms if the tokenizer changed since they were written (``ssm_meta.tokenizer_version``).

    Returns:
        Whether the terms were re-indexed.
    """
    row = connection.execute("SELECT value FROM ssm_meta WHERE key = 'tokenizer_version'").fetchone()
    stored = int(row[0]) if row is not None else TOKENIZER_VERSION
    if stored > TOKENIZER_VERSION:
        logger.warning(
            "stored=<%d>, library=<%d> | the archive's terms come from a newer tokenizer: lexical matches may be "
            "missed until this process is upgraded",
            stored,
            TOKENIZER_VERSION,
        )
        return False
    if stored < TOKENIZER_VERSION:
        started = time.perf_counter()
        count = reindex_terms(connection)
        elapsed = time.perf_counter() - started
        logger.info("messages=<%d>, seconds=<%.1f> | lexical terms re-indexed for a new tokenizer", count, elapsed)
    if row is None or stored != TOKENIZER_VERSION:
        connection.execute(
            "INSERT INTO ssm_meta (key, value) VALUES ('tokenizer_version', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(TOKENIZER_VERSION),),
        )
    return stored < TOKENIZER_VERSION


def bind_model(connection: Any, user_id: str, model_id: str) -> str:
    """Bind the user to ``model_id`` unless it is bound already; returns the model it is bound to."""
    # The UPDATE only touches (and waits to lock) an unbound row; a bound one is just read.
    (stored,) = connection.execute(
        "WITH claimed AS (UPDATE ssm_users SET model_id = %(model)s WHERE user_id = %(user)s "
        "AND model_id IS NULL RETURNING model_id) "
        "SELECT model_id FROM claimed UNION ALL "
        "(SELECT model_id FROM ssm_users WHERE user_id = %(user)s AND NOT EXISTS (SELECT 1 FROM claimed))",
        {"model": model_id, "user": user_id},
    ).fetchone()
    return str(stored)


Counters = tuple[int, int, int]
"""A user's ``next_index``, ``evicted_count`` and ``forgotten_count``."""


def prepare(connection: Any, user_id: str, model_id: str | None, counters: Counters | None = None) -> PartitionInfo:
    """Create the schema if it is missing and register the user, in one transaction under an advisory lock.

    The multi-statement scripts run unprepared (a connection with ``prepare_threshold=0`` would refuse them).

    DDL runs only when the schema is missing (a ``CREATE INDEX IF NOT EXISTS`` would take a table lock that waits
    behind every writer).

    Args:
        connection: A psycopg connection (autocommit or not; the work is one transaction).
        user_id: The archive's user.
        model_id: The model to bind the user to if it has none, when already known.
        counters: The counters a user registered anew starts from (see ``register``).

    Raises:
        ArchiveError: If the database holds another schema version.
        EmbeddingModelMismatchError: Not here; the caller compares the returned ``model_id``.
    """
    with connection.transaction():
        connection.execute(_SCHEMA_LOCK)
        if connection.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
            connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        connection.execute("CREATE TABLE IF NOT EXISTS ssm_meta (key text PRIMARY KEY, value text NOT NULL)")
        row = connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            connection.execute(_CREATE.format(limit=GIN_PENDING_LIST_KB), prepare=False)
            version = str(SCHEMA_VERSION)
            connection.execute("INSERT INTO ssm_meta (key, value) VALUES ('schema_version', %s)", (version,))
        elif row[0] != str(SCHEMA_VERSION):
            raise ArchiveError(_other_version(row[0]))
        reindexed = _check_tokenizer(connection)
        info = _register(connection, user_id, model_id, counters)
    return dataclasses.replace(info, reindexed=reindexed)


def register(connection: Any, user_id: str, model_id: str | None, counters: Counters | None = None) -> PartitionInfo:
    """Register the user in a database whose schema was checked already, in one transaction.

    Args:
        connection: A psycopg connection (a pooled one: autocommit).
        user_id: The archive's user.
        model_id: The model to bind the user to if it has none, when already known.
        counters: The counters of a user registered anew (its row is missing): what this process counted when it
            forgot the user, so its indices are not handed out again (None: from 0).
    """
    with connection.transaction():
        return _register(connection, user_id, model_id, counters)


def _register(connection: Any, user_id: str, model_id: str | None, counters: Counters | None) -> PartitionInfo:
    """``register`` inside the caller's transaction.

    Raises:
        ArchiveError: If the database holds another schema version (changed since this process checked it).
    """
    row = connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone()
    if row is None or row[0] != str(SCHEMA_VERSION):
        raise ArchiveError(_other_version(None if row is None else row[0]))
    next_index, evicted, forgotten = counters or (0, 0, 0)
    connection.execute(
        "INSERT INTO ssm_users (user_id, next_index, evicted_count, forgotten_count) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT DO NOTHING",
        (user_id, next_index, evicted, forgotten),
    )
    stored_model, dimension, live = connection.execute(
        "SELECT model_id, dimension, next_index - evicted_count - forgotten_count FROM ssm_users WHERE user_id = %s",
        (user_id,),
    ).fetchone()
    if stored_model is None and model_id is not None:
        stored_model = bind_model(connection, user_id, model_id)
    indexes = connection.execute(
        "SELECT c.relname FROM pg_class AS c JOIN pg_index AS i ON i.indexrelid = c.oid "
        "WHERE c.relname LIKE 'ssm_archive_hnsw_%' AND i.indisvalid"
    ).fetchall()
    (pending,) = connection.execute(
        "SELECT count(*) FROM (SELECT 1 FROM ssm_archive WHERE user_id = %s AND pending LIMIT 100000) AS p",
        (user_id,),
    ).fetchone()
    hnsw = frozenset(int(name.rsplit("_", 1)[1]) for (name,) in indexes if name.rsplit("_", 1)[1].isdigit())
    return PartitionInfo(stored_model, dimension, int(live), hnsw, int(pending))


def _other_version(version: str | None) -> str:
    """Why a database of schema ``version`` is refused."""
    if version is not None and version.isdigit() and int(version) > SCHEMA_VERSION:
        return (
            f"the database holds schema version {version}, newer than this library's {SCHEMA_VERSION}: "
            "upgrade strands-semantic-memory"
        )
    return (
        f"the database holds schema version {version!r}; this library reads version {SCHEMA_VERSION} only. "
        "Nothing was changed"
    )


def reference(user_id: str, model_id: str, dimension: int | None) -> dict[str, Any]:
    """The saved state of a PostgreSQL archive: a reference to its user (the database is the persistence)."""
    return {
        "format": STATE_FORMAT,
        "version": STATE_VERSION,
        "embedding": {"model_id": model_id, "dimension": dimension},
        "archive": {"kind": "pgvector", "user_id": user_id, "schema_version": SCHEMA_VERSION},
        "user_id": user_id,
    }


def check_reference(state: Any, user_id: str) -> None:
    """Validate a saved reference to ``user_id`` completely.

    Raises:
        StateError: If it is an in-process archive, references another user, or is malformed.
    """
    reference = state.get("archive") if isinstance(state, Mapping) else None
    if not isinstance(reference, Mapping) or reference.get("kind") != "pgvector":
        raise StateError(
            "this state holds an in-process archive; a PostgresArchive restores only states that reference its "
            "user (load it into an in-process SemanticMemory and archive its messages to migrate)"
        )
    if reference.get("user_id") != user_id:
        raise StateError(
            f"this state references user {reference.get('user_id')!r}, but the archive is user {user_id!r}'s"
        )
    version = reference.get("schema_version")
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise StateError(f"archive.schema_version must be {SCHEMA_VERSION}, got {version!r}")
