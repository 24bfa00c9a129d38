"""Writing the archive file: the rows of new messages (with their terms), vectors, removals, a whole archive.

Every function runs inside the caller's transaction and writes only the rows it is given.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.archives._protocol import ArchiveStats, NewRecord
from strands_semantic_memory.archives._state import SavedArchive
from strands_semantic_memory.archives.in_process._records import TextOf
from strands_semantic_memory.archives.in_process.faiss._approximate import ApproximateIndex
from strands_semantic_memory.archives.sqlite._schema import set_meta
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import DimensionMismatchError
from strands_semantic_memory.messages._codec import CHUNK_BITS, decode_message, record_key
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION, count_terms

INSERT_MESSAGE = (
    "INSERT INTO ssm_messages (idx, data, role, archived_at, said_at, session_id, key, has_text, terms, term_counts, "
    "tokenizer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_VECTORS = "INSERT INTO ssm_vectors (idx, count, data) VALUES (?, ?, ?)"
INSERT_LISTS = "INSERT INTO ssm_lists (idx, lists) VALUES (?, ?)"
CENTROIDS = "ivf_centroids"
"""The ``ssm_meta`` key of the approximate index's stored training (see ``_schema``)."""


def counters(stats: ArchiveStats) -> dict[str, int]:
    """The ``ssm_meta`` counters of an archive with these stats."""
    return {
        "next_index": stats.archived_total,
        "evicted_count": stats.evicted_count,
        "forgotten_count": stats.forgotten_count,
    }


def delete_all_vectors(connection: sqlite3.Connection) -> None:
    """Delete every vector and the dimension (every message with text is pending again)."""
    connection.execute("DELETE FROM ssm_vectors")
    clear_training(connection)
    connection.execute("DELETE FROM ssm_meta WHERE key = 'dimension'")


def clear_training(connection: sqlite3.Connection) -> None:
    """Delete the approximate index's stored training (the vectors are in the exact tier, or gone)."""
    connection.execute("DELETE FROM ssm_lists")
    connection.execute(f"DELETE FROM ssm_meta WHERE key = '{CENTROIDS}'")  # noqa: S608


def list_rows(ids: npt.NDArray[np.int64], lists: npt.NDArray[np.int64]) -> list[tuple[int, bytes]]:
    """The ``ssm_lists`` rows of vector ids (ascending, each message's chunks together) and their lists."""
    if not len(ids):
        return []
    owners = ids >> CHUNK_BITS
    bounds = (np.flatnonzero(np.diff(owners)) + 1).tolist()
    codes = lists.astype("<i4")
    return [
        (int(owners[start]), codes[start:end].tobytes())
        for start, end in zip([0, *bounds], [*bounds, len(ids)], strict=True)
    ]


def store_training(
    connection: sqlite3.Connection, centroids: Vectors, ids: npt.NDArray[np.int64], lists: npt.NDArray[np.int64]
) -> None:
    """Replace the stored training with a new one: its centroids and every vector's list (a switch or retraining)."""
    clear_training(connection)
    set_meta(connection, {CENTROIDS: np.ascontiguousarray(centroids, dtype="<f4").tobytes()})
    connection.executemany(INSERT_LISTS, list_rows(ids, lists))


def encode_terms(counts: Mapping[str, int]) -> tuple[bytes, bytes]:
    """A message's distinct terms and their counts as stored (``terms``, ``term_counts`` columns).

    Terms never hold a space (they are word runs), so a space separates them; ``surrogatepass`` keeps any text.
    """
    terms = " ".join(counts).encode("utf-8", "surrogatepass")
    return terms, np.fromiter(counts.values(), dtype="<u4", count=len(counts)).tobytes()


def decode_terms(terms: bytes, term_counts: bytes) -> dict[str, int]:
    """Inverse of ``encode_terms``."""
    names = terms.decode("utf-8", "surrogatepass").split(" ") if terms else []
    return dict(zip(names, np.frombuffer(term_counts, dtype="<u4").tolist(), strict=True))


def message_row(
    index: int,
    data: bytes,
    role: str,
    times: tuple[float, float | None],
    session_id: str | None,
    key: str | None,
    has_text: bool,
    counted: Mapping[str, int],
) -> tuple[Any, ...]:
    """The ``ssm_messages`` row of one message (``times``: archived, said; ``key`` None: never matches again)."""
    terms, term_counts = encode_terms(counted)
    archived_at, said_at = times
    return (
        index,
        data,
        role,
        archived_at,
        said_at,
        session_id,
        key,
        int(has_text),
        terms,
        term_counts,
        TOKENIZER_VERSION,
    )


def new_message_rows(
    records: Sequence[NewRecord], counted: Sequence[tuple[Mapping[str, int], int]], indices: Sequence[int], first: int
) -> list[tuple[Any, ...]]:
    """The rows of the records that were archived (given index ``first`` or later; duplicates get none).

    Args:
        records: The records an ``add`` received.
        counted: Each one's ``count_terms``.
        indices: The index each one got.
        first: The first index this ``add`` handed out.
    """
    rows, seen = [], set()
    for new, terms, index in zip(records, counted, indices, strict=True):
        if index >= first and index not in seen:
            seen.add(index)
            key = None if new.key.startswith("u:") else new.key  # a fresh key never matches again
            has_text = bool(new.text.strip())
            times = (new.archived_at, new.said_at)
            rows.append(message_row(index, new.data, new.role, times, new.session_id, key, has_text, terms[0]))
    return rows


def checked_vectors(
    vectors: Mapping[int, Vectors], dimension: int | None
) -> tuple[dict[int, npt.NDArray[np.float32]], int | None]:
    """Each message's vectors as little-endian float32 rows, and the archive's dimension afterwards.

    Raises:
        ValueError: If a message's vectors are not a 2-d array.
        DimensionMismatchError: If their widths differ from each other or from ``dimension``.
    """
    arrays = {i: np.ascontiguousarray(v, dtype="<f4") for i, v in vectors.items()}
    for index, array in arrays.items():
        if array.ndim != 2:
            raise ValueError(f"vectors of message {index} must be a 2-d array, got shape {array.shape}")
        if len(array) and dimension is not None and array.shape[1] != dimension:
            raise DimensionMismatchError(dimension, int(array.shape[1]))
    widths = {int(a.shape[1]) for a in arrays.values() if len(a)}
    if len(widths) > 1:
        raise DimensionMismatchError(min(widths), max(widths))
    return arrays, dimension if dimension is not None else (widths.pop() if widths else None)


def insert_messages(
    connection: sqlite3.Connection, rows: Sequence[tuple[Any, ...]], counters: Mapping[str, Any]
) -> None:
    """Insert message rows (see ``message_row``) and update the counters."""
    if rows:
        connection.executemany(INSERT_MESSAGE, rows)
        set_meta(connection, counters)


def store_terms(connection: sqlite3.Connection, rows: Sequence[tuple[bytes, bytes, int]]) -> None:
    """Write re-tokenized terms: ``(terms, term_counts, idx)`` rows."""
    connection.executemany(
        f"UPDATE ssm_messages SET terms = ?, term_counts = ?, tokenizer = {TOKENIZER_VERSION} WHERE idx = ?",  # noqa: S608
        rows,
    )


def sync_training(
    connection: sqlite3.Connection, index: ApproximateIndex | None, stored: ApproximateIndex | None, added: list[int]
) -> ApproximateIndex | None:
    """Bring the file's training of the approximate index in step with the in-process one after a change.

    A new training (the switch to the approximate tier, or training again) is written whole, once; afterwards a
    change writes only the lists of the vectors it added (a turn: a row or two). Back in the exact tier, the
    training is deleted.

    Args:
        connection: Inside the change's transaction.
        index: The in-process approximate index now (None: exact tier or no vectors).
        stored: The index whose training the file holds (the last value this returned, or the one built at open).
        added: Ids of the vectors the change added.

    Returns:
        The index whose training the file now holds.
    """
    if index is not stored:
        if index is None:
            clear_training(connection)
        else:
            store_training(connection, index.centroids, *index.assignments())
    elif index is not None and added:
        ids = np.array(sorted(added), dtype=np.int64)
        connection.executemany(INSERT_LISTS, list_rows(ids, index.lists(ids)))
    return index


def delete_through(
    connection: sqlite3.Connection, newest: int, counters: Mapping[str, Any], kept: Sequence[int] = ()
) -> None:
    """Delete every message (and its vectors) up to ``newest`` but ``kept`` (eviction: the oldest go first)."""
    spare = ",".join(str(int(i)) for i in kept)
    where = f"idx <= ? AND idx NOT IN ({spare})" if spare else "idx <= ?"
    for table in ("ssm_vectors", "ssm_lists", "ssm_messages"):
        connection.execute(f"DELETE FROM {table} WHERE {where}", (newest,))  # noqa: S608
    set_meta(connection, counters)


def delete_messages(connection: sqlite3.Connection, indices: Sequence[int], counters: Mapping[str, Any]) -> None:
    """Delete these messages and their vectors."""
    connection.executemany("DELETE FROM ssm_vectors WHERE idx = ?", [(i,) for i in indices])
    connection.executemany("DELETE FROM ssm_lists WHERE idx = ?", [(i,) for i in indices])
    connection.executemany("DELETE FROM ssm_messages WHERE idx = ?", [(i,) for i in indices])
    set_meta(connection, counters)


def delete_all(connection: sqlite3.Connection, counters: Mapping[str, Any]) -> None:
    """Delete every message, vector and list, and the approximate index's training (``forget_all``)."""
    for table in ("ssm_vectors", "ssm_lists", "ssm_messages"):
        connection.execute(f"DELETE FROM {table}")  # noqa: S608
    clear_training(connection)
    set_meta(connection, counters)


def replace_all(connection: sqlite3.Connection, saved: SavedArchive, reembed: bool, text_of: TextOf) -> None:
    """Replace the file's content with a decoded (and already validated) archive."""
    messages = []
    for record in saved.records:
        message = decode_message(record.data)
        tracking_id = message.get("tracking_id") or None
        text = text_of(record.data)
        messages.append(
            message_row(
                record.index,
                record.data,
                str(message.get("role")),
                (record.archived_at, record.said_at),
                record.session_id,
                record_key(tracking_id, record.data) if tracking_id else None,
                bool(text.strip()),
                count_terms(text)[0],
            )
        )
    vector_rows = []
    if not reembed and len(saved.vector_ids):
        owners = saved.vector_ids >> CHUNK_BITS
        order = np.argsort(saved.vector_ids, kind="stable")
        matrix, owners = saved.vectors[order], owners[order]
        bounds = (np.flatnonzero(np.diff(owners)) + 1).tolist()
        for start, end in zip([0, *bounds], [*bounds, len(owners)], strict=True):
            vector_rows.append((int(owners[start]), end - start, matrix[start:end].astype("<f4").tobytes()))
    with_vectors = {row[0] for row in vector_rows}
    if not reembed:  # embedded messages whose text gave no vectors keep an empty row (not pending)
        vector_rows.extend((r.index, 0, b"") for r in saved.records if not r.pending and r.index not in with_vectors)
    connection.execute("DELETE FROM ssm_vectors")
    clear_training(connection)
    connection.execute("DELETE FROM ssm_messages")
    connection.executemany(INSERT_MESSAGE, messages)
    connection.executemany(INSERT_VECTORS, vector_rows)
    set_meta(
        connection,
        {
            "next_index": saved.next_index,
            "evicted_count": saved.evicted_count,
            "forgotten_count": saved.forgotten_count,
            "dimension": None if reembed else saved.dimension,
        },
    )
