"""SemanticMemory: the engine behind the conversation manager, the hook and the Strands memory store.

One class owns the running parts and the write transaction. It binds the archive to the embedding model, picks
the archive lock (none for a thread-safe archive), and connects the checked embedder (``embeddings._checked``),
the embedding queue (``embedding``) and the recall path (``retrieval``). Every write is one archive call under
that lock: ``add`` checks and encodes the messages first (``_intake``: nothing changes on bad input), commits them
in one ``Archive.add``, then embeds what is pending outside the lock, or hands it to the background thread (a
failing embedder leaves messages pending, never lost), and enforces the size limits. A search only reads: in
background mode it scores the newest pending messages by embedding them itself (``EmbeddingQueue.for_search``),
and the thread stores their vectors; ``evict_oldest`` and ``forget`` remove, ``load_state`` replaces the archive
with a saved one (``_memory_state``; the layout: ``archives._state``). Each change counts once in ``version``;
``configure`` hands changed options to the running parts without dropping their state (claims in flight, the
failure clock, cached queries that still fit). Options: ``_options``; what ``stats`` reports: ``_stats``.

Every public method is safe to call from several threads at once.

Example:
    ```python
    memory = SemanticMemory(top_k=3, context_radius=2)
    memory.add(messages)
    for passage in memory.retrieve("what was the order number?"):
        print(passage.start, passage.end, passage.messages)
    ```
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import reprlib
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypedDict

from strands.types.content import Message
from typing_extensions import Unpack

from strands_semantic_memory import _telemetry
from strands_semantic_memory._validation import check_identifier, check_members
from strands_semantic_memory.archives import resolve_archive
from strands_semantic_memory.archives._protocol import Archive, NewRecord, SearchFilter, StoredRecord
from strands_semantic_memory.embeddings import DEFAULT_MODEL, Embedder, resolve_embedder
from strands_semantic_memory.embeddings._checked import CheckedEmbedder
from strands_semantic_memory.engine._calibration import Calibration, probe_vectors
from strands_semantic_memory.engine._intake import ROLES, STORAGE_ROLE, AddedCounter, new_records, record_keys
from strands_semantic_memory.engine._memory_state import (
    check_compatibility,
    constructor_arguments,
    export_memory,
    restore_archive,
)
from strands_semantic_memory.engine._options import (
    DEFAULT_CONTEXT_RADIUS,
    DEFAULT_TOP_K,
    MemoryOptions,
    MemoryTunables,
    OptionChanges,
)
from strands_semantic_memory.engine._reembed import ReembedProgress, drop_vectors
from strands_semantic_memory.engine._stats import MemoryStats, build_stats
from strands_semantic_memory.engine.embedding import EmbeddingQueue, PendingView
from strands_semantic_memory.errors import (
    ConfigurationError,
    InvalidMessageError,
    InvalidMessageTypeError,
    MessageNotFoundError,
    SemanticMemoryError,
)
from strands_semantic_memory.messages._codec import decode_message
from strands_semantic_memory.messages._time import TimeBound
from strands_semantic_memory.retrieval._passages import Passage
from strands_semantic_memory.retrieval._recall import Recall, Recollection, SearchHit, make_filter
from strands_semantic_memory.retrieval._relevance import relevance
from strands_semantic_memory.retrieval._rerank import Reranker

logger = logging.getLogger(__name__)

_OPTION_NAMES = MemoryOptions.names()

__all__ = ["MemoryArguments", "MemorySources", "SearchHit", "SemanticMemory", "resolve_memory"]


class MemorySources(TypedDict, total=False):
    """The ``SemanticMemory`` keywords that are not options: the model, the archive and its user, the reranker."""

    embedding_model: str
    embedder: Embedder | None
    archive: Archive | None
    archive_path: str | os.PathLike[str] | None
    user_id: str | None
    clock: Callable[[], float] | None
    reranker: Reranker | None
    aws_region: str | None
    embedding_dimensions: int | None


class MemoryArguments(OptionChanges, MemorySources, total=False):
    """Every keyword ``SemanticMemory`` takes (what ``from_state`` may override)."""


EMBEDDER_MEMBERS = ("model_id", "dimension", "embed_documents", "embed_queries")
"""What an ``embedder=`` must have (``Embedder``), checked without evaluating the properties."""


class SemanticMemory:
    """A lossless, searchable archive of Strands messages (an example: the module docstring; options: MemoryOptions)."""

    def __init__(
        self,
        embedding_model: str = DEFAULT_MODEL,
        top_k: int = DEFAULT_TOP_K,
        context_radius: int = DEFAULT_CONTEXT_RADIUS,
        min_score: float | None = None,
        max_num_archived_messages: int | None = None,
        max_memory_archived_messages: int | None = None,
        *,
        embedder: Embedder | None = None,
        archive: Archive | None = None,
        archive_path: str | os.PathLike[str] | None = None,
        user_id: str | None = None,
        clock: Callable[[], float] | None = None,
        reranker: Reranker | None = None,
        aws_region: str | None = None,
        embedding_dimensions: int | None = None,
        **options: Unpack[MemoryTunables],
    ) -> None:
        """Create a memory. Nothing is loaded until the first message is embedded.

        Args:
            embedding_model: A sentence-transformers name or folder (default: all-MiniLM-L6-v2) or ``"bedrock:<id>"``.
            top_k: Hits per search (this and the next four: ``MemoryOptions``).
            context_radius: Neighbouring messages added on each side of a hit by ``retrieve``.
            min_score: Minimum cosine similarity of a hit (-1..1); None keeps all.
            max_num_archived_messages: Keep at most this many messages (oldest evicted first); None: no limit.
            max_memory_archived_messages: Keep at most this many estimated bytes; None: no limit.
            embedder: A ready ``Embedder``, instead of a model name.
            archive: Where the messages are kept (an ``Archive`` from ``archives``; default: in process).
            archive_path: A file for a durable archive (``SqliteArchive``); not together with ``archive``.
            user_id: Whose memory it is (a person, or an actor such as an agent id): a non-empty string of at most
                256 characters. The archive is built for that user (a file records it and refuses another); a
                ready ``archive=`` must be that user's. None: the archive's user, or a user not named.
            clock: What "now" is, in seconds since the epoch (default ``time.time``): every record's
                ``archived_at``. A benchmark or an importer passes the dates of the conversations it replays. Not
                saved with the state.
            reranker: A ``Reranker`` to reorder candidates; default none.
            aws_region: Bedrock only: the region (default: the AWS SDK's resolution).
            embedding_dimensions: Bedrock only: the output dimension, for models that offer a choice.
            **options: Further ``MemoryOptions`` fields (``retrieval``, ``ranking``, ``chunk_chars``, ...).

        Raises:
            ConfigurationError: If an option is unknown or out of range (the message names it), or the archive is
                another user's.
            EmbeddingModelMismatchError: If a shared archive was built by another embedding model.
        """
        self._options = MemoryOptions.from_arguments(
            top_k=top_k,
            context_radius=context_radius,
            min_score=min_score,
            max_num_archived_messages=max_num_archived_messages,
            max_memory_archived_messages=max_memory_archived_messages,
            **options,
        )
        if clock is not None and not callable(clock):
            raise ConfigurationError(f"clock must be a callable returning seconds since the epoch, got {clock!r}")
        self._clock: Callable[[], float] = clock or time.time
        check_members("embedder", embedder, EMBEDDER_MEMBERS, "an Embedder")
        check_members("reranker", reranker, ("rerank",), "a Reranker (an object with rerank(query, texts))")
        archive = resolve_archive(archive, archive_path, user_id)
        self.embedder: Embedder = embedder or resolve_embedder(
            embedding_model, aws_region=aws_region, embedding_dimensions=embedding_dimensions
        )
        archive.bind(self.embedder.model_id)
        self._archive = archive
        self._archive_type = type(archive).__name__
        self._lock = threading.RLock()
        """Guards the counters and a restore; it is also the store lock of a store that is not thread-safe."""
        self._archive_lock: AbstractContextManager[object] = (
            contextlib.nullcontext() if archive.thread_safe else self._lock
        )
        self._checked = CheckedEmbedder(self.embedder, lambda: archive.dimension, self._options.query_cache_size)
        self._queue = EmbeddingQueue(archive, self._archive_lock, self._checked.documents, self._options, self._changed)
        # A memory dropped without close(): its embedding thread stops after its batch (the thread holds the queue
        # during a batch, never the memory).
        weakref.finalize(self, self._queue.request_stop).atexit = False
        self._recall = Recall(archive, self._checked, self._archive_lock, lambda: self._options, reranker)
        self._calibration = Calibration()
        self._added = AddedCounter()
        self._version = 0
        self._generation = 0
        self._searches = 0
        _telemetry.watch(self._gauge_figures)  # read only when a metric reader collects
        if self._options.embedding == "background":  # what a durable archive left pending is embedded now
            try:
                self._queue.catch_up()
            except SemanticMemoryError as error:  # an unreachable store fails the first call that needs it, not this
                logger.warning("error=<%s> | pending messages not checked at open; they are embedded later", error)

    # ------------------------------------------------------------------------------------------- options

    @property
    def options(self) -> MemoryOptions:
        """The current options (frozen; change them with ``configure``)."""
        return self._options

    def configure(self, **changes: Unpack[OptionChanges]) -> None:
        """Change options, in effect from the next call (validated first; nothing changes on an error); a change.

        Raises:
            ConfigurationError: If a name is not an option, or a value is invalid (the message names it).
        """
        with self._lock:
            self._options = self._options.replace(**changes)
            self._queue.reconfigure(self._options)  # claims in flight and the failure clock are kept
            self._checked.resize_cache(self._options.query_cache_size)  # the least recent queries evicted
        self._changed()

    def __setattr__(self, name: str, value: object) -> None:
        """Refuse an option set as an attribute, which would otherwise change nothing without a word."""
        if name in _OPTION_NAMES:
            raise AttributeError(f"options are changed with configure({name}=...) and read from options.{name}")
        super().__setattr__(name, value)

    @property
    def reranker(self) -> Reranker | None:
        """The configured reranker, if any."""
        return self._recall.reranker

    @property
    def version(self) -> int:
        """Increases on every change made through this object; lets callers cache work derived from it."""
        return self._version

    @property
    def generation(self) -> int:
        """How many times ``load_state`` replaced the archive: an index read before a restore may name another record.

        ``SemanticStorage``'s key table reads the archive again when it changes.
        """
        return self._generation

    def _restores_held(self) -> AbstractContextManager[object]:
        """Hold off ``load_state`` while the block runs (re-entrant).

        What the block reads and does with it then refers to one archive. For ``SemanticStorage``'s key table; keep
        the block short (no embedding in it).
        """
        return self._lock

    @property
    def archive(self) -> Archive:
        """Where the messages are kept verbatim (an ``Archive``: in process, SQLite or PostgreSQL)."""
        return self._archive

    @property
    def user_id(self) -> str | None:
        """Whose memory this is (the archive's user; None: a user not named)."""
        return self._archive.user_id

    @property
    def clock(self) -> Callable[[], float]:
        """What "now" is for this memory (seconds since the epoch): ``time.time`` unless one was given."""
        return self._clock

    def _now(self) -> float:
        """The clock's time, checked.

        Raises:
            ConfigurationError: If the clock returned anything but a finite number.
        """
        now = self._clock()
        if isinstance(now, bool) or not isinstance(now, (int, float)) or not math.isfinite(now):
            raise ConfigurationError(f"clock must return seconds since the epoch (a finite number), returned {now!r}")
        return float(now)

    # ------------------------------------------------------------------------------------------- reading

    def __len__(self) -> int:
        """Number of archived messages."""
        with self._archive_lock:
            return len(self._archive)

    @property
    def indices(self) -> list[int]:
        """The live archive indices, oldest first (forgotten messages leave holes)."""
        with self._archive_lock:
            return sorted(self._live_records(None, None))

    def get(self, index: int) -> Message:
        """A copy of the archived message at ``index``.

        Raises:
            MessageNotFoundError: If no message has that index (never archived, evicted or forgotten); it is a
                ``KeyError`` too.
        """
        return self.record(index).message

    def record(self, index: int) -> StoredRecord:
        """The archived record at ``index`` (``.message`` decodes it; its role, times and session are fields).

        Raises:
            MessageNotFoundError: If no message has that index (a ``KeyError`` too).
        """
        with self._archive_lock:
            found = self._archive.get([index]).get(index)
        if found is None:
            raise MessageNotFoundError(index)
        return found

    def messages(self, start: int | None = None, end: int | None = None) -> list[tuple[int, Message]]:
        """Archived ``(index, message)`` pairs with ``start <= index <= end``, oldest first, each a fresh copy."""
        with self._archive_lock:
            records = self._live_records(start, end)
        return [(i, decode_message(r.data)) for i, r in sorted(records.items())]

    def _live_records(self, start: int | None, end: int | None) -> dict[int, StoredRecord]:
        """The live records with ``start <= index <= end`` (either end open when None); under the store lock.

        One ``bounds`` and one ``get`` call: the store protocol has no cheaper way to list the live indices.
        """
        bounds = self._archive.bounds()
        if bounds is None:
            return {}
        lo = bounds[0] if start is None else max(start, bounds[0])
        hi = bounds[1] if end is None else min(end, bounds[1])
        return self._archive.get(list(range(lo, hi + 1)))

    # ------------------------------------------------------------------------------------------- writing

    def add(
        self,
        messages: Sequence[Message],
        *,
        timestamps: Sequence[TimeBound] | None = None,
        session_id: str | None = None,
    ) -> list[int]:
        """Archive messages verbatim in one commit (again: the existing index), then embed them if possible.

        Args:
            messages: Strands message dicts, oldest first (copied: later changes do not reach the archive).
            timestamps: When each was said (epoch seconds or datetimes); default: ``metadata.custom.timestamp``.
            session_id: The Strands session they were said in (``agent.session_id``), stamped on every record of
                the call; searches can be scoped to sessions (``sessions=``). None: no session.

        Returns:
            The archive index of each message, same order. A message archived before keeps its first index and
            session.

        Raises:
            ConfigurationError: If ``session_id`` is not a valid id (nothing is archived).
            InvalidMessageError, InvalidMessageTypeError, ArchiveError: Nothing is archived.
        """
        check_identifier("session_id", session_id)
        return self._archive_records(new_records(messages, timestamps, session_id=session_id, now=self._now()))

    def _archive_entries(self, messages: Sequence[Message], *, session_id: str | None = None) -> list[int]:
        """``add`` for ``SemanticStorage``: its entries have the storage role, which ``add`` refuses."""
        check_identifier("session_id", session_id)
        records = new_records(messages, None, (*ROLES, STORAGE_ROLE), session_id=session_id, now=self._now())
        return self._archive_records(records)

    def _archive_records(self, records: Sequence[NewRecord]) -> list[int]:
        """Commit checked records, then embed what is due and enforce the limits (the second half of ``add``).

        Traced as a ``memory.add`` span: the messages offered, those newly archived and their bytes.
        """
        with _telemetry.Operation("memory.add") as operation:
            with self._archive_lock:
                indices, added = self._commit(records)
            self._changed(len(added))
            self._calibration.added(len(added))
            # Committed: from here on nothing may raise, or a caller's retry would look like a lost archive.
            texts = {i: r.text for i, r in zip(indices, records, strict=True) if i in added and r.text.strip()}
            added_bytes = sum(len(r.data) for i, r in zip(indices, records, strict=True) if i in added)
            if operation.recording:
                operation.set(
                    {
                        "memory.archive.type": self._archive_type,
                        "memory.embedding.mode": self._options.embedding,
                        "memory.message.count": len(records),
                        "memory.message.new_count": len(added),
                        "memory.message.bytes": added_bytes,
                    }
                )
            if added:
                kind = {"memory.archive.type": self._archive_type}
                _telemetry.ARCHIVE_ADDED.add(len(added), kind)
                _telemetry.ARCHIVE_ADDED_BYTES.add(added_bytes, kind)
            self._changed(self._queue.after_archive(texts))
            self._enforce_limits()
        return indices

    def _commit(self, records: Sequence[NewRecord]) -> tuple[list[int], set[int]]:
        """Add ``records`` in one store call (under the store lock).

        Returns:
            The archive index of each record (the existing one for a message archived before), and those that are
            new, told apart by ``AddedCounter`` without asking the store again.
        """
        horizon = self._added.horizon(self._archive)
        indices = self._archive.add(records)
        added = self._added.new(indices, horizon)
        if added:
            logger.debug("archived=<%d> | messages archived", len(added))
        return indices, added

    def embed_pending(self) -> int:
        """Embed every pending message now and wait for the background thread's batch; returns how many were embedded.

        Ignores the retry interval after a failure, and tries the texts the embedder rejected as well. With
        ``embedding="background"``, call it when every vector must be stored now (a backlog beyond the 32 pending
        messages a search embeds for itself, a test).

        Raises:
            EmbeddingError: If the embedder fails (the messages stay archived and pending).
            ModelUnavailableError: If the model cannot be loaded.
        """
        return self._changed(self._queue.drain())

    def reembed(
        self, *, progress: Callable[[ReembedProgress], object] | None = None, pending_only: bool = False
    ) -> int:
        """Embed every archived message again with the configured embedder (after a change of model, say).

        Every vector is dropped first and the archive bound to this memory's model; the messages stay, and are
        found lexically until their new vectors are stored. Batches are embedded in the calling thread
        (``options.embedding_batch_size`` messages each). Details: ``engine._reembed``.

        Args:
            progress: Called with a ``ReembedProgress`` (done, total) before the first batch and after each.
            pending_only: Keep the vectors there are and embed only the messages waiting for theirs (the backlog):
                ``embed_pending`` with progress.

        Returns:
            How many messages were embedded.

        Raises:
            EmbeddingError: If the embedder fails (what was embedded stays; the rest is pending, and
                ``embed_pending`` or another ``reembed`` goes on).
            ModelUnavailableError: If the model cannot be loaded.
            ArchiveError: If the archive cannot be written.
        """
        with self._lock, self._archive_lock:
            if not pending_only:
                drop_vectors(self._archive, self.embedder.model_id)
                self._queue.reset()  # vectors being computed for the dropped ones are discarded when they arrive
                self._checked.clear()  # cached query vectors may come from another model
            total = self._archive.stats().pending_count
        if not pending_only:
            self._changed()
        done = 0
        if progress is not None:
            progress(ReembedProgress(0, total))
        while updated := self._changed(self._queue.run_batch()):
            done += updated
            if progress is not None:
                progress(ReembedProgress(min(done, total), total))
        done += self.embed_pending()  # a batch the background thread had in hand, and anything left
        if progress is not None:
            progress(ReembedProgress(min(done, total), total))
        return done

    def warm_up(self, *, wait: bool = True) -> None:
        """Load the embedding model now, so the first user turn does not wait for it (see docs/guides).

        Args:
            wait: True (default): load here and raise what fails. False: load in a thread and return at once (a
                call that needs the model meanwhile waits for that load, never starts another).

        Raises:
            ModelUnavailableError: If the model cannot be loaded (``wait=True``).
            EmbeddingError: If the embedder fails otherwise (``wait=True``).
        """
        self._checked.warm_up(wait=wait)

    def close(self) -> None:
        """Stop the background embedding thread after its batch, then close the store.

        The thread makes no store call once the store closes (a batch it is still embedding after the embedding
        thread's ``STOP_TIMEOUT``, 30 seconds, is dropped), and none is started again: messages still pending stay
        pending, a durable archive embeds them when it is opened again, and ``embed_pending()`` embeds them in the
        calling thread.
        """
        self._queue.close()
        self._archive.close()

    def __enter__(self) -> SemanticMemory:
        """The memory itself; ``close`` runs on exit."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the memory."""
        self.close()

    def evict_oldest(self, count: int = 1) -> list[int]:
        """Evict the ``count`` oldest messages from the archive and the indexes together; returns their indices."""
        with self._archive_lock:
            evicted = self._archive.evict_oldest(count)
        return self._removed(evicted, "evicted")

    def clear(self) -> None:
        """Forget every archived message by eviction. Indices keep increasing from where they were."""
        self.evict_oldest(len(self))

    def forget(self, indices: Iterable[int] | None = None, *, query: str | None = None) -> list[int]:
        """Delete messages for good (privacy): records, vectors, lexical entries; state saved later lacks them.

        A ``query`` matches by exact substring, deliberately: deletion must be predictable, never "similar enough".

        Args:
            indices: Archive indices to delete (unknown ones are ignored).
            query: Also delete every message whose text contains this, case-insensitively.

        Returns:
            The deleted indices, ascending.

        Raises:
            InvalidMessageTypeError: If an index is not an integer (nothing is deleted).
            InvalidMessageError: If ``query`` is given but empty or not a string (nothing is deleted).
        """
        targets = list(indices or [])
        if any(not isinstance(i, int) or isinstance(i, bool) for i in targets):
            raise InvalidMessageTypeError("forget() takes integer archive indices")
        if query is not None and (not isinstance(query, str) or not query.strip()):
            raise InvalidMessageError("forget(query=...) needs a non-empty string")
        with _telemetry.Operation("memory.forget") as operation:
            requested = len(targets)
            with self._archive_lock:
                if query is not None:
                    targets = [*targets, *self._archive.find_text(query)]
                removed = self._archive.forget(sorted(set(targets))) if targets else []
            if operation.recording:  # never the query's text: what was forgotten must not stay in a trace
                operation.set(
                    {
                        "memory.archive.type": self._archive_type,
                        "memory.forget.requested_count": requested,
                        "memory.forget.by_query": query is not None,
                        "memory.forget.count": len(removed),
                    }
                )
        if removed:
            logger.info("forgotten=<%d> | archived messages deleted on request", len(removed))
        return self._removed(removed, "forgotten")

    def forget_all(self) -> int:
        """Delete every message of the memory's user for good, on every archive, in one call; returns how many.

        Every message, vector, lexical term and storage entry goes: in process everything is cleared; an SQLite
        file's rows are deleted and overwritten (``secure_delete``), the file is rebuilt (``VACUUM``) and its WAL
        checkpointed and truncated, so its bytes hold nothing of them; in PostgreSQL every row of the user, its row
        in ``ssm_users`` included, is deleted in one transaction. As after a restore, the embedding queue forgets
        its claims (vectors computed meanwhile are dropped) and cached query vectors are cleared. The memory stays
        usable for the same user; indices are not handed out again.

        Raises:
            ArchiveError: If the archive cannot complete the deletion (nothing is deleted).
        """
        with self._lock, self._archive_lock:
            removed = self._archive.forget_all()
            self._queue.reset()
            self._checked.clear()
            self._calibration.reset()
            self._added.reset()
            self._changed()
        logger.info("forgotten=<%d> | every archived message of the user deleted on request", removed)
        return removed

    def _enforce_limits(self) -> None:
        """Evict the oldest messages while either size limit is exceeded, and count them as one change.

        The newest message is kept even when it alone exceeds ``max_memory_archived_messages`` (a warning says so).
        """
        limit = self._options.max_memory_archived_messages
        with self._archive_lock:
            evicted = self._archive.enforce_limits(self._options.max_num_archived_messages, limit)
            over = limit is not None and self._archive.stats().total_bytes > limit
        if over:
            logger.warning(
                "limit=<%d> | the newest archived message alone exceeds max_memory_archived_messages; it is kept", limit
            )
        if evicted:
            logger.info(
                "evicted=<%d>, newest_evicted=<%d> | oldest archived messages evicted", len(evicted), evicted[-1]
            )
        self._removed(evicted, "evicted")

    def _changed(self, count: int = 1) -> int:
        """Count a change (``version`` increases by one) unless ``count`` is 0; returns ``count``."""
        if count:
            with self._lock:
                self._version += 1
        return count

    def _removed(self, indices: list[int], reason: str) -> list[int]:
        """Count removed ``indices`` as one change if there are any, and tell the embedding queue; returns them.

        ``reason`` (``evicted`` or ``forgotten``) is the ``semantic_memory.archive.removed`` counter's attribute.
        """
        self._queue.removed(indices)
        self._changed(len(indices))
        if indices:
            _telemetry.ARCHIVE_REMOVED.add(
                len(indices), {"memory.archive.type": self._archive_type, "memory.remove.reason": reason}
            )
        return indices

    # ------------------------------------------------------------------------------------------- searching

    def find_text(self, text: str) -> list[int]:
        """The live indices whose text contains ``text``, case-insensitively: what ``forget(query=text)`` deletes.

        Raises:
            InvalidMessageError: If ``text`` is not a non-empty string (the rules of ``forget(query=...)``).
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidMessageError("find_text() needs a non-empty string")
        with self._archive_lock:
            return sorted(self._archive.find_text(text))

    def search(
        self,
        query: str,
        top_k: int | None = None,
        min_score: float | None = None,
        *,
        roles: Collection[str] | None = None,
        since: TimeBound = None,
        until: TimeBound = None,
        sessions: Collection[str | None] | str | None = None,
        exclude: Iterable[int] = (),
    ) -> list[SearchHit]:
        """Find the archived messages most relevant to ``query`` (empty for an empty query or archive).

        With ``embedding="background"`` the search sees every message archived before it: it embeds the newest
        pending messages itself (at most ``QUERY_TIME_LIMIT``, 32) and scores them as if their vectors were stored,
        and it stores nothing (the background thread does). Pending messages beyond that bound, or while the
        embedder fails, are matched by their words only (``stats().unembedded_at_last_search`` counts them).

        Args:
            query: The text to look for.
            top_k: How many hits at most (default: ``options.top_k``).
            min_score: Minimum cosine similarity (default: ``options.min_score``); it applies to every message with
                a similarity, pending ones the search embedded included; messages without one (matched by their
                words only) pass.
            roles: Only messages of these roles.
            since: Only messages said (else archived) at or after this time (epoch seconds or datetime).
            until: Only messages said (else archived) at or before this time.
            sessions: Only messages said in these sessions (a session id, or several; ``None`` among them admits
                messages archived without a session). A scope: nothing outside it is read, neither hits nor the
                neighbours the ranking and the passages look at. None (default): every session.
            exclude: Archive indices that must not be hits (what the model call already holds, see
                ``indices_of``); they may still be read as a hit's neighbours.

        Raises:
            ConfigurationError: If ``top_k`` or ``min_score`` breaks its option's rule (``top_k >= 1``; -1..1).
            InvalidMessageTypeError: If a time, session or index to exclude is of the wrong type.
            EmbeddingError: If the query cannot be embedded in dense mode (hybrid falls back to lexical).
        """
        with _telemetry.SearchOperation("search", self._options.retrieval, self._archive_type) as operation:
            if operation.recording:
                operation.set(self._search_attributes(query, top_k, None))
            search_filter = make_filter(roles, since, until, sessions, exclude)
            hits = self._recall_for(query, min_score, search_filter).search(query, top_k, min_score, search_filter)
            if operation.recording:
                operation.set({"memory.result.count": len(hits), **self._search_outcome()})
        return hits

    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
        *,
        roles: Collection[str] | None = None,
        since: TimeBound = None,
        until: TimeBound = None,
        sessions: Collection[str | None] | str | None = None,
        exclude: Iterable[int] = (),
    ) -> list[Passage]:
        """Search, widen each hit by ``context_radius`` (default: the option), merge into scored passages.

        Arguments and errors as in ``search``; passages come in conversation order. A passage holds no message
        outside ``sessions``.
        """
        with _telemetry.SearchOperation("retrieve", self._options.retrieval, self._archive_type) as operation:
            if operation.recording:
                operation.set(self._search_attributes(query, top_k, context_radius))
            search_filter = make_filter(roles, since, until, sessions, exclude)
            recall = self._recall_for(query, min_score, search_filter)
            passages = recall.passages(query, top_k, context_radius, min_score, search_filter)
            if operation.recording:
                operation.set({**_found(passages), **self._search_outcome()})
        return passages

    def indices_of(self, messages: Sequence[Message]) -> dict[int, int]:
        """Which of ``messages`` are archived, and at which index: ``{position in messages: archive index}``.

        Each message's idempotency key is computed exactly as ``add`` computes it (its tracking id and its exact
        bytes) and looked up in one archive call, so a message that was changed since it was archived, or that
        carries no tracking id, is not found. The hook passes the messages of a model call, and excludes what it
        holds from the search (``exclude=``).
        """
        keys = record_keys(messages)
        wanted = sorted({k for k in keys if k is not None})
        if not wanted:
            return {}
        with self._archive_lock:
            found = self._archive.find_keys(wanted)
        return {position: found[key] for position, key in enumerate(keys) if key is not None and key in found}

    def recall(
        self,
        query: str,
        top_k: int | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
        *,
        cut: float = 0.0,
        roles: Collection[str] | None = None,
        since: TimeBound = None,
        until: TimeBound = None,
        sessions: Collection[str | None] | str | None = None,
        exclude: Iterable[int] = (),
    ) -> Recollection:
        """``retrieve`` for a turn: the passages, and how much the query resembles this archive.

        The hook and the memory store call this once per user turn. Besides the passages it reports the query's
        best similarity to an archived message and this archive's floor (the probes' quantile, see
        ``retrieval.relevance``), so the caller can decide what the turn is worth.

        Args:
            query: The text to look for.
            top_k: Hits at most (default: ``options.top_k``).
            context_radius: Neighbours per hit (default: the option).
            min_score: Minimum cosine similarity (default: the option).
            cut: Leave out hits scoring under this share of the best hit's score (0: keep them).
            roles: Only messages of these roles.
            since: Only messages said (else archived) at or after this time.
            until: Only messages said (else archived) at or before this time.
            sessions: Only messages said in these sessions (a scope, as in ``search``).
            exclude: Archive indices that must not be hits (as in ``search``): what the model call already holds.
                Pending messages among them are not embedded for the search either.

        Raises:
            ConfigurationError: If an argument breaks its option's rule.
            InvalidMessageTypeError: If a time, session or index to exclude is of the wrong type.
        """
        with _telemetry.SearchOperation("recall", self._options.retrieval, self._archive_type) as operation:
            if operation.recording:
                operation.set(self._search_attributes(query, top_k, context_radius))
            search_filter = make_filter(roles, since, until, sessions, exclude)
            recall = self._recall_for(query, min_score, search_filter)
            found = recall.recollect(query, top_k, context_radius, min_score, search_filter, cut=cut)
            floor = self._floor(recall) if found.best_similarity is not None else None
            found = dataclasses.replace(found, floor=floor, relevance=relevance(found.best_similarity, floor))
            if operation.recording:
                operation.set({**_found(found.passages), **_judged(found), **self._search_outcome()})
        return found

    def _search_attributes(
        self, query: object, top_k: int | None, context_radius: int | None
    ) -> dict[str, _telemetry.AttributeValue]:
        """A search span's attributes known before it runs (the query's text only when opted in)."""
        options = self._options
        attributes: dict[str, _telemetry.AttributeValue] = {
            **_telemetry.query_attributes(query),
            "gen_ai.request.model": self.embedder.model_id,
            "memory.max_search_results": top_k if isinstance(top_k, int) else options.top_k,
        }
        if isinstance(context_radius, int) or context_radius is None:
            attributes["memory.context_radius"] = options.context_radius if context_radius is None else context_radius
        return attributes

    def _search_outcome(self) -> dict[str, _telemetry.AttributeValue]:
        """What a finished search span adds about pending messages: those it could match by their words only."""
        return {"memory.pending.unembedded_count": self._queue.last_search_unembedded}

    def _floor(self, recall: Recall) -> float | None:
        """The relevance floor of the archive (computed when due; see ``_calibration``)."""

        def probes() -> list[float | None]:
            dimension = self._archive.dimension
            if dimension is None:
                return []
            vectors = probe_vectors(self.embedder.model_id, dimension, self._checked.query)
            return recall.nearest(vectors)

        return self._calibration.floor(lambda: len(self), probes)

    def _recall_for(self, query: object, min_score: float | None, search_filter: SearchFilter | None) -> Recall:
        """Count a search and return the recall path it reads through.

        Inline mode: a retry that is due embeds and stores what is pending first (the inline contract). Background
        mode: nothing is written; when the search uses a query vector, the newest pending messages are embedded for
        it and the recall path reads the archive through a ``PendingView`` that scores them. Pending messages the
        filter excludes (what the model call holds) cannot be hits, so they are not embedded for the search.
        """
        with self._lock:
            self._searches += 1
        queue = self._queue
        if not queue.in_background:
            self._changed(queue.catch_up())
            return self._recall
        options = self._options
        threshold = options.min_score if min_score is None else min_score
        lexical = options.retrieval == "lexical" and threshold is None  # no query vector: nothing to score
        if not isinstance(query, str) or not query.strip() or lexical or self._checked.unavailable is not None:
            return self._recall
        found = queue.for_search(frozenset() if search_filter is None else search_filter.exclude)
        if found is None:
            return self._recall
        view = PendingView(self._archive, found).as_archive()
        return Recall(view, self._checked, self._archive_lock, lambda: self._options, self._recall.reranker)

    # ------------------------------------------------------------------------------------------- stats and state

    def stats(self) -> MemoryStats:
        """Typed usage statistics (see ``MemoryStats``)."""
        with self._archive_lock:
            figures = self._archive.stats()
        archive = type(self._archive).__name__
        return build_stats(
            figures, self._options, self.embedder.model_id, archive, self._queue, self._checked, self._searches
        )

    def _gauge_figures(self) -> _telemetry.ArchiveFigures | None:
        """The archive's size and backlog for the metric gauges (None once closed); one ``stats`` call."""
        if self._queue.stopping:
            return None
        with self._archive_lock:
            figures = self._archive.stats()
        return _telemetry.ArchiveFigures(self._archive_type, figures.message_count, figures.pending_count)

    def get_memory_usage_stats(self) -> dict[str, Any]:
        """``stats`` as a dict (``message_count``, ``total_memory``, ``pending_embedding_count``, ...)."""
        return self.stats().as_dict()

    def to_state(self) -> dict[str, Any]:
        """What restores this memory, JSON types only, versioned: the archive (or a reference) and the options."""
        with self._archive_lock:
            return export_memory(self._archive, self.embedder.model_id, self._options)

    def load_state(self, state: Mapping[str, Any], *, reembed: bool = False) -> None:
        """Replace the archive with a saved one, without calling the embedder; on an error nothing changes.

        The state is checked against the embedding model first. Then, holding the memory's lock and the store
        lock, the archive is replaced and the running parts forget what belonged to the old one: the embedding
        queue's claims (their vectors are dropped when they arrive), cached query vectors, and the count of
        handed-out indices (the restored archive may hand out lower ones). Only then, with the locks released, a
        state built by another model is embedded again, and the size limits are enforced.

        Args:
            state: What ``to_state`` returned (possibly after a JSON round trip).
            reembed: Embed every message again, instead of refusing, if another model or dimension built it.

        Raises:
            StateError: If the state is corrupt, inconsistent, or not ours.
            EmbeddingModelMismatchError: If another embedding model built it and ``reembed`` is False.
            DimensionMismatchError: If another dimension built it and ``reembed`` is False.
        """
        known = getattr(self.embedder, "configured_dimension", None)
        mismatch = check_compatibility(state, self.embedder.model_id, known, reembed=reembed)
        with self._lock, self._archive_lock:
            restore_archive(self._archive, state, reembed=mismatch)
            self._generation += 1
            self._queue.reset()
            self._checked.clear()
            self._calibration.reset()
            self._added.reset()
            self._changed()
        if mismatch:
            logger.info("messages=<%d> | re-embedding the restored archive with the configured model", len(self))
            self.embed_pending()
        elif self._queue.in_background:
            self._queue.catch_up()  # the thread embeds what the restored archive holds pending
        self._enforce_limits()

    @classmethod
    def from_state(
        cls, state: Mapping[str, Any], *, reembed: bool = False, **kwargs: Unpack[MemoryArguments]
    ) -> SemanticMemory:
        """Build a memory from saved state without calling any embedder; ``kwargs`` override the saved arguments.

        Raises:
            StateError, EmbeddingModelMismatchError, DimensionMismatchError: As ``load_state``.
        """
        memory = cls(**constructor_arguments(state, kwargs))
        memory.load_state(state, reembed=reembed)
        return memory


def _found(passages: Sequence[Passage]) -> dict[str, _telemetry.AttributeValue]:
    """A search span's hits and passages."""
    return {
        "memory.result.count": sum(len(p.hit_indices) for p in passages),
        "memory.passage.count": len(passages),
    }


def _judged(found: Recollection) -> dict[str, _telemetry.AttributeValue]:
    """A recall span's judgement of the query: its relevance, best similarity, the archive's floor, the cut."""
    attributes: dict[str, _telemetry.AttributeValue] = {
        "memory.relevance": found.relevance,
        "memory.cut.count": found.cut,
    }
    if found.best_similarity is not None:
        attributes["memory.best_similarity"] = float(found.best_similarity)
    if found.floor is not None:
        attributes["memory.relevance.floor"] = float(found.floor)
    return attributes


def resolve_memory(source: object, *, pass_as: str) -> SemanticMemory:
    """The ``SemanticMemory`` behind a memory, a manager, a ``SemanticMemoryStore``, a ``SemanticStorage`` or an agent.

    Args:
        source: A ``SemanticMemory``; an object whose ``memory`` is one (the
            ``SemanticSummarizingConversationManager``, the ``SemanticMemoryStore``); or an agent whose conversation
            manager holds one. None when the caller has neither a memory nor an agent.
        pass_as: How the caller is given a memory, for the error message (``"SemanticMemoryHook(memory=...)"``).

    Returns:
        The memory.

    Raises:
        ConfigurationError: If ``source`` holds no ``SemanticMemory`` (the message says what it got and how to fix it).
    """
    if isinstance(source, SemanticMemory):
        return source
    held = getattr(source, "memory", None)
    if isinstance(held, SemanticMemory):
        return held
    manager = getattr(source, "conversation_manager", None)
    held = getattr(manager, "memory", None)
    if isinstance(held, SemanticMemory):
        return held
    if source is None:
        got = "no memory, and no agent=... whose conversation manager holds one"
    elif manager is not None:
        got = f"an agent whose conversation manager is a {type(manager).__name__}, which has no SemanticMemory"
    else:
        got = f"a {type(source).__name__} ({reprlib.repr(source)}), which has no SemanticMemory"
    raise ConfigurationError(
        f"{pass_as.split('(')[0]} expected a SemanticMemory, got {got}. Pass {pass_as}, or give the agent "
        "conversation_manager=SemanticSummarizingConversationManager(...); that manager or a SemanticMemoryStore "
        "may stand in for the memory"
    )
