"""Archive records as the engine makes them, and unit vectors, for tests that drive an archive directly."""

from __future__ import annotations

import uuid

import numpy as np

from strands_semantic_memory.archives import NewRecord
from strands_semantic_memory.messages._codec import encode_message, record_key, searchable_text
from strands_semantic_memory.messages._text import render_message

DIM = 8


def record(text, *, role="user", session=None, said_at=None, at=1000.0, key=None):
    """A record as the engine makes it (bytes, rendered searchable text, idempotency key of a tracked message)."""
    message = {"role": role, "content": [{"text": text}]}
    data = encode_message(message)
    text = searchable_text(render_message(message))
    return NewRecord(data, role, key or record_key(data, "tracked"), text, at, said_at, session)


def copy_of(rec):
    """The same message bytes under another key (a copy without a tracking id, from a live context)."""
    return NewRecord(rec.data, rec.role, "u:" + uuid.uuid4().hex, rec.text, rec.archived_at)


def unit(rows, dimension=DIM):
    """Rows scaled to unit length, as ``(n, dimension)`` float32."""
    rows = np.asarray(rows, dtype=np.float32).reshape(-1, dimension)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)
