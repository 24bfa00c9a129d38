"""Saved archive state: versioned, JSON-only (no pickle), vectors stored compactly so restore never re-embeds.

Layout of version 1 (the only version: nothing released wrote another, so there is nothing to migrate)::

    {
      "format": "strands-semantic-memory/archive",
      "version": 1,
      "user_id": "alice",           # whose memory it is (null: a user not named)
      "embedding": {"model_id": "sentence-transformers/all-MiniLM-L6-v2", "dimension": 384},
      "next_index": 812,            # the index the next archived message gets
      "evicted_count": 12,          # messages evicted by the limits so far
      "forgotten_count": 1,         # messages deleted on request (their indices are simply absent)
      "records": [{"index": 12, "message": {...}, "vectors": 1, "pending": false,
                   "archived_at": 1763884800.0, "said_at": null, "session_id": "s-1"}, ...],
      "vectors": {"dtype": "<f4", "ids": "<base64 little-endian int64>", "data": "<base64 little-endian float32>"},
      "options": {"top_k": 3, ...}  # the engine's MemoryOptions, restored unless overridden
    }

Messages are stored as Strands stores them in sessions (bytes values base64-encoded). Every field is checked on
load; anything wrong raises ``StateError`` naming the field. The counters must account for every index
(``next_index = records + evicted_count + forgotten_count``), and the holes a restore fills between the first record
and ``next_index`` (forgotten messages) are bounded by what the state holds (``check_holes``), so a few bytes of
state cannot make a restore allocate millions of slots.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from strands_semantic_memory._validation import MAX_IDENTIFIER_CHARS, check_identifier
from strands_semantic_memory.errors import ConfigurationError, StateError
from strands_semantic_memory.messages._codec import MAX_CHUNKS, MAX_INDEX, encode_json

STATE_FORMAT = "strands-semantic-memory/archive"
STATE_VERSION = 1
"""The saved archive state's version (see the module docstring): written, and the only one read."""

MAX_HOLES = 1 << 20
"""Holes (forgotten indices) a restore fills in any case: about 60 MB of record and lexical slots at most."""
HOLES_PER_RECORD = 8
"""Beyond ``MAX_HOLES``, holes a restore fills per record the state holds (a slot costs less than a record)."""


def check_counters(next_index: int, held: int, evicted: int, forgotten: int) -> None:
    """Check that an archive's counters account for every index it handed out, and claim no more.

    Every index below ``next_index`` is held, evicted or forgotten, exactly once.

    Args:
        next_index: The index the next message would get.
        held: Messages the archive holds.
        evicted: Its ``evicted_count``.
        forgotten: Its ``forgotten_count``.

    Raises:
        StateError: If the counters disagree with what is held.
    """
    accounted = held + evicted + forgotten
    if next_index != accounted:
        raise StateError(
            f"the counters claim {next_index} archived messages (next_index) but account for {accounted}: "
            f"{held} held, {evicted} evicted, {forgotten} forgotten"
        )


def check_holes(next_index: int, first: int | None, held: int) -> None:
    """Check that the holes between the first held index and ``next_index`` are not out of proportion.

    A restore keeps a slot for every index from the first held one on (see ``RecordTable``), so the holes in that
    span are what it allocates beyond the records themselves.

    Raises:
        StateError: If the span holds more than ``max(MAX_HOLES, HOLES_PER_RECORD * held)`` holes.
    """
    holes = next_index - (next_index if first is None else first) - held
    allowed = max(MAX_HOLES, HOLES_PER_RECORD * held)
    if holes > allowed:
        raise StateError(
            f"saved state has {holes} holes (forgotten indices) between its first record and next_index "
            f"{next_index}, more than the {allowed} a restore of {held} records allows"
        )


@dataclass
class SavedRecord:
    """One record as saved: its index, message JSON, vector count, pending flag, times and session."""

    index: int
    data: bytes
    vectors: int
    pending: bool
    archived_at: float = 0.0
    said_at: float | None = None
    session_id: str | None = None


@dataclass
class SavedArchive:
    """A validated, decoded archive state."""

    model_id: str
    dimension: int | None
    next_index: int
    evicted_count: int
    records: list[SavedRecord] = field(default_factory=list)
    forgotten_count: int = 0
    user_id: str | None = None
    vector_ids: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    vectors: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))


def _b64(array: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def dump_state(archive: SavedArchive) -> dict[str, Any]:
    """Build the JSON-serializable state of an archive.

    Args:
        archive: What to save.

    Returns:
        A dict of JSON types only.
    """
    return {
        "format": STATE_FORMAT,
        "version": STATE_VERSION,
        "user_id": archive.user_id,
        "embedding": {"model_id": archive.model_id, "dimension": archive.dimension},
        "next_index": archive.next_index,
        "evicted_count": archive.evicted_count,
        "forgotten_count": archive.forgotten_count,
        "records": [
            {
                "index": r.index,
                "message": json.loads(r.data),
                "vectors": r.vectors,
                "pending": r.pending,
                "archived_at": r.archived_at,
                "said_at": r.said_at,
                "session_id": r.session_id,
            }
            for r in archive.records
        ],
        "vectors": {
            "dtype": "<f4",
            "ids": _b64(archive.vector_ids, "<i8"),
            "data": _b64(archive.vectors, "<f4"),
        },
    }


def _require(mapping: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in mapping:
        raise StateError(f"saved state is missing '{where}{key}'")
    value = mapping[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise StateError(f"saved state field '{where}{key}' has type {type(value).__name__}")
    return value


def _decode_array(text: Any, dtype: str, where: str) -> np.ndarray:
    if not isinstance(text, str):
        raise StateError(f"saved state field '{where}' is not a base64 string")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as error:
        raise StateError(f"saved state field '{where}' is not valid base64: {error}") from error
    width = np.dtype(dtype).itemsize
    if len(raw) % width:
        raise StateError(f"saved state field '{where}' has {len(raw)} bytes, not a multiple of {width}")
    array: np.ndarray = np.frombuffer(raw, dtype=dtype).copy()
    return array


def _time(raw: Mapping[str, Any], key: str, where: str, *, optional: bool) -> float | None:
    value = raw.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise StateError(f"saved state field '{where}{key}' is not a finite number: {value!r}")
    return float(value)


def _plain_record(raw: Any, previous: int, next_index: int) -> SavedRecord | None:
    """A valid record as JSON parsing gives it (plain dicts, float times), checked inline; None: see ``_record``.

    Restoring 10k records spent about as long in the general checks as in parsing the state; this path accepts
    only what they accept, and anything else (including every error) goes through them.
    """
    if type(raw) is not dict:
        return None
    index, message, vectors, pending = raw.get("index"), raw.get("message"), raw.get("vectors"), raw.get("pending")
    archived_at, said_at, session_id = raw.get("archived_at"), raw.get("said_at"), raw.get("session_id")
    if (
        type(index) is int
        and previous < index < next_index
        and type(vectors) is int
        and 0 <= vectors <= MAX_CHUNKS
        and type(pending) is bool
        and type(message) is dict
        and type(message.get("role")) is str
        and type(message.get("content")) is list
        and type(archived_at) is float
        and math.isfinite(archived_at)
        and (said_at is None or (type(said_at) is float and math.isfinite(said_at)))
        and (session_id is None or (type(session_id) is str and 0 < len(session_id) <= MAX_IDENTIFIER_CHARS))
        and (session_id is None or session_id.isprintable())
    ):
        return SavedRecord(index, encode_json(message), vectors, pending, archived_at, said_at, session_id)
    return None


def _record(raw: Any, position: int, previous: int, next_index: int) -> SavedRecord:
    """One record of the state, checked field by field.

    Raises:
        StateError: Naming the first invalid field.
    """
    where = f"records[{position}]."
    if not isinstance(raw, Mapping):
        raise StateError(f"saved state field 'records[{position}]' is not an object")
    index = _require(raw, "index", int, where)
    message = _require(raw, "message", Mapping, where)
    if not isinstance(message.get("role"), str) or not isinstance(message.get("content"), list):
        raise StateError(f"saved state field '{where}message' is not a Strands message (role, content)")
    vectors = _require(raw, "vectors", int, where)
    pending = _require(raw, "pending", bool, where)
    if index <= previous or index >= next_index or index < 0:
        raise StateError(f"saved state field '{where}index' ({index}) is out of order or out of range")
    if not 0 <= vectors <= MAX_CHUNKS:
        raise StateError(f"saved state field '{where}vectors' ({vectors}) is out of range 0..{MAX_CHUNKS}")
    archived_at = _time(raw, "archived_at", where, optional=False)
    assert archived_at is not None
    said_at = _time(raw, "said_at", where, optional=True)
    return SavedRecord(
        index=index,
        data=encode_json(message),
        vectors=vectors,
        pending=pending,
        archived_at=archived_at,
        said_at=said_at,
        session_id=_identifier(raw, "session_id", where),
    )


def _identifier(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    """A user or session id of the state (absent or null: None).

    Raises:
        StateError: If it is not an id (see ``check_identifier``).
    """
    try:
        return check_identifier(f"saved state field '{where}{key}'", raw.get(key))
    except ConfigurationError as error:
        raise StateError(str(error)) from None


def _refuse_reference(reference: Any) -> None:
    """A state that references a durable archive holds no messages: say which archive it names.

    Raises:
        StateError: If ``reference`` is such a reference.
    """
    if reference is None:
        return
    kind = reference.get("kind") if isinstance(reference, Mapping) else None
    if kind == "sqlite":
        where = f"the archive file {reference.get('path')!r}: build the memory with archive_path= that file"
    elif kind == "pgvector":
        where = f"PostgreSQL user {reference.get('user_id')!r}: build the memory with a PostgresArchive for that user"
    else:
        where = f"a {kind!r} archive"
    raise StateError(f"this state holds no messages, it references {where}; this archive is in process")


def load_state(state: Any) -> SavedArchive:
    """Validate and decode saved state (see ``_load_state``); deep nesting is a StateError too."""
    try:
        return _load_state(state)
    except RecursionError as error:
        raise StateError("saved state is nested too deeply to be an archive") from error


def _load_state(state: Any) -> SavedArchive:
    """Validate and decode saved state.

    Args:
        state: What ``dump_state`` produced (possibly after a JSON round trip).

    Returns:
        The decoded archive.

    Raises:
        StateError: If the state is not ours, of an unknown version, or inconsistent anywhere.
    """
    if not isinstance(state, Mapping):
        raise StateError(f"saved state must be a JSON object, got {type(state).__name__}")
    if state.get("format") != STATE_FORMAT:
        raise StateError(f"not a strands-semantic-memory archive (format={state.get('format')!r})")
    version = state.get("version")
    if version != STATE_VERSION or isinstance(version, bool):
        raise StateError(f"unsupported archive state version {version!r}; this release reads version {STATE_VERSION}")
    _refuse_reference(state.get("archive"))
    user_id = _identifier(state, "user_id", "")
    embedding = _require(state, "embedding", Mapping, "")
    model_id = _require(embedding, "model_id", str, "embedding.")
    dimension = embedding.get("dimension")
    if dimension is not None and (not isinstance(dimension, int) or isinstance(dimension, bool) or dimension <= 0):
        raise StateError(f"saved state field 'embedding.dimension' is invalid: {dimension!r}")
    next_index = _require(state, "next_index", int, "")
    evicted_count = _require(state, "evicted_count", int, "")
    forgotten_count = _require(state, "forgotten_count", int, "")
    if not 0 <= next_index <= MAX_INDEX + 1:
        raise StateError(f"saved state field 'next_index' ({next_index}) is out of range 0..{MAX_INDEX + 1}")
    if evicted_count < 0:
        raise StateError(f"saved state field 'evicted_count' is negative ({evicted_count})")
    if forgotten_count < 0:
        raise StateError(f"saved state field 'forgotten_count' is negative ({forgotten_count})")
    raw_records = _require(state, "records", list, "")
    check_counters(next_index, len(raw_records), evicted_count, forgotten_count)

    records: list[SavedRecord] = []
    previous = -1
    for position, raw in enumerate(raw_records):
        record = _plain_record(raw, previous, next_index) or _record(raw, position, previous, next_index)
        records.append(record)
        previous = record.index
    check_holes(next_index, records[0].index if records else None, len(records))

    vector_block = _require(state, "vectors", Mapping, "")
    if vector_block.get("dtype") != "<f4":
        raise StateError(f"saved state field 'vectors.dtype' must be '<f4', got {vector_block.get('dtype')!r}")
    ids = _decode_array(vector_block.get("ids"), "<i8", "vectors.ids").astype(np.int64, copy=False)
    flat = _decode_array(vector_block.get("data"), "<f4", "vectors.data").astype(np.float32, copy=False)
    if len(ids) and dimension is None:
        raise StateError("saved state has vectors but no 'embedding.dimension'")
    if dimension is not None:
        if len(flat) != len(ids) * dimension:
            raise StateError(
                f"saved state has {len(ids)} vector ids but {len(flat)} floats (expected {len(ids) * dimension})"
            )
        matrix = flat.reshape(len(ids), dimension)
    else:
        if len(flat):
            raise StateError("saved state has vector data but no 'embedding.dimension'")
        matrix = np.zeros((0, 0), dtype=np.float32)
    if not np.all(np.isfinite(matrix)):
        raise StateError("saved state holds non-finite vector values")
    return SavedArchive(
        model_id=model_id,
        dimension=dimension,
        next_index=next_index,
        evicted_count=evicted_count,
        records=records,
        forgotten_count=forgotten_count,
        vector_ids=ids,
        vectors=matrix,
        user_id=user_id,
    )


def check_user(saved_user: str | None, user_id: str | None, where: str) -> None:
    """Refuse a saved archive of another named user.

    Args:
        saved_user: The user the state was saved for.
        user_id: The user of the archive it would be restored into.
        where: The archive, for the message.

    Raises:
        StateError: If both are named and differ.
    """
    if saved_user is not None and user_id is not None and saved_user != user_id:
        raise StateError(
            f"this state was saved for user {saved_user!r}, but {where} is user {user_id!r}'s: a memory is one "
            "user's, and one user's messages are never restored into another's"
        )
