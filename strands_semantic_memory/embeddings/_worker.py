"""The embedding worker: one per embedder, with a lane for queries and a lane for documents.

Every memory that uses one embedder object shares its worker (``worker_for``); the bundled model is one object per
process, so a process has one worker however many users and memories it serves. The worker runs every call of its
embedder in two lanes, each one thread: documents (archived messages, in batches) and queries (a turn's search).
A query never waits behind documents: on a 2-core machine one short document took 28 ms on PyTorch, so a turn's
query queued behind a batch of them would wait for hundreds of milliseconds. Callers get a
``concurrent.futures.Future`` and wait on it with a bound: a search whose query vector is late searches by words
and does not wait at all while the query lane is stalled; the same texts asked for while in flight share one job (the
relevance probes of many memories at once, a question many users ask).
The document lane is bounded too (``MAX_QUEUED_TEXTS``; beyond it work is refused at once and its messages stay
pending in the archive, which embeds them later), so a hung embedder wedges no caller and exhausts no memory. A lane's
thread is a daemon that ends when idle for ``IDLE_SECONDS`` and starts again with the next job; at interpreter exit
the running jobs are waited for (``EXIT_SECONDS`` in all), since PyTorch aborts a process torn down under a call.

Why not ``concurrent.futures.ThreadPoolExecutor``: its queue has no bound, its threads never end when idle, and at
exit it waits for a hung call forever.
"""

from __future__ import annotations

import atexit
import collections
import logging
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future

import numpy as np

from strands_semantic_memory._telemetry import METRICS, operation
from strands_semantic_memory.embeddings._base import Embedder, Vectors, checked_vectors
from strands_semantic_memory.errors import EmbeddingBusyError, EmbeddingError

__all__ = ["EmbeddingWorker", "worker_for"]

logger = logging.getLogger(__name__)

MAX_QUEUED_TEXTS = 100_000
"""Document texts that may wait at once; beyond it ``embed_documents`` refuses (the messages stay pending)."""
IDLE_SECONDS = 30.0
"""A lane's thread ends after this long without a job (a new job starts it again)."""
EXIT_SECONDS = 10.0
"""At interpreter exit, how long in all the running jobs are waited for (their messages stay pending)."""
QUERY_BATCH = 32
"""Queries waiting together are embedded in one call (many users' turns at once cost little more than one)."""
QUERY_CACHE_SIZE = 256
"""Query vectors kept per embedder: a repeated question skips the model."""

_Job = tuple[Future[Vectors], tuple[str, ...]]


class _Lane:
    """One thread serving one kind of call in arrival order."""

    def __init__(self, worker: EmbeddingWorker, queries: bool) -> None:
        self._worker, self._queries = worker, queries
        self._jobs: collections.deque[_Job] = collections.deque()
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.queued_texts = 0
        self.busy_since: float | None = None

    def submit(self, texts: Sequence[str], limit: int | None = None) -> Future[Vectors]:
        future: Future[Vectors] = Future()
        with self._condition:
            if limit is not None and self.queued_texts + len(texts) > limit:
                future.set_exception(EmbeddingBusyError(f"the embedding queue holds {self.queued_texts} texts already"))
                return future
            self.queued_texts += len(texts)
            self._jobs.append((future, tuple(texts)))
            if self._thread is None:
                name = f"ssm-embed-{'query' if self._queries else 'documents'}:{self._worker.model_id}"
                self._thread = threading.Thread(target=self._run, name=name, daemon=True)
                self._thread.start()
            self._condition.notify()
        return future

    def _next(self) -> list[_Job] | None:
        """The next job, or for queries every query waiting (up to ``QUERY_BATCH``): one call embeds them all."""
        with self._condition:
            deadline = time.monotonic() + IDLE_SECONDS
            while not self._jobs:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping or self._worker.embedder is None:
                    self._thread = None
                    return None
                self._condition.wait(min(left, 1.0))
            jobs = [self._jobs.popleft()]
            while self._queries and self._jobs and sum(len(t) for _, t in jobs) < QUERY_BATCH:
                jobs.append(self._jobs.popleft())
            self.queued_texts -= sum(len(t) for _, t in jobs)
            return jobs

    def _run(self) -> None:
        while (jobs := self._next()) is not None:
            live = [(f, t) for f, t in jobs if f.set_running_or_notify_cancel()]  # else nobody waits any more
            if live:
                self.busy_since = time.monotonic()
                try:
                    self._worker.serve(live, self._queries)
                finally:
                    self.busy_since = None

    def stop(self, deadline: float) -> None:
        with self._condition:
            while self._jobs:
                self._jobs.popleft()[0].cancel()
            self._stopping = True
            self._condition.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(max(0.0, deadline - time.monotonic()))


class EmbeddingWorker:
    """Runs one embedder's calls: queries and documents each in their own lane (see the module docstring)."""

    def __init__(self, embedder: Embedder) -> None:
        """Create the worker of ``embedder`` (use ``worker_for``, which shares one per embedder)."""
        self._embedder = weakref.ref(embedder)
        self.model_id = embedder.model_id
        self._queries, self._documents = _Lane(self, True), _Lane(self, False)
        self._load = threading.Lock()
        self._loaded = False
        self.loading = False
        """True while the model loads (before its first call): a slow start, not a stall."""
        self._cache: OrderedDict[str, Vectors] = OrderedDict()  # these two are guarded by the query lane's condition
        self._in_flight: dict[str, Future[Vectors]] = {}

    @property
    def embedder(self) -> Embedder | None:
        """The embedder, while it lives (the worker holds it only during a call)."""
        return self._embedder()

    def embed_queries(self, texts: Sequence[str]) -> Future[Vectors]:
        """A future of the query vectors of ``texts`` (unit rows), served from the cache where it can."""
        key = "\x00".join(texts)
        with self._queries._condition:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
            running = self._in_flight.get(key)
        if cached is not None:
            done: Future[Vectors] = Future()
            done.set_result(cached)
            return done
        if running is not None and not running.done():
            return running  # the same texts asked for again (the relevance probes of many memories at once)
        future = self._queries.submit(texts, MAX_QUEUED_TEXTS)
        with self._queries._condition:
            self._in_flight[key] = future
        future.add_done_callback(lambda f: self._remember(key, f))
        return future

    def embed_documents(self, texts: Sequence[str]) -> Future[Vectors]:
        """A future of the document vectors of ``texts``; failed at once when the queue is full."""
        return self._documents.submit(texts, MAX_QUEUED_TEXTS)

    def warm_up(self) -> None:
        """Load the model in the document lane now, unless it is loaded (returns at once)."""
        if not self._loaded:
            self._documents.submit(())

    @property
    def query_stalled_for(self) -> float:
        """Seconds the running query has taken (0 when none runs or the model loads): a search does not wait long."""
        since = self._queries.busy_since
        return 0.0 if since is None or self.loading else time.monotonic() - since

    @property
    def documents_stalled_for(self) -> float:
        """Seconds the running document batch has taken (0 when none runs or the model loads)."""
        since = self._documents.busy_since
        return 0.0 if since is None or self.loading else time.monotonic() - since

    def _remember(self, key: str, future: Future[Vectors]) -> None:
        with self._queries._condition:
            if self._in_flight.get(key) is future:
                del self._in_flight[key]
            if future.cancelled() or future.exception() is not None:
                return
            self._cache[key] = future.result()
            while len(self._cache) > QUERY_CACHE_SIZE:
                self._cache.popitem(last=False)

    def serve(self, jobs: list[_Job], query: bool) -> None:
        """Run jobs in the calling lane's thread, in one call of the embedder."""
        embedder = self._embedder()  # held only while this call runs
        if embedder is None:
            for future, _ in jobs:
                future.set_exception(EmbeddingError("the embedder was closed"))
            return
        with self._load:  # the first call loads the model: one lane loads, the other waits for it
            if not self._loaded:
                self.loading = True
                try:
                    _ = embedder.dimension  # loads the model; a failure is reported by the first real call
                except Exception as error:
                    logger.debug("error=<%s> | the embedding model did not load", type(error).__name__)
                finally:
                    self.loading, self._loaded = False, True
        texts = [text for _, batch in jobs for text in batch]
        started = time.perf_counter()
        try:
            call = embedder.embed_queries if query else embedder.embed_documents
            with operation("memory.embed", **{"memory.embed.lane": "query" if query else "document",
                                              "memory.message.count": len(texts)}):  # fmt: skip
                vectors = checked_vectors(call(texts), len(texts), embedder.dimension) if texts else None
            METRICS.embed_ms.record(
                (time.perf_counter() - started) * 1000, {"memory.embed.lane": "query" if query else "document"}
            )
        except Exception as error:  # any failure of the model is the caller's EmbeddingError (its type, not text)
            failure = error if isinstance(error, EmbeddingError) else EmbeddingError(type(error).__name__)
            if failure is not error:
                failure.__cause__ = error
            for future, _ in jobs:
                future.set_exception(failure)
            return
        start = 0
        for future, batch in jobs:  # a warm-up job has no texts and gets an empty array
            part = vectors[start : start + len(batch)] if vectors is not None else np.zeros((0, 0), np.float32)
            future.set_result(part)
            start += len(batch)

    def stop(self, deadline: float) -> None:
        """Drop the queued jobs and wait until ``deadline`` for the running ones."""
        self._queries.stop(deadline)
        self._documents.stop(deadline)


_workers: weakref.WeakKeyDictionary[Embedder, EmbeddingWorker] = weakref.WeakKeyDictionary()
_workers_lock = threading.Lock()


@atexit.register
def _stop_workers() -> None:
    deadline = time.monotonic() + EXIT_SECONDS
    with _workers_lock:
        workers = list(_workers.values())
    for worker in workers:
        worker.stop(deadline)


def worker_for(embedder: Embedder) -> EmbeddingWorker:
    """The worker of ``embedder``: one per embedder object, shared by every memory that uses it."""
    with _workers_lock:
        worker = _workers.get(embedder)
        if worker is None:
            worker = _workers[embedder] = EmbeddingWorker(embedder)
        return worker
