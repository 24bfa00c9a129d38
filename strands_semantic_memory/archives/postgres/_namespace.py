"""One namespace on one server: its connections, the schema check on first use, and what is known about it."""

from __future__ import annotations

import logging
import threading

from strands_semantic_memory.archives.postgres._connections import Connections
from strands_semantic_memory.archives.postgres._reads import View
from strands_semantic_memory.archives.postgres._schema import bind_model, prepare
from strands_semantic_memory.archives.postgres._writes import reembed
from strands_semantic_memory.errors import ArchiveError, EmbeddingModelMismatchError

logger = logging.getLogger(__name__)


class Namespace:
    """A namespace opened lazily, with its ``View``.

    Opening creates the schema if it is missing, registers the namespace and checks its model; the first call from any
    thread opens it, once.
    """

    def __init__(self, name: str, connections: Connections) -> None:
        """Remember the namespace; nothing is contacted here.

        Args:
            name: The namespace.
            connections: Where its connections come from.
        """
        self.name = name
        self.connections = connections
        self.view = View()
        self.model_id: str | None = None
        self._ready = False
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """Whether the namespace has been opened (and not closed since)."""
        return self._ready

    def open(self, *, rebinding: bool = False) -> None:
        """Open the namespace if it is not open yet.

        Args:
            rebinding: Accept a namespace bound to another model (the caller is about to re-embed it).

        Raises:
            ArchiveError: If PostgreSQL cannot be reached or holds a newer schema.
            EmbeddingModelMismatchError: If the namespace is bound to another model than ``bind`` gave.
        """
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            connection = self.connections.setup_connection()
            try:
                with self.connections.errors("opening the namespace"):
                    info = prepare(connection, self.name, self.model_id)
            finally:
                if self.connections.owned(connection):
                    connection.close()
            stored, wanted = info.model_id, self.model_id
            if stored is not None and wanted is not None and stored != wanted and not rebinding:
                raise EmbeddingModelMismatchError(stored, wanted)
            self.view = View(info.dimension, info.live, set(info.hnsw_dimensions))
            self.view.pending_count = info.pending
            self.connections.start()
            self._ready = True
            if info.reindexed:
                self._vacuum()

    def _vacuum(self) -> None:
        """Clean up after a re-index rewrote every message row (until then each search reads both versions)."""
        try:
            with self.connections.maintenance("vacuuming after the re-index") as connection:
                connection.execute("VACUUM (ANALYZE) ssm_archive", prepare=False)
        except ArchiveError as error:
            logger.warning("error=<%s> | VACUUM after the re-index failed; autovacuum will do it", error)

    def bind(self, model_id: str) -> None:
        """Bind the namespace to a model (checked now if open, else when it opens).

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
        """Drop the namespace's vectors and re-bind it to this store's model, in one transaction."""
        self.open(rebinding=True)  # the namespace is re-bound to this store's model below
        with self.connections.write("dropping vectors to embed again") as connection:
            reembed(connection, self.name, self.model_id)
        self.view.dimension = None
        self.view.saw_pending(None)

    def drop(self) -> None:
        """Delete the namespace's archive and bookkeeping from the database, then close."""
        self.open()
        with self.connections.write("dropping the namespace") as connection:
            connection.execute("DELETE FROM ssm_archive WHERE namespace = %s", (self.name,))
            connection.execute("DELETE FROM ssm_namespaces WHERE namespace = %s", (self.name,))
        self.close()

    def close(self) -> None:
        """Close its connections; it opens again on next use."""
        with self._lock:
            self.connections.close()
            self._ready = False
