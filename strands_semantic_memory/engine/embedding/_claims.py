"""The embedding queue's bookkeeping: who may call the archive, and which pending messages are in hand.

- ``ArchiveAccess`` holds the archive and its archive lock, given once. Every archive call of the queue is made in
  ``use()``, which ``bar`` closes to one thread (the background thread, at ``close``): ``bar`` waits for a call in
  progress, never for an embedding, and no call of that thread starts after it.
- ``Claims`` knows which pending messages a run (or a search) has in hand, so that no two runs embed the same
  message and no run embeds one a search is embedding; the generation a restore bumps, so vectors computed for
  the replaced archive are dropped; the vectors a search computed for pending messages, which the next run stores
  instead of embedding them again; and the newest messages this memory archived, so that a search embeds the
  newest pending ones first.

Both share the queue lock. Lock order: the archive lock first, then the queue lock, everywhere.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from strands_semantic_memory.archives._protocol import Archive
from strands_semantic_memory.embeddings._base import Vectors

READY_LIMIT = 256
"""Vectors computed by searches and not stored yet, kept at most (the lowest indices are dropped first)."""


class Detached(Exception):
    """Raised in a barred thread at an archive call (``close`` detached the background thread from the archive)."""


class ArchiveAccess:
    """The archive and its archive lock, and which threads may no longer call it."""

    def __init__(self, archive: Archive, archive_lock: AbstractContextManager[Any], lock: threading.RLock) -> None:
        """Create the access.

        Args:
            archive: The archive.
            archive_lock: The engine's archive lock (held around archive calls only, never while embedding).
            lock: The queue lock.
        """
        self.archive = archive
        self._archive_lock = archive_lock
        self._calls = threading.Condition(lock)
        self._inside: set[threading.Thread] = set()
        self._barred: weakref.WeakSet[threading.Thread] = weakref.WeakSet()

    @contextmanager
    def use(self) -> Iterator[Archive]:
        """The archive, under the archive lock (taken first, so a caller of ``bar`` holding it is never waited for).

        Raises:
            Detached: In a thread ``bar`` closed the archive to.
        """
        with self._archive_lock:
            me = threading.current_thread()
            with self._calls:
                if me in self._barred:
                    raise Detached
                self._inside.add(me)
            try:
                yield self.archive
            finally:
                with self._calls:
                    self._inside.discard(me)
                    self._calls.notify_all()

    def bar(self, thread: threading.Thread) -> None:
        """Close the archive to ``thread``: wait for its call in progress, if any; it starts none after this."""
        with self._calls:
            self._barred.add(thread)
            while thread in self._inside:
                self._calls.wait()


@dataclass(frozen=True)
class Claim:
    """Pending messages one run has in hand.

    Attributes:
        generation: The archive generation they were claimed in.
        texts: Index -> searchable text, oldest first.
        ready: Vectors a search already computed for some of them (stored without embedding them again).
        complete: Every claimable pending message was claimed (fewer than the limit were pending).
    """

    generation: int
    texts: dict[int, str]
    ready: dict[int, Vectors]
    complete: bool


@dataclass(frozen=True)
class Selection:
    """The newest pending messages one search scores by meaning.

    Attributes:
        generation: The archive generation they were read in.
        ready: Vectors already computed for some of them (by an earlier search).
        texts: Index -> text of the others, to embed now.
        mine: Those of ``texts`` this search claimed (no run claims them while it embeds them).
        beyond: Pending messages left out by the bound.
        skipped: Rejected messages left out (see ``RetryPolicy.skipped``).
    """

    generation: int
    ready: dict[int, Vectors]
    texts: dict[int, str]
    mine: frozenset[int]
    beyond: int = 0
    skipped: frozenset[int] = field(default_factory=frozenset)


class Claims:
    """Which pending messages are in hand, for which archive generation (see the module). Thread-safe."""

    def __init__(self, access: ArchiveAccess, lock: threading.RLock, recent_limit: int) -> None:
        """Create the bookkeeping.

        Args:
            access: The archive, through which every call is made.
            lock: The queue lock.
            recent_limit: How many of the newest archived messages to remember (the bound of a search).
        """
        self._access = access
        self._lock = lock
        self._settled = threading.Condition(lock)
        self._in_flight: set[int] = set()
        self._generation = 0
        self._ready: dict[int, Vectors] = {}
        self._recent: dict[int, str] = {}
        self._recent_limit = recent_limit

    @property
    def generation(self) -> int:
        """The archive generation (a restore starts the next)."""
        return self._generation

    @property
    def in_flight(self) -> int:
        """How many messages runs and searches have in hand."""
        return len(self._in_flight)

    def claim(self, limit: int, skip: Collection[int]) -> Claim | None:
        """Claim up to ``limit`` pending messages, oldest first, that nobody has in hand and ``skip`` leaves out.

        Raises:
            Detached: In a thread the archive was closed to.
        """
        with self._access.use() as archive, self._lock:
            listed = archive.pending(exclude=self._in_flight | set(skip), limit=limit)
            if not listed:  # vectors kept for messages nobody can claim now are for messages no longer pending
                self._ready = {i: v for i, v in self._ready.items() if i in self._in_flight}
                return None
            texts = dict(listed)
            self._in_flight.update(texts)
            ready = {i: self._ready[i] for i in texts if i in self._ready}
            return Claim(self._generation, texts, ready, len(listed) < limit)

    def store(self, claim: Claim, vectors: Mapping[int, Vectors]) -> int | None:
        """Store a claim's vectors, unless a restore replaced the archive since it was claimed.

        Returns:
            How many messages were updated, or None when the claim is stale (the vectors are dropped).

        Raises:
            Detached: In a thread the archive was closed to.
        """
        with self._access.use() as archive:
            with self._lock:
                if claim.generation != self._generation:
                    return None
            updated = archive.set_vectors(vectors) if vectors else 0
        with self._lock:
            if claim.generation == self._generation:
                for index in vectors:
                    self._ready.pop(index, None)
                    self._recent.pop(index, None)
        return updated

    def release(self, claim: Claim) -> None:
        """The claim's messages are no longer in hand (stored, or left pending)."""
        with self._lock:
            if claim.generation == self._generation:
                self._in_flight.difference_update(claim.texts)
            self._settled.notify_all()

    def wait_settled(self) -> bool:
        """Wait until nothing is in hand; returns whether there was something to wait for."""
        with self._lock:
            waited = bool(self._in_flight)
            while self._in_flight:
                self._settled.wait()
        return waited

    def has_pending(self) -> bool:
        """Whether the archive holds pending messages (one cheap archive call)."""
        with self._access.use() as archive:
            return archive.has_pending()

    def archived(self, texts: Mapping[int, str]) -> None:
        """Remember newly archived messages (index -> text, pending until stored), keeping the newest."""
        with self._lock:
            self._recent.update(texts)
            while len(self._recent) > self._recent_limit:
                del self._recent[min(self._recent)]

    def select(self, limit: int, skip: Collection[int]) -> Selection | None:
        """The newest ``limit`` pending messages a search scores (None when none is pending); claims the unclaimed.

        The archive lists pending messages oldest first: when more than ``limit`` are pending, the newest this
        memory archived are taken first, and how many are left out is counted (``beyond``).
        """
        with self._access.use() as archive:
            if not archive.has_pending():
                return None
            listed = dict(archive.pending(exclude=set(skip), limit=limit + 1))
            beyond = 0
            if len(listed) > limit:
                with self._lock:
                    pool = {**listed, **{i: t for i, t in self._recent.items() if i not in skip}}
                listed = {i: pool[i] for i in sorted(pool, reverse=True)[:limit]}
                beyond = max(0, archive.stats().pending_count - len(listed) - len(skip))
        if not listed:
            return None
        with self._lock:
            ready = {i: self._ready[i] for i in listed if i in self._ready}
            texts = {i: t for i, t in listed.items() if i not in ready}
            mine = frozenset(i for i in texts if i not in self._in_flight)
            self._in_flight.update(mine)
            return Selection(self._generation, ready, texts, mine, beyond, frozenset(skip))

    def hand_over(self, selection: Selection, vectors: Mapping[int, Vectors]) -> bool:
        """Keep a search's vectors for the runs to store, and release its claims (in one step).

        Returns:
            Whether a run now has vectors to store for messages nobody has in hand.
        """
        with self._lock:
            current = selection.generation == self._generation
            if current:
                self._ready.update(vectors)
                while len(self._ready) > READY_LIMIT:
                    del self._ready[min(self._ready)]
                self._in_flight.difference_update(selection.mine)
            self._settled.notify_all()
            return current and any(i in selection.mine for i in vectors)

    def removed(self, indices: Collection[int]) -> None:
        """Forget what belonged to removed messages."""
        with self._lock:
            for index in indices:
                self._ready.pop(index, None)
                self._recent.pop(index, None)

    def reset(self) -> None:
        """The archive was replaced: start a new generation (vectors being computed now are dropped)."""
        with self._lock:
            self._generation += 1
            self._in_flight = set()
            self._ready.clear()
            self._recent.clear()
            self._settled.notify_all()
