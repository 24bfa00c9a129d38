"""Connections of the PostgreSQL archive: a pool, bounded waits, and one error type.

Every connection gets ``lock_timeout`` and ``statement_timeout`` when it is opened, so no call waits on the
database without bound: a writer blocked by another session's row lock fails after ``lock_timeout`` and a query
that runs away is cancelled after ``statement_timeout``; both become
``ArchiveError`` and the transaction is rolled back (nothing committed).

Every connection also gets ``jit = off``: the archive's statements run in milliseconds, and the planner's estimate
for the search statement (which cannot know how many rows each neighbourhood range holds) passes the server's
default ``jit_above_cost``, so on a server built with LLVM the statement would be compiled, at a cost of tens of
milliseconds, whenever it is planned for its parameters (its first executions on each connection, and every one
with ``prepare_threshold=None``).

Connections are shared by the process: every archive with the same DSN and connection options (timeouts, pool size,
``prepare_threshold``) uses one pool (``SharedPool``), reference counted: the first archive to need it opens it, and
the last to close (or to be dropped) closes it. An application that builds one archive per user per request so
holds ``pool_size`` connections at most, whatever the number of users (tested with the server's
``pg_stat_activity``). The schema is checked once per pool: a later archive only registers its user, on a pooled
connection.

Pooled connections (``psycopg_pool``) are in autocommit mode, so a read is one statement and one round trip;
writes open a transaction explicitly, and send their statements in a pipeline where they can. Because each call
takes its own connection, the archive is safe to call from several threads: a search does not queue behind a writer
that waits for a lock.

A restart of the server is invisible to callers: every pooled connection is checked as it is handed out, without a
round trip (``_check_idle``). An idle connection has nothing to read, so one the server has written to (the notice
a restarting server sends each session, or the end of the stream when its process is gone) is stale: it is closed,
and the pool hands out another or opens a new one, within ``connect_timeout``.
"""

from __future__ import annotations

import itertools
import logging
import math
import select
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from strands_semantic_memory._validation import check_identifier
from strands_semantic_memory.errors import ArchiveError, ConfigurationError, MissingDependencyError

logger = logging.getLogger(__name__)


def _seconds(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigurationError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def check_options(user_id: Any, exact_search_below: Any, pending_check_interval: Any) -> tuple[int, float]:
    """Validate the archive's own options and that its dependencies are installed.

    Returns:
        ``exact_search_below`` and ``pending_check_interval`` (as a float).

    Raises:
        ConfigurationError: If an option is invalid.
        MissingDependencyError: If psycopg or pgvector is not installed.
    """
    check_identifier("user_id", user_id, optional=False)
    if not isinstance(pending_check_interval, (int, float)) or not pending_check_interval >= 0:
        raise ConfigurationError(f"pending_check_interval must be >= 0, got {pending_check_interval!r}")
    try:
        import psycopg  # noqa: F401
        from pgvector.psycopg import register_vector  # noqa: F401
    except ImportError as error:
        raise MissingDependencyError("PostgresArchive", "pgvector", "psycopg and pgvector") from error
    if isinstance(exact_search_below, bool) or not isinstance(exact_search_below, int) or exact_search_below < 0:
        raise ConfigurationError(f"exact_search_below must be an integer >= 0, got {exact_search_below!r}")
    return exact_search_below, float(pending_check_interval)


def _milliseconds(seconds: float) -> str:
    return str(max(1, round(seconds * 1000)))


def _check_idle(connection: Any) -> None:
    """The pool's check of a connection it is about to hand out: cheap, no round trip.

    An idle connection has nothing to read; if its socket is readable, the server has ended the session (a restart
    sends each session a notice, then closes it; a process that is gone leaves the end of the stream) or sent
    something unasked. Either way the connection is closed, so the pool discards it and opens another.

    Raises:
        psycopg.OperationalError: If the connection is closed or stale.
    """
    import psycopg

    if not connection.closed:
        try:
            readable, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError):
            readable = [True]
        if not readable:
            return
        connection.close()
    logger.info("connection=<%s> | stale pooled connection closed (the server ended its session)", id(connection))
    raise psycopg.OperationalError("the server ended this pooled connection's session")


PoolKey = tuple[str, float, float, float, int, int | None]
"""``Connections.key``: the DSN and the connection options a pool is opened with."""


@dataclass
class SharedPool:
    """One pool of the process, shared by the archives opened with its key.

    Attributes:
        pool: The ``psycopg_pool.ConnectionPool``.
        references: The archives holding it (it closes when the last lets go).
        schema_checked: Whether an archive has checked the schema of its database (later ones only register
            their user).
    """

    pool: Any
    references: int = 0
    schema_checked: bool = False


_pools: dict[PoolKey, SharedPool] = {}
_pools_lock = threading.Lock()
_schema_locks: dict[PoolKey, threading.Lock] = {}
_pool_numbers = itertools.count(1)


def _find(key: PoolKey) -> SharedPool | None:
    with _pools_lock:
        return _pools.get(key)


def _acquire(key: PoolKey, make: Callable[[], Any]) -> SharedPool:
    """A reference to the pool of ``key``, opened by ``make`` if there is none."""
    with _pools_lock:
        shared = _pools.get(key)
        if shared is None:
            shared = _pools[key] = SharedPool(make())
        shared.references += 1
        return shared


def _release(key: PoolKey, shared: SharedPool) -> None:
    """Give back one reference; the last one closes the pool (outside the registry's lock)."""
    with _pools_lock:
        shared.references -= 1
        last = shared.references <= 0
        if last and _pools.get(key) is shared:
            del _pools[key]
    if last:
        try:
            shared.pool.close(timeout=key[1])
        except Exception as error:  # closing never loses data; a pool that cannot close is logged
            logger.warning("error=<%s> | closing the PostgreSQL connection pool failed", error)


def open_pools() -> dict[str, int]:
    """The process's pools: their name and how many archives hold each (for diagnostics and tests)."""
    with _pools_lock:
        return {str(shared.pool.name): shared.references for shared in _pools.values()}


def _configure(lock_timeout: float, statement_timeout: float) -> Callable[[Any], None]:
    """What each new connection of a pool runs: the timeouts, ``jit = off``, the ``vector`` type."""

    def configure(connection: Any) -> None:
        from pgvector.psycopg import register_vector

        autocommit = connection.autocommit
        connection.autocommit = True
        try:
            connection.execute(
                "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false), "
                "set_config('jit', 'off', false)",
                (_milliseconds(lock_timeout), _milliseconds(statement_timeout)),
            )
            register_vector(connection)
        finally:
            connection.autocommit = autocommit

    return configure


class Connections:
    """A pool of configured connections (or one connection the caller supplied), handed out per call."""

    def __init__(
        self,
        dsn: str,
        user_id: str,
        *,
        connect_timeout: float,
        lock_timeout: float,
        statement_timeout: float,
        pool_size: int,
        prepare_threshold: int | None,
        connection: Any | None,
    ) -> None:
        """Remember how to connect; nothing is opened here.

        Args:
            dsn: A libpq connection string or URI.
            user_id: The archive's user (for error messages).
            connect_timeout: Seconds to wait for a connection (also for a free one from the pool).
            lock_timeout: Seconds a statement may wait for a lock.
            statement_timeout: Seconds a statement may run.
            pool_size: Most connections open at once.
            prepare_threshold: psycopg's ``prepare_threshold`` (None: never prepare, for PgBouncer's transaction mode).
            connection: A ready psycopg connection to use instead of a pool (calls are then serialized).

        Raises:
            ConfigurationError: If a timeout is not a positive number of seconds or the pool size is below 1.
        """
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ConfigurationError(f"pool_size must be an integer >= 1, got {pool_size!r}")
        self.dsn = dsn
        self.user_id = user_id
        self.connect_timeout = _seconds("connect_timeout", connect_timeout)
        self.lock_timeout = _seconds("lock_timeout", lock_timeout)
        self.statement_timeout = _seconds("statement_timeout", statement_timeout)
        self.pool_size = pool_size
        self.prepare_threshold = prepare_threshold
        self._given = connection
        self._given_lock = threading.Lock()
        self._shared: SharedPool | None = None
        self._release: weakref.finalize[..., Any] | None = None

    @property
    def pooled(self) -> bool:
        """True when connections come from a pool (calls may then run concurrently)."""
        return self._given is None

    # ------------------------------------------------------------------ opening

    def configure(self, connection: Any) -> None:
        """Set the timeouts and ``jit = off``, and register the ``vector`` type on a new connection."""
        _configure(self.lock_timeout, self.statement_timeout)(connection)

    def setup_connection(self) -> Any:
        """A connection for creating the schema: the given one, or a new one the caller closes (see ``owned``).

        Raises:
            ArchiveError: If PostgreSQL cannot be reached.
        """
        import psycopg

        if self._given is not None:
            with self._given_lock, self.errors("connecting"):
                self.configure(self._given)
            return self._given
        try:
            connection = psycopg.connect(self.dsn, connect_timeout=max(1, round(self.connect_timeout)), autocommit=True)
        except psycopg.Error as error:
            raise ArchiveError(f"cannot connect to PostgreSQL for user '{self.user_id}': {error}") from error
        with self.errors("connecting"):
            connection.execute(
                "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false)",
                (_milliseconds(self.lock_timeout), _milliseconds(self.statement_timeout)),
            )
        return connection

    def owned(self, connection: Any) -> bool:
        """Whether ``connection`` (from ``setup_connection``) is ours to close."""
        return connection is not self._given

    @property
    def key(self) -> PoolKey:
        """What two archives must share to share a pool: the DSN and every connection option."""
        return (
            self.dsn,
            self.connect_timeout,
            self.lock_timeout,
            self.statement_timeout,
            self.pool_size,
            self.prepare_threshold,
        )

    @property
    def schema_checked(self) -> bool:
        """Whether an archive of this process has checked the schema on the pool this one would use."""
        if self._given is not None:
            return False
        shared = self._shared or _find(self.key)
        return shared is not None and shared.schema_checked

    def checking_schema(self) -> threading.Lock:
        """The lock held while an archive of this process checks the schema for these options.

        The first archives of a burst wait for it and then only register their user, instead of each opening a
        connection of its own.
        """
        with _pools_lock:
            return _schema_locks.setdefault(self.key, threading.Lock())

    def schema_is_checked(self) -> None:
        """Record that the schema of the pool's database was checked (after ``prepare``)."""
        if self._shared is not None:
            self._shared.schema_checked = True

    def start(self) -> None:
        """Take a reference to the process's pool for these options, opening it if it is the first.

        Its first connection is made in the background; the first call waits for it.

        Raises:
            MissingDependencyError: If ``psycopg_pool`` is not installed.
        """
        if self._given is not None or self._shared is not None:
            return
        key = self.key
        shared = _acquire(key, lambda: self._new_pool(key))
        self._shared = shared
        self._release = weakref.finalize(self, _release, key, shared)  # an archive dropped without close
        self._release.atexit = False  # at exit the pools stay as they are, as before

    def _new_pool(self, key: PoolKey) -> Any:
        try:
            from psycopg_pool import ConnectionPool
        except ImportError as error:
            raise MissingDependencyError("PostgresArchive", "pgvector", "psycopg_pool") from error
        kwargs: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, round(self.connect_timeout)),
            "prepare_threshold": self.prepare_threshold,
        }
        pool = ConnectionPool(
            self.dsn,
            min_size=1,
            max_size=self.pool_size,
            kwargs=kwargs,
            configure=_configure(self.lock_timeout, self.statement_timeout),
            check=_check_idle,
            timeout=self.connect_timeout,
            num_workers=1,
            name=f"ssm-{next(_pool_numbers)}",
            open=False,
        )
        pool.open(wait=False)
        return pool

    def close(self) -> None:
        """Give back this archive's reference to the pool (the last closes it; a given connection is closed).

        The archive reconnects on next use.
        """
        release, self._release, self._shared = self._release, None, None
        if release is not None:
            release()  # once: a finalize runs its callback at most once
        if self._given is not None and not self._given.closed:
            with self._given_lock:
                self._given.close()

    # ------------------------------------------------------------------ using

    @contextmanager
    def errors(self, action: str) -> Iterator[None]:
        """Turn psycopg errors into ``ArchiveError`` that say which bound was hit."""
        import psycopg
        from psycopg import errors

        try:
            yield
        except errors.LockNotAvailable as error:
            raise ArchiveError(
                f"PostgreSQL {action} for user '{self.user_id}' waited longer than lock_timeout="
                f"{self.lock_timeout}s for a lock another session holds; nothing was committed"
            ) from error
        except errors.QueryCanceled as error:
            raise ArchiveError(
                f"PostgreSQL {action} for user '{self.user_id}' ran longer than statement_timeout="
                f"{self.statement_timeout}s and was cancelled; nothing was committed"
            ) from error
        except psycopg.OperationalError as error:
            raise ArchiveError(
                f"cannot reach PostgreSQL ({action}, user '{self.user_id}'): {error}; nothing was committed"
            ) from error
        except psycopg.Error as error:
            raise ArchiveError(f"PostgreSQL {action} failed for user '{self.user_id}': {error}") from error

    @contextmanager
    def _connection(self, action: str) -> Iterator[Any]:
        with self.errors(action):
            if self._given is not None:
                with self._given_lock:
                    yield self._given
                return
            if self._shared is None:
                raise ArchiveError(f"the PostgreSQL archive for user '{self.user_id}' is closed")
            with self._shared.pool.connection() as connection:
                yield connection

    @contextmanager
    def read(self, action: str) -> Iterator[Any]:
        """A connection for reading (autocommit: each statement is its own round trip and transaction)."""
        with self._connection(action) as connection:
            scope = nullcontext() if connection.autocommit else connection.transaction()
            with scope:
                yield connection

    @contextmanager
    def maintenance(self, action: str) -> Iterator[Any]:
        """An autocommit connection without ``statement_timeout`` (index builds; ``lock_timeout`` still applies)."""
        import psycopg

        with self._connection(action) as connection:
            autocommit = connection.autocommit
            connection.autocommit = True
            connection.execute("SELECT set_config('statement_timeout', '0', false)")
            try:
                yield connection
            finally:
                try:
                    connection.execute(
                        "SELECT set_config('statement_timeout', %s, false)", (_milliseconds(self.statement_timeout),)
                    )
                    connection.autocommit = autocommit
                except psycopg.Error:  # a broken connection: the pool discards it
                    logger.debug("action=<%s> | could not restore the connection's settings", action)

    @contextmanager
    def write(self, action: str, *, pipeline: bool = True) -> Iterator[Any]:
        """A connection inside one transaction; ``pipeline`` batches its statements into fewer round trips.

        On a pooled (autocommit) connection the pipeline carries ``BEGIN`` and ``COMMIT`` too, so a write whose
        statements need one intermediate result (the user lock and key lookup, say) costs two round trips.
        COPY cannot run in a pipeline: pass ``pipeline=False`` for bulk writes.
        """
        with self._connection(action) as connection:
            if not (pipeline and connection.autocommit):
                with connection.pipeline() if pipeline else nullcontext(), connection.transaction():
                    yield connection
                return
            try:
                with connection.pipeline():
                    connection.execute("BEGIN")
                    yield connection
                    connection.execute("COMMIT")
            except BaseException:
                self._roll_back(connection)
                raise

    @staticmethod
    def _roll_back(connection: Any) -> None:
        from psycopg import pq

        if not connection.closed and connection.info.transaction_status != pq.TransactionStatus.IDLE:
            connection.execute("ROLLBACK")
