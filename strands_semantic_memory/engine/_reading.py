"""Reading the archive back by index: one record, a range of records, the live indices.

The store protocol reads records by index (``get``)
and reports the live bounds; a range is therefore one ``bounds`` and one ``get`` call. Listing the live indices
reads the records in the bounds too: the protocol has no cheaper call (it costs one round trip on PostgreSQL, and
the records' bytes). The facade holds the lock around these functions.
"""

from __future__ import annotations

from strands.types.content import Message

from strands_semantic_memory.errors import MessageNotFoundError
from strands_semantic_memory.messages._codec import decode_message
from strands_semantic_memory.stores._protocol import ArchiveStore, StoredRecord

__all__ = ["decoded", "live_records", "read_record"]


def live_records(store: ArchiveStore, start: int | None = None, end: int | None = None) -> dict[int, StoredRecord]:
    """The live records with ``start <= index <= end`` (either end open when None)."""
    bounds = store.bounds()
    if bounds is None:
        return {}
    lo = bounds[0] if start is None else max(start, bounds[0])
    hi = bounds[1] if end is None else min(end, bounds[1])
    return store.get(list(range(lo, hi + 1)))


def read_record(store: ArchiveStore, index: int) -> StoredRecord:
    """The record at ``index``.

    Raises:
        MessageNotFoundError: If no message has that index (never archived, evicted or forgotten); a ``KeyError``.
    """
    found = store.get([index]).get(index)
    if found is None:
        raise MessageNotFoundError(index)
    return found


def decoded(records: dict[int, StoredRecord]) -> list[tuple[int, Message]]:
    """``(index, message)`` pairs, oldest first, each message a fresh copy."""
    return [(i, decode_message(r.data)) for i, r in sorted(records.items())]
