"""The HNSW index of each dimension: when a user wants it, and building it in one pass.

Each dimension has one partial index on ``embedding::vector(d)`` shared by every user of that dimension.
It is built when a *search* first finds its user at or over ``exact_search_below`` embedded messages, in a
background thread (searches stay exact meanwhile), not when the vectors arrive: a bulk load that crossed the
threshold built the graph half-way and then inserted the rest row by row (100k messages archived in batches of
5,000 with precomputed vectors, load average 7-10 on 2 cores: 533 s with the build at 50k, 194 s without it,
135 s once vectors were also sent in binary; the build over 100k afterwards took 126 s in the background).
See ``build_hnsw`` for the build itself.

The index is shared: once it exists, every vector written in any user of its dimension is inserted into the
graph row by row (20k vectors into a table whose index already held 100k: 108 s on the same loaded machine,
vectors then still sent as text), so bulk loads into a database that already has the index are several times
slower than into one without.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from strands_semantic_memory.archives.postgres._connections import Connections
from strands_semantic_memory.archives.postgres._reads import View
from strands_semantic_memory.errors import ArchiveError

logger = logging.getLogger(__name__)

_HNSW_TRY_LOCK = "SELECT pg_try_advisory_lock(hashtext('strands_semantic_memory_hnsw'))"
_HNSW_UNLOCK = "SELECT pg_advisory_unlock(hashtext('strands_semantic_memory_hnsw'))"
_INDEX_VALID = (
    "SELECT i.indisvalid FROM pg_class AS c JOIN pg_index AS i ON i.indexrelid = c.oid "
    "WHERE c.relname = %s AND c.relkind = 'i'"
)

MAX_BUILD_MEMORY = 1 << 30
"""Most ``maintenance_work_mem`` (bytes) an HNSW build raises its session to (estimated from the vector count)."""


def hnsw_index_name(dimension: int) -> str:
    """The name of the partial HNSW index of one dimension."""
    return f"ssm_archive_hnsw_{dimension}"


def build_hnsw(connection: Any, dimension: int) -> bool:
    """Build the HNSW index of a dimension without blocking writers (``CREATE INDEX CONCURRENTLY``).

    Building the graph in one pass is several times faster than growing it row by row (2,000 vectors of 384
    dimensions: 2.3 s to build against 30 s of per-row inserts on the same loaded machine), so the index is created
    only when a user first needs it. One process builds at a time (a session advisory lock; the others keep
    searching exactly meanwhile); an invalid index left by a builder that died is dropped and built again.

    Args:
        connection: An autocommit connection whose ``statement_timeout`` allows the build.
        dimension: The vector length.

    Returns:
        True if a valid index exists afterwards.
    """
    name = hnsw_index_name(dimension)
    (locked,) = connection.execute(_HNSW_TRY_LOCK).fetchone()
    if not locked:
        return False
    try:
        row = connection.execute(_INDEX_VALID, (name,)).fetchone()
        if row is not None and row[0]:
            return True
        if row is not None:
            connection.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        started = time.perf_counter()
        # The graph must fit maintenance_work_mem, or pgvector finishes the build row by row on disk (a 100k build
        # under the 64 MB default took 500 s on the loaded test machine). Raise it for this session only.
        connection.execute(
            "SELECT set_config('maintenance_work_mem', (greatest("
            "pg_size_bytes(current_setting('maintenance_work_mem')), "
            "least(%s::bigint, (SELECT count(*) FROM ssm_archive WHERE dimension = %s) * %s)) / 1024)::text || 'kB', "
            "false)",
            (MAX_BUILD_MEMORY, dimension, dimension * 4 * 2 + 1024),
        )
        try:
            connection.execute(
                f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON ssm_archive "
                f"USING hnsw ((embedding::vector({dimension})) vector_ip_ops) WHERE dimension = {dimension}"
            )
        finally:
            connection.execute("RESET maintenance_work_mem")
        # Fresh statistics, or the planner may still think the user is small and scan it by primary key.
        connection.execute("ANALYZE ssm_archive")
        elapsed = time.perf_counter() - started
        logger.info("dimension=<%d>, seconds=<%.1f> | HNSW index built", dimension, elapsed)
        return True
    finally:
        connection.execute(_HNSW_UNLOCK)


def wants_hnsw(live: int, pending: int, exact_search_below: int) -> bool:
    """Whether a user should have its HNSW index now.

    It should once it reached the threshold and a bulk load has (nearly) finished embedding: one pass over the
    vectors instead of a graph insert per row (a few poison messages left pending do not stop it).
    """
    return live - pending >= exact_search_below and pending <= max(64, live // 100)


def ensure_hnsw(connections: Connections, view: View, dimension: int) -> None:
    """Build the dimension's HNSW index unless it exists (see ``build_hnsw``), in the calling thread.

    A build that fails (``lock_timeout`` behind a long transaction, say) is logged and tried again a minute later;
    searches stay exact meanwhile.
    """
    if dimension in view.hnsw or time.monotonic() < view.hnsw_retry_at:
        return
    try:
        with connections.maintenance("building the HNSW index") as connection:
            built = build_hnsw(connection, dimension)
    except ArchiveError as error:
        logger.warning("dimension=<%d>, error=<%s> | HNSW index not built; searching exactly", dimension, error)
        built = False
    if built:
        view.hnsw.add(dimension)
    else:
        view.hnsw_retry_at = time.monotonic() + 60.0


class Builder:
    """Starts at most one background build per archive (see the module docstring)."""

    def __init__(self, connections: Connections) -> None:
        """Remember where connections come from."""
        self._connections = connections
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def maybe_start(self, view: View, exact_search_below: int) -> None:
        """Start building the user's index in the background if it wants one and none is being built."""
        dimension = view.dimension
        if dimension is None or dimension in view.hnsw or time.monotonic() < view.hnsw_retry_at:
            return
        if not wants_hnsw(view.live, view.pending_count, exact_search_below):
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(
                target=ensure_hnsw, args=(self._connections, view, dimension), name="ssm-hnsw-build", daemon=True
            )
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a running build; True when none is running afterwards."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()
