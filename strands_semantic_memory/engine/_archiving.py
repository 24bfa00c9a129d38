"""Archiving: one store call commits a batch of checked records, then what is due is embedded and limits enforced.

``archive_messages`` is ``SemanticMemory.archive()``, in order:
``new_records`` checks and encodes the messages before anything changes;
``commit`` hands them to the store's ``add`` in one call under the store lock (one transaction where the store
has them) and counts the messages that were not archived before, with
``AddedCounter``, without asking the store again; the embedding queue embeds
what is pending outside the lock (``_embedding_queue``; a failure leaves the messages
pending), and ``_removal`` enforces the size limits.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from strands.types.content import Message

from strands_semantic_memory.engine import _removal as removal
from strands_semantic_memory.engine._intake import AddedCounter, new_records
from strands_semantic_memory.stores._protocol import ArchiveStore, NewRecord

if TYPE_CHECKING:
    from strands_semantic_memory.engine._options import MemoryOptions
    from strands_semantic_memory.engine._wiring import MemoryParts
    from strands_semantic_memory.retrieval._recall import TimeBound

logger = logging.getLogger(__name__)

__all__ = ["archive_messages", "commit"]


def archive_messages(
    parts: MemoryParts, options: MemoryOptions, messages: Sequence[Message], timestamps: Sequence[TimeBound] | None
) -> list[int]:
    """Archive ``messages`` in one commit, embed what is due, enforce the limits (``SemanticMemory.archive``).

    Args:
        parts: The memory's running parts.
        options: The memory's options (the limits).
        messages: Strands message dicts, oldest first.
        timestamps: When each message was said, aligned with ``messages``; None: from their metadata.

    Returns:
        The archive index of each message, same order.

    Raises:
        InvalidMessageError, InvalidMessageTypeError, StoreError: Nothing is archived.
    """
    records = new_records(messages, timestamps)
    indices, added = parts.locked(commit, parts.added, records)
    parts.changed(added)
    # Committed: from here on nothing may raise, or a caller's retry would look like a lost archive.
    parts.embed_due()
    parts.removed(parts.locked(removal.enforce_limits, options))
    return indices


def commit(store: ArchiveStore, added: AddedCounter, records: Sequence[NewRecord]) -> tuple[list[int], int]:
    """Add ``records`` to ``store`` in one call.

    Args:
        store: The archive.
        added: The memory's counter of new messages (its horizon is read from the store only the first time).
        records: What ``new_records`` built.

    Returns:
        The archive index of each record (the existing one for a message archived before), and how many are new.
    """
    horizon = added.horizon(store)
    indices = store.add(records)
    count = added.count(indices, horizon)
    if count:
        logger.debug("archived=<%d> | messages archived", count)
    return indices, count
