"""The key table: which archived records hold each key, kept in step with the archive, which is the truth.

The table maps each full key to the archive indices of its records, ascending; the last holds the current bytes
(older ones exist only while a forget after an overwrite has not succeeded yet). Every call first brings it up to
date: when the memory's ``version`` moved by anyone else's change (a restore, a ``forget`` through the memory or its
tools, another storage on the memory) the whole archive is read again; otherwise only the records above the highest
index read (indices only grow), which also shows another process's writes to a shared file. A read checks that the
record it returns carries the key, and ``list`` that the records are live, so a record removed behind this process
is neither read under its key nor listed. Every method blocks; the storage calls them in a worker thread.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable

from strands_semantic_memory.archives import NewRecord, Scope
from strands_semantic_memory.engine._memory import SemanticMemory
from strands_semantic_memory.errors import ArchiveError
from strands_semantic_memory.storage._entries import entry_of

__all__ = ["KeyTable"]


class KeyTable:
    """Full key -> archive indices of its records (ascending). Thread-safe; shared by a storage's views."""

    def __init__(self, memory: SemanticMemory) -> None:
        """An empty table over ``memory``, filled from the archive on first use."""
        self._memory = memory
        self._lock = threading.RLock()
        self._records: dict[str, list[int]] = {}
        self._next = 0  # the lowest index not read yet
        self._version: int | None = None  # the memory's version the table is in step with (None: read it all)

    def _note(self, key: str, index: int) -> None:
        indices = self._records.setdefault(key, [])
        if index not in indices:
            bisect.insort(indices, index)

    def _sync(self) -> None:
        if self._version != self._memory.version:
            self._records, self._next, self._version = {}, 0, self._memory.version
        after = self._next - 1
        while batch := self._memory.archive.records(after, 1000):
            for record in batch:
                entry = entry_of(record)
                if entry is not None:
                    self._note(entry[0], record.index)
            after = batch[-1].index
        self._next = after + 1

    def _changed(self, before: int, changes: int) -> None:
        """Our own change moved the memory's version: the table stays in step unless someone else's did too."""
        if self._version == before and self._memory.version == before + changes:
            self._version = self._memory.version

    def write(self, key: str, record: NewRecord) -> int:
        """Archive ``record`` as the key's current one, then forget the older ones; its index."""
        with self._lock:
            self._sync()
            before = self._memory.version
            [index] = self._memory._add_records([record])
            if index is None:
                raise ArchiveError(f"the archive refused the record of '{key}'")
            older = list(self._records.get(key, ()))
            self._note(key, index)
            self._changed(before, 1)
            if older:
                before = self._memory.version
                forgotten = self._memory.forget(older)  # if this fails: with the key's next write or delete
                self._records[key] = [index]
                self._changed(before, 1 if forgotten else 0)
            return index

    def delete(self, key: str) -> int:
        """Forget every record of the key; how many were forgotten (0 for a missing key)."""
        with self._lock:
            self._sync()
            indices = self._records.get(key)
            if not indices:
                return 0
            before = self._memory.version
            forgotten = self._memory.forget(indices)
            del self._records[key]
            self._changed(before, 1 if forgotten else 0)
            return len(forgotten)

    def read(self, key: str) -> bytes | None:
        """The key's current bytes, checked against the record that holds them (None: no such key)."""
        with self._lock:
            for _ in range(2):
                self._sync()
                indices = self._records.get(key)
                if not indices:
                    return None
                found = self._memory.archive.get(indices[-1:])
                entry = entry_of(found[0]) if found else None
                if entry is not None and entry[0] == key:
                    return entry[1]
                self._version = None  # removed or replaced behind this process: read the archive again
            return None

    def keys(self, prefix: str) -> list[str]:
        """The live keys starting with ``prefix``, sorted."""
        with self._lock:
            self._sync()
            found = {key: indices[-1] for key, indices in self._records.items() if key.startswith(prefix)}
        live = self._memory.archive.eligible(found.values(), Scope())
        return sorted(key for key, index in found.items() if index in live)

    def current(self, keys: Iterable[str]) -> dict[str, int]:
        """The index of the record holding each key's current bytes (keys without one are left out)."""
        with self._lock:
            self._sync()
            return {key: indices[-1] for key in keys if (indices := self._records.get(key))}

    def ending(self, prefix: str, refs: set[str]) -> frozenset[int]:
        """Every record of the keys under ``prefix`` whose last segment is one of ``refs``."""
        if not refs:
            return frozenset()
        with self._lock:
            self._sync()
            return frozenset(
                index
                for key, indices in self._records.items()
                if key.startswith(prefix) and key.rsplit("/", 1)[-1] in refs
                for index in indices
            )
