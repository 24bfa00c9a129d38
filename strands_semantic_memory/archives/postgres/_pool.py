"""Connections of the PostgreSQL archive: one pool per DSN and options in the process, bounded waits, retries.

Every archive built with the same DSN and options shares one ``psycopg_pool.ConnectionPool`` (reference counted: the
first archive opens it, the last ``close``, or the last archive dropped without one, closes it), so an application
that builds one archive per user per request holds at most ``pool_size`` connections whatever its number of users.
The schema is checked, and the server's secret read, once per pool.

Every wait has a bound: ``connect_timeout`` for a new connection, ``pool_timeout`` for a working one (a free
connection, or the server back after a restart), and on every connection ``statement_timeout``, ``lock_timeout``
(both enforced by the server) and TCP keepalives (a server host that vanished).

A connection is checked as it is handed out, without a round trip: an idle connection has nothing to read, so one
the server wrote to (the notice a restarting server sends every session, or the end of the stream) is stale; it is
closed and the call moves on to another. (``ConnectionPool.check_connection`` costs a round trip, and its loop
sleeps a second, then two, then four, after each dead connection it meets: three outlast a five-second bound.)

A call that fails for a lost connection, a server starting up or shutting down, a deadlock or no connection in time
is run again on another connection until ``pool_timeout`` has passed since it started; a failure of the statement's
own (a timeout, bad data) is not retried. It waits at most a second at a time in the pool's queue, and the pool
gives up a reconnection after a second: waiting again asks for a new connection, so the first call after an outage
connects as soon as the server is back (the pool's own backoff would wait up to minutes). Every call is idempotent
(keys make ``add`` so): a commit whose answer was lost is safe to run again.

Why hand-written around psycopg_pool: it has no registry shared by the archives of a process, it retries nothing
itself, and its check is slow after a restart; these few lines add the three and turn errors into ``ArchiveError``.
"""

from __future__ import annotations

import logging
import select
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psycopg
from psycopg import errors
from psycopg_pool import ConnectionPool, PoolTimeout

from strands_semantic_memory.errors import ArchiveError

__all__ = ["PoolOptions", "SharedPool", "acquire", "release"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_TRANSIENT_STATES = ("57P01", "57P02", "57P03", "40P01", "40001")
"""Admin or crash shutdown, the server starting up, a deadlock, a serialization failure (class 08 too: connections)."""
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
"""A server host that vanished is noticed within about 25 s, even by a call waiting for its answer."""


@dataclass(frozen=True)
class PoolOptions:
    """What archives must share to share a pool: the DSN and every connection option (seconds)."""

    dsn: str
    pool_size: int
    connect_timeout: float
    statement_timeout: float
    lock_timeout: float
    pool_timeout: float

    @contextmanager
    def connect(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of its own, configured like the pool's (for the schema check and index builds), closed after."""
        with psycopg.connect(self.dsn, autocommit=True, **self._kwargs()) as connection:
            self.configure(connection, vectors=False)
            yield connection

    def _kwargs(self) -> dict[str, Any]:
        return {"connect_timeout": max(1, round(self.connect_timeout)), **_KEEPALIVES}

    def configure(self, connection: psycopg.Connection[Any], vectors: bool = True) -> None:
        """Set the timeouts and ``jit = off`` on a new connection (millisecond statements gain nothing from JIT)."""
        connection.execute(
            "SELECT set_config('statement_timeout', %s, false), set_config('lock_timeout', %s, false), "
            "set_config('jit', 'off', false)",
            (f"{round(self.statement_timeout * 1000)}ms", f"{round(self.lock_timeout * 1000)}ms"),
        )
        if vectors:
            from pgvector.psycopg import register_vector

            register_vector(connection)

    def pool(self) -> ConnectionPool[Any]:
        """A new pool with these options (its connections are opened in the background)."""
        pool: ConnectionPool[Any] = ConnectionPool(
            self.dsn,
            min_size=1,
            max_size=self.pool_size,
            kwargs={"autocommit": True, **self._kwargs()},
            configure=self.configure,
            timeout=self.pool_timeout,
            reconnect_timeout=1.0,  # then the slot is free again: the next call that waits connects anew
            num_workers=2,
            name="strands-semantic-memory",
            open=False,
        )
        pool.open(wait=False)
        return pool


@dataclass
class SharedPool:
    """One pool of the process and what its archives share."""

    options: PoolOptions
    pool: ConnectionPool[Any]
    secret: bytes  # the server's: keys the digests of forgotten messages and the rows of forgotten users
    references: int = 0  # archives holding it
    indexes: set[int] = field(default_factory=set)  # dimensions whose HNSW index is known to be valid
    builds: dict[int, float] = field(default_factory=dict)  # dimension -> when a build may start again (monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, action: str, user_id: str, work: Callable[[Any], T], write: bool = False) -> T:
        """Run ``work(connection)`` (in one transaction if ``write``), retrying transient failures (``retrying``)."""

        def attempt(wait: float) -> T:
            with self.pool.connection(timeout=wait) as connection:
                if stale(connection):
                    connection.close()  # the pool replaces it
                    raise psycopg.OperationalError("the server ended this pooled connection's session")
                if not write:
                    return work(connection)
                with connection.transaction():
                    return work(connection)

        return retrying(action, user_id, self.options, attempt)


def retrying(action: str, user_id: str, options: PoolOptions, attempt: Callable[[float], T]) -> T:
    """``attempt(seconds left)``, run again after a transient failure until ``pool_timeout`` has passed.

    Raises:
        ArchiveError: If it failed (in time, or for good); nothing was committed.
    """
    deadline = time.monotonic() + options.pool_timeout
    delay, tries = 0.05, 1
    while True:
        try:
            return attempt(max(0.05, min(1.0, deadline - time.monotonic())))  # then waits again, in the queue anew
        except (psycopg.Error, PoolTimeout) as error:
            if not transient(error) or time.monotonic() + delay >= deadline:
                raise archive_error(error, action, user_id, options) from error
            logger.info("action=<%s>, attempt=<%d>, error=<%s> | PostgreSQL call failed; again", action, tries, error)
            time.sleep(delay)
            delay, tries = min(delay * 2, 0.5), tries + 1


def stale(connection: psycopg.Connection[Any]) -> bool:
    """Whether the server ended an idle connection's session (it has something to read), seen without a round trip."""
    if connection.closed:
        return True
    try:
        return bool(select.select([connection.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def transient(error: BaseException) -> bool:
    """Whether running the call again, on another connection, may succeed."""
    if isinstance(error, PoolTimeout):
        return True
    if not isinstance(error, psycopg.OperationalError) or isinstance(error, errors.QueryCanceled):
        return False
    state = error.sqlstate
    return state is None or state.startswith("08") or state in _TRANSIENT_STATES


def archive_error(error: BaseException, action: str, user_id: str, options: PoolOptions) -> ArchiveError:
    """The ``ArchiveError`` for a failed call, naming the bound that was hit or the cause."""
    if isinstance(error, errors.QueryCanceled):
        cause = f"a statement ran longer than statement_timeout={options.statement_timeout}s"
    elif isinstance(error, errors.LockNotAvailable):
        cause = f"it waited longer than lock_timeout={options.lock_timeout}s for a lock another session holds"
    elif transient(error):
        cause = f"cannot reach PostgreSQL (tried for pool_timeout={options.pool_timeout}s): {error}"
    else:
        cause = str(error)
    return ArchiveError(f"PostgreSQL {action} failed for user {user_id!r}: {cause}; nothing was committed")


_pools: dict[PoolOptions, SharedPool] = {}
_opening: dict[PoolOptions, threading.Lock] = {}
_registry = threading.Lock()


def acquire(options: PoolOptions, user_id: str, prepare: Callable[[psycopg.Connection[Any]], bytes]) -> SharedPool:
    """A reference to the process's pool for ``options``; the first opens it after ``prepare`` (returns the secret).

    Raises:
        ArchiveError: If the database cannot be reached or ``prepare`` refuses it.
    """
    with _registry:
        opening = _opening.setdefault(options, threading.Lock())
    with opening:  # one archive opens a pool; the others of a burst wait for it, then share it
        with _registry:
            shared = _pools.get(options)
            if shared is not None:
                shared.references += 1
                return shared

        def attempt(wait: float) -> bytes:
            with options.connect() as connection:
                return prepare(connection)

        secret = retrying("opening the archive", user_id, options, attempt)
        shared = SharedPool(options, options.pool(), secret, references=1)
        with _registry:
            _pools[options] = shared
        return shared


def release(shared: SharedPool) -> None:
    """Give back one reference; the last closes the pool."""
    with _registry:
        shared.references -= 1
        if shared.references > 0 or _pools.get(shared.options) is not shared:
            return
        del _pools[shared.options]
    try:
        shared.pool.close(timeout=shared.options.connect_timeout)
    except Exception as error:  # closing loses nothing; a pool that cannot close is only logged
        logger.warning("error=<%s> | closing the PostgreSQL connection pool failed", error)
