"""Saving and restoring the in-process archive, in bulk.

Restoring builds the record table, the lexical index and the vector store from ``Columns`` with a few array
operations per part: the records' terms go to ``add_terms`` at
once and the vectors to FAISS in one call. A JSON state holds messages only, so its restore tokenizes each message
(``columns_of_saved``, decoding each message once); the SQLite archive stores each message's terms and skips
that (``_loading``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.archives._state import SavedArchive, SavedRecord
from strands_semantic_memory.archives.in_process._records import RecordTable, TextOf, default_text_of
from strands_semantic_memory.archives.in_process._types import Ids
from strands_semantic_memory.archives.in_process.bm25._index import LexicalIndex
from strands_semantic_memory.archives.in_process.faiss._approximate import Trained
from strands_semantic_memory.archives.in_process.faiss._store import FaissIndex
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import StateError
from strands_semantic_memory.messages._codec import CHUNK_BITS, decode_message, key_number, record_key, searchable_text
from strands_semantic_memory.messages._terms import count_terms
from strands_semantic_memory.messages._text import render_message


@dataclass
class Columns:
    """An archive's live records as columns, oldest first, ready to load in bulk.

    Attributes:
        next_index: The index the next record gets.
        evicted_count: Records evicted so far.
        forgotten_count: Records forgotten so far.
        dimension: Vector length, if known.
        indices: Archive indices, ascending.
        data: Each message's bytes.
        roles: Each message's role.
        keys: Each message's compact idempotency key (None: none).
        archived_at: When each was archived.
        said_at: When each was said, if known.
        session_ids: The session each was said in, if known.
        has_text: Whether each has text to embed.
        pending: Whether each waits for its vectors.
        vector_counts: Each message's number of vectors, as claimed by the saved archive.
        lengths: Each message's length in terms.
        sizes: Each message's number of distinct terms.
        terms: Every message's distinct terms, concatenated in order.
        counts: The count of each of ``terms`` in its message.
        vector_ids: Ids of the stored vectors (see ``vector_id``).
        vectors: One unit vector per id.
        trained: A stored training of the approximate vector index for these vectors (the durable archive's),
            used by ``load`` if it fits; None: train as needed.
    """

    next_index: int
    evicted_count: int
    forgotten_count: int
    dimension: int | None
    indices: npt.NDArray[np.int64]
    data: list[bytes] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    keys: list[int | None] = field(default_factory=list)
    archived_at: list[float] = field(default_factory=list)
    said_at: list[float | None] = field(default_factory=list)
    session_ids: list[str | None] = field(default_factory=list)
    has_text: list[bool] = field(default_factory=list)
    pending: list[bool] = field(default_factory=list)
    vector_counts: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lengths: npt.NDArray[np.uint32] = field(default_factory=lambda: np.zeros(0, dtype=np.uint32))
    sizes: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    terms: Sequence[str] = ()
    counts: npt.NDArray[np.uint32] = field(default_factory=lambda: np.zeros(0, dtype=np.uint32))
    vector_ids: Ids = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    vectors: Vectors = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    trained: Trained | None = None


def to_saved(
    table: RecordTable,
    model_id: str,
    dimension: int | None,
    ids: Ids | None,
    vectors: Vectors | None,
    user_id: str | None = None,
) -> SavedArchive:
    """The archive as a ``SavedArchive`` (vectors included)."""
    records = []
    for index in table.live_indices():
        stored = table.stored(index)
        records.append(
            SavedRecord(
                index=index,
                data=stored.data,
                vectors=table.vector_counts[index - table.base],
                pending=index in table.pending,
                archived_at=stored.archived_at,
                said_at=stored.said_at,
                session_id=stored.session_id,
            )
        )
    return SavedArchive(
        model_id=model_id,
        dimension=dimension,
        next_index=table.next_index,
        evicted_count=table.evicted_count,
        forgotten_count=table.forgotten_count,
        records=records,
        vector_ids=ids if ids is not None else np.zeros(0, dtype=np.int64),
        vectors=vectors if vectors is not None else np.zeros((0, 0), dtype=np.float32),
        user_id=user_id,
    )


def columns_of_saved(saved: SavedArchive, reembed: bool, text_of: TextOf = default_text_of) -> Columns:
    """The columns of a decoded archive: each message decoded once, its text tokenized.

    Args:
        saved: The archive.
        reembed: Drop every vector and mark every message with text pending (another embedding model).
        text_of: The searchable text of a message's bytes.

    Raises:
        StateError: If a message cannot be decoded.
    """
    columns = Columns(
        next_index=saved.next_index,
        evicted_count=saved.evicted_count,
        forgotten_count=saved.forgotten_count,
        dimension=saved.dimension,
        indices=np.fromiter((r.index for r in saved.records), dtype=np.int64, count=len(saved.records)),
        vector_counts=np.fromiter((r.vectors for r in saved.records), dtype=np.int64, count=len(saved.records)),
        vector_ids=saved.vector_ids,
        vectors=saved.vectors,
    )
    lengths: list[int] = []
    sizes: list[int] = []
    terms: list[str] = []
    counts: list[int] = []
    for raw in saved.records:
        try:
            message = decode_message(raw.data)
        except RecursionError as error:
            raise StateError(f"saved state record {raw.index} is nested too deeply") from error
        text = searchable_text(render_message(message)) if text_of is default_text_of else text_of(raw.data)
        tracking_id = message.get("tracking_id") or None
        columns.data.append(raw.data)
        columns.roles.append(str(message.get("role")))
        columns.keys.append(key_number(record_key(tracking_id, raw.data)) if tracking_id else None)
        columns.archived_at.append(raw.archived_at)
        columns.said_at.append(raw.said_at)
        columns.session_ids.append(raw.session_id)
        columns.has_text.append(bool(text.strip()))
        columns.pending.append(raw.pending)
        counted, length = count_terms(text)
        lengths.append(length)
        sizes.append(len(counted))
        terms.extend(counted)
        counts.extend(counted.values())
    columns.lengths = np.array(lengths, dtype=np.uint32)
    columns.sizes = np.array(sizes, dtype=np.int64)
    columns.terms = terms
    columns.counts = np.array(counts, dtype=np.uint32)
    check_vectors(columns)
    if reembed:
        columns.pending = columns.has_text
        columns.vector_counts = np.zeros(len(columns.indices), dtype=np.int64)
        columns.vector_ids = np.zeros(0, dtype=np.int64)
        columns.vectors = np.zeros((0, 0), dtype=np.float32)
    return columns


def check_vectors(columns: Columns) -> None:
    """Check the records' order and that the stored vectors are exactly those the records claim.

    Raises:
        StateError: If they are not.
    """
    indices, ids = columns.indices, columns.vector_ids
    if len(indices) and (np.any(np.diff(indices) <= 0) or indices[0] < 0 or indices[-1] >= columns.next_index):
        raise StateError("saved state records are not in ascending archive order below next_index")
    if len(ids) and np.all(ids[1:] > ids[:-1]):  # ascending (as stores keep them): unique, owners grouped
        starts = np.flatnonzero(np.diff(ids >> CHUNK_BITS)) + 1
        owners = (ids >> CHUNK_BITS)[np.concatenate(([0], starts))]
        stored = np.diff(np.concatenate(([0], starts, [len(ids)])))
    elif len(np.unique(ids)) != len(ids):
        raise StateError("saved state has duplicate vector ids")
    else:
        owners, stored = np.unique(ids >> CHUNK_BITS, return_counts=True) if len(ids) else (ids, ids)
    at = np.minimum(np.searchsorted(indices, owners), max(len(indices) - 1, 0))
    if len(owners) and (not len(indices) or np.any(indices[at] != owners)):
        raise StateError("saved state has vectors for messages that are not in it")
    expected = np.zeros(len(indices), dtype=np.int64)
    expected[at] = stored
    wrong = np.flatnonzero(expected != columns.vector_counts)
    if len(wrong):
        first = int(wrong[0])
        raise StateError(
            f"saved state record {int(indices[first])} claims {int(columns.vector_counts[first])} vectors but "
            f"{int(expected[first])} are stored"
        )


def fill(columns: Columns) -> tuple[RecordTable, LexicalIndex, FaissIndex | None]:
    """The record table, lexical index and vector store of the columns (validated first).

    Raises:
        StateError: If the columns are inconsistent.
    """
    check_vectors(columns)
    table = RecordTable()
    table.load(
        columns.next_index,
        columns.indices,
        columns.data,
        columns.roles,
        columns.keys,
        columns.archived_at,
        columns.said_at,
        columns.session_ids,
        columns.vector_counts,
        columns.sizes,
    )
    table.evicted_count = columns.evicted_count
    table.forgotten_count = columns.forgotten_count
    table.pending = {i for i, waiting in zip(columns.indices.tolist(), columns.pending, strict=True) if waiting}
    lexical = LexicalIndex()
    lexical.add_terms(
        columns.indices, columns.lengths, columns.sizes, columns.terms, columns.counts, columns.next_index
    )
    vectors = None
    if columns.dimension is not None and len(columns.vector_ids):
        vectors = FaissIndex(columns.dimension)
        vectors.load(columns.vector_ids, columns.vectors, columns.trained)  # saved as stored: already unit length
    return table, lexical, vectors
