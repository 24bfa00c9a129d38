"""Wiring: a memory's running parts, built from its store, embedder and options, and kept in step with the options.

``SemanticMemory`` validates its arguments, then ``build``
binds the store to the embedding model, picks the store lock (none for a thread-safe store) and connects the
checked encoder (``_query_encoder``), the embedding queue
(``_embedding_queue``) and the recall path (``_recall``).
``reconfigure`` hands changed options to the running parts without dropping their state (claims in
flight, the failure clock, cached queries that still fit), so every option takes effect on the next call. The parts
also count changes (the memory's ``version``) and searches.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Concatenate, ParamSpec, TypeVar

from strands_semantic_memory.embeddings import Embedder
from strands_semantic_memory.engine._embedding_queue import EmbeddingQueue
from strands_semantic_memory.engine._intake import AddedCounter
from strands_semantic_memory.engine._options import MemoryOptions
from strands_semantic_memory.engine._query_encoder import Encoder
from strands_semantic_memory.engine._stats import MemoryStats, build_stats
from strands_semantic_memory.retrieval._recall import Recall
from strands_semantic_memory.retrieval._rerank import Reranker
from strands_semantic_memory.stores._protocol import ArchiveStore

__all__ = ["MemoryParts"]

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(eq=False)
class MemoryParts:
    """A memory's store, locks, encoder, embedding queue and recall path, with its change and search counters."""

    archive: ArchiveStore
    encoder: Encoder
    queue: EmbeddingQueue
    recall: Recall
    lock: threading.RLock
    """Guards the counters and a restore; it is also the store lock of a store that is not thread-safe."""
    store_lock: AbstractContextManager[object]
    added: AddedCounter = field(default_factory=AddedCounter)
    version: int = 0
    searches: int = 0

    @classmethod
    def build(
        cls, archive: ArchiveStore, embedder: Embedder, options: Callable[[], MemoryOptions], reranker: Reranker | None
    ) -> MemoryParts:
        """Connect the parts; ``options`` returns the memory's current options (the recall path reads them live).

        Raises:
            EmbeddingModelMismatchError: If a shared store's namespace was built by another embedding model.
        """
        archive.bind(embedder.model_id)
        lock = threading.RLock()
        store_lock: AbstractContextManager[object] = contextlib.nullcontext() if archive.thread_safe else lock
        encoder = Encoder(embedder, lambda: archive.dimension, options().query_cache_size)
        queue = EmbeddingQueue.for_options(encoder.documents, options())
        recall = Recall(archive, encoder, store_lock, options, reranker)
        parts = cls(archive, encoder, queue, recall, lock, store_lock)
        queue.attach(archive, store_lock, parts.changed)
        return parts

    def reconfigure(self, options: MemoryOptions) -> None:
        """Apply changed options to the queue (claims kept) and the query cache (the least recent evicted)."""
        self.queue.reconfigure(options)
        self.encoder.resize_cache(options.query_cache_size)

    def locked(self, step: Callable[Concatenate[ArchiveStore, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``step(store, *args, **kwargs)`` under the store lock (a thread-safe store: no lock)."""
        with self.store_lock:
            return step(self.archive, *args, **kwargs)

    def changed(self, count: int = 1) -> int:
        """Count a change (``version`` increases by one) unless ``count`` is 0; returns ``count``."""
        if count:
            with self.lock:
                self.version += 1
        return count

    def removed(self, indices: list[int]) -> list[int]:
        """Count removed ``indices`` as one change if there are any; returns them."""
        self.changed(len(indices))
        return indices

    def embed_pending(self) -> int:
        """Embed every pending message now; returns how many were embedded.

        Raises:
            EmbeddingError: If the embedder fails (the messages stay archived and pending).
        """
        return self.changed(self.queue.drain(self.archive, self.store_lock))

    def embed_due(self) -> None:
        """After archiving: embed what is pending now or in the background (``EmbeddingQueue.after_archive``)."""
        self.changed(self.queue.after_archive(self.archive, self.store_lock))

    def ready_recall(self) -> Recall:
        """Before a search: count it, embed what is pending if a run is due; returns the recall path."""
        with self.lock:
            self.searches += 1
        self.changed(self.queue.catch_up(self.archive, self.store_lock))
        return self.recall

    def stats(self, options: MemoryOptions, model_id: str) -> MemoryStats:
        """The store's figures (one call under the lock) combined with the counters and options."""
        figures = self.locked(lambda store: store.stats())
        store = type(self.archive).__name__
        return build_stats(figures, options, model_id, store, self.queue, self.encoder, self.searches)
