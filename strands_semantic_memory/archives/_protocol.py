"""The archive protocol: the one seam between the engine and where archived messages live.

The engine (``SemanticMemory``) does what is the same everywhere: checking and encoding messages, embedding, ranking
(``retrieval``), passages. An archive keeps the records, their terms and vectors, and answers a few primitive
questions. Two implementations: ``SqliteArchive`` (a durable file, or in process in memory) and ``PostgresArchive``
(shared by many workers). Their shared contract, checked by one test suite run against both:

- an archive is one user's (``user_id``; None: unnamed), physically apart from every other user's;
- indices are handed out in archive order and never reused; ``evict`` removes the oldest first, ``forget`` any;
- a record whose idempotency ``key`` is live is not archived again (its index is returned); a record whose bytes
  were forgotten is not archived again either (``None`` is returned in its place): ``forget`` keeps a keyed digest
  of each message it removes (``messages._codec.forget_digest``), never its text;
- removing a message removes its vectors and terms with it;
- every method is safe to call from several threads; a failed call changes nothing and raises ``ArchiveError``
  (or a subclass of ``SemanticMemoryError`` for bad input).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from strands.types.content import Message

from strands_semantic_memory.embeddings._base import Vectors

__all__ = ["Archive", "ArchiveStats", "Candidates", "NewRecord", "Scope", "StoredRecord"]

PENDING, EMBEDDED, NOTHING_TO_EMBED = 0, 1, 2
"""A record's embedding state: waiting for its vectors, has them, or has no text to embed."""
STATEMENT_CHUNK = 128
"""Chunk numbers from here on are a message's self-statements (``messages._profile``), not chunks of its text."""


@dataclass(frozen=True, slots=True)
class NewRecord:
    """A message to archive, already encoded and rendered.

    Attributes:
        data: The message as compact JSON bytes (``encode_message``).
        role: Its role.
        key: Its idempotency key (``record_key``).
        text: Its searchable text (empty: nothing to embed or match).
        archived_at: When it is archived (seconds since the epoch).
        said_at: When it was said, if the caller said so.
        session_id: The session it was said in (None: unknown).
    """

    data: bytes
    role: str
    key: str
    text: str
    archived_at: float
    said_at: float | None = None
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """An archived message as an archive returns it.

    Attributes:
        index: Its archive index.
        data: The message exactly as archived (compact JSON bytes).
        role: Its role.
        text: Its searchable text.
        archived_at: When it was archived (seconds since the epoch).
        said_at: When it was said, if known.
        session_id: The session it was said in, if known.
    """

    index: int
    data: bytes
    role: str
    text: str
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
        """When it was said if known, else when it was archived: what time filters and dates read."""
        return self.archived_at if self.said_at is None else self.said_at


@dataclass(frozen=True, slots=True)
class Scope:
    """What one search may read, and which of it may be a hit.

    ``sessions`` bounds everything the search reads (hits, the neighbours the ranking scores, a passage's
    messages); ``None`` inside the set admits records without a session. ``roles``, ``since``, ``until`` and
    ``exclude`` (archive indices: what the model call already holds) apply to hits only.
    """

    sessions: frozenset[str | None] | None = None
    roles: frozenset[str] | None = None
    since: float | None = None
    until: float | None = None
    exclude: frozenset[int] = field(default_factory=frozenset)

    def reads(self, session_id: str | None) -> bool:
        """Whether a record of this session may be read at all."""
        return self.sessions is None or session_id in self.sessions

    def hit(self, record: StoredRecord) -> bool:
        """Whether a record may be a hit."""
        if not self.reads(record.session_id) or record.index in self.exclude:
            return False
        if self.roles is not None and record.role not in self.roles:
            return False
        time = record.time
        return (self.since is None or time >= self.since) and (self.until is None or time <= self.until)

    @property
    def narrows_hits(self) -> bool:
        """Whether some readable record may still not be a hit (roles, times or exclusions are set)."""
        return self.roles is not None or self.since is not None or self.until is not None or bool(self.exclude)


@dataclass(frozen=True, slots=True)
class Candidates:
    """What an archive found for one query, before ranking.

    Attributes:
        dense: Archive index -> cosine similarity of its best chunk, for the nearest messages.
        lexical: Archive index -> BM25 score (higher is better), for the best lexical matches.
    """

    dense: Mapping[int, float]
    lexical: Mapping[int, float]


@dataclass(frozen=True, slots=True)
class ArchiveStats:
    """What an archive holds.

    Attributes:
        count: Live messages.
        pending: Messages waiting for their vectors.
        nbytes: Bytes of the archived messages (their JSON) and vectors.
        next_index: The index the next message will get.
        dimension: The vectors' dimension (None before the first).
        model_id: The embedding model that built it (None before the first vector).
        oldest: The oldest live index (None when empty).
    """

    count: int
    pending: int
    nbytes: int
    next_index: int
    dimension: int | None
    model_id: str | None
    oldest: int | None


@runtime_checkable
class Archive(Protocol):
    """Where a memory's messages live (see the module docstring for the contract)."""

    @property
    def user_id(self) -> str | None:
        """Whose archive this is (None: a user not named)."""
        ...

    def bind(self, model_id: str, dimension: int | None) -> None:
        """Record the embedding model on first use; refuse another (``EmbeddingModelMismatchError``)."""
        ...

    def add(self, records: Sequence[NewRecord]) -> list[int | None]:
        """Archive records in one transaction: each one's index (its earlier one for a live key; None if forgotten)."""
        ...

    def set_vectors(self, vectors: Mapping[int, Vectors], statements: Mapping[int, Vectors] | None = None) -> None:
        """Store each message's chunk vectors (one row per chunk), and those of its self-statements.

        Indices no longer live are ignored. Statement rows are kept apart (chunks from ``STATEMENT_CHUNK`` on): only a
        search with ``statements=True`` reads them.
        """
        ...

    def pending(self, limit: int, exclude: Iterable[int] = ()) -> list[StoredRecord]:
        """Up to ``limit`` records waiting for their vectors, oldest first."""
        ...

    def candidates(
        self, terms: Sequence[str], vector: Vectors | None, depth: int, scope: Scope, statements: bool = False
    ) -> Candidates:
        """The ``depth`` nearest messages by vector and best by BM25 over ``terms`` that may be hits in ``scope``.

        With ``statements=True``: the messages whose self-statements are nearest to ``vector`` (no lexical part).
        """
        ...

    def similarities(self, vector: Vectors, indices: Iterable[int]) -> dict[int, float]:
        """Best-chunk cosine similarity of each index that has vectors."""
        ...

    def eligible(self, indices: Iterable[int], scope: Scope) -> set[int]:
        """The live indices among ``indices`` that may be hits in ``scope`` (no record is read)."""
        ...

    def get(self, indices: Iterable[int], scope: Scope | None = None) -> list[StoredRecord]:
        """The live records among ``indices`` that ``scope`` may read, in index order."""
        ...

    def find_keys(self, keys: Iterable[str]) -> dict[str, int]:
        """The live index of each idempotency key that is archived."""
        ...

    def find_text(self, text: str, scope: Scope | None, limit: int) -> list[int]:
        """Indices of up to ``limit`` live messages whose text contains ``text`` (case-insensitive), oldest first."""
        ...

    def records(self, after: int, limit: int) -> list[StoredRecord]:
        """Up to ``limit`` live records with an index above ``after``, in index order."""
        ...

    def forget(self, indices: Iterable[int]) -> int:
        """Remove these messages for good, remembering their digests; how many were removed."""
        ...

    def forget_all(self) -> int:
        """Remove every message of the user for good (digests kept, nothing else); how many were removed."""
        ...

    def evict(self, max_messages: int | None, max_bytes: int | None) -> int:
        """Remove the oldest messages until both limits hold (not remembered as forgotten); how many went."""
        ...

    def stats(self) -> ArchiveStats:
        """What the archive holds."""
        ...

    def get_note(self, key: str) -> str | None:
        """A small value the engine kept with the archive (its relevance floor), or None."""
        ...

    def set_note(self, key: str, value: str) -> None:
        """Keep a small value with the archive (best effort: a read-only archive keeps nothing)."""
        ...

    def to_state(self) -> dict[str, Any]:
        """The archive as JSON (in process) or a reference to it (a file, a database)."""
        ...

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Replace the archive with a saved one, or check that a reference names this archive (``StateError``)."""
        ...

    def close(self) -> None:
        """Release files and connections (idempotent)."""
        ...
