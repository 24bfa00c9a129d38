"""Connections of the PostgreSQL store: a pool, bounded waits, and one error type.

Every connection gets ``lock_timeout`` and ``statement_timeout`` when it is opened, so no call waits on the
database without bound: a writer blocked by another session's row lock fails after ``lock_timeout`` and a query
that runs away is cancelled after ``statement_timeout``; both become
``ArchiveError`` and the transaction is rolled back (nothing committed).

Every connection also gets ``jit = off``: the store's statements run in milliseconds, and the planner's estimate
for the search statement (which cannot know how many rows each neighbourhood range holds) passes the server's
default ``jit_above_cost``, so on a server built with LLVM the statement would be compiled, at a cost of tens of
milliseconds, whenever it is planned for its parameters (its first executions on each connection, and every one
with ``prepare_threshold=None``).

Pooled connections (``psycopg_pool``) are in autocommit mode, so a read is one statement and one round trip;
writes open a transaction explicitly, and send their statements in a pipeline where they can. Because each call
takes its own connection, the store is safe to call from several threads: a search does not queue behind a writer
that waits for a lock.

A restart of the server is invisible to callers: every pooled connection is checked as it is handed out, without a
round trip (``_check_idle``). An idle connection has nothing to read, so one the server has written to (the notice
a restarting server sends each session, or the end of the stream when its process is gone) is stale: it is closed,
and the pool hands out another or opens a new one, within ``connect_timeout``.
"""

from __future__ import annotations

import logging
import math
import select
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from strands_semantic_memory.errors import ArchiveError, ConfigurationError, MissingDependencyError

logger = logging.getLogger(__name__)


def _seconds(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigurationError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def check_options(namespace: Any, exact_search_below: Any, pending_check_interval: Any) -> tuple[int, float]:
    """Validate the store's own options and that its dependencies are installed.

    Returns:
        ``exact_search_below`` and ``pending_check_interval`` (as a float).

    Raises:
        ConfigurationError: If an option is invalid.
        MissingDependencyError: If psycopg or pgvector is not installed.
    """
    if not isinstance(namespace, str) or not namespace:
        raise ConfigurationError(f"namespace must be a non-empty string, got {namespace!r}")
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


class Connections:
    """A pool of configured connections (or one connection the caller supplied), handed out per call."""

    def __init__(
        self,
        dsn: str,
        namespace: str,
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
            namespace: The store's namespace (for error messages).
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
        self.namespace = namespace
        self.connect_timeout = _seconds("connect_timeout", connect_timeout)
        self.lock_timeout = _seconds("lock_timeout", lock_timeout)
        self.statement_timeout = _seconds("statement_timeout", statement_timeout)
        self.pool_size = pool_size
        self.prepare_threshold = prepare_threshold
        self._given = connection
        self._given_lock = threading.Lock()
        self._pool: Any | None = None

    @property
    def pooled(self) -> bool:
        """True when connections come from a pool (calls may then run concurrently)."""
        return self._given is None

    # ------------------------------------------------------------------ opening

    def configure(self, connection: Any) -> None:
        """Set the timeouts and ``jit = off``, and register the ``vector`` type on a new connection."""
        from pgvector.psycopg import register_vector

        autocommit = connection.autocommit
        connection.autocommit = True
        try:
            connection.execute(
                "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false), "
                "set_config('jit', 'off', false)",
                (_milliseconds(self.lock_timeout), _milliseconds(self.statement_timeout)),
            )
            register_vector(connection)
        finally:
            connection.autocommit = autocommit

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
            raise ArchiveError(f"cannot connect to PostgreSQL for namespace '{self.namespace}': {error}") from error
        with self.errors("connecting"):
            connection.execute(
                "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false)",
                (_milliseconds(self.lock_timeout), _milliseconds(self.statement_timeout)),
            )
        return connection

    def owned(self, connection: Any) -> bool:
        """Whether ``connection`` (from ``setup_connection``) is ours to close."""
        return connection is not self._given

    def start(self) -> None:
        """Open the pool (its first connection is made in the background; the first call waits for it).

        Raises:
            MissingDependencyError: If ``psycopg_pool`` is not installed.
        """
        if self._given is not None or self._pool is not None:
            return
        try:
            from psycopg_pool import ConnectionPool
        except ImportError as error:
            raise MissingDependencyError("PostgresArchive", "pgvector", "psycopg_pool") from error
        kwargs: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, round(self.connect_timeout)),
            "prepare_threshold": self.prepare_threshold,
        }
        self._pool = ConnectionPool(
            self.dsn,
            min_size=1,
            max_size=self.pool_size,
            kwargs=kwargs,
            configure=self.configure,
            check=_check_idle,
            timeout=self.connect_timeout,
            num_workers=1,
            name=f"ssm-{self.namespace}",
            open=False,
        )
        self._pool.open(wait=False)

    def close(self) -> None:
        """Close the pool (a given connection is closed too); the store reconnects on next use."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(timeout=self.connect_timeout)
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
                f"PostgreSQL {action} for namespace '{self.namespace}' waited longer than lock_timeout="
                f"{self.lock_timeout}s for a lock another session holds; nothing was committed"
            ) from error
        except errors.QueryCanceled as error:
            raise ArchiveError(
                f"PostgreSQL {action} for namespace '{self.namespace}' ran longer than statement_timeout="
                f"{self.statement_timeout}s and was cancelled; nothing was committed"
            ) from error
        except psycopg.OperationalError as error:
            raise ArchiveError(
                f"cannot reach PostgreSQL ({action}, namespace '{self.namespace}'): {error}; nothing was committed"
            ) from error
        except psycopg.Error as error:
            raise ArchiveError(f"PostgreSQL {action} failed for namespace '{self.namespace}': {error}") from error

    @contextmanager
    def _connection(self, action: str) -> Iterator[Any]:
        with self.errors(action):
            if self._given is not None:
                with self._given_lock:
                    yield self._given
                return
            if self._pool is None:
                raise ArchiveError(f"the PostgreSQL store for namespace '{self.namespace}' is closed")
            with self._pool.connection() as connection:
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
        statements need one intermediate result (the namespace lock and key lookup, say) costs two round trips.
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
