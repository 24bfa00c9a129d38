"""The key table: which archived record holds each key's current bytes, kept in step with the archive.

The archive is the truth; the table is what this process knows of it. Archive indices only grow (a PostgreSQL
writer allocates them under the namespace's row lock, so a later commit never gets a lower index), so every call
first reads the records above the highest index seen (``catch_up``): entries written through another storage on
the same memory, or by another process on the same PostgreSQL namespace, are seen at once. A key's newest record
holds its bytes. Records removed behind the table's back (the ``conversation_forget`` tool, another process) are
noticed when read (a read finds the record gone) and by ``keys``, which rebuilds the table from the archive, as a
file system is walked to list it.

Overwriting archives the new record first, then forgets the older ones: a failed archive leaves the old value in
place, and an older record that could not be forgotten stays listed under its key and is forgotten with the key's
next write or delete, so it never hides the newest value and is never left behind by a delete.

Every method blocks (the engine embeds and may talk to a database): callers run them in a worker thread.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections.abc import Iterable

from strands.types.content import Message

from strands_semantic_memory.engine import SemanticMemory
from strands_semantic_memory.storage._entries import entry_bytes, entry_key

__all__ = ["KeyTable"]

logger = logging.getLogger(__name__)


class KeyTable:
    """Key -> the archive indices of its records (ascending; the last holds the current bytes). Thread-safe."""

    def __init__(self, memory: SemanticMemory) -> None:
        """Create an empty table over ``memory``; it fills from the archive on first use."""
        self._memory = memory
        self._lock = threading.RLock()
        self._records: dict[str, list[int]] = {}
        self._next = 0  # the lowest archive index not read yet

    def _note(self, key: str, index: int) -> None:
        indices = self._records.setdefault(key, [])
        if index not in indices:
            bisect.insort(indices, index)

    def _catch_up(self) -> None:
        """Read the records archived since the last call (by anyone) into the table."""
        for index, message in self._memory.messages(self._next):
            self._next = max(self._next, index + 1)
            key = entry_key(message)
            if key is not None:
                self._note(key, index)

    def _rebuild(self) -> None:
        records: dict[str, list[int]] = {}
        for index, message in self._memory.messages():
            self._next = max(self._next, index + 1)
            key = entry_key(message)
            if key is not None:
                records.setdefault(key, []).append(index)
        self._records = records

    def _forget_older(self, key: str, keep: int) -> None:
        """Forget the key's records other than ``keep``; on failure they stay listed, for the next write or delete."""
        older = [i for i in self._records.get(key, []) if i != keep]
        if not older:
            return
        try:
            self._memory.forget(older)
        except Exception as error:
            logger.warning(
                "key=<%s>, records=<%d>, error=<%s> | older records of the key not forgotten yet; "
                "they are forgotten with its next write or delete",
                key,
                len(older),
                error,
            )
            return
        self._records[key] = [keep]

    def write(self, key: str, message: Message) -> int:
        """Archive ``message`` as the key's current record, then forget its older records; returns its index.

        Raises:
            SemanticMemoryError: If the archive fails (the key keeps its previous value).
        """
        with self._lock:
            self._catch_up()
            (index,) = self._memory._archive_entries([message])
            self._note(key, index)
            self._forget_older(key, index)
            return index

    def read(self, key: str) -> bytes | None:
        """The key's current bytes, or None.

        Raises:
            SemanticMemoryError: If the archive cannot be read.
        """
        with self._lock:
            self._catch_up()
            indices = self._records.get(key)
            if not indices:
                return None
            try:
                message = self._memory.get(indices[-1])
            except KeyError:  # forgotten outside this table: the key is gone, and so must its older records be
                self._memory.forget(indices)  # may raise: the read fails, the table is unchanged, a retry redoes it
                del self._records[key]
                logger.debug("key=<%s> | record forgotten outside the storage; the key reads as missing", key)
                return None
            return entry_bytes(message)

    def delete(self, key: str) -> int:
        """Forget every record of the key; returns how many were forgotten (0 for a missing key).

        Raises:
            SemanticMemoryError: If the archive fails (the key keeps its value).
        """
        with self._lock:
            self._catch_up()
            indices = self._records.get(key)
            if not indices:
                return 0
            forgotten = self._memory.forget(indices)
            del self._records[key]
            return len(forgotten)

    def keys(self, prefix: str) -> list[str]:
        """The keys that start with ``prefix``, ascending, as the archive holds them now (a full read)."""
        with self._lock:
            self._rebuild()
            return sorted(key for key in self._records if key.startswith(prefix))

    def newest(self, keys: Iterable[str]) -> dict[str, int]:
        """The index of the record holding each key's current bytes (keys without one are left out)."""
        with self._lock:
            self._catch_up()
            return {key: indices[-1] for key in keys if (indices := self._records.get(key))}
