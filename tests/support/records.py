"""Store records built as the engine builds them, and random unit vectors, for store-level tests."""

from __future__ import annotations

import time

import numpy as np

from strands_semantic_memory.archives._protocol import NewRecord
from strands_semantic_memory.archives.in_process._archive import default_text_of
from strands_semantic_memory.embeddings import normalize_rows
from strands_semantic_memory.messages._codec import encode_message, record_key

DIMENSION = 16


def message(text: str, role: str = "user", **extra: object) -> dict:
    return {"role": role, "content": [{"text": text}], **extra}


def record(msg: dict, *, tracking_id: str | None = None, said_at: float | None = None) -> NewRecord:
    """A record as the engine builds it (same encoding, text and key functions)."""
    data = encode_message(msg)  # type: ignore[arg-type]
    return NewRecord(
        data=data,
        role=str(msg["role"]),
        tracking_id=tracking_id,
        text=default_text_of(data),
        key=record_key(tracking_id, data),
        archived_at=time.time(),
        said_at=said_at,
    )


def unit_vectors(seed: int, count: int) -> np.ndarray:
    return normalize_rows(np.random.default_rng(seed).normal(size=(count, DIMENSION))).astype(np.float32)
