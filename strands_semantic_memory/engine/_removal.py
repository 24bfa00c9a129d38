"""Removal: eviction by the limits or on request, and forgetting for good.

Three ways a message leaves the archive, each one store call: the limits evict the oldest first after every
archive or restore, ``evict_oldest`` evicts on request, and
``forget`` deletes chosen messages (privacy). The facade holds
the lock around these functions and counts the change.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from strands_semantic_memory.engine._options import MemoryOptions
from strands_semantic_memory.errors import InvalidMessageError, InvalidMessageTypeError
from strands_semantic_memory.stores._protocol import ArchiveStore

logger = logging.getLogger(__name__)

__all__ = ["enforce_limits", "forget", "forget_request"]


def enforce_limits(store: ArchiveStore, options: MemoryOptions) -> list[int]:
    """Evict the oldest messages while ``max_num_archived_messages`` or ``max_memory_archived_messages`` is exceeded.

    The newest message is kept even when it alone exceeds the byte limit (a warning says so).

    Returns:
        The evicted indices, ascending.
    """
    limit = options.max_memory_archived_messages
    evicted = store.enforce_limits(options.max_num_archived_messages, limit)
    if limit is not None and store.stats().total_bytes > limit:
        logger.warning(
            "limit=<%d> | the newest archived message alone exceeds max_memory_archived_messages; it is kept", limit
        )
    if evicted:
        logger.info("evicted=<%d>, newest_evicted=<%d> | oldest archived messages evicted", len(evicted), evicted[-1])
    return evicted


def forget_request(indices: Iterable[int] | None, query: str | None) -> list[int]:
    """Check the arguments of ``forget`` before anything is read or deleted.

    Returns:
        The requested indices, as given.

    Raises:
        InvalidMessageTypeError: If an index is not an integer.
        InvalidMessageError: If ``query`` is given but empty or not a string.
    """
    targets = list(indices or [])
    if any(not isinstance(i, int) or isinstance(i, bool) for i in targets):
        raise InvalidMessageTypeError("forget() takes integer archive indices")
    if query is not None and (not isinstance(query, str) or not query.strip()):
        raise InvalidMessageError("forget(query=...) needs a non-empty string")
    return targets


def forget(store: ArchiveStore, targets: list[int], query: str | None) -> list[int]:
    """Delete ``targets`` and, with a ``query``, every message whose text contains it (case-insensitively).

    Exact substring matching, deliberately: deletion must be predictable, never "similar enough".

    Returns:
        The deleted indices, ascending (unknown ones are ignored).
    """
    if query is not None:
        targets = [*targets, *store.find_text(query)]
    removed = store.forget(sorted(set(targets))) if targets else []
    if removed:
        logger.info("forgotten=<%d> | archived messages deleted on request", len(removed))
    return removed
