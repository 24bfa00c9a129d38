"""The embedding queue: archived messages waiting for vectors, embedded outside the engine's lock.

Archiving never waits for the embedder: a message is stored first, marked pending, and embedded here. A failure
leaves messages pending, never lost, and is contained:

- one text the embedder rejects leaves only that message pending: a failing batch is split in halves until the
  failing messages are isolated (at most ``MAX_CALLS_PER_RUN`` calls per run, so an outage costs a bounded
  number of calls);
- after a failure, automatic retries (from ``archive`` and ``search``) wait ``retry_interval`` seconds, so an
  outage does not resend the growing backlog on every call; ``run`` (``embed_pending``) retries now;
- a restore (``load_state``) starts a new generation: vectors computed for the old archive are dropped, never
  attached to a restored message that happens to reuse the index;
- changed options (``reconfigure``) apply from the next claim on; claims in flight, the
  generation and the failure clock are kept, so no message is embedded twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import DimensionMismatchError, EmbeddingError, SemanticMemoryError
from strands_semantic_memory.messages._text import chunk_text

if TYPE_CHECKING:
    from strands_semantic_memory.engine._options import MemoryOptions
from strands_semantic_memory.stores._protocol import ArchiveStore

logger = logging.getLogger(__name__)

MAX_CALLS_PER_RUN = 16
"""Embedder calls one run may make while isolating failing texts."""

EmbedFn = Callable[[Sequence[str]], Vectors]


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
        self._in_flight: set[int] = set()
        self._generation = 0
        self._last_failure: float | None = None
        self.last_error: str | None = None
        self.failures = 0

    @classmethod
    def for_options(cls, embed: EmbedFn, options: MemoryOptions) -> EmbeddingQueue:
        """A queue configured by a memory's options (chunking, retry interval, batch size)."""
        return cls(
            embed,
            chunk_chars=options.chunk_chars,
            max_chunks=options.max_chunks_per_message,
            retry_interval=options.embedding_retry_interval,
            batch_size=options.embedding_batch_size,
        )

    def reconfigure(self, options: MemoryOptions) -> None:
        """Apply changed options (chunking, retry interval, batch size) from the next claim on; keeps the claims."""
        with self._state_lock:
            self._chunk_chars = options.chunk_chars
            self._max_chunks = options.max_chunks_per_message
            self._retry_interval = options.embedding_retry_interval
            self._batch_size = options.embedding_batch_size

    def reset(self) -> None:
        """Forget claims and failures: the archive was replaced (vectors being computed now are dropped)."""
        with self._state_lock:
            self._generation += 1
            self._in_flight = set()
            self._last_failure = None
            self.last_error = None

    def due(self) -> bool:
        """Whether an automatic run may embed now (no failure within the retry interval)."""
        failure = self._last_failure
        return failure is None or time.monotonic() - failure >= self._retry_interval

    def run(self, store: ArchiveStore, lock: AbstractContextManager[object], *, raise_errors: bool) -> int:
        """Embed pending messages until none is left or a failure stops the run.

        Args:
            store: The archive.
            lock: The engine's store lock (held around store calls only, never while embedding).
            raise_errors: Raise ``EmbeddingError`` after storing what did succeed.

        Returns:
            How many messages received their vectors.
        """
        total = 0
        while True:
            updated, failed = self._run_once(store, lock)
            total += updated
            if failed is not None:
                if raise_errors:
                    raise failed
                return total
            if not updated:
                return total

    def run_contained(self, store: ArchiveStore, lock: AbstractContextManager[object]) -> int:
        """``run`` for automatic runs (from ``archive`` and ``search``): nothing raises.

        An embedder failure is already logged and recorded by the run; a store failing while saving vectors is
        logged here. Either way the messages stay pending.

        Returns:
            How many messages received their vectors (0 after a failure).
        """
        try:
            return self.run(store, lock, raise_errors=False)
        except SemanticMemoryError:
            return 0
        except Exception as error:
            logger.warning("error=<%s> | storing vectors failed; the messages stay pending", error)
            return 0

    def catch_up(self, store: ArchiveStore, lock: AbstractContextManager[object]) -> int:
        """Before a search: embed what is pending, if a run is due (one cheap store call when nothing is).

        Returns:
            How many messages received their vectors.
        """
        if not self.due():
            return 0
        with lock:
            waiting = store.has_pending()
        return self.run_contained(store, lock) if waiting else 0

    def _run_once(
        self, store: ArchiveStore, lock: AbstractContextManager[object]
    ) -> tuple[int, SemanticMemoryError | None]:
        with lock, self._state_lock:
            claimed = store.pending(exclude=set(self._in_flight), limit=self._batch_size)
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
                updated = 0 if stale or not vectors else store.set_vectors(vectors)
        finally:
            with self._state_lock:
                if generation == self._generation:
                    self._in_flight.difference_update(ids)
        if stale:
            logger.debug("messages=<%d> | vectors for a replaced archive dropped", len(ids))
            return 0, None
        if not errors:
            with self._state_lock:
                self._last_failure = None
                self.last_error = None
            return updated, None
        first = errors[0]
        with self._state_lock:
            self._last_failure = time.monotonic()
            self.last_error = f"{type(first).__name__}: {first}"
            self.failures += 1
        failed = sum(1 for i in ids if i not in vectors)
        logger.warning(
            "pending=<%d>, embedded=<%d>, error=<%s> | embedding failed; the messages are archived and will be "
            "embedded on a later archive or search, or by embed_pending()",
            failed,
            updated,
            first,
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
                if isinstance(error, DimensionMismatchError):
                    break  # the wrong model, not a bad text: nothing to isolate
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
