"""The PostgreSQL schema: created once under an advisory lock, versioned, and the HNSW index of each dimension.

Schema 1::

    ssm_meta(key, value)                          format, schema, tokenizer, secret
    ssm_users(user_id, model_id, dimension)       the user's embedding model
    ssm_owners(owner, next_index)                 owner = HMAC(secret, user_id): indices are never handed out twice
    ssm_forgotten(owner, digest)                  keyed digests of forgotten messages (never their text)
    ssm_messages(user_id, idx, key, data, role, text, archived_at, said_at, session_id, embedded, nbytes, terms)
    ssm_vectors(user_id, idx, chunk, dimension, embedding)   one row per chunk, deleted with its message

Every user is a partition: each row of ``ssm_users``, ``ssm_messages`` and ``ssm_vectors`` names its user and every
statement names one. The two tables that outlive ``forget_all`` (the next index, the digests) are keyed by an HMAC
of the user id with the server's secret, so once a user is forgotten no row names it in clear. ``data`` is
``bytea`` (the engine's bytes, exactly); ``terms`` is a ``tsvector`` built from the library's own terms
(``messages._terms``), never by PostgreSQL's parser, which splits the compounds the terms keep whole (``bk-7731-qz``,
``user_id``). ``embedding`` is an untyped ``vector`` (users of different models share the table) stored ``MAIN``:
pgvector's default, ``EXTERNAL``, moved most 384-dimension vectors out of line and made an exact scan read seven
times the pages. The full-text index keeps a 64 kB pending list (PostgreSQL's default, 4 MB, made a search scan up
to 4 MB of unsorted entries: 46-73 ms against 18 ms at 100k messages).

A database of another schema or tokenizer is refused and left as it is (nothing was ever released to migrate from).
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any

import psycopg

from strands_semantic_memory.errors import ArchiveError
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION

__all__ = ["SCHEMA_VERSION", "build_hnsw", "hnsw_name", "prepare"]

logger = logging.getLogger(__name__)

FORMAT = "strands-semantic-memory/archive"
SCHEMA_VERSION = 1
BUILD_TIMEOUT = 3600
"""Seconds an HNSW build may run (in the background, on a connection of its own; searches stay exact meanwhile)."""

_DDL = """
CREATE TABLE ssm_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE ssm_users (user_id text PRIMARY KEY, model_id text, dimension integer, notes jsonb);
CREATE TABLE ssm_owners (owner bytea PRIMARY KEY, next_index bigint NOT NULL DEFAULT 0);
CREATE TABLE ssm_forgotten (owner bytea NOT NULL, digest bytea NOT NULL, PRIMARY KEY (owner, digest));
CREATE TABLE ssm_messages (
    user_id text NOT NULL, idx bigint NOT NULL, key text NOT NULL, data bytea NOT NULL, role text NOT NULL,
    text text NOT NULL, archived_at float8 NOT NULL, said_at float8, session_id text, embedded smallint NOT NULL,
    nbytes bigint NOT NULL, terms tsvector NOT NULL, PRIMARY KEY (user_id, idx), UNIQUE (user_id, key)
);
CREATE INDEX ssm_messages_pending ON ssm_messages (user_id, idx) WHERE embedded = 0;
CREATE INDEX ssm_messages_terms ON ssm_messages USING gin (terms) WITH (gin_pending_list_limit = 64);
CREATE TABLE ssm_vectors (
    user_id text NOT NULL, idx bigint NOT NULL, chunk integer NOT NULL, dimension integer NOT NULL,
    embedding vector NOT NULL, PRIMARY KEY (user_id, idx, chunk),
    FOREIGN KEY (user_id, idx) REFERENCES ssm_messages (user_id, idx) ON DELETE CASCADE
);
ALTER TABLE ssm_vectors ALTER COLUMN embedding SET STORAGE MAIN;
"""


def prepare(connection: psycopg.Connection[Any]) -> bytes:
    """Create the schema if the database has none, check its version, and return the server's secret.

    One transaction under an advisory lock, so processes opening a new database together create it once.

    Raises:
        ArchiveError: If the database holds something else, or another schema or tokenizer version.
    """
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(hashtext('strands_semantic_memory/schema'))")
        if connection.execute("SELECT to_regclass('ssm_meta')").fetchone() == (None,):
            connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
            connection.execute(_DDL, prepare=False)
            meta = {"format": FORMAT, "schema": SCHEMA_VERSION, "tokenizer": TOKENIZER_VERSION}
            rows = [(key, str(value)) for key, value in {**meta, "secret": secrets.token_hex(32)}.items()]
            connection.cursor().executemany("INSERT INTO ssm_meta VALUES (%s, %s)", rows)
            logger.info("schema=<%d> | created the PostgreSQL archive schema", SCHEMA_VERSION)
        found = dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall())
    if found.get("format") != FORMAT:
        raise ArchiveError(
            "the database has an ssm_meta table that is not a strands-semantic-memory archive's; left as it is"
        )
    if found.get("schema") != str(SCHEMA_VERSION) or found.get("tokenizer") != str(TOKENIZER_VERSION):
        raise ArchiveError(
            f"the database holds archive schema {found.get('schema')!r} (tokenizer {found.get('tokenizer')!r}); this "
            f"release reads schema {SCHEMA_VERSION} (tokenizer {TOKENIZER_VERSION}) only; left as it is"
        )
    return bytes.fromhex(found["secret"])


def hnsw_name(dimension: int) -> str:
    """The partial HNSW index of one dimension, on ``embedding::vector(dimension)`` (pgvector's documented pattern)."""
    return f"ssm_vectors_hnsw_{int(dimension)}"


def build_hnsw(connection: psycopg.Connection[Any], dimension: int) -> bool:
    """Build the dimension's HNSW index without blocking writers (``CREATE INDEX CONCURRENTLY``); True if it is valid.

    One process builds at a time (a session advisory lock; the others search exactly meanwhile). Built in one pass
    it is several times faster than grown row by row (2,000 384-dimension vectors: 2.3 s against 30 s), which is why
    it waits for a user to be large. An invalid index a dead builder left is dropped and built again.

    Args:
        connection: An autocommit connection of its own (a build may take minutes).
        dimension: The vectors' dimension.
    """
    name, dimension = hnsw_name(dimension), int(dimension)
    connection.execute("SELECT set_config('statement_timeout', %s, false)", (f"{BUILD_TIMEOUT}s",))
    if not connection.execute("SELECT pg_try_advisory_lock(hashtext('strands_semantic_memory/hnsw'))").fetchone()[0]:  # type: ignore[index]
        return False
    try:
        valid = connection.execute(
            "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = %s", (name,)
        ).fetchone()
        if valid is not None and valid[0]:
            return True
        if valid is not None:
            connection.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        started = time.monotonic()
        connection.execute(
            f"CREATE INDEX CONCURRENTLY {name} ON ssm_vectors USING hnsw ((embedding::vector({dimension})) "
            f"vector_ip_ops) WHERE dimension = {dimension}"
        )
        connection.execute("ANALYZE ssm_vectors")  # or the planner may still take the users for small
        logger.info("dimension=<%d>, seconds=<%.1f> | HNSW index built", dimension, time.monotonic() - started)
        return True
    finally:
        connection.execute("SELECT pg_advisory_unlock(hashtext('strands_semantic_memory/hnsw'))")
