"""The embedding queue: archived messages waiting for vectors, embedded outside the engine's lock.

Archiving never waits for the embedder: a message is stored first, marked pending, and embedded here. A failure
leaves messages pending, never lost, and is contained:

- one text the embedder rejects leaves only that message pending: a failing batch is split in halves until the
  failing messages are isolated (at most ``MAX_CALLS_PER_RUN`` calls per run, so an outage costs a bounded
  number of calls);
- after a failure, automatic retries (from ``add`` and ``search``) wait ``retry_interval`` seconds, so an
  outage does not resend the growing backlog on every call; ``drain`` (``embed_pending``) retries now;
- a restore (``load_state``) starts a new generation: vectors computed for the old archive are dropped, never
  attached to a restored message that happens to reuse the index;
- changed options (``reconfigure``) apply from the next claim on; claims in flight, the
  generation and the failure clock are kept, so no message is embedded twice;
- a model that is not available (``ConfigurationError``, ``MissingDependencyError``) stops automatic runs until a
  run succeeds: retrying cannot help, and each retry would cost the failed load again.

Background embedding (``wake``): a daemon thread, started on the first request and stopped by ``close``, embeds
what is pending in batches, so archiving inside a user's turn costs only the commit. Claims keep it and callers
in step: a message is embedded by one of them, and ``drain`` (``embed_pending``) also waits for the batch the
thread has in hand. A streak of failures is logged once at warning level, and the messages stay pending
(searchable lexically; a durable archive keeps them pending across a restart). At interpreter exit the threads
are stopped after their current batch.

Closing (``close``, before the memory closes its archive): the thread is asked to stop and joined for up to
``STOP_TIMEOUT`` seconds, so the batch in hand is normally stored. From then on the thread never calls the archive
again: a batch still being embedded when the wait ends is dropped (its messages stay pending, and a durable
archive embeds them when it is opened again). An archive closed under the thread would otherwise be used after its
close, and a PostgreSQL archive reopens its connection pool on use: a pool nobody closes.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingError,
    MissingDependencyError,
    SemanticMemoryError,
)
from strands_semantic_memory.messages._text import chunk_text

if TYPE_CHECKING:
    from strands_semantic_memory.engine._options import MemoryOptions
from strands_semantic_memory.archives._protocol import Archive

logger = logging.getLogger(__name__)

MAX_CALLS_PER_RUN = 16
"""Embedder calls one run may make while isolating failing texts."""

EmbedFn = Callable[[Sequence[str]], Vectors]
STOP_TIMEOUT = 30.0
"""Seconds ``close`` (and interpreter exit) waits for the background thread to finish its batch."""
MIN_RETRY_SECONDS = 1.0
"""The background thread retries a failure at most this often, whatever ``embedding_retry_interval`` says."""
IDLE_SECONDS = 60.0
"""The background thread ends after this long without work (a memory dropped without ``close`` leaves no thread);
the next archive starts a new one."""

_live_queues: weakref.WeakSet[EmbeddingQueue] = weakref.WeakSet()


class _Detached(Exception):
    """Raised in the background thread at an archive call once ``close`` has detached the queue from its archive."""


def _permanent(error: BaseException) -> bool:
    """Whether a failure means the model is unavailable (a retry cannot succeed) rather than a passing outage."""
    return isinstance(error, (ConfigurationError, MissingDependencyError))


@atexit.register
def _stop_all() -> None:
    """At exit, let every background thread finish its batch.

    Native code (ONNX Runtime, PyTorch) still running in a thread the interpreter abandons can abort the process,
    and a durable archive would lose the batch's vectors. Every thread is asked to stop first, so they finish their
    batches together rather than one after another; an idle thread ends at once.
    """
    queues = list(_live_queues)
    for queue in queues:
        queue.request_stop()
    for queue in queues:
        queue.close()


class EmbeddingQueue:
    """Claims pending messages, embeds them in batches, and stores their vectors. Thread-safe."""

    def __init__(
        self,
        embed: EmbedFn,
        *,
        chunk_chars: int,
        max_chunks: int,
        retry_interval: float,
        batch_size: int,
    ) -> None:
        """Create the queue.

        Args:
            embed: Embeds document texts (already checked and normalized by the caller).
            chunk_chars: Characters per chunk.
            max_chunks: Chunks per message at most.
            retry_interval: Seconds to wait after a failure before an automatic retry.
            batch_size: Messages per run at most.
        """
        self._embed = embed
        self._chunk_chars = chunk_chars
        self._max_chunks = max_chunks
        self._retry_interval = retry_interval
        self._batch_size = batch_size
        self._state_lock = threading.Lock()
        self._settled = threading.Condition(self._state_lock)
        self._in_flight: set[int] = set()
        self._generation = 0
        self._last_failure: float | None = None
        self._blocked = False
        self.last_error: str | None = None
        self.failures = 0
        self.embedded = 0
        self._target: tuple[Archive, AbstractContextManager[object], Callable[[int], object]] | None = None
        self._signal = threading.Condition(threading.Lock())
        self._requested = False
        self._stopping = False
        self._retried: float | None = None
        self._worker: threading.Thread | None = None
        self._archive_use = threading.Lock()
        """Held by the background thread around each archive call; ``close`` takes it to detach the archive."""
        self._detached = False
        self._mode = "inline"

    @classmethod
    def for_options(cls, embed: EmbedFn, options: MemoryOptions) -> EmbeddingQueue:
        """A queue configured by a memory's options (chunking, retry interval, batch size, embedding mode)."""
        queue = cls(
            embed,
            chunk_chars=options.chunk_chars,
            max_chunks=options.max_chunks_per_message,
            retry_interval=options.embedding_retry_interval,
            batch_size=options.embedding_batch_size,
        )
        queue._mode = options.embedding
        return queue

    def reconfigure(self, options: MemoryOptions) -> None:
        """Apply changed options (chunking, retry interval, batch size, mode) from the next claim on; keeps claims."""
        with self._state_lock:
            self._chunk_chars = options.chunk_chars
            self._max_chunks = options.max_chunks_per_message
            self._retry_interval = options.embedding_retry_interval
            self._batch_size = options.embedding_batch_size
            self._mode = options.embedding
        with self._signal:
            self._signal.notify_all()  # a shorter retry interval applies to a thread already waiting

    def after_archive(self, archive: Archive, lock: AbstractContextManager[object]) -> int:
        """After a commit: embed now (``"inline"``) or hand the batch to the background thread (``"background"``).

        Returns:
            How many messages received their vectors in this call (0 when handed to the thread). Never raises.
        """
        if self._mode == "background" or self.background:
            self.wake()
            return 0
        return self.run_contained(archive, lock) if self.due() else 0

    def reset(self) -> None:
        """Forget claims and failures: the archive was replaced (vectors being computed now are dropped)."""
        with self._state_lock:
            self._generation += 1
            self._in_flight = set()
            self._last_failure = None
            self.last_error = None
            self._settled.notify_all()

    def due(self) -> bool:
        """Whether an automatic run may embed now (no failure within the retry interval, the model not missing)."""
        return self._wait_before_retry() == 0.0

    def _wait_before_retry(self) -> float | None:
        """Seconds until an automatic run may retry: 0 now, None never (the model is unavailable)."""
        if self._blocked:
            return None
        failure = self._last_failure
        if failure is None:
            return 0.0
        return max(0.0, self._retry_interval - (time.monotonic() - failure))

    # ------------------------------------------------------------------ background thread

    def attach(
        self, archive: Archive, lock: AbstractContextManager[object], on_embedded: Callable[[int], object]
    ) -> None:
        """Give the background thread its archive, the archive lock, and what to call with each run's count."""
        self._target = (archive, lock, on_embedded)

    @property
    def background(self) -> bool:
        """Whether the background thread runs (then it, not a search, embeds what is pending)."""
        worker = self._worker
        return worker is not None and worker.is_alive()

    def wake(self) -> None:
        """Ask the background thread to embed what is pending; starts it on the first call.

        Raises:
            SemanticMemoryError: If ``attach`` was never called (a wiring error, not a user's).
        """
        if self._target is None:
            raise SemanticMemoryError("the embedding queue has no archive attached")
        with self._signal:
            if self._stopping:
                return
            self._requested = True
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="semantic-memory-embedding", daemon=True)
                self._worker.start()
                _live_queues.add(self)
            self._signal.notify_all()

    def request_stop(self) -> None:
        """Ask the background thread to stop after its current batch, without waiting (``close`` waits)."""
        with self._signal:
            self._stopping = True
            self._signal.notify_all()

    def close(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the background thread after its current batch, and keep it from the archive from then on.

        When this returns, the thread makes no further archive call (the archive may be closed): a batch it is still
        embedding after ``timeout`` is dropped when it ends. What is still pending stays pending. No thread is
        started again; ``drain`` still embeds in the caller's thread.

        Args:
            timeout: Seconds to wait for the batch in hand.
        """
        self.request_stop()
        with self._signal:
            worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout)
            if worker.is_alive() and timeout > 0:  # timeout 0: the caller chose not to wait
                logger.warning(
                    "seconds=<%.0f> | the embedding thread did not stop in time; its batch stays pending", timeout
                )
        with self._archive_use:  # waits for an archive call in progress, never for an embedding
            self._detached = True
        _live_queues.discard(self)

    def _work(self) -> None:
        while True:
            with self._signal:
                if not self._await_work():
                    return
                self._requested = False
            self._work_once()

    def _await_work(self) -> bool:
        """With ``_signal`` held: wait for a request (or a retry after a failure); False once ``close`` is called.

        After a failure the thread retries once the retry interval has passed, without a new request (what failed is
        still pending); a model that is unavailable is not retried until a run elsewhere succeeds. Without work for
        ``IDLE_SECONDS`` the thread ends (False as well).
        """
        while not self._stopping:
            wait = self._wait_before_retry()
            failure = self._last_failure
            if wait is not None and failure is not None:
                wait = max(wait, MIN_RETRY_SECONDS - (time.monotonic() - failure), 0.0)
            if wait == 0.0 and (self._requested or (failure is not None and failure != self._retried)):
                self._retried = failure
                return True
            if wait is not None and wait > 0.0:
                self._signal.wait(wait)
            elif not self._signal.wait(IDLE_SECONDS) and not self._stopping and (wait is None or not self._requested):
                self._worker = None  # idle (or the model is unavailable): this thread ends, a request starts another
                return False
        return False

    def _work_once(self) -> None:
        """Embed batches until none is pending, a failure stops the run, or ``close`` is called."""
        assert self._target is not None
        archive, lock, on_embedded = self._target
        guarded = _WorkerLock(self, lock)
        try:
            while not self._stopping:
                updated, failed = self._run_once(archive, guarded)
                if updated:
                    on_embedded(updated)
                if failed is not None or not updated:
                    return
        except _Detached:
            logger.debug("the memory was closed during a batch; its messages stay pending")
        except Exception as error:  # storing vectors failed: the messages stay pending, the thread goes on
            with self._state_lock:
                first = self._last_failure is None
                self._last_failure = time.monotonic()
                self.last_error = f"{type(error).__name__}: {error}"
                self.failures += 1
            log = logger.warning if first else logger.debug
            log("error=<%s> | storing vectors failed; the messages stay pending", error)

    def drain(self, archive: Archive, lock: AbstractContextManager[object]) -> int:
        """Embed every pending message now and wait for the batch the background thread has in hand.

        Runs in the caller's thread, ignoring the retry interval and an earlier unavailable model.

        Returns:
            How many messages received their vectors during the call (by this thread or the background one).

        Raises:
            SemanticMemoryError: If the embedder fails (after storing what did succeed); the rest stay pending.
        """
        start = self.embedded
        while True:
            before = self.embedded
            self.run(archive, lock, raise_errors=True)
            with self._state_lock:
                waited = bool(self._in_flight)
                while self._in_flight:
                    self._settled.wait()
            with lock:
                waiting = archive.has_pending()
            if not waiting or (self.embedded == before and not waited):
                return self.embedded - start

    def run(self, archive: Archive, lock: AbstractContextManager[object], *, raise_errors: bool) -> int:
        """Embed pending messages until none is left or a failure stops the run.

        Args:
            archive: The archive.
            lock: The engine's archive lock (held around archive calls only, never while embedding).
            raise_errors: Raise ``EmbeddingError`` after storing what did succeed.

        Returns:
            How many messages received their vectors.
        """
        total = 0
        while True:
            updated, failed = self._run_once(archive, lock)
            total += updated
            if failed is not None:
                if raise_errors:
                    raise failed
                return total
            if not updated:
                return total

    def run_batch(self, archive: Archive, lock: AbstractContextManager[object]) -> int:
        """Embed one batch of pending messages now, in the caller's thread (for a caller that reports progress).

        Returns:
            How many messages received their vectors; 0 when nothing is pending (or left to claim).

        Raises:
            SemanticMemoryError: If the embedder fails (after storing what did succeed); the rest stay pending.
        """
        updated, failed = self._run_once(archive, lock)
        if failed is not None:
            raise failed
        return updated

    def run_contained(self, archive: Archive, lock: AbstractContextManager[object]) -> int:
        """``run`` for automatic runs (from ``add`` and ``search``): nothing raises.

        An embedder failure is already logged and recorded by the run; an archive failing while saving vectors is
        logged here. Either way the messages stay pending.

        Returns:
            How many messages received their vectors (0 after a failure).
        """
        try:
            return self.run(archive, lock, raise_errors=False)
        except SemanticMemoryError:
            return 0
        except Exception as error:
            logger.warning("error=<%s> | storing vectors failed; the messages stay pending", error)
            return 0

    def catch_up(self, archive: Archive, lock: AbstractContextManager[object]) -> int:
        """Before a search (or at open): embed what is pending, if a run is due (one cheap archive call when not).

        In background mode (or once the background thread runs) nothing is embedded here: the thread is started or
        woken instead.

        Returns:
            How many messages received their vectors.
        """
        if not self.due():
            return 0
        with lock:
            waiting = archive.has_pending()
        if not waiting:
            return 0
        if self._mode == "background" or self.background:
            self.wake()
            return 0
        return self.run_contained(archive, lock)

    def _run_once(
        self, archive: Archive, lock: AbstractContextManager[object]
    ) -> tuple[int, SemanticMemoryError | None]:
        with lock, self._state_lock:
            claimed = archive.pending(exclude=set(self._in_flight), limit=self._batch_size)
            self._in_flight.update(i for i, _ in claimed)
            generation, chunking = self._generation, (self._chunk_chars, self._max_chunks)
        if not claimed:
            return 0, None
        ids = [i for i, _ in claimed]
        try:
            chunks = {index: self._chunks(index, text, *chunking) for index, text in claimed}
            vectors, errors = self._embed_isolating(ids, chunks)
            with lock:
                with self._state_lock:
                    stale = generation != self._generation
                updated = 0 if stale or not vectors else archive.set_vectors(vectors)
        finally:
            with self._state_lock:
                if generation == self._generation:
                    self._in_flight.difference_update(ids)
                self._settled.notify_all()
        if stale:
            logger.debug("messages=<%d> | vectors for a replaced archive dropped", len(ids))
            return 0, None
        if not errors:
            with self._state_lock:
                recovered = self._last_failure is not None or self._blocked
                self._last_failure = None
                self._blocked = False
                self.last_error = None
                self.embedded += updated
            if recovered:
                logger.info("embedded=<%d> | embedding works again", updated)
            return updated, None
        first = errors[0]
        with self._state_lock:
            streak = self._last_failure is not None or self._blocked
            self._last_failure = time.monotonic()
            self._blocked = _permanent(first)
            self.last_error = f"{type(first).__name__}: {first}"
            self.failures += 1
            self.embedded += updated
        failed = sum(1 for i in ids if i not in vectors)
        # an unavailable model was logged once by the encoder, which also shows it in stats().degraded
        (logger.debug if streak or self._blocked else logger.warning)(
            "pending=<%d>, embedded=<%d>, error=<%s> | embedding failed; the messages are archived, searchable "
            "lexically, and will be embedded %s",
            failed,
            updated,
            first,
            "by embed_pending() once the model is available"
            if self._blocked
            else "on a later archive or search, or by embed_pending()",
        )
        if isinstance(first, SemanticMemoryError):
            return updated, first
        error = EmbeddingError(f"embedding {failed} archived message(s) failed: {self.last_error}")
        error.__cause__ = first
        return updated, error

    def _chunks(self, index: int, text: str, chunk_chars: int, max_chunks: int) -> list[str]:
        chunks, truncated = chunk_text(text, chunk_chars, max_chunks)
        if truncated:
            logger.warning(
                "index=<%d>, chars=<%d>, chunks=<%d> | message text beyond the last chunk is archived but not "
                "searchable; raise max_chunks_per_message or chunk_chars to embed it all",
                index,
                len(text),
                len(chunks),
            )
        return chunks

    def _embed_isolating(
        self, ids: list[int], chunks: dict[int, list[str]]
    ) -> tuple[dict[int, Vectors], list[BaseException]]:
        """Embed every message's chunks; bisect failing groups to isolate the messages the embedder rejects."""
        vectors: dict[int, Vectors] = {}
        errors: list[BaseException] = []
        calls = 0
        groups: list[list[int]] = [ids]
        while groups:
            group = groups.pop()
            texts = [t for i in group for t in chunks[i]]
            if not texts:
                vectors.update({i: np.zeros((0, 0), dtype=np.float32) for i in group})
                continue
            if calls >= MAX_CALLS_PER_RUN:
                continue  # left pending; the next run goes on
            calls += 1
            try:
                matrix = self._embed(texts)
            except Exception as error:
                errors.append(error)
                if isinstance(error, DimensionMismatchError) or _permanent(error):
                    break  # the wrong or a missing model, not a bad text: nothing to isolate
                if len(group) > 1:
                    half = len(group) // 2
                    groups.extend([group[half:], group[:half]])
                continue
            row = 0
            for index in group:
                count = len(chunks[index])
                vectors[index] = matrix[row : row + count]
                row += count
        return vectors, errors


class _WorkerLock(AbstractContextManager[None]):
    """The archive lock as the background thread takes it: refused once ``close`` has detached the archive.

    Every archive call of the thread is made inside it, so ``close`` (which takes ``_archive_use`` to detach) waits for
    a call in progress and no call starts after it. The archive lock is taken first and ``_archive_use`` second, the
    order a caller of ``close`` that holds the archive lock takes them in, so the two never wait for each other.
    """

    def __init__(self, queue: EmbeddingQueue, lock: AbstractContextManager[object]) -> None:
        self._queue = queue
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.__enter__()
        use = self._queue._archive_use
        use.acquire()
        if self._queue._detached:
            use.release()
            self._lock.__exit__(None, None, None)
            raise _Detached

    def __exit__(self, *exc_info: object) -> None:
        try:
            self._queue._archive_use.release()
        finally:
            self._lock.__exit__(*exc_info)  # type: ignore[arg-type]
