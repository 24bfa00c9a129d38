"""The schema: created once and versioned, a schema-1 database migrated in place."""

import re
import time

import psycopg
import pytest
from pgvector.psycopg import register_vector

from strands_semantic_memory.archives._protocol import SearchFilter
from strands_semantic_memory.archives.postgres import SCHEMA_VERSION
from strands_semantic_memory.errors import ArchiveError
from strands_semantic_memory.messages._codec import encode_message
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION
from tests.support.conversations import PLANTED_TURN, text_message
from tests.support.postgres import make_record

V1_SCHEMA = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE ssm_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE ssm_namespaces (namespace text PRIMARY KEY, model_id text, dimension integer,
    next_index bigint NOT NULL DEFAULT 0, evicted_count bigint NOT NULL DEFAULT 0);
CREATE TABLE ssm_archive (namespace text NOT NULL, idx bigint NOT NULL, chunk integer NOT NULL, data text,
    role text, tracking_id text, body text, tsv tsvector, pending boolean NOT NULL DEFAULT false,
    nbytes bigint NOT NULL DEFAULT 0, lexical_terms integer NOT NULL DEFAULT 0, dimension integer, embedding vector,
    PRIMARY KEY (namespace, idx, chunk));
CREATE UNIQUE INDEX ssm_archive_tracking ON ssm_archive (namespace, tracking_id)
    WHERE tracking_id IS NOT NULL AND chunk = 0;
CREATE INDEX ssm_archive_pending ON ssm_archive (namespace, idx) WHERE pending;
CREATE INDEX ssm_archive_tsv ON ssm_archive USING gin (tsv);
CREATE INDEX ssm_archive_hnsw_384 ON ssm_archive USING hnsw ((embedding::vector(384)) vector_ip_ops)
    WHERE dimension = 384;
INSERT INTO ssm_meta VALUES ('schema_version', '1');
"""


def unstemmed_tsvector(text):
    """Terms as version 1 of the tokenizer wrote them (lowercase words, no stemming)."""
    return " ".join(f"'{word}':{n}" for n, word in enumerate(re.findall(r"\w+", text.lower()), 1))


def test_a_schema_1_database_is_migrated_in_place(make_archive, fresh_database, embedder):
    """Schema version 1 (text data, unique tracking ids, no times, unstemmed terms) gains bytea data, keys, times,
    counters, and terms of the current tokenizer."""
    messages = [text_message("user", PLANTED_TURN), text_message("assistant", "Noted."), text_message("user", "Bye")]
    for i, message in enumerate(messages[:2]):
        message["tracking_id"] = f"v1-{i}"
    vectors = embedder.embed_documents([m["content"][0]["text"] for m in messages])
    with psycopg.connect(fresh_database) as connection:
        connection.execute(V1_SCHEMA)
        register_vector(connection)
        connection.execute("INSERT INTO ssm_namespaces VALUES ('legacy', %s, 384, 3, 0)", (embedder.model_id,))
        for i, message in enumerate(messages):
            text = message["content"][0]["text"]
            connection.execute(
                "INSERT INTO ssm_archive (namespace, idx, chunk, data, role, tracking_id, body, tsv, nbytes, "
                "lexical_terms, dimension, embedding) VALUES ('legacy', %s, 0, %s, %s, %s, %s, %s::tsvector, 500, 3, "
                "384, %s)",
                (
                    i,
                    encode_message(message).decode(),
                    message["role"],
                    message.get("tracking_id"),
                    text,
                    unstemmed_tsvector(text),
                    vectors[i],
                ),
            )
        connection.execute(
            "INSERT INTO ssm_archive (namespace, idx, chunk, dimension, embedding) VALUES ('legacy', 0, 1, 384, %s)",
            (vectors[2],),
        )
    before = time.time()
    store = make_archive(fresh_database, namespace="legacy")
    store.bind(embedder.model_id)
    assert len(store) == 3
    got = store.get([0, 1, 2])
    assert [got[i].data for i in range(3)] == [encode_message(m) for m in messages]
    assert all(before - 1 <= got[i].archived_at <= time.time() + 1 and got[i].said_at is None for i in range(3))
    with psycopg.connect(fresh_database) as connection:
        assert dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall()) == {
            "schema_version": str(SCHEMA_VERSION),
            "tokenizer_version": str(TOKENIZER_VERSION),
        }
        assert connection.execute("SELECT to_regclass('ssm_archive_tracking')").fetchone() == (None,)
        assert connection.execute(
            "SELECT role FROM ssm_archive WHERE namespace = 'legacy' AND chunk = 1"
        ).fetchone() == ("user",), "chunk rows carry the role, for filters"
    assert store.add([make_record(PLANTED_TURN, tracking_id="v1-0")]) == [0], "a v1 message is recognised"
    assert store.add([make_record("A new text, an old id", tracking_id="v1-0")]) == [3], "same id, other message"
    query = embedder.embed_queries(["What was my booking reference?"])
    found = store.candidates(query, "booking reference", 3, 3, SearchFilter(roles=frozenset({"user"})))
    assert next(iter(found.dense)) == 0 and next(iter(found.lexical)) == 0
    assert store.stats().forgotten_count == 0 and store.forget([1]) == [1]


def test_schema_is_created_once_and_versioned(make_archive, fresh_database):
    first = make_archive(fresh_database)
    second = make_archive(fresh_database)
    assert len(first) == 0 and len(second) == 0
    with psycopg.connect(fresh_database) as connection:
        assert connection.execute("SELECT value FROM ssm_meta WHERE key = 'schema_version'").fetchone() == (
            str(SCHEMA_VERSION),
        )
        (storage,) = connection.execute(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'ssm_archive'::regclass AND attname = 'embedding'"
        ).fetchone()
        assert storage == "m", "vectors stay in the row: exact scans read no TOAST"
        connection.execute("UPDATE ssm_meta SET value = '99'")
    with pytest.raises(ArchiveError, match="newer than this library"):
        len(make_archive(fresh_database))
