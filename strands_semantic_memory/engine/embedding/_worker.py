"""The background thread: embeds what is pending in batches, off the callers' paths.

- **Start and wake**: ``wake`` starts the thread on the first request (and again after it ended) and wakes it.
- **Idle end**: the thread ends after ``IDLE_SECONDS`` with no request and no retry due, so a memory whose
  messages keep failing (see ``_retry``) does not keep a thread.
- **Weak**: between batches the thread holds no reference to the queue or the memory, only a weak reference to
  its ``Worker``; when a memory dropped without ``close`` is collected, its thread wakes and ends. During a batch
  it holds the queue (and the archive), never the memory.
- **Stop and close**: ``close`` asks the thread to stop after its batch, waits for it up to ``STOP_TIMEOUT``
  seconds, then closes the archive to it (``ArchiveAccess.bar``): the thread never calls a closed archive.
- **Exit**: every thread is asked to stop, then all are waited for together, ``EXIT_TIMEOUT`` seconds in all; a
  thread still embedding then is named in the log, and its batch is abandoned (its messages stay pending).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable

from strands_semantic_memory.engine.embedding._claims import ArchiveAccess

logger = logging.getLogger(__name__)

STOP_TIMEOUT = 30.0
"""Seconds ``close`` waits for the background thread to finish its batch."""
EXIT_TIMEOUT = 30.0
"""Seconds interpreter exit waits for every embedding thread together to finish its batch."""
IDLE_SECONDS = 60.0
"""The thread ends after this long without a request and without a retry due; the next request starts another."""
THREAD_NAME = "semantic-memory-embedding"

Plan = Callable[[float], "tuple[float | None, float | None]"]
"""At a time: seconds until an automatic run may embed (None: not while the model is unavailable), and seconds
until a retry is due without a request (None: none is scheduled)."""

_RUN = "run"
_END = "end"

_workers: weakref.WeakSet[Worker] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """At exit, let every thread finish its batch, waiting ``EXIT_TIMEOUT`` seconds for all of them together.

    Native code (ONNX Runtime, PyTorch) still running in a thread the interpreter abandons can abort the process,
    and a durable archive would lose the batch's vectors. Every thread is asked to stop first, so they finish their
    batches together; an idle thread ends at once. A thread still embedding at the deadline is named in the log.
    """
    workers = list(_workers)
    for worker in workers:
        worker.request_stop()
    deadline = time.monotonic() + EXIT_TIMEOUT
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        worker.abandon(EXIT_TIMEOUT)


def _notify(wakeup: threading.Condition) -> None:
    with wakeup:
        wakeup.notify_all()


def _serve(ref: weakref.ref[Worker], wakeup: threading.Condition) -> None:
    """The thread's loop: run when there is work, wait otherwise; end when told, idle, or the worker is gone."""
    while True:
        with wakeup:
            worker = ref()
            if worker is None:
                return
            step = worker._step(time.monotonic())
            if step == _END:
                return
            if step != _RUN:
                del worker  # while waiting, nothing keeps the worker (and its queue) alive
                if ref() is not None:
                    wakeup.wait(float(step))
                continue
        try:
            worker._run()
        finally:
            del worker


class Worker:
    """Runs a job in a daemon thread of its own when asked, or when a retry is due (see the module). Thread-safe."""

    def __init__(
        self,
        lock: threading.RLock,
        access: ArchiveAccess,
        job: Callable[[], object],
        plan: Plan,
        holding: Callable[[], int],
    ) -> None:
        """Create the worker; no thread starts before ``wake``.

        Args:
            lock: The queue lock.
            access: The archive, to close to the thread at ``close``.
            job: Runs batches until nothing is left to do (a bound method: held weakly).
            plan: When the job may run and when a retry is due (a bound method: held weakly).
            holding: How many messages are in hand, for the exit log.
        """
        self._wakeup = threading.Condition(lock)
        self._access = access
        self._job = weakref.WeakMethod(job)
        self._plan = weakref.WeakMethod(plan)
        self._holding = holding
        self._requested = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._idle_since = time.monotonic()
        weakref.finalize(self, _notify, self._wakeup).atexit = False

    @property
    def thread(self) -> threading.Thread | None:
        """The thread that runs now, or ran last (None before the first ``wake``)."""
        return self._thread

    @property
    def alive(self) -> bool:
        """Whether the thread runs."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def stopping(self) -> bool:
        """Whether ``close`` (or exit) asked the thread to stop."""
        return self._stopping

    def wake(self) -> None:
        """Ask the thread to run the job; start it if none runs. Nothing after ``close``."""
        with self._wakeup:
            if self._stopping:
                return
            self._requested = True
            self._idle_since = time.monotonic()
            if self._thread is None or not self._thread.is_alive():
                thread = threading.Thread(
                    target=_serve, args=(weakref.ref(self), self._wakeup), name=THREAD_NAME, daemon=True
                )
                self._thread = thread
                thread.start()
                _workers.add(self)
            self._wakeup.notify_all()

    def notify(self) -> None:
        """Let the thread look at its plan again (changed options)."""
        with self._wakeup:
            self._wakeup.notify_all()

    def request_stop(self) -> None:
        """Ask the thread to stop after its current batch, without waiting (``close`` waits)."""
        with self._wakeup:
            self._stopping = True
            self._wakeup.notify_all()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the thread to end."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def close(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the thread after its current batch, and close the archive to it.

        When this returns, the thread makes no further archive call (the archive may be closed): a batch it is
        still embedding after ``timeout`` is dropped when it ends. No thread is started again.

        Args:
            timeout: Seconds to wait for the batch in hand (0: do not wait).
        """
        self.request_stop()
        thread = self._thread
        self.join(timeout)
        if thread is not None and thread.is_alive() and timeout > 0:
            logger.warning(
                "seconds=<%.0f> | the embedding thread did not stop in time; its batch stays pending", timeout
            )
        if thread is not None:
            self._access.bar(thread)  # waits for an archive call in progress, never for an embedding
        _workers.discard(self)

    def abandon(self, waited: float) -> None:
        """At exit, after the wait: name the thread if it still embeds, and close the archive to it."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            logger.warning(
                "thread=<%s (id %s)>, archive=<%s>, messages=<%d> | exit abandoned this embedding thread's batch "
                "after waiting %.0f s for all of them together; its messages stay pending",
                thread.name,
                thread.native_id,
                type(self._access.archive).__name__,
                self._holding(),
                waited,
            )
        self.close(timeout=0)

    def _step(self, now: float) -> float | str:
        """Under the lock: ``_RUN``, ``_END``, or how many seconds to wait before looking again."""
        plan = self._plan()
        if self._stopping or plan is None:
            return self._end()
        gate, due = plan(now)
        if gate is not None:
            if gate == 0.0 and (self._requested or (due is not None and due <= 0.0)):
                self._requested = False
                return _RUN
            waits = ([gate] if self._requested else []) + ([max(due, gate)] if due is not None else [])
            if waits:
                return min(waits)
        idle = IDLE_SECONDS - (now - self._idle_since)
        return self._end() if idle <= 0.0 else idle

    def _end(self) -> str:
        if self._thread is threading.current_thread():
            self._thread = None  # a request starts another
        return _END

    def _run(self) -> None:
        job = self._job()
        try:
            if job is not None:
                job()
        except Exception as error:  # the job contains its own failures; this is a last resort
            logger.warning("error=<%s> | the embedding thread's batch failed; its messages stay pending", error)
        finally:
            del job
            with self._wakeup:
                self._idle_since = time.monotonic()
