"""The archive protocol: the one seam between the engine and where archived messages live.

``SemanticMemory`` does the work that is the same everywhere (validating,
rendering, embedding, fusing rankings, building passages); an archive keeps the data and answers the
primitive questions. Implementations:

- ``InMemoryArchive`` (default): records in the process, vectors
  in FAISS, BM25 beside them; saved through ``to_state``.
- ``SqliteArchive``: the in-process indexes, made durable in one
  SQLite file (writes proportional to what changed).
- ``PostgresArchive``: PostgreSQL + pgvector, shared by
  processes; the database is the persistence.

Contract shared by all of them (checked by the shared test suite, parametrized by archive):

- an archive is one user's (``user_id``; None: unnamed), physically apart from every other user's: its own
  in-process objects, its own SQLite file, its own PostgreSQL partition;
- indices are handed out in archive order and never reused; eviction removes the oldest first; ``forget``
  removes any live index (so live indices may have holes); ``forget_all`` removes them all;
- removing a message (eviction or forgetting) removes its vectors and lexical entries with it;
- a record whose idempotency ``key`` is live is not archived again: its existing index is returned;
- a failed call changes nothing (an archive that cannot commit raises ``ArchiveError`` and keeps its previous state);
- ``load_state`` validates everything before it replaces anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from strands.types.content import Message

from strands_semantic_memory.embeddings._base import Vectors


@dataclass(frozen=True)
class NewRecord:
    """A message to archive, already encoded and rendered.

    Attributes:
        data: The message as compact JSON (see ``encode_message``).
        role: The message's role.
        tracking_id: Its Strands tracking id, if any (informational; idempotency uses ``key``).
        text: Its searchable text (see ``_text``); empty means nothing to embed.
        key: Idempotency key built by the engine from the tracking id and the message's bytes: archiving the
            same message twice returns the first index, while two different messages that carry the same
            tracking id are both archived.
        archived_at: When it was archived (seconds since the epoch).
        said_at: When it was said, if the caller said so (seconds since the epoch).
        session_id: The Strands session id of the conversation it was said in (None: unknown).
    """

    data: bytes
    role: str
    tracking_id: str | None
    text: str
    key: str
    archived_at: float
    said_at: float | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class StoredRecord:
    """An archived message as an archive returns it.

    Attributes:
        index: Its archive index.
        data: The message as archived (compact JSON bytes).
        role: Its role.
        archived_at: When it was archived (seconds since the epoch).
        said_at: When it was said, if known.
        session_id: The session it was said in, if known.
    """

    index: int
    data: bytes
    role: str
    archived_at: float
    said_at: float | None = None
    session_id: str | None = None

    @property
    def message(self) -> Message:
        """A fresh copy of the archived message."""
        from strands_semantic_memory.messages._codec import decode_message

        return decode_message(self.data)

    @property
    def time(self) -> float:
        """The time that filters and dates use: when it was said if known, else when it was archived."""
        return self.archived_at if self.said_at is None else self.said_at


@dataclass(frozen=True)
class SearchFilter:
    """Restricts a search to some messages: a scope (``sessions``) and conditions on its hits.

    ``sessions`` is a scope: a search reads nothing outside it, neither hits nor neighbours (the ranking's
    conversation context and a passage's messages). ``roles``, ``since``, ``until`` and ``exclude`` apply to hits
    only: a message they refuse may still be read as a hit's neighbour.

    Attributes:
        roles: Only these roles (None: any).
        since: Only messages whose time (said, else archived) is at or after this (epoch seconds).
        until: Only messages whose time is at or before this.
        sessions: Only messages said in these sessions (None: every session); ``None`` inside the set admits the
            messages that carry no session.
        exclude: Archive indices that must not be hits (what the model call already holds).
    """

    roles: frozenset[str] | None = None
    since: float | None = None
    until: float | None = None
    sessions: frozenset[str | None] | None = None
    exclude: frozenset[int] = frozenset()

    def in_scope(self, session_id: str | None) -> bool:
        """Whether a message of this session may be read at all (as a hit or a neighbour)."""
        return self.sessions is None or session_id in self.sessions

    def accepts(self, index: int, role: str, time: float, session_id: str | None) -> bool:
        """Whether a message with this index, role, time and session may be a hit."""
        if self.sessions is not None and session_id not in self.sessions:
            return False
        if self.roles is not None and role not in self.roles:
            return False
        if self.since is not None and time < self.since:
            return False
        if self.until is not None and time > self.until:
            return False
        return index not in self.exclude

    def accepts_record(self, record: StoredRecord) -> bool:
        """Whether an archived record may be a hit (``accepts`` of its fields)."""
        return self.accepts(record.index, record.role, record.time, record.session_id)

    @property
    def scoped(self) -> bool:
        """True when the filter has a scope (``sessions``): neighbours are filtered too."""
        return self.sessions is not None

    @property
    def is_empty(self) -> bool:
        """True when the filter lets everything through."""
        return (
            self.roles is None
            and self.since is None
            and self.until is None
            and self.sessions is None
            and not self.exclude
        )


@dataclass(frozen=True)
class ContextRequest:
    """The candidates' neighbours a search would like answered with the candidates (see ``candidates``).

    The ranking scores the archive neighbours of its strongest candidates too (conversation context, see
    ``_ranking``). An archive that answers them in the same call saves the engine a
    ``similarities`` call (and, for a lexical or filtered search, a ``get``): one round trip fewer on a database.

    The strongest candidates are those ``archives._scoring.strongest`` returns for the archive's own candidates:
    the best base score (the weighted fusion of each candidate's similarity and lexical share, with this
    request's weights), ties by index. That function is the formula; the PostgreSQL archive's statement computes the
    same in SQL, and a test holds the two together. The engine checks which neighbourhoods were answered and asks
    for the rest, so an archive may approximate this order or cover more.

    Attributes:
        radius: Every index at most this far from a covered candidate (and not negative) is wanted.
        leading: How many of the strongest candidates to cover.
        dense_weight: Weight of the dense score in the base score (0..1).
        lexical_power: Exponent of the lexical share (> 0).
        dense_floor: Count only the similarity above the last dense candidate's.
    """

    radius: int
    leading: int
    dense_weight: float = 0.5
    lexical_power: float = 2.0
    dense_floor: bool = True


@dataclass(frozen=True)
class NeighbourContext:
    """An archive's answer to a ``ContextRequest``.

    The indices it covers are every non-negative index within ``radius`` of one of ``around``; for each of them:

    Attributes:
        radius: The distance covered around each index of ``around``.
        around: The candidates whose neighbourhoods are covered.
        similarity: Index -> cosine similarity of its best chunk, for every covered index that is live, in the
            search filter's scope and has vectors (whatever its conditions on hits say: neighbours are context),
            when a query vector was given. It may hold other indices of the scope too.
        live: The covered indices that are live and accepted by the search filter as hits.

    Covered indices that are candidates themselves (in ``dense`` or ``lexical``) may be left out of both: what the
    ranking needs of them is in the candidates' answer already.
    """

    radius: int
    around: frozenset[int]
    similarity: dict[int, float]
    live: frozenset[int]


@dataclass(frozen=True)
class Candidates:
    """What one search asks of an archive, answered in one round trip.

    Attributes:
        dense: Index -> cosine similarity of the message's best chunk, for the nearest messages.
        lexical: Index -> lexical score (BM25 in process, ``ts_rank`` in PostgreSQL), higher is better.
        similarity: Index -> cosine similarity for every candidate (dense or lexical) that has vectors, when a
            query vector was given.
        context: The neighbours answered for a ``ContextRequest`` (None: not asked, or not served; the
            engine then asks ``similarities`` and ``get`` for them).
    """

    dense: dict[int, float]
    lexical: dict[int, float]
    similarity: dict[int, float]
    context: NeighbourContext | None = field(default=None)


@dataclass(frozen=True)
class ArchiveStats:
    """What an archive reports about itself (bytes as defined in ``_codec``)."""

    message_count: int
    total_bytes: int
    message_bytes: int
    vector_count: int
    dimension: int | None
    pending_count: int
    evicted_count: int
    archived_total: int
    oldest_index: int | None
    newest_index: int | None
    forgotten_count: int = 0


@runtime_checkable
class Archive(Protocol):
    """Keeps the archive. The engine serializes calls from one process with its own lock.

    Properties must be free of side effects (no I/O): ``isinstance`` checks against this protocol evaluate them.
    """

    def __len__(self) -> int:
        """Number of live archived messages."""
        ...

    @property
    def user_id(self) -> str | None:
        """Whose memory this archive is (None: a user not named)."""
        ...

    @property
    def dimension(self) -> int | None:
        """Vector length, once known."""
        ...

    @property
    def persistent(self) -> bool:
        """True when the archive persists itself (saved state then only references it)."""
        ...

    @property
    def thread_safe(self) -> bool:
        """True when the archive is safe to call from several threads at once.

        The engine then calls it without holding its own lock, so a search is never queued behind a writer
        waiting on a database.
        """
        ...

    def bind(self, model_id: str) -> None:
        """Record which embedding model fills this archive, and refuse another (no-op where nothing is shared).

        Raises:
            EmbeddingModelMismatchError: If the archive is already bound to another model.
        """
        ...

    def add(self, records: Sequence[NewRecord]) -> list[int]:
        """Archive records in order, atomically; a record whose ``key`` is live gets its existing index.

        Returns:
            The archive index of each record, same order.
        """
        ...

    def has_pending(self) -> bool:
        """Whether any message waits for its vectors (checked before every search, so it must be cheap)."""
        ...

    def pending(self, exclude: set[int], limit: int | None = None) -> list[tuple[int, str]]:
        """``(index, text)`` of messages waiting for vectors, oldest first, leaving out ``exclude``."""
        ...

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        """Store each message's chunk vectors (possibly none) and mark it embedded; gone ones are skipped.

        Returns:
            How many messages were updated.
        """
        ...

    def enforce_limits(self, max_count: int | None, max_bytes: int | None) -> list[int]:
        """Evict the oldest messages while a limit is exceeded (never the last one for the byte limit).

        Returns:
            The evicted indices.
        """
        ...

    def evict_oldest(self, count: int) -> list[int]:
        """Evict the ``count`` oldest messages; returns their indices."""
        ...

    def forget(self, indices: Sequence[int]) -> list[int]:
        """Delete these messages for good: records, vectors, lexical entries. Unknown indices are ignored.

        Returns:
            The indices that were deleted, ascending.
        """
        ...

    def forget_all(self) -> int:
        """Delete every message of the archive's user for good, with its vectors and terms, in one call.

        Nothing of the user's messages is left where the archive keeps data (memory, file, database). Indices are
        not handed out again: the next message gets the index it would have got.

        Returns:
            How many messages were deleted.
        """
        ...

    def find_keys(self, keys: Sequence[str]) -> dict[str, int]:
        """The live index of each record whose idempotency ``key`` is among ``keys`` (one indexed lookup).

        Keys that never repeat (a message without a tracking id) are never found.
        """
        ...

    def candidates(
        self,
        vector: Vectors | None,
        query: str,
        dense_k: int,
        lexical_k: int,
        search_filter: SearchFilter | None = None,
        *,
        context: ContextRequest | None = None,
    ) -> Candidates:
        """Dense and lexical candidates for one query, and the similarity of every candidate, in one call.

        Args:
            vector: The unit query vector, shape ``(1, dimension)``; None skips the dense side and similarities.
            query: The query text, for the lexical side.
            dense_k: How many dense candidates (0 skips the dense side).
            lexical_k: How many lexical candidates (0 skips the lexical side).
            search_filter: Only messages it accepts are candidates; nothing outside its scope is read.
            context: The candidates' neighbours wanted as well (``context``). Answering it is optional: an archive
                may leave ``context`` None; the engine then reads the neighbours with ``similarities`` and ``get``.
                An archive that answers it covers at least what was asked; the engine checks which candidates'
                neighbourhoods were covered and asks for the rest.
        """
        ...

    def similarities(self, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of the query to each given message's best chunk (messages without vectors left out).

        Unfiltered: the caller asks only for indices it may read.
        """
        ...

    def get(self, indices: Sequence[int]) -> dict[int, StoredRecord]:
        """The live records among the given indices (missing ones left out)."""
        ...

    def find_text(self, needle: str) -> list[int]:
        """Live indices whose searchable text contains ``needle``, case-insensitively, ascending."""
        ...

    def bounds(self) -> tuple[int, int] | None:
        """``(oldest, newest)`` live index, or None when empty."""
        ...

    def stats(self) -> ArchiveStats:
        """Counts and bytes."""
        ...

    def export_state(self, model_id: str) -> dict[str, Any]:
        """What ``SemanticMemory.to_state`` saves for this archive (JSON types only, versioned, with its user)."""
        ...

    def load_state(self, state: Mapping[str, Any], reembed: bool) -> None:
        """Restore from ``export_state`` output without embedding; ``reembed`` marks every message pending.

        Validates the whole state first: on any error nothing has changed. A state saved for another named user
        is refused (``StateError``); an archive whose user is not named takes the state's.
        """
        ...

    def close(self) -> None:
        """Release connections and files (the data stays where it is persisted)."""
        ...
