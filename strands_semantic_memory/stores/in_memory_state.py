"""Saving and restoring the in-process archive.

A friend module of :mod:`.in_memory`: it reads and fills the archive's own tables, so the archive class keeps to
its one job.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..archive import ArchivedRecord, decode_message, key_number, record_key
from ..errors import StateError
from ..state import SavedArchive, SavedRecord
from .faiss_store import FaissVectorStore

if TYPE_CHECKING:
    from .in_memory import InMemoryArchive


def to_saved(archive: InMemoryArchive, model_id: str) -> SavedArchive:
    """The archive as a :class:`~strands_semantic_memory.state.SavedArchive` (vectors included)."""
    if archive._vectors is not None:
        ids, vectors = archive._vectors.export()
    else:
        ids, vectors = np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    records = []
    for i in range(archive._oldest, archive._next_index):
        record = archive._records[i - archive._base]
        if record is not None:
            stored = archive._stored(i, record)
            records.append(
                SavedRecord(
                    index=i,
                    data=record.data,
                    vectors=record.vector_count,
                    pending=record.pending,
                    archived_at=stored.archived_at,
                    said_at=stored.said_at,
                )
            )
    return SavedArchive(
        model_id=model_id,
        dimension=archive.dimension,
        next_index=archive._next_index,
        evicted_count=archive._evicted_count,
        forgotten_count=archive._forgotten_count,
        records=records,
        vector_ids=ids,
        vectors=vectors,
    )


def fill(archive: InMemoryArchive, saved: SavedArchive, reembed: bool) -> None:
    """Fill an empty archive from a decoded one, validating as it goes (the caller swaps it in only if this returns).

    Raises:
        StateError: If the archive is inconsistent.
    """
    ids = saved.vector_ids
    owners = ids >> 8 if len(ids) else ids
    if len(np.unique(ids)) != len(ids):
        raise StateError("saved state has duplicate vector ids")
    indices = [r.index for r in saved.records]
    counts = dict(zip(*np.unique(owners, return_counts=True), strict=True)) if len(ids) else {}
    if set(int(i) for i in counts) - set(indices):
        raise StateError("saved state has vectors for messages that are not in it")
    first = saved.records[0].index if saved.records else saved.next_index
    archive._base = archive._oldest = first
    archive._next_index = saved.next_index
    archive._evicted_count = saved.evicted_count
    archive._forgotten_count = saved.forgotten_count
    for raw in saved.records:
        stored_vectors = int(counts.get(raw.index, 0))
        if stored_vectors != raw.vectors:
            raise StateError(
                f"saved state record {raw.index} claims {raw.vectors} vectors but {stored_vectors} are stored"
            )
        while archive._base + len(archive._records) < raw.index:  # a forgotten index
            archive._records.append(None)
            archive._archived_at.append(0.0)
            archive._said_at.append(math.nan)
        try:
            message = decode_message(raw.data)
        except RecursionError as error:
            raise StateError(f"saved state record {raw.index} is nested too deeply") from error
        text = archive._text_of(raw.data)
        tracking_id = message.get("tracking_id") or None
        key = key_number(record_key(tracking_id, raw.data)) if tracking_id else None
        terms = archive._lexical.add(raw.index, text)
        has_text = bool(text.strip())
        record = ArchivedRecord(
            data=raw.data,
            role=str(message.get("role")),
            key=key,
            vector_count=0 if reembed else raw.vectors,
            pending=has_text if reembed else raw.pending,
            lexical_terms=terms,
        )
        archive._records.append(record)
        archive._archived_at.append(raw.archived_at)
        archive._said_at.append(math.nan if raw.said_at is None else raw.said_at)
        archive._live += 1
        if key is not None:
            archive._by_key[key] = raw.index
        if record.pending:
            archive._pending.add(raw.index)
        archive._message_bytes += len(raw.data)
        archive._vector_count += record.vector_count
    while archive._base + len(archive._records) < saved.next_index:  # the newest messages were forgotten
        archive._records.append(None)
        archive._archived_at.append(0.0)
        archive._said_at.append(math.nan)
    holes = [first + n for n, r in enumerate(archive._records) if r is None]
    if holes:
        archive._lexical.remove(holes)
    if not reembed and saved.dimension is not None and len(ids):
        archive._vectors = FaissVectorStore(saved.dimension)
        archive._vectors.add(ids, saved.vectors)  # saved as stored: already unit length
    archive._total_bytes = sum(archive._nbytes(r) for r in archive._records if r is not None)
