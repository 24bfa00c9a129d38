"""One user's partition on one server: its connections, the schema check on first use, and what is known about it."""

from __future__ import annotations

import logging
import threading

from strands_semantic_memory.archives.postgres._connections import Connections
from strands_semantic_memory.archives.postgres._reads import View
from strands_semantic_memory.archives.postgres._schema import Counters, PartitionInfo, bind_model, prepare, register
from strands_semantic_memory.archives.postgres._writes import forget_user, reembed
from strands_semantic_memory.errors import ArchiveError, EmbeddingModelMismatchError

logger = logging.getLogger(__name__)


class Partition:
    """A user's partition, opened lazily, with its ``View``.

    Opening creates the schema if it is missing, registers the user and checks its model; the first call from any
    thread opens it, once.
    """

    def __init__(self, name: str, connections: Connections) -> None:
        """Remember the user; nothing is contacted here.

        Args:
            name: The user id.
            connections: Where its connections come from.
        """
        self.name = name
        self.connections = connections
        self.view = View()
        self.model_id: str | None = None
        self._restart: Counters | None = None  # the counters to register the user with, after forget_all
        self._ready = False
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """Whether the user has been opened (and not closed since)."""
        return self._ready

    def open(self, *, rebinding: bool = False) -> None:
        """Open the user if it is not open yet.

        Args:
            rebinding: Accept a user bound to another model (the caller is about to re-embed it).

        Raises:
            ArchiveError: If PostgreSQL cannot be reached or holds a newer schema.
            EmbeddingModelMismatchError: If the user is bound to another model than ``bind`` gave.
        """
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            if self.connections.pooled and not self.connections.schema_checked:
                with self.connections.checking_schema():  # one check per process and pool; the others wait
                    self._open(rebinding)
                return
            self._open(rebinding)

    def _open(self, rebinding: bool) -> None:
        """Open the user (``open``, with its lock held)."""
        if self.connections.schema_checked:  # another archive of this process checked it: register the user
            self.connections.start()
            try:
                with self.connections.read("opening the user") as connection:
                    info = register(connection, self.name, self.model_id, self._restart)
                self._check_model(info, rebinding)
            except BaseException:
                self.connections.close()
                raise
        else:
            connection = self.connections.setup_connection()
            try:
                with self.connections.errors("opening the user"):
                    info = prepare(connection, self.name, self.model_id, self._restart)
            finally:
                if self.connections.owned(connection):
                    connection.close()
            self._check_model(info, rebinding)
            self.connections.start()
            self.connections.schema_is_checked()
        self._restart = None
        self.view = View(info.dimension, info.live, set(info.hnsw_dimensions))
        self.view.pending_count = info.pending
        self._ready = True
        if info.reindexed:
            self._vacuum()

    def _check_model(self, info: PartitionInfo, rebinding: bool) -> None:
        stored, wanted = info.model_id, self.model_id
        if stored is not None and wanted is not None and stored != wanted and not rebinding:
            raise EmbeddingModelMismatchError(stored, wanted)

    def _vacuum(self) -> None:
        """Clean up after a re-index rewrote every message row (until then each search reads both versions)."""
        try:
            with self.connections.maintenance("vacuuming after the re-index") as connection:
                connection.execute("VACUUM (ANALYZE) ssm_archive", prepare=False)
        except ArchiveError as error:
            logger.warning("error=<%s> | VACUUM after the re-index failed; autovacuum will do it", error)

    def bind(self, model_id: str) -> None:
        """Bind the user to a model (checked now if open, else when it opens).

        Raises:
            EmbeddingModelMismatchError: If it is bound to another model.
        """
        self.model_id = model_id
        if self._ready:
            with self.connections.read("binding the embedding model") as connection:
                stored = bind_model(connection, self.name, model_id)
            if stored != model_id:
                raise EmbeddingModelMismatchError(stored, model_id)

    def reembed(self) -> None:
        """Drop the user's vectors and re-bind it to this archive's model, in one transaction."""
        self.open(rebinding=True)  # the user is re-bound to this archive's model below
        with self.connections.write("dropping vectors to embed again") as connection:
            reembed(connection, self.name, self.model_id)
        self.view.dimension = None
        self.view.saw_pending(None)

    def forget_all(self) -> int:
        """Delete every row of the user, its row in ``ssm_users`` included, in one transaction.

        The user is registered again on next use, with the counters this process had (its indices are not handed
        out again here; another process that opens the user later starts from 0).

        Returns:
            How many messages were deleted.
        """
        self.open()
        with self.connections.write("forgetting the user", pipeline=False) as connection:
            removed, counters = forget_user(connection, self.name)
        with self._lock:
            self._restart = counters
            self._ready = False
        return removed

    def close(self) -> None:
        """Close its connections; it opens again on next use."""
        with self._lock:
            self.connections.close()
            self._ready = False
