"""The key table: which archived record holds each key's current bytes, kept in step with the archive.

The archive is the truth; the table is what this process knows of it. Archive indices only grow (a PostgreSQL
writer allocates them under the user's row lock, so a later commit never gets a lower index), so every call
first reads the records above the highest index seen (``catch_up``): entries written through another storage on
the same memory, or by another process on the same PostgreSQL user, are seen at once. A key's newest record
holds its bytes. Records removed behind the table's back (the ``conversation_forget`` tool, another process) are
noticed when read (a read finds the record gone) and by ``keys``, which rebuilds the table from the archive, as a
file system is walked to list it.

A restore breaks the rule that indices only grow: ``memory.load_state(...)`` (directly, or a session restore on a
memory the storage shares) replaces the records behind the indices, and the restored archive may hold other keys
at the same indices and hand out lower ones. The table therefore remembers the memory's ``generation`` it was read
under and reads the whole archive again when it changed; every call holds restores off while it reads and acts
(``memory._restores_held()``), so a restore is atomic for every view (namespaced views share the table; another
storage on the memory has its own, read again the same way). Besides, every read and delete checks that the
record it acts on carries the requested key: an index that holds another key's record (an archive replaced
behind this process, e.g. a PostgreSQL user dropped and written again elsewhere) makes the table read the archive
again, and a record is never read or forgotten under another key's name.

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
from strands_semantic_memory.errors import SemanticMemoryError
from strands_semantic_memory.storage._entries import entry_bytes, entry_key

__all__ = ["KeyTable"]

logger = logging.getLogger(__name__)

_ATTEMPTS = 2
"""A call that finds an index holding another key's record reads the archive again and retries once; a second
mismatch (the archive replaced again meanwhile, by another process) fails the call rather than act on it."""


class _Replaced(Exception):
    """An index the table holds for a key names another record now: the table is stale."""


class KeyTable:
    """Key -> the archive indices of its records (ascending; the last holds the current bytes). Thread-safe."""

    def __init__(self, memory: SemanticMemory) -> None:
        """Create an empty table over ``memory``; it fills from the archive on first use."""
        self._memory = memory
        self._lock = threading.RLock()
        self._records: dict[str, list[int]] = {}
        self._by_ref: dict[str, set[str]] = {}  # a key's last segment -> keys ending in it (may list deleted keys)
        self._next = 0  # the lowest archive index not read yet
        self._generation: int | None = None  # the memory's generation the table was read under (None: not yet)

    # ------------------------------------------------------------------ reading the archive

    def _note(self, key: str, index: int) -> None:
        indices = self._records.get(key)
        if indices is None:
            indices = self._records[key] = []
            self._by_ref.setdefault(_last_segment(key), set()).add(key)
        if index not in indices:
            bisect.insort(indices, index)

    def _sync(self) -> None:
        """Bring the table up to date (restores held off): all of it after a restore or at first use, else the new."""
        if self._generation != self._memory.generation:
            self._rebuild()
        else:
            self._catch_up()

    def _catch_up(self) -> None:
        """Read the records archived since the last call (by anyone) into the table."""
        for index, message in self._memory.messages(self._next):
            self._next = max(self._next, index + 1)
            key = entry_key(message)
            if key is not None:
                self._note(key, index)

    def _rebuild(self) -> None:
        """Read the whole archive (restores held off): the table becomes what the archive holds now."""
        generation = self._memory.generation
        records: dict[str, list[int]] = {}
        following = 0
        for index, message in self._memory.messages():
            following = index + 1  # ascending; a restored archive may end below what the table had read
            key = entry_key(message)
            if key is not None:
                records.setdefault(key, []).append(index)
        by_ref: dict[str, set[str]] = {}
        for key in records:
            by_ref.setdefault(_last_segment(key), set()).add(key)
        self._records, self._by_ref, self._next, self._generation = records, by_ref, following, generation

    def _owned(self, key: str, indices: Iterable[int]) -> list[int]:
        """Those of ``indices`` whose record carries ``key`` (records gone meanwhile are skipped).

        Raises:
            _Replaced: If one of them holds another record.
        """
        owned = []
        for index in indices:
            try:
                message = self._memory.get(index)
            except KeyError:  # forgotten outside this table
                continue
            if entry_key(message) != key:
                raise _Replaced
            owned.append(index)
        return owned

    def _reread(self, key: str) -> None:
        logger.warning(
            "key=<%s> | an archive index of the key holds another record: the archive was replaced behind this "
            "storage; reading it again",
            key,
        )
        self._rebuild()

    # ------------------------------------------------------------------ the storage's calls

    def write(self, key: str, message: Message, session_id: str | None = None) -> int:
        """Archive ``message`` as the key's current record, then forget its older records; returns its index.

        Raises:
            SemanticMemoryError: If the archive fails (the key keeps its previous value).
        """
        with self._lock:
            started = self._memory.generation
            # outside the restore hold: it may embed
            (index,) = self._memory._archive_entries([message], session_id=session_id)
            with self._memory._restores_held():
                self._sync()
                if self._memory.generation != started:
                    # A restore ran during the write: the table now follows the restored archive, whatever of this
                    # write it kept; nothing is forgotten on the strength of what was read before it.
                    return index
                self._note(key, index)
                self._forget_older(key, index)
            return index

    def _forget_older(self, key: str, keep: int) -> None:
        """Forget the key's records other than ``keep``; on failure they stay listed, for the next write or delete."""
        for _ in range(_ATTEMPTS):
            older = [i for i in self._records.get(key, []) if i != keep]
            if not older:
                return
            try:
                owned = self._owned(key, older)
                if owned:
                    self._memory.forget(owned)
            except _Replaced:
                self._reread(key)
                if keep not in self._records.get(key, []):
                    return
                continue
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
            return

    def read(self, key: str) -> bytes | None:
        """The key's current bytes, or None.

        Raises:
            SemanticMemoryError: If the archive cannot be read, or was replaced again while it was read.
        """
        with self._lock, self._memory._restores_held():
            self._sync()
            for _ in range(_ATTEMPTS):
                indices = self._records.get(key)
                if not indices:
                    return None
                try:
                    message = self._memory.get(indices[-1])
                except KeyError:  # forgotten outside this table: the key is gone, and so must its older records be
                    try:
                        owned = self._owned(key, indices[:-1])
                    except _Replaced:
                        self._reread(key)
                        continue
                    if owned:
                        self._memory.forget(owned)  # may raise: the read fails, the table is unchanged; a retry redoes
                    del self._records[key]
                    logger.debug("key=<%s> | record forgotten outside the storage; the key reads as missing", key)
                    return None
                if entry_key(message) == key:
                    return entry_bytes(message)
                self._reread(key)
            raise SemanticMemoryError(f"the archive changed while the key '{key}' was read; try again")

    def delete(self, key: str) -> int:
        """Forget every record of the key; returns how many were forgotten (0 for a missing key).

        Raises:
            SemanticMemoryError: If the archive fails (the key keeps its value), or was replaced again meanwhile.
        """
        with self._lock, self._memory._restores_held():
            self._sync()
            for _ in range(_ATTEMPTS):
                indices = self._records.get(key)
                if not indices:
                    return 0
                try:
                    owned = self._owned(key, indices)
                except _Replaced:
                    self._reread(key)
                    continue
                forgotten = self._memory.forget(owned) if owned else []
                del self._records[key]
                return len(forgotten)
            raise SemanticMemoryError(f"the archive changed while the key '{key}' was deleted; try again")

    def indices_ending(self, prefix: str, refs: Iterable[str]) -> frozenset[int]:
        """Archive indices of every record of the keys under ``prefix`` whose last segment is one of ``refs``."""
        wanted = set(refs)
        if not wanted:
            return frozenset()
        with self._lock, self._memory._restores_held():
            self._sync()
            found: set[int] = set()
            for ref in wanted:
                for key in self._by_ref.get(ref, ()):
                    indices = self._records.get(key)
                    if indices and key.startswith(prefix):
                        found.update(indices)
            return frozenset(found)

    def keys(self, prefix: str) -> list[str]:
        """The keys that start with ``prefix``, ascending, as the archive holds them now (a full read)."""
        with self._lock, self._memory._restores_held():
            self._rebuild()
            return sorted(key for key in self._records if key.startswith(prefix))

    def newest(self, keys: Iterable[str], generation: int) -> dict[str, int] | None:
        """The index of the record holding each key's current bytes (keys without one are left out).

        Args:
            keys: The keys to look up.
            generation: The memory's ``generation`` when the caller read the records it checks against these
                indices.

        Returns:
            The indices, or None when a restore ran since ``generation`` (the caller's records are another
            archive's: it reads them again).
        """
        with self._lock, self._memory._restores_held():
            if self._memory.generation != generation:
                return None
            self._sync()
            return {key: indices[-1] for key in keys if (indices := self._records.get(key))}


def _last_segment(key: str) -> str:
    """The part of ``key`` after its last ``/`` (Strands' stash reference: ``<id>_<block index>``)."""
    return key.rsplit("/", 1)[-1]
