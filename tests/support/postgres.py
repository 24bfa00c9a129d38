"""Helpers for the PostgreSQL tests: records built the way the engine builds them, vectors, round-trip counting."""

import itertools
import tempfile
import time

from psycopg import pq

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives._protocol import NewRecord
from strands_semantic_memory.archives.postgres import PostgresArchive
from strands_semantic_memory.messages._codec import encode_message, record_key, searchable_text
from tests.support.archives import new_user_id
from tests.support.conversations import text_message

HOSTILE_TEXTS = {
    "nul": "before\x00after, a NUL in a tool result",
    "lone surrogate": "a lone \ud800 surrogate and a reversed pair \udc00\ud800",
    "long token": "token eyJ" + "A1b2C3d4" * 400 + " end",  # one 3,203-byte token: over the tsvector lexeme limit
    "5 MB": " ".join(f"word{i % 50_000} filler" for i in range(330_000)),  # over 5 MB of text
}


def make_record(
    text, *, role="user", tracking_id=None, said_at=None, archived_at=None, data=None, clean=True, session_id=None
):
    """A NewRecord as the engine builds it (``clean=False`` passes the raw text, as a careless engine would)."""
    message = text_message(role, text)
    if tracking_id is not None:
        message["tracking_id"] = tracking_id
    data = encode_message(message) if data is None else data
    return NewRecord(
        data=data,
        role=role,
        tracking_id=tracking_id,
        text=searchable_text(text) if clean else text,
        key=record_key(tracking_id, data),
        archived_at=time.time() if archived_at is None else archived_at,
        said_at=said_at,
        session_id=session_id,
    )


def embed(embedder, texts):
    return {i: vectors[None, :] for i, vectors in enumerate(embedder.embed_documents(texts))}


def pg_memory(pg_uri, embedder, user_id=None, **kwargs):
    return SemanticMemory(embedder=embedder, archive=PostgresArchive(pg_uri, user_id or new_user_id()), **kwargs)


class RoundTrips:
    """Counts client/server round trips on one connection from libpq's protocol trace (a send followed by a read)."""

    def __init__(self, connection):
        self.connection = connection
        self.file = tempfile.TemporaryFile("w+")

    def __enter__(self):
        self.connection.pgconn.trace(self.file.fileno())
        self.connection.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        return self

    def __exit__(self, *exc):
        self.connection.pgconn.untrace()
        self.file.flush()
        self.file.seek(0)
        directions = [line.split("\t", 1)[0] for line in self.file.read().splitlines() if line[:1] in "FB"]
        self.count = sum(1 for a, b in itertools.pairwise(directions) if a == "F" and b == "B")
        self.file.close()
