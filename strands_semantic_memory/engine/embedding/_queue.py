"""EmbeddingQueue: the memory's one handle on embedding; runs claim, embed, store, and account for the result.

A run claims pending messages (``Claims``), embeds them outside every lock, halving failing batches (``_retry``),
stores the vectors, and tells the retry policy how it went. Runs happen in the caller's thread (``"inline"``:
after ``archive``, and before a search when a retry is due; ``embed_pending``) or in the background thread
(``_worker``). A search in background mode makes no run: ``for_search`` embeds the newest pending messages for
it, at most ``QUERY_TIME_LIMIT``, and hands their vectors to the thread, which stores them without embedding
them again.

The queue is given the archive, its archive lock, the embedder and what to call after each stored batch once, at
construction; it holds the memory only weakly. One lock (the queue lock, reentrant) guards the claims, the retry
policy and the thread's state; the archive lock is always taken before it.
"""

from __future__ import annotations

import collections
import inspect
import logging
import threading
import time
import weakref
from collections.abc import Callable, Collection, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from strands_semantic_memory import _telemetry
from strands_semantic_memory.archives._protocol import Archive
from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.engine.embedding._claims import ArchiveAccess, Claim, Claims, Detached
from strands_semantic_memory.engine.embedding._overlay import SearchVectors
from strands_semantic_memory.engine.embedding._retry import (
    MAX_AUTOMATIC_ATTEMPTS,
    EmbedFn,
    Isolated,
    RetryPolicy,
    isolate,
)
from strands_semantic_memory.engine.embedding._worker import STOP_TIMEOUT, Worker
from strands_semantic_memory.errors import EmbeddingError, SemanticMemoryError
from strands_semantic_memory.messages._text import chunk_text

if TYPE_CHECKING:
    from strands_semantic_memory.engine._options import MemoryOptions

logger = logging.getLogger(__name__)

QUERY_TIME_LIMIT = 32
"""Pending messages a search in background mode embeds for itself at most, newest first."""
LINKS_KEPT = 32
"""Requests (spans that archived messages) a background batch's span links to at most: the latest ones."""


def _held(callback: Callable[[int], object]) -> Callable[[], Callable[[int], object] | None]:
    """A weak hold on a bound method (the memory's), a plain one on anything else."""
    if inspect.ismethod(callback):
        return weakref.WeakMethod(callback)
    return lambda: callback


class EmbeddingQueue:
    """Claims pending messages, embeds them in batches, and stores their vectors (see the module). Thread-safe."""

    def __init__(
        self,
        archive: Archive,
        archive_lock: AbstractContextManager[Any],
        embed: EmbedFn,
        options: MemoryOptions,
        on_embedded: Callable[[int], object],
    ) -> None:
        """Create the queue; no thread starts before the first background request.

        Args:
            archive: The archive.
            archive_lock: The engine's archive lock (held around archive calls only, never while embedding).
            embed: Embeds document texts (checked and normalized by the caller).
            options: The memory's options (chunking, retry interval, batch size, embedding mode).
            on_embedded: Called with each stored batch's count (held weakly when it is a bound method).
        """
        self._lock = threading.RLock()
        self._access = ArchiveAccess(archive, archive_lock, self._lock)
        self._claims = Claims(self._access, self._lock, QUERY_TIME_LIMIT)
        self._policy = RetryPolicy(options.embedding_retry_interval)
        self._embed = embed
        self._options = options
        self._on_embedded = _held(on_embedded)
        claims = self._claims
        self._worker = Worker(self._lock, self._access, self._work, self._plan, lambda: claims.in_flight)
        self.embedded = 0
        self._unembedded = 0
        self._told_beyond = False
        self._store_failure_first = False
        self._archive_type = type(archive).__name__
        self._links: collections.deque[_telemetry.Link] = collections.deque(maxlen=LINKS_KEPT)
        """The spans that archived messages since the background thread's last batch (its span links to them)."""

    # ------------------------------------------------------------------ state

    @property
    def in_background(self) -> bool:
        """Whether the background thread embeds (``embedding="background"``, or its thread still runs)."""
        return self._options.embedding == "background" or self._worker.alive

    @property
    def background(self) -> bool:
        """Whether the background thread runs."""
        return self._worker.alive

    @property
    def thread(self) -> threading.Thread | None:
        """The background thread that runs now, or ran last."""
        return self._worker.thread

    @property
    def stopping(self) -> bool:
        """Whether ``close`` asked the background thread to stop."""
        return self._worker.stopping

    @property
    def last_error(self) -> str | None:
        """The last embedding failure, until an embedding succeeds again."""
        return self._policy.last_error

    @property
    def failures(self) -> int:
        """Failed runs so far."""
        return self._policy.failures

    @property
    def last_search_unembedded(self) -> int:
        """Pending messages the last search could match by their words only."""
        return self._unembedded

    def reconfigure(self, options: MemoryOptions) -> None:
        """Apply changed options from the next claim on; claims, the generation and the failure clock are kept."""
        with self._lock:
            self._options = options
            self._policy.reconfigure(options.embedding_retry_interval)
        self._worker.notify()  # a shorter retry interval applies to a thread already waiting

    def due(self) -> bool:
        """Whether an automatic run may embed now (no failing run within the retry interval, the model works)."""
        with self._lock:
            return self._policy.wait(time.monotonic()) == 0.0

    # ------------------------------------------------------------------ writes

    def after_archive(self, texts: Mapping[int, str]) -> int:
        """After a commit of new messages (index -> text): embed now (inline) or wake the background thread.

        Returns:
            How many messages received their vectors in this call (0 when handed to the thread). Never raises.
        """
        self._claims.archived(texts)
        if self.in_background:
            link = _telemetry.current_link()
            if link is not None and texts:
                with self._lock:
                    self._links.append(link)
            self._worker.wake()
            return 0
        return self._run_contained() if self.due() else 0

    def catch_up(self) -> int:
        """At open, after a restore, and before an inline search: embed what is pending if a run is due.

        In background mode nothing is embedded here: the thread is woken instead. One cheap archive call when
        nothing is due.

        Returns:
            How many messages received their vectors.
        """
        if not self.due() or not self._claims.has_pending():
            return 0
        if self.in_background:
            self._worker.wake()
            return 0
        return self._run_contained()

    def drain(self) -> int:
        """Embed every pending message now and wait for the batches others have in hand (``embed_pending``).

        Runs in the caller's thread, ignoring the retry interval, the rejected messages' schedules and an earlier
        unavailable model.

        Returns:
            How many messages received their vectors during the call (by this thread or the background one).

        Raises:
            SemanticMemoryError: If the embedder fails (after storing what did succeed); the rest stay pending.
        """
        start = self.embedded
        while True:
            before = self.embedded
            self._run(automatic=False, raise_errors=True)
            waited = self._claims.wait_settled()
            if not self._claims.has_pending() or (self.embedded == before and not waited):
                return self.embedded - start

    def run_batch(self) -> int:
        """Embed one batch of pending messages now, in the caller's thread (for a caller that reports progress).

        Like ``drain``, it ignores the retry interval and the rejected messages' schedules.

        Returns:
            How many messages received their vectors; 0 when nothing is pending (or left to claim).

        Raises:
            SemanticMemoryError: If the embedder fails (after storing what did succeed); the rest stay pending.
        """
        updated, failed = self._run_once(automatic=False)
        if failed is not None:
            raise failed
        return updated

    def reset(self) -> None:
        """Forget claims and failures: the archive was replaced (vectors being computed now are dropped)."""
        self._claims.reset()
        with self._lock:
            self._policy.reset()

    def removed(self, indices: Collection[int]) -> None:
        """Forget what belonged to evicted or forgotten messages."""
        if indices:
            self._claims.removed(indices)
            with self._lock:
                self._policy.forget(indices)

    def request_stop(self) -> None:
        """Ask the background thread to stop after its current batch, without waiting."""
        self._worker.request_stop()

    def close(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the background thread after its batch and close the archive to it (see ``Worker.close``)."""
        self._worker.close(timeout)

    # ------------------------------------------------------------------ runs

    def _run(self, *, automatic: bool, raise_errors: bool) -> int:
        """Embed pending messages until none is left to claim or a failure stops the run; returns how many."""
        total = 0
        while True:
            updated, failed = self._run_once(automatic=automatic)
            total += updated
            if failed is not None:
                if raise_errors:
                    raise failed
                return total
            if not updated:
                return total

    def _run_contained(self) -> int:
        """An automatic run in the caller's thread (inline mode): nothing raises, failures are logged."""
        try:
            return self._run(automatic=True, raise_errors=False)
        except SemanticMemoryError:
            return 0
        except Exception as error:
            logger.warning("error=<%s> | storing vectors failed; the messages stay pending", error)
            return 0

    def _work(self) -> None:
        """The background thread's job: batches until none is left, a failure stops them, or ``close`` is called."""
        try:
            while not self._worker.stopping:
                updated, failed = self._run_once(automatic=True, background=True)
                if updated:
                    callback = self._on_embedded()
                    if callback is not None:
                        callback(updated)
                if failed is not None or not updated:
                    return
        except Detached:
            logger.debug("the memory was closed during a batch; its messages stay pending")
        except Exception as error:  # storing vectors failed (recorded by the run): the messages stay pending
            (logger.warning if self._store_failure_first else logger.debug)(
                "error=<%s> | storing vectors failed; the messages stay pending", error
            )

    def _plan(self, now: float) -> tuple[float | None, float | None]:
        """For the thread: seconds until a run may embed (None: never now), and until a retry is due (None)."""
        with self._lock:
            return self._policy.wait(now), self._policy.next_retry(now)

    def _run_once(self, *, automatic: bool, background: bool = False) -> tuple[int, SemanticMemoryError | None]:
        """Claim one batch, embed it, store its vectors, account for the result; a ``memory.embed`` span.

        The background thread's batches are trace roots (the requests they serve may have ended long ago), linked
        to the spans that archived the messages; a batch in the caller's thread is a child of the current span.
        """
        with self._lock:
            now = time.monotonic()
            options = self._options
            skip = self._policy.skipped(now) if automatic else set()
            if automatic:
                self._policy.started()
        claim = self._claims.claim(options.embedding_batch_size, skip)
        if automatic:
            with self._lock:
                self._policy.settled(now, claim.texts if claim else (), claim is None or claim.complete)
        if claim is None:
            return 0, None
        links: list[_telemetry.Link] = []
        if background:
            with self._lock:
                links, self._links = list(self._links), collections.deque(maxlen=LINKS_KEPT)
        updated, failed, error = 0, len(claim.texts), None
        operation = _telemetry.Operation("memory.embed", root=background, links=links)
        try:
            with operation:
                try:
                    updated, failed, error = self._embed_claim(claim, options, automatic)
                except Detached:
                    failed = 0  # the memory was closed during the batch: nothing failed, the messages stay pending
                    raise
                finally:
                    self._account(operation, claim, (updated, failed), background)
                if error is not None:
                    operation.fail(error)
        finally:
            attributes: dict[str, _telemetry.AttributeValue] = {
                "memory.archive.type": self._archive_type,
                "memory.embed.background": background,
            }
            if operation.error_type is not None:
                attributes["error.type"] = operation.error_type
            _telemetry.EMBEDDING_DURATION.record(operation.elapsed_ms, attributes)
        return updated, error

    def _account(
        self, operation: _telemetry.Operation, claim: Claim, counts: tuple[int, int], background: bool
    ) -> None:
        """A batch's span attributes and metrics: (stored, left pending); the backlog is counted only when traced."""
        updated, failed = counts
        kind = {"memory.archive.type": self._archive_type}
        if updated:
            _telemetry.EMBEDDING_MESSAGES.add(updated, {**kind, "memory.embed.outcome": "embedded"})
        if failed:
            _telemetry.EMBEDDING_MESSAGES.add(failed, {**kind, "memory.embed.outcome": "failed"})
        if not operation.recording:
            return
        attributes: dict[str, _telemetry.AttributeValue] = {
            **kind,
            "memory.embed.background": background,
            "memory.embed.batch_size": len(claim.texts),
            "memory.embed.ready_count": len(claim.ready),
            "memory.embed.embedded_count": updated,
            "memory.embed.failed_count": failed,
        }
        try:
            with self._access.use() as archive:
                attributes["memory.embed.backlog"] = archive.stats().pending_count
        except Exception as error:  # a closed archive: the batch is traced without its backlog
            logger.debug("error=<%s> | backlog not counted for the batch's span", error)
        operation.set(attributes)

    def _embed_claim(
        self, claim: Claim, options: MemoryOptions, automatic: bool
    ) -> tuple[int, int, SemanticMemoryError | None]:
        """Embed a claimed batch and store its vectors: (messages stored, messages left pending, the failure)."""
        try:
            todo = [i for i in claim.texts if i not in claim.ready]
            chunks = {i: self._chunks(i, claim.texts[i], options) for i in todo}
            outcome = isolate(self._embed, todo, chunks)
            outcome.vectors.update(claim.ready)
            try:
                updated = self._claims.store(claim, outcome.vectors)
            except Detached:
                raise
            except Exception as error:
                with self._lock:
                    verdict = self._policy.record(
                        time.monotonic(), claim.texts, Isolated(errors=[error]), automatic=automatic
                    )
                    self._store_failure_first = verdict.first_failure
                raise
        finally:
            self._claims.release(claim)
        if updated is None:
            logger.debug("messages=<%d> | vectors for a replaced archive dropped", len(claim.texts))
            return 0, 0, None
        with self._lock:
            verdict = self._policy.record(time.monotonic(), claim.texts, outcome, automatic=automatic)
            self.embedded += updated
            blocked = self._policy.blocked
        if not outcome.errors:
            if verdict.recovered:
                logger.info("embedded=<%d> | embedding works again", updated)
            return updated, 0, None
        first = outcome.errors[0]
        failed = sum(1 for i in claim.texts if i not in outcome.vectors)
        # an unavailable model was logged once by the encoder, which also shows it in stats().degraded
        (logger.warning if verdict.first_failure and not blocked else logger.debug)(
            "pending=<%d>, embedded=<%d>, error=<%s> | embedding failed; the messages are archived, searchable "
            "lexically, and will be embedded %s",
            failed,
            updated,
            first,
            "by embed_pending() once the model is available"
            if blocked
            else "on a later archive or search, or by embed_pending()",
        )
        for index in verdict.gave_up:
            logger.warning(
                "index=<%d>, attempts=<%d> | the embedder rejected this message every time; it stays archived and "
                "searchable by its words, and only embed_pending() tries it again",
                index,
                MAX_AUTOMATIC_ATTEMPTS,
            )
        if verdict.stopped and self.in_background:
            logger.warning(
                "attempts=<%d> | embedding failed every time in a row; the embedding thread stops retrying on its "
                "own: the messages stay pending, searchable by their words, and are tried again by the next archive "
                "or by embed_pending()",
                MAX_AUTOMATIC_ATTEMPTS,
            )
        if isinstance(first, SemanticMemoryError):
            return updated, failed, first
        wrapped = EmbeddingError(f"embedding {failed} archived message(s) failed: {self.last_error}")
        wrapped.__cause__ = first
        return updated, failed, wrapped

    def _chunks(self, index: int, text: str, options: MemoryOptions) -> list[str]:
        chunks, truncated = chunk_text(text, options.chunk_chars, options.max_chunks_per_message)
        if truncated:
            logger.warning(
                "index=<%d>, chars=<%d>, chunks=<%d> | message text beyond the last chunk is archived but not "
                "searchable; raise max_chunks_per_message or chunk_chars to embed it all",
                index,
                len(text),
                len(chunks),
            )
        return chunks

    # ------------------------------------------------------------------ searches

    def for_search(self, excluded: frozenset[int] = frozenset()) -> SearchVectors | None:
        """Vectors of the newest pending messages (at most ``QUERY_TIME_LIMIT``) for one search; never stores.

        ``excluded``: indices the search may not return (what the model call holds); they are neither embedded nor
        counted as unembedded.

        Those a search embedded before are reused; the others are embedded now, in the caller's thread, and handed
        to the background thread, which stores them without embedding them again (a message a run has in hand is
        embedded for the search as well, and stored by that run). Pending messages beyond the bound, rejected ones
        waiting for their retry, and all of them while the embedder fails, are matched by their words only:
        ``last_search_unembedded`` counts them, and the first search beyond the bound logs it at info level. Never
        raises for a failing embedder.

        Returns:
            The vectors, or None when no pending message can be scored.
        """
        with self._lock:
            now = time.monotonic()
            skip = self._policy.skipped(now)
            allowed = self._policy.search_due(now)
            options = self._options
        selection = self._claims.select(QUERY_TIME_LIMIT, skip, excluded)
        if selection is None:
            self._report(0, 0)
            return None
        fresh: dict[int, Vectors] = {}
        try:
            if selection.texts and allowed:
                with _telemetry.Operation("memory.embed") as operation:
                    fresh = self._embed_for_search(selection.texts, options)
                    if operation.recording:
                        operation.set(
                            {
                                "memory.archive.type": self._archive_type,
                                "memory.embed.for_search": True,
                                "memory.embed.batch_size": len(selection.texts),
                                "memory.embed.embedded_count": len(fresh),
                                "memory.embed.failed_count": len(selection.texts) - len(fresh),
                            }
                        )
        finally:
            handed = self._claims.hand_over(selection, fresh)
        if handed:
            self._worker.wake()
        unembedded = len(selection.texts) - len(fresh) + selection.beyond + len(selection.skipped)
        self._report(unembedded, selection.beyond, len(selection.texts) + len(selection.ready))
        vectors = {**selection.ready, **fresh}
        if not vectors:
            return None
        claims, generation = self._claims, selection.generation
        return SearchVectors(vectors, lambda: claims.generation == generation)

    def _embed_for_search(self, texts: Mapping[int, str], options: MemoryOptions) -> dict[int, Vectors]:
        """Embed pending messages for a search; {} (logged) when the embedder fails."""
        chunks = {i: chunk_text(t, options.chunk_chars, options.max_chunks_per_message)[0] for i, t in texts.items()}
        flat = [c for i in chunks for c in chunks[i]]
        try:
            matrix = self._embed(flat) if flat else np.zeros((0, 0), dtype=np.float32)
        except Exception as error:
            _telemetry.fail_current(error)
            with self._lock:
                first = self._policy.search_failed(time.monotonic())
            (logger.warning if first else logger.debug)(
                "pending=<%d>, error=<%s> | embedding the pending messages for a search failed; the search matches "
                "them by their words only",
                len(texts),
                error,
            )
            return {}
        with self._lock:
            self._policy.search_succeeded()
        vectors: dict[int, Vectors] = {}
        row = 0
        for index, parts in chunks.items():
            vectors[index] = matrix[row : row + len(parts)]
            row += len(parts)
        return vectors

    def _report(self, unembedded: int, beyond: int, scored: int = 0) -> None:
        with self._lock:
            self._unembedded = unembedded
            tell = beyond > 0 and not self._told_beyond
            self._told_beyond = beyond > 0
        if tell:
            logger.info(
                "pending=<%d>, limit=<%d> | a search scored only the newest pending messages by meaning; the other "
                "%d are found by their words until the embedding thread stores their vectors (embed_pending() waits "
                "for it)",
                beyond + scored,
                QUERY_TIME_LIMIT,
                beyond,
            )
