"""SemanticMemory: the engine behind the conversation manager, the hook, the memory store and the storage.

Concurrency, in one paragraph. A memory holds one lock of its own (``_lock``: its embedding bookkeeping and
counters, never held while the archive or the embedder works); its archive serializes its own connection; its
embedder's one worker thread (``embeddings._worker``) runs every embedding call, queries first. ``add`` checks and
encodes the messages (nothing changes on bad input), commits them in one archive transaction and hands their texts
to the worker in small batches; the worker's callback stores the vectors. A search embeds its query on the worker,
waits at most ``embed_timeout`` for it (not at all when the worker is stalled) and otherwise searches by words, then
asks the archive for candidates, ranks them (``retrieval``, pure) and reads the records of the hits and their
neighbours. Every public method is safe from any thread; none needs the caller's event loop, and the agent-facing
parts call them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import json
import logging
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from strands.types.content import Message
from typing_extensions import Unpack

from strands_semantic_memory import _telemetry
from strands_semantic_memory.archives import resolve_archive
from strands_semantic_memory.archives._protocol import Archive, Candidates, NewRecord, Scope, StoredRecord
from strands_semantic_memory.embeddings import DEFAULT_MODEL, Embedder, resolve_embedder
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.embeddings._worker import EmbeddingWorker, worker_for
from strands_semantic_memory.engine._options import MemoryOptions, OptionArguments, checked_options
from strands_semantic_memory.errors import (
    ConfigurationError,
    EmbeddingBusyError,
    EmbeddingError,
    InvalidMessageError,
    InvalidMessageTypeError,
    MessageNotFoundError,
    StateError,
)
from strands_semantic_memory.messages._codec import encode_message, record_key, searchable_text
from strands_semantic_memory.messages._profile import self_statements, statement_parts
from strands_semantic_memory.messages._session import session_key
from strands_semantic_memory.messages._terms import tokenize
from strands_semantic_memory.messages._text import chunk_text, render_message
from strands_semantic_memory.messages._time import TimeBound, to_epoch
from strands_semantic_memory.retrieval._passages import Passage, build_passages
from strands_semantic_memory.retrieval._ranking import (
    candidate_depth,
    context_indices,
    favour_span,
    prefer_statements,
    rank,
)
from strands_semantic_memory.retrieval._relevance import PROBES, Relevance, probe_floor, relevance
from strands_semantic_memory.retrieval._time import time_span

__all__ = ["MemoryStats", "SearchHit", "SearchResult", "SemanticMemory", "Statement"]

logger = logging.getLogger(__name__)

Role = Literal["user", "assistant"]
ROLES: tuple[str, ...] = get_args(Role)
STORAGE_ROLE = "stored"
"""The role of a ``SemanticStorage`` entry: refused from ``add`` (no message can pass for a storage entry)."""
STORAGE_FIELD = "strands_storage"
"""The ``metadata.custom`` field of a storage entry (``storage._entries``); its ``speaker`` is who said the block,
when the hook told the storage (Strands' stash writes a message's blocks without their role)."""


def speaker(record: StoredRecord) -> str | None:
    """Who said an archived message: its role, or for a storage entry the role of the message it came from.

    None for a tool's result (Strands gives it the user role; the user did not say it).
    """
    if b'"toolResult"' in record.data:
        return None
    if record.role != STORAGE_ROLE:
        return record.role
    if b'"speaker"' not in record.data:
        return None
    field = ((record.message.get("metadata") or {}).get("custom") or {}).get(STORAGE_FIELD)
    said = field.get("speaker") if isinstance(field, dict) else None
    return said if said in ROLES else None


MAX_RETRIES = 6
"""Automatic attempts at a message whose embedding fails; after them only ``embed_pending`` tries it."""
MAX_RETRY_WAIT = 600.0
STALLED_BATCH = 30.0
"""An inline ``add`` stops waiting once one document batch has run this long (a hung embedder)."""
FLOOR_NOTE = "relevance_floor"
FLOOR_GROWTH = 0.25
"""The relevance floor is computed again once the archive grew by this share since."""


@dataclass(frozen=True)
class SearchHit:
    """One archived message found by a search.

    Attributes:
        index: Its archive index.
        score: Its relevance (higher is more relevant).
        record: The archived record (``record.message`` is a fresh copy of the message).
        similarity: Cosine similarity of the query to its best chunk (None: not embedded yet, or no query vector).
    """

    index: int
    score: float
    record: StoredRecord
    similarity: float | None

    @property
    def message(self) -> Message:
        """The message exactly as archived (a fresh copy)."""
        return self.record.message

    @property
    def role(self) -> str:
        """Its role."""
        return self.record.role

    @property
    def session_id(self) -> str | None:
        """The session it was said in (None: unknown)."""
        return self.record.session_id

    @property
    def time(self) -> float:
        """When it was said (else archived), in seconds since the epoch."""
        return self.record.time


@dataclass(frozen=True)
class Statement:
    """What a user said about themselves, in their own words (``messages._profile``).

    Attributes:
        record: The archived message the sentences are in (forgetting it forgets them).
        sentences: The message's self-statements, verbatim (a short reply: the whole reply).
        similarity: Cosine similarity of the request to the nearest of them.
        asked: The assistant's question the message answered, when the statement is a reply to it.
    """

    record: StoredRecord
    sentences: tuple[str, ...]
    similarity: float
    asked: str | None = None


class SearchResult(list[SearchHit]):
    """The hits of one search, best first (a list), with the passages around them and how relevant the query is.

    Attributes:
        passages: The hits widened by ``context_radius`` neighbours each side and merged, in conversation order.
        best_similarity: The query's cosine similarity to its nearest archived message (None: no query vector).
        relevance: How much the query resembles the archive (``retrieval._relevance``): what the hook's gate reads.
        lexical_only: True when the query vector was missing (embedder slow or failing): words alone ranked it.
        floor: The archive's relevance floor the gate read (how close generic questions get), when known.
    """

    passages: list[Passage]
    best_similarity: float | None
    relevance: Relevance
    lexical_only: bool
    floor: float | None

    def __init__(
        self,
        hits: Iterable[SearchHit] = (),
        passages: Sequence[Passage] = (),
        best_similarity: float | None = None,
        relevance: Relevance = "unknown",
        lexical_only: bool = False,
        floor: float | None = None,
    ) -> None:
        """Build a result (the engine does)."""
        super().__init__(hits)
        self.passages, self.floor = list(passages), floor
        self.best_similarity, self.relevance, self.lexical_only = best_similarity, relevance, lexical_only


@dataclass(frozen=True)
class MemoryStats:
    """What ``SemanticMemory.stats`` reports.

    Attributes:
        count: Archived messages.
        pending: Messages waiting for their vectors (found by their words meanwhile).
        nbytes: Bytes of the archived messages and their vectors.
        next_index: The index the next message gets.
        dimension: The vectors' dimension (None before the first).
        model_id: The embedding model.
        user_id: Whose memory it is.
        archive: The archive's kind (``SqliteArchive``, ``PostgresArchive``).
        searches: Searches since the memory was built.
        lexical_searches: Of those, how many searched by words alone (no query vector in time).
        embedding_failures: Embedding calls that failed since the memory was built.
    """

    count: int
    pending: int
    nbytes: int
    next_index: int
    dimension: int | None
    model_id: str
    user_id: str | None
    archive: str
    searches: int
    lexical_searches: int
    embedding_failures: int

    def as_dict(self) -> dict[str, Any]:
        """The figures as a dict."""
        return dict(vars(self))


class SemanticMemory:
    """A lossless, searchable archive of Strands messages.

    Example:
        ```python
        from strands_semantic_memory import SemanticMemory

        memory = SemanticMemory()
        memory.add([{"role": "user", "content": [{"text": "Our staging database is db-stg-04, port 6432."}]}])
        hits = memory.search("staging database port")
        assert hits[0].index == 0 and "6432" in hits.passages[0].messages[0]["content"][0]["text"]
        ```
    """

    def __init__(
        self,
        embedding_model: str = DEFAULT_MODEL,
        *,
        embedder: Embedder | None = None,
        archive: Archive | None = None,
        archive_path: str | os.PathLike[str] | None = None,
        user_id: str | None = None,
        clock: Callable[[], float] | None = None,
        aws_region: str | None = None,
        embedding_dimensions: int | None = None,
        **options: Unpack[OptionArguments],
    ) -> None:
        """Create a memory; the model loads with the first embedding.

        Args:
            embedding_model: A sentence-transformers model name or folder (default: the bundled all-MiniLM-L6-v2),
                or ``"bedrock:<model id>"``.
            embedder: A ready ``Embedder`` instead of a model name.
            archive: Where the messages are kept (default: in process, ``SqliteArchive()``).
            archive_path: A durable SQLite file instead (its folder must exist).
            user_id: Whose memory it is: a printable string of at most 256 characters. A file records its user and
                refuses another; None opens a file as the user it records.
            clock: What "now" is, in seconds since the epoch (default ``time.time``): each record's ``archived_at``.
            aws_region: Bedrock only: the region.
            embedding_dimensions: Bedrock only: the output dimension.
            **options: ``MemoryOptions`` fields (``top_k``, ``context_radius``, ``embedding``, ...).

        Raises:
            ConfigurationError: If an option is unknown or invalid (the message names it), or the archive is another
                user's.
            EmbeddingModelMismatchError: If the archive was built by another embedding model.
        """
        self._options = checked_options(**options)
        if clock is not None and not callable(clock):
            raise ConfigurationError(f"clock must be a callable returning seconds since the epoch, got {clock!r}")
        if embedder is not None and not isinstance(embedder, Embedder):
            raise ConfigurationError(f"embedder must be an Embedder, got {type(embedder).__name__}")
        self._clock = clock or time.time
        self.embedder: Embedder = embedder or resolve_embedder(
            embedding_model, aws_region=aws_region, embedding_dimensions=embedding_dimensions
        )
        self._archive = resolve_archive(archive, archive_path, user_id)
        self._archive.bind(self.embedder.model_id, None)
        self._worker: EmbeddingWorker = worker_for(self.embedder)
        self._lock = threading.Lock()
        self._in_flight: set[int] = set()
        self._failed: dict[int, tuple[int, float]] = {}  # index -> (attempts, monotonic time of the next one)
        self._failures = self._searches = self._lexical = 0
        self._floor: tuple[float | None, int] | None = None  # (floor, archive size when computed)
        self._added_since_floor = 0
        self._version = 0
        self._closed = False
        self._worker.warm_up()  # the model loads while the agent is being set up
        _telemetry.watch(weakref.WeakMethod(self._figures))
        self._schedule()  # what a durable archive left pending

    # ------------------------------------------------------------------ properties

    @property
    def options(self) -> MemoryOptions:
        """The current options (frozen; change them with ``configure``)."""
        return self._options

    def configure(self, **changes: Unpack[OptionArguments]) -> None:
        """Change options, checked all together first; in effect from the next call.

        Raises:
            ConfigurationError: If a name is not an option or a value is invalid; then nothing changed.
        """
        self._options = checked_options(self._options, **changes)

    @property
    def archive(self) -> Archive:
        """The ``Archive`` the messages are kept in."""
        return self._archive

    @property
    def user_id(self) -> str | None:
        """Whose memory this is (None: a user not named)."""
        return self._archive.user_id

    @property
    def clock(self) -> Callable[[], float]:
        """What "now" is for this memory."""
        return self._clock

    @property
    def version(self) -> int:
        """Counts the changes made through this memory (adds, removals, restores)."""
        return self._version

    def __len__(self) -> int:
        return self._archive.stats().count

    # ------------------------------------------------------------------ writing

    def add(
        self,
        messages: Sequence[Message],
        *,
        session_id: str | None = None,
        said_at: TimeBound | Sequence[TimeBound] = None,
    ) -> list[int | None]:
        """Archive messages verbatim, in one transaction.

        Args:
            messages: Strands messages (``{"role": "user" | "assistant", "content": [...]}``).
            session_id: The session they were said in (any string: a long one is kept as its digest).
            said_at: When they were said: one time for all, or one per message (default: unknown).

        Returns:
            Each message's archive index (its earlier one if it was archived before), or None for a message that was
            forgotten: a forgotten message is never archived again.

        Raises:
            InvalidMessageTypeError: If ``messages`` is not a list of messages.
            InvalidMessageError: If one is not a Strands message (its position is named); nothing was archived.
            ArchiveError: If the archive could not commit; nothing was archived.
        """
        indices = self._add_records(self.new_records(messages, session_id=session_id, said_at=said_at))
        return indices

    def new_records(
        self,
        messages: Sequence[Message],
        *,
        session_id: str | None = None,
        said_at: TimeBound | Sequence[TimeBound] = None,
        roles: Sequence[str] = ROLES,
    ) -> list[NewRecord]:
        """Check and encode messages for the archive, changing nothing (``add`` archives them)."""
        if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
            raise InvalidMessageTypeError(f"messages must be a list of messages, got {type(messages).__name__}")
        if isinstance(said_at, Sequence) and not isinstance(said_at, str):
            if len(said_at) != len(messages):
                raise InvalidMessageError(f"said_at has {len(said_at)} times for {len(messages)} messages")
            times = [to_epoch(t, "said_at") for t in said_at]
        else:
            times = [to_epoch(said_at, "said_at")] * len(messages)
        session = session_key(session_id)
        now = self._now()
        records = []
        for position, message in enumerate(messages):
            if not isinstance(message, Mapping) or message.get("role") not in roles:
                raise InvalidMessageError(f"message {position} is not a Strands message with a role in {tuple(roles)}")
            if not isinstance(message.get("content"), list):
                raise InvalidMessageError(f"message {position} has no content list")
            data = encode_message(message)
            text = searchable_text(render_message(message))
            key = record_key(data, message.get("tracking_id"))
            records.append(NewRecord(data, str(message["role"]), key, text, now, times[position], session))
        return records

    def _now(self) -> float:
        try:
            now = float(self._clock())
        except Exception as error:  # a clock must not lose a message: the wall clock stands in
            logger.warning("error=<%s> | the memory's clock failed; using the system time", type(error).__name__)
            return time.time()
        if not math.isfinite(now) or now < 0:
            logger.warning("now=<%r> | the memory's clock gave no valid time; using the system time", now)
            return time.time()
        return now

    def _add_records(self, records: Sequence[NewRecord]) -> list[int | None]:
        """Commit records in one transaction, then embed them (inline: wait) and apply the limits."""
        if not records:
            return []
        with _telemetry.operation("memory.add", **{"memory.message.count": len(records)}) as span:
            indices = self._archive.add(records)
            self._version += 1
            self._added_since_floor += len(records)
            evicted = self._archive.evict(self._options.max_messages, self._options.max_bytes)
            if span.is_recording():
                span.set_attribute("memory.forgotten.count", indices.count(None))
        _telemetry.METRICS.added.add(len(records) - indices.count(None))
        if evicted:
            _telemetry.METRICS.removed.add(evicted, {"memory.reason": "evicted"})
        futures = self._schedule()
        if self._options.embedding == "inline" and futures:
            self._wait(futures)
        return indices

    def _wait(self, futures: Iterable[concurrent.futures.Future[Any]]) -> bool:
        """Wait for embedding futures while the worker makes progress; False when it stalled for ``embed_timeout``."""
        pending = set(futures)
        while pending:
            done, pending = concurrent.futures.wait(pending, timeout=self._options.embed_timeout)
            if not done and self._worker.documents_stalled_for >= max(self._options.embed_timeout, STALLED_BATCH):
                logger.warning(
                    "pending=<%d>, seconds=<%.1f> | the embedder made no progress; the messages stay pending and are "
                    "found by their words until it does",
                    len(pending),
                    self._worker.documents_stalled_for,
                )
                return False
        return True

    def _schedule(self, force: bool = False) -> list[concurrent.futures.Future[None]]:
        """Hand pending messages to the worker in batches (those not in flight and not waiting for a retry)."""
        now = time.monotonic()
        with self._lock:
            if self._closed:
                return []
            skip = set(self._in_flight)
            if not force:
                skip |= {i for i, (attempts, due) in self._failed.items() if attempts >= MAX_RETRIES or due > now}
        records = self._archive.pending(10_000, skip)
        before = {r.index: r for r in self._archive.get([r.index - 1 for r in records if speaker(r) == "user"])}
        batches: list[list[tuple[int, list[str], list[str]]]] = [[]]
        size = 0
        for record in records:
            chunks, _ = chunk_text(record.text, self._options.chunk_chars, self._options.max_chunks)
            statements: list[str] = []
            if speaker(record) == "user":
                previous = before.get(record.index - 1)
                asked = previous.text if previous is not None and speaker(previous) == "assistant" else None
                if previous is not None and previous.session_id != record.session_id:
                    asked = None
                statements = [part for said in self_statements(record.text, asked) for part in statement_parts(said)]
            if size and size + len(chunks) + len(statements) > self._options.embedding_batch_size:
                batches.append([])
                size = 0
            batches[-1].append((record.index, chunks or [record.text], statements))
            size += len(chunks) + len(statements)
        futures = []
        for batch in batches:
            if batch:
                futures.append(self._submit(batch))
        return futures

    def _submit(self, batch: list[tuple[int, list[str], list[str]]]) -> concurrent.futures.Future[None]:
        """Hand one batch to the worker (each distinct text once: a statement is often its whole message).

        Returns:
            A future that is done once the batch's vectors are stored, or its failure noted (a waiter on the worker's
            own future could wake before the vectors are stored: callbacks run after waiters are woken).
        """
        with self._lock:
            self._in_flight.update(index for index, _, _ in batch)
        texts = list(dict.fromkeys(text for _, chunks, statements in batch for text in (*chunks, *statements)))
        stored: concurrent.futures.Future[None] = concurrent.futures.Future()
        future = self._worker.embed_documents(texts)
        future.add_done_callback(functools.partial(self._stored, batch, texts, stored))
        return stored

    def _stored(
        self,
        batch: list[tuple[int, list[str], list[str]]],
        texts: list[str],
        stored: concurrent.futures.Future[None],
        future: concurrent.futures.Future[Vectors],
    ) -> None:
        try:
            self._store(batch, texts, future)
        except Exception as failure:  # _store handles its failures; this keeps waiters bounded whatever happens
            logger.warning("error=<%s> | storing vectors failed", type(failure).__name__)
        finally:
            raised = None if future.cancelled() else future.exception()
            if raised is None:
                stored.set_result(None)
            else:
                stored.set_exception(raised)

    def _store(
        self,
        batch: list[tuple[int, list[str], list[str]]],
        texts: list[str],
        future: concurrent.futures.Future[Vectors],
    ) -> None:
        """Store a batch's vectors, or note the failure (in the worker's thread)."""
        indices = [index for index, _, _ in batch]
        try:
            vectors = future.result()
            _telemetry.METRICS.embedded.add(len(indices))
            self._archive.bind(self.embedder.model_id, vectors.shape[1])
            row = {text: position for position, text in enumerate(texts)}
            rows = {index: vectors[[row[c] for c in chunks]] for index, chunks, _ in batch}
            said = {index: vectors[[row[s] for s in statements]] for index, _, statements in batch if statements}
            self._archive.set_vectors(rows, said)
        except Exception as error:  # an embedder or archive failure leaves the messages pending, never lost
            if self._closed or isinstance(error, (concurrent.futures.CancelledError, EmbeddingBusyError)):
                with self._lock:  # closed or exiting (a durable archive embeds them when reopened), or the queue was
                    self._in_flight.difference_update(indices)  # full: the next add or embed_pending asks again
                logger.debug("messages=<%d>, error=<%s> | not embedded yet", len(indices), type(error).__name__)
                return
            with self._lock:
                self._failures += 1
                now = time.monotonic()
                for index in indices:
                    attempts = self._failed.get(index, (0, 0.0))[0] + 1
                    wait = min(self._options.retry_interval * 2 ** (attempts - 1), MAX_RETRY_WAIT)
                    self._failed[index] = (attempts, now + wait)
            logger.warning(
                "messages=<%d>, error=<%s> | embedding failed; the messages stay pending and are found by their words",
                len(indices),
                type(error).__name__,
            )
            if len(batch) > 1:
                with self._lock:  # one bad text must not hold back the rest: try each message on its own
                    for index in indices:
                        self._failed[index] = (self._failed[index][0] - 1, 0.0)
                    self._in_flight.difference_update(indices)
                for part in batch:
                    self._submit([part])
                return
        else:
            with self._lock:
                for index in indices:
                    self._failed.pop(index, None)
        with self._lock:
            self._in_flight.difference_update(indices)

    def embed_pending(self, timeout: float | None = None) -> int:
        """Embed every pending message now, also those whose automatic retries are used up, and wait.

        Returns:
            How many messages are still pending afterwards.

        Raises:
            EmbeddingError: If the embedder failed (the cause is chained); the messages stay pending.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._failed.clear()
        error: EmbeddingError | None = None
        late = False
        before = self._archive.stats().pending
        while error is None and not late:  # batches of up to 10,000 messages, while each round makes progress
            futures = self._schedule(force=True)
            if not futures:
                break
            busy = False
            for future in futures:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    future.result(timeout=left)
                except concurrent.futures.TimeoutError:
                    late = True
                    break
                except EmbeddingBusyError:
                    busy = True  # the worker's queue is full (other memories too): ask again once it drains
                except EmbeddingError as failure:
                    error = error or failure
            late = late or (deadline is not None and time.monotonic() >= deadline)
            if busy:
                time.sleep(0.05)
                continue
            after = self._archive.stats().pending
            if after >= before:
                break  # stored nothing (an archive that refuses vectors): the failures are noted
            before = after
        while self._in_flight and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.005)  # single-message retries of a failed batch
        if error is not None and self._failed:
            raise error
        return self._archive.stats().pending

    # ------------------------------------------------------------------ reading

    def get(self, index: int) -> Message:
        """The message archived at ``index`` (a fresh copy).

        Raises:
            MessageNotFoundError: If no live message has that index.
        """
        return self.record(index).message

    def record(self, index: int) -> StoredRecord:
        """The record archived at ``index``.

        Raises:
            MessageNotFoundError: If no live message has that index.
        """
        found = self._archive.get([index]) if isinstance(index, int) and not isinstance(index, bool) else []
        if not found:
            raise MessageNotFoundError(index)
        return found[0]

    def records(self, start: int = 0, end: int | None = None, scope: Scope | None = None) -> list[StoredRecord]:
        """The live records with ``start <= index <= end`` (``end`` None: to the newest), in order."""
        if end is not None and end - start <= 10_000:
            return self._archive.get(range(start, end + 1), scope)
        found: list[StoredRecord] = []
        after = start - 1
        while batch := self._archive.records(after, 1000):
            found.extend(r for r in batch if end is None or r.index <= end)
            if end is not None and batch[-1].index >= end:
                break
            after = batch[-1].index
        return found if scope is None else [r for r in found if scope.reads(r.session_id)]

    def indices_of(self, messages: Sequence[Message]) -> dict[int, int]:
        """Position in ``messages`` -> archive index, for the messages that are archived (what a call holds)."""
        keys: dict[str, int] = {}
        for position, message in enumerate(messages):
            if isinstance(message, Mapping) and message.get("tracking_id"):
                keys[record_key(encode_message(message), message.get("tracking_id"))] = position
        found = self._archive.find_keys(keys)
        return {keys[key]: index for key, index in found.items()}

    def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
        sessions: Iterable[str | None] | None = None,
        exclude: Iterable[int] = (),
        roles: Iterable[str] | None = None,
        since: TimeBound = None,
        until: TimeBound = None,
    ) -> SearchResult:
        """The archived messages most relevant to ``query``, best first, with the passages around them.

        Args:
            query: The text to search for.
            top_k: How many hits (default: the ``top_k`` option).
            context_radius: Neighbours each passage adds on each side of a hit (default: the option).
            min_score: Drop hits less similar than this (default: the option).
            sessions: Search only these sessions (``None`` inside admits records without one); nothing outside is
                read, neither hits nor neighbours. Default: every session.
            exclude: Archive indices that must not be hits (what the model call already holds).
            roles: Only hits of these roles.
            since: Only hits said (else archived) at or after this time.
            until: Only hits said (else archived) at or before this time.

        Raises:
            InvalidMessageTypeError: If an argument has the wrong type.
            EmbeddingError: In dense mode, when the query cannot be embedded.
        """
        if not isinstance(query, str):
            raise InvalidMessageTypeError(f"query must be a string, got {type(query).__name__}")
        options = self._options
        want = options.top_k if top_k is None else top_k
        radius = options.context_radius if context_radius is None else context_radius
        for name, value, low in (("top_k", want, 1), ("context_radius", radius, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise InvalidMessageTypeError(f"{name} must be an integer >= {low}, got {value!r}")
        scope = Scope(
            sessions=None if sessions is None else frozenset(session_key(s) for s in sessions),
            roles=None if roles is None else frozenset(roles),
            since=to_epoch(since, "since"),
            until=to_epoch(until, "until"),
            exclude=frozenset(exclude),
        )
        text = searchable_text(query).strip()
        with self._lock:
            self._searches += 1
        if not text:
            return SearchResult()
        started = time.perf_counter()
        attributes = {
            "memory.top_k": want,
            "memory.query": query if _telemetry.content_allowed("memory.query") else None,
        }
        with _telemetry.operation("memory.search", **attributes) as span:
            result = self._search(text, want, radius, min_score, scope)
            if span.is_recording():
                span.set_attribute("memory.hit.count", len(result))
                span.set_attribute("memory.relevance", result.relevance)
                span.set_attribute("memory.lexical_only", result.lexical_only)
        _telemetry.METRICS.search_ms.record((time.perf_counter() - started) * 1000)
        return result

    def _search(self, text: str, want: int, radius: int, min_score: float | None, scope: Scope) -> SearchResult:
        options = self._options
        vector = None if options.retrieval == "lexical" else self._query_vector(text)
        mode = options.retrieval if vector is not None or options.retrieval != "hybrid" else "lexical"
        if vector is None and options.retrieval == "hybrid":
            with self._lock:
                self._lexical += 1
        depth = candidate_depth(want, options.ranking)
        terms = tokenize(text)
        candidates = self._archive.candidates(terms, vector, depth, scope)
        span = time_span(text, self._now()) if options.ranking.time_boost else None
        if span is not None:  # what was said in the span the question names is a candidate too, however far down
            since, until = max(span[0], scope.since or span[0]), min(span[1], scope.until or span[1])
            within = dataclasses.replace(scope, since=since, until=until)
            extra = self._archive.candidates(terms, vector, depth, within)
            candidates = Candidates(
                dense={**extra.dense, **candidates.dense}, lexical={**extra.lexical, **candidates.lexical}
            )
        similarity: dict[int, float] = {}
        if vector is not None:
            wanted = context_indices(candidates, mode=mode, want=want, options=options.ranking)
            similarity = self._archive.similarities(vector, wanted)
        found = set(candidates.dense) | set(candidates.lexical)
        reach = options.ranking.neighbour_hits
        around = {i + d for i in found for d in range(-reach, reach + 1)} - found
        eligible = self._archive.eligible(around, scope) if around else set()
        ranked = rank(candidates, similarity, mode=mode, want=want * 2, options=options.ranking, eligible=eligible)
        floor = min_score if min_score is not None else options.min_score
        near = {**candidates.dense, **similarity}
        records = {r.index: r for r in self._archive.get([i for i, _ in ranked], scope)}
        ranked = prefer_statements(ranked, {i: r.text for i, r in records.items()}, options.ranking.question_weight)
        ranked = favour_span(ranked, {i: r.time for i, r in records.items()}, span, options.ranking.time_boost)
        hits: list[SearchHit] = []
        for index, score in ranked:
            record = records.get(index)
            if record is None or not scope.hit(record):
                continue
            sim = near.get(index)
            if floor is not None and sim is not None and sim < floor:
                continue
            hits.append(SearchHit(index, score, record, sim))
            if len(hits) == want:
                break
        best = max(candidates.dense.values(), default=None)
        passages = self._passages(hits, radius, records, dict(ranked), scope)
        relevance_of, floor = self._relevance(best, scope)
        if relevance_of == "uncertain" and not candidates.lexical:
            relevance_of = "unrelated"  # near the floor and no word in common (retrieval._relevance, rule 1)
        return SearchResult(hits, passages, best, relevance_of, vector is None, floor)

    def _passages(
        self,
        hits: Sequence[SearchHit],
        radius: int,
        records: dict[int, StoredRecord],
        pool: Mapping[int, float],
        scope: Scope,
    ) -> list[Passage]:
        if not hits:
            return []
        wanted = {h.index + d for h in hits for d in range(-radius, radius + 1)} - set(records)
        if wanted:
            records.update((r.index, r) for r in self._archive.get(wanted, scope))
        return build_passages({h.index: h.score for h in hits}, radius, records, pool)

    def _query_vector(self, text: str) -> Vectors | None:
        """The query's vector, or None when the worker is stalled, late or failing (the search uses words)."""
        timeout = self._options.embed_timeout
        if self._worker.query_stalled_for >= timeout:
            return None  # a stalled worker: do not wait for it at all
        future = self._worker.embed_queries([text])
        try:
            vectors: Vectors = future.result(timeout=timeout)
            row: Vectors = vectors[0]
            return row
        except concurrent.futures.TimeoutError:  # not cancelled: another search may share it, and it fills the cache
            logger.warning("seconds=<%.1f> | the query vector was late; searching by words", timeout)
        except EmbeddingError as error:
            if self._options.retrieval == "dense":
                raise
            logger.warning("error=<%s> | the query could not be embedded; searching by words", error)
        if self._options.retrieval == "dense":
            raise EmbeddingError("the query vector was late (dense retrieval has no words to fall back on)")
        return None

    def _relevance(self, best: float | None, scope: Scope) -> tuple[Relevance, float | None]:
        """The relevance gate's reading of a search (``retrieval._relevance``).

        The archive's floor (how close generic questions get to it) is kept with the archive (``set_note``), so a new
        memory over a durable archive does not probe it again; it is computed again once the messages added through
        this memory since reach a quarter of the archive's size then.
        """
        if best is None:
            return "unknown", None
        with self._lock:
            cached, added = self._floor, self._added_since_floor
        if cached is None:
            cached = self._noted_floor()
        if cached is None or added >= max(1.0, FLOOR_GROWTH * cached[1]):
            try:
                vectors = self._worker.embed_queries(list(PROBES)).result(timeout=self._options.embed_timeout * 5)
            except Exception:  # the gate reads "unknown" when the probes cannot be embedded
                return "unknown", None
            bests = [max(self._archive.candidates([], v, 1, Scope()).dense.values(), default=None) for v in vectors]
            cached = (probe_floor([b for b in bests if b is not None]), self._archive.stats().count)
            with contextlib.suppress(Exception):  # a note is best effort
                self._archive.set_note(FLOOR_NOTE, json.dumps({"floor": cached[0], "size": cached[1]}))
        with self._lock:
            if self._floor != cached:
                self._floor, self._added_since_floor = cached, 0
        return relevance(best, cached[0]), cached[0]

    def _noted_floor(self) -> tuple[float | None, int] | None:
        try:
            noted = json.loads(self._archive.get_note(FLOOR_NOTE) or "null")
            return (float(noted["floor"]) if noted["floor"] is not None else None, int(noted["size"]))
        except Exception:  # no note, or one this release cannot read: computed again
            return None

    def statements(
        self,
        query: str,
        *,
        top_k: int = 8,
        sessions: Iterable[str | None] | None = None,
        exclude: Iterable[int] = (),
    ) -> list[Statement]:
        """What the user said about themselves that bears on ``query``: their own sentences, nearest first.

        The sentences come from the user's archived messages (``messages._profile.self_statements``), each embedded on
        its own when the message was; nothing is inferred or rewritten. Empty without a query vector.
        """
        text = searchable_text(query).strip()
        vector = self._query_vector(text) if text and self._options.retrieval != "lexical" else None
        if vector is None:
            return []
        scope = Scope(
            sessions=None if sessions is None else frozenset(session_key(s) for s in sessions),
            roles=frozenset({"user", STORAGE_ROLE}),  # only what the user said has statement vectors
            exclude=frozenset(exclude),
        )
        found = self._archive.candidates([], vector, top_k, scope, statements=True).dense
        records = {r.index: r for r in self._archive.get({i for i in found} | {i - 1 for i in found}, scope)}
        result = []
        for index, similarity in found.items():
            record = records.get(index)
            if record is None or speaker(record) != "user":
                continue
            previous = records.get(index - 1)
            asked = previous.text if previous is not None and speaker(previous) == "assistant" else None
            sentences = self_statements(record.text, asked)
            if sentences:
                reply = asked is not None and not self_statements(record.text)  # a reply to the assistant's question
                result.append(Statement(record, tuple(sentences), similarity, asked if reply else None))
        return result

    def find_text(self, text: str, *, sessions: Iterable[str | None] | None = None, limit: int = 10_000) -> list[int]:
        """Indices of the messages whose text contains ``text`` (case-insensitive), oldest first."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidMessageTypeError("text must be a non-empty string")
        scope = None if sessions is None else Scope(sessions=frozenset(session_key(s) for s in sessions))
        return self._archive.find_text(text.strip(), scope, limit)

    # ------------------------------------------------------------------ removing

    def forget(self, indices: Iterable[int] | None = None, *, query: str | None = None) -> list[int]:
        """Delete messages for good: never returned, never injected, never archived again from any session.

        Args:
            indices: Archive indices to delete.
            query: Or: delete every message whose text contains this (case-insensitive, at least 3 characters).

        Returns:
            The indices that were deleted.

        Raises:
            InvalidMessageTypeError: If neither or both are given, or an index is not an integer.
        """
        if (indices is None) == (query is None):
            raise InvalidMessageTypeError("pass indices or query, not both and not neither")
        if query is not None:
            if not isinstance(query, str) or len(query.strip()) < 3:
                raise InvalidMessageTypeError("query must be a string of at least 3 characters")
            wanted = self.find_text(query)
        else:
            wanted = list(indices)  # type: ignore[arg-type]
            if not all(isinstance(i, int) and not isinstance(i, bool) for i in wanted):
                raise InvalidMessageTypeError("indices must be integers")
        live = [r.index for r in self._archive.get(wanted)]
        if live:
            with _telemetry.operation("memory.forget", **{"memory.message.count": len(live)}):
                self._archive.forget(live)
            self._version += 1
            _telemetry.METRICS.removed.add(len(live), {"memory.reason": "forgotten"})
        return live

    def forget_all(self) -> int:
        """Delete every message of this memory's user for good (their digests stay, so none is archived again)."""
        with _telemetry.operation("memory.forget", **{"memory.scope": "user"}):
            removed = self._archive.forget_all()
        _telemetry.METRICS.removed.add(removed, {"memory.reason": "forgotten"})
        self._archive_changed()
        return removed

    # ------------------------------------------------------------------ state

    def stats(self) -> MemoryStats:
        """What the memory holds and has done."""
        archived = self._archive.stats()
        return MemoryStats(
            count=archived.count,
            pending=archived.pending,
            nbytes=archived.nbytes,
            next_index=archived.next_index,
            dimension=archived.dimension,
            model_id=self.embedder.model_id,
            user_id=self.user_id,
            archive=type(self._archive).__name__,
            searches=self._searches,
            lexical_searches=self._lexical,
            embedding_failures=self._failures,
        )

    def _figures(self) -> dict[str, float]:
        stats = self._archive.stats()
        return {"count": stats.count, "pending": stats.pending}

    def to_state(self) -> dict[str, Any]:
        """The memory as JSON: its options and the archive (in process) or a reference to it (a file, a database)."""
        return {"options": self._options.to_dict(), "archive": self._archive.to_state()}

    def _archive_changed(self) -> None:
        """After ``forget_all`` or ``load_state``: nothing in flight or failing; the relevance floor computed again."""
        with self._lock:
            self._in_flight.clear()
            self._failed.clear()
            self._floor = None
        with contextlib.suppress(Exception):  # the archive was replaced or emptied: its floor is computed again
            if self._archive.get_note(FLOOR_NOTE) is not None:  # (PostgreSQL's forget_all removed it with the user)
                self._archive.set_note(FLOOR_NOTE, "null")
        self._version += 1

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Replace the archive with a saved one (see ``Archive.load_state``); options saved with it apply.

        Raises:
            StateError: If the state is corrupt, another user's or names another archive; nothing changed.
        """
        if not isinstance(state, Mapping) or not isinstance(state.get("archive"), Mapping):
            raise StateError("a memory state is a dict with an 'archive' entry")
        try:
            options = checked_options(**state.get("options", {}))
        except (ConfigurationError, TypeError) as error:
            raise StateError(f"the saved options are invalid: {error}") from error
        model = state["archive"].get("model_id")
        if model is not None and model != self.embedder.model_id:
            from strands_semantic_memory.errors import EmbeddingModelMismatchError

            raise EmbeddingModelMismatchError(model, self.embedder.model_id)
        self._archive.load_state(state["archive"])
        self._options = options
        self._archive_changed()
        self._schedule()

    @classmethod
    def from_state(cls, state: Mapping[str, Any], **arguments: Any) -> SemanticMemory:
        """A memory restored from ``to_state`` (``arguments``: as for ``SemanticMemory``, e.g. ``embedder=``).

        A state that references a file or a database is opened there (``archive_path=`` is taken from it). The
        options saved with the state apply, except those named in ``arguments``.
        """
        reference = state.get("archive", {}) if isinstance(state, Mapping) else {}
        if isinstance(reference, Mapping) and reference.get("kind") == "sqlite" and "archive" not in arguments:
            arguments.setdefault("archive_path", reference.get("path"))
        if isinstance(reference, Mapping):
            arguments.setdefault("user_id", reference.get("user_id"))
        memory = cls(**arguments)
        memory.load_state(state)
        given = {k: v for k, v in arguments.items() if k in MemoryOptions.model_fields}
        if given:  # options named here win over the saved ones
            memory.configure(**given)
        return memory

    def close(self) -> None:
        """Stop embedding for this memory and close its archive (pending messages of a durable archive wait there)."""
        with self._lock:
            self._closed = True
        self._archive.close()

    def __enter__(self) -> SemanticMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SemanticMemory(archive={self._archive!r}, model={self.embedder.model_id!r})"
