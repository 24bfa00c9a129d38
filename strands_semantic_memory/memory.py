"""SemanticMemory: the engine behind the conversation manager, the hook and the Strands memory store.

A facade: it holds the lock, orders the steps and counts changes (:attr:`SemanticMemory.version`); each step is a
module named after its job. Archiving: :mod:`.intake` checks and encodes the messages, the store commits them in
one call, and :mod:`.embedding_queue` embeds them outside the lock (a failing embedder leaves them pending, never
lost). Recall: :mod:`.recall`; reading by index: :mod:`.reading`; eviction and forgetting: :mod:`.removal`;
options: :mod:`.options`; saved state: :mod:`.state`; stats: :mod:`.stats`.

Every public method is safe to call from several threads at once.

Example:
    ```python
    memory = SemanticMemory(top_k=3, context_radius=2)
    memory.archive(messages)
    for window in memory.retrieve("what was the order number?"):
        print(window.start, window.end, window.messages)
    ```
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from strands.types.content import Message

from . import reading, removal
from .embedding_queue import EmbeddingQueue
from .embeddings import DEFAULT_MODEL, Embedder, resolve_embedder
from .intake import AddedCounter, new_records
from .options import MemoryOptions
from .query_encoder import Encoder
from .recall import Recall, SearchHit, TimeBound, make_filter
from .rerank import Reranker
from .state import check_compatibility, constructor_arguments, export_memory, restore_archive
from .stats import MemoryStats, build_stats
from .stores import resolve_store
from .stores.archive_store import ArchiveStore, StoredRecord
from .windows import ContextWindow

logger = logging.getLogger(__name__)

__all__ = ["SearchHit", "SemanticMemory"]


class SemanticMemory:
    """A lossless, searchable archive of Strands messages (an example: the module docstring; options: the README)."""

    def __init__(
        self,
        embedding_model: str = DEFAULT_MODEL,
        top_k: int = 3,
        context_radius: int = 2,
        min_score: float | None = None,
        max_num_archived_messages: int | None = None,
        max_memory_archived_messages: int | None = None,
        *,
        embedder: Embedder | None = None,
        store: ArchiveStore | None = None,
        archive_path: str | os.PathLike[str] | None = None,
        reranker: Reranker | None = None,
        aws_region: str | None = None,
        embedding_dimensions: int | None = None,
        **options: Any,
    ) -> None:
        """Create a memory. Nothing is loaded until the first message is embedded.

        Args:
            embedding_model: A sentence-transformers model name or folder (default: the bundled
                all-MiniLM-L6-v2), or ``"bedrock:<model id>"``; ignored when ``embedder`` is given.
            top_k: Hits per search (see :class:`~strands_semantic_memory.options.MemoryOptions`, as below).
            context_radius: Neighbouring messages added on each side of a hit by :meth:`retrieve`.
            min_score: Minimum cosine similarity of a hit (-1..1); None keeps all.
            max_num_archived_messages: Keep at most this many messages (oldest evicted first); None: no limit.
            max_memory_archived_messages: Keep at most this many estimated bytes; None: no limit.
            embedder: A ready :class:`~strands_semantic_memory.embeddings.Embedder`, instead of a model name.
            store: Where the archive lives (an :class:`~strands_semantic_memory.stores.ArchiveStore`; default in
                process); ``PgVectorStore`` shares it between processes.
            archive_path: A file for a durable archive (``SqliteArchive``); not together with ``store``.
            reranker: A :class:`~strands_semantic_memory.rerank.Reranker` to reorder candidates; default none.
            aws_region: Bedrock only: the region (default: the AWS SDK's resolution).
            embedding_dimensions: Bedrock only: the output dimension, for models that offer a choice.
            **options: Further ``MemoryOptions`` fields (``retrieval``, ``ranking``, ``chunk_chars``, ...).

        Raises:
            ConfigurationError: If an option is unknown or out of range (the message names it).
        """
        self._options = MemoryOptions.from_arguments(
            top_k=top_k,
            context_radius=context_radius,
            min_score=min_score,
            max_num_archived_messages=max_num_archived_messages,
            max_memory_archived_messages=max_memory_archived_messages,
            **options,
        )
        self._archive = resolve_store(store, archive_path)
        self.embedder: Embedder = embedder or resolve_embedder(
            embedding_model, aws_region=aws_region, embedding_dimensions=embedding_dimensions
        )
        self._archive.bind(self.embedder.model_id)  # shared stores refuse a namespace built by another model
        self._lock = threading.RLock()
        self._store_lock: contextlib.AbstractContextManager[object] = (
            contextlib.nullcontext() if self._archive.thread_safe else self._lock
        )
        self._encoder = Encoder(self.embedder, lambda: self._archive.dimension, self._options.query_cache_size)
        self._queue = EmbeddingQueue.for_options(self._encoder.documents, self._options)
        self._recall = Recall(self._archive, self._encoder, self._store_lock, lambda: self._options, reranker)
        self._version = 0
        self._searches = 0
        self._added = AddedCounter()

    def _changed(self, count: int = 1) -> None:
        if count:
            with self._lock:
                self._version += 1

    # ------------------------------------------------------------------ options and properties

    @property
    def options(self) -> MemoryOptions:
        """The current options (frozen; change them with :meth:`configure`)."""
        return self._options

    def configure(self, **changes: Any) -> None:
        """Change options (validated first; nothing changes on an error). Saved state carries them: a change."""
        self._options = self._options.replace(**changes)
        self._changed()
        if {"chunk_chars", "max_chunks_per_message"} & set(changes):
            self._queue = EmbeddingQueue.for_options(self._encoder.documents, self._options)

    def __getattr__(self, name: str) -> Any:
        if name != "_options" and name in MemoryOptions.names():
            return getattr(self._options, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in MemoryOptions.names():
            self.configure(**{name: value})
        else:
            super().__setattr__(name, value)

    @property
    def reranker(self) -> Reranker | None:
        """The configured reranker, if any."""
        return self._recall.reranker

    @property
    def version(self) -> int:
        """Increases on every change made through this object; lets callers cache work derived from it."""
        return self._version

    @property
    def archive_store(self) -> ArchiveStore:
        """Where the archive is kept."""
        return self._archive

    # ------------------------------------------------------------------ reading by index

    def __len__(self) -> int:
        """Number of archived messages."""
        with self._store_lock:
            return len(self._archive)

    @property
    def indices(self) -> list[int]:
        """The live archive indices, oldest first (forgotten messages leave holes)."""
        with self._store_lock:
            return sorted(reading.live_records(self._archive))

    def get(self, index: int) -> Message:
        """A copy of the archived message at ``index``.

        Raises:
            KeyError: If no message has that index (never archived, evicted or forgotten).
        """
        return self.record(index).message

    def record(self, index: int) -> StoredRecord:
        """The archived record at ``index`` (``.message`` decodes it; ``.role``, ``.archived_at``, ``.said_at``).

        Raises:
            KeyError: If no message has that index.
        """
        with self._store_lock:
            return reading.read_record(self._archive, index)

    def messages(self, start: int | None = None, end: int | None = None) -> list[tuple[int, Message]]:
        """Archived ``(index, message)`` pairs with ``start <= index <= end``, oldest first."""
        with self._store_lock:
            records = reading.live_records(self._archive, start, end)
        return reading.decoded(records)

    # ------------------------------------------------------------------ archiving and embedding

    def archive(self, messages: Sequence[Message], *, timestamps: Sequence[TimeBound] | None = None) -> list[int]:
        """Archive messages verbatim in one commit (again: the existing index), then embed them if possible.

        Args:
            messages: Strands message dicts, oldest first (copied: later changes do not reach the archive).
            timestamps: When each message was said (epoch seconds or datetimes), aligned with ``messages``; by
                default a message's ``metadata.custom.timestamp`` (ISO 8601 or epoch seconds), if present.

        Returns:
            The archive index of each message, same order.

        Raises:
            InvalidMessageError, InvalidMessageTypeError, StoreError: Nothing is archived.
        """
        records = new_records(messages, timestamps)
        with self._store_lock:
            horizon = self._added.horizon(self._archive)  # a store call only the first time
            indices = self._archive.add(records)
        added = self._added.count(indices, horizon)
        self._changed(added)
        if added:
            logger.debug("archived=<%d> | messages archived", added)
        # Committed: from here on nothing may raise, or a caller's retry would look like a lost archive.
        if self._queue.due():
            self._changed(self._queue.run_contained(self._archive, self._store_lock))
        self._enforce_limits()
        return indices

    def embed_pending(self) -> int:
        """Embed every pending message now (ignoring the retry interval); returns how many were embedded.

        Raises:
            EmbeddingError: If the embedder fails (the messages stay archived and pending).
        """
        updated = self._queue.run(self._archive, self._store_lock, raise_errors=True)
        self._changed(updated)
        return updated

    # ------------------------------------------------------------------ removal

    def _enforce_limits(self) -> list[int]:
        with self._store_lock:
            evicted = removal.enforce_limits(self._archive, self._options)
        self._changed(len(evicted))
        return evicted

    def evict_oldest(self, count: int = 1) -> list[int]:
        """Evict the ``count`` oldest messages from the archive and the indexes together; returns their indices."""
        with self._store_lock:
            evicted = self._archive.evict_oldest(count)
        self._changed(len(evicted))
        return evicted

    def clear(self) -> None:
        """Forget every archived message by eviction. Indices keep increasing from where they were."""
        self.evict_oldest(len(self))

    def forget(self, indices: Iterable[int] | None = None, *, query: str | None = None) -> list[int]:
        """Delete messages for good (privacy): records, vectors, lexical entries; state saved later lacks them.

        Args:
            indices: Archive indices to delete (unknown ones are ignored).
            query: Also delete every message whose text contains this, case-insensitively (exact substring).

        Returns:
            The deleted indices, ascending.
        """
        targets = removal.forget_request(indices, query)
        with self._store_lock:
            removed = removal.forget(self._archive, targets, query)
        self._changed(len(removed))
        return removed

    # ------------------------------------------------------------------ recall

    def _prepare(self) -> None:
        with self._lock:
            self._searches += 1
        self._changed(self._queue.catch_up(self._archive, self._store_lock))

    def search(
        self,
        query: str,
        top_k: int | None = None,
        min_score: float | None = None,
        *,
        roles: Collection[str] | None = None,
        since: TimeBound = None,
        until: TimeBound = None,
    ) -> list[SearchHit]:
        """Find the archived messages most relevant to ``query`` (empty for an empty query or archive).

        Args:
            query: The text to look for.
            top_k: How many hits at most (default: ``options.top_k``).
            min_score: Minimum cosine similarity (default: ``options.min_score``); unembedded messages pass.
            roles: Only messages of these roles.
            since: Only messages said (else archived) at or after this time (epoch seconds or datetime).
            until: Only messages said (else archived) at or before this time.

        Raises:
            EmbeddingError: If the query cannot be embedded in dense mode (hybrid falls back to lexical).
        """
        self._prepare()
        return self._recall.search(query, top_k, min_score, make_filter(roles, since, until))

    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
        *,
        roles: Collection[str] | None = None,
        since: TimeBound = None,
        until: TimeBound = None,
    ) -> list[ContextWindow]:
        """Search, widen each hit by ``context_radius`` (default: the option), merge into scored windows.

        Arguments and errors as in :meth:`search`; windows come in conversation order.
        """
        self._prepare()
        return self._recall.windows(query, top_k, context_radius, min_score, make_filter(roles, since, until))

    # ------------------------------------------------------------------ stats and state

    def stats(self) -> MemoryStats:
        """Typed usage statistics (see :class:`~strands_semantic_memory.stats.MemoryStats`)."""
        with self._store_lock:
            stats = self._archive.stats()
        store, model_id = type(self._archive).__name__, self.embedder.model_id
        return build_stats(stats, self._options, model_id, store, self._queue, self._encoder, self._searches)

    def get_memory_usage_stats(self) -> dict[str, Any]:
        """:meth:`stats` as a dict (``message_count``, ``total_memory``, ``pending_embedding_count``, ...)."""
        return self.stats().as_dict()

    def to_state(self) -> dict[str, Any]:
        """What restores this memory, JSON types only, versioned: the archive (or a reference) and the options."""
        with self._store_lock:
            return export_memory(self._archive, self.embedder.model_id, self._options)

    def load_state(self, state: Mapping[str, Any], *, reembed: bool = False) -> None:
        """Replace the archive with a saved one, without calling the embedder; on an error nothing changes.

        Args:
            state: What :meth:`to_state` returned (possibly after a JSON round trip).
            reembed: Embed every message again, instead of refusing, if another model or dimension built it.

        Raises:
            StateError: If the state is corrupt, inconsistent, or not ours.
            EmbeddingModelMismatchError: If another embedding model built it and ``reembed`` is False.
            DimensionMismatchError: If another dimension built it and ``reembed`` is False.
        """
        known = getattr(self.embedder, "configured_dimension", None)
        mismatch = check_compatibility(state, self.embedder.model_id, known, reembed=reembed)
        with self._lock, self._store_lock:
            restore_archive(self._archive, state, reembed=mismatch)
            self._queue.reset()
            self._encoder.clear()
            self._added.reset()  # the restored archive may hand out lower indices
            self._version += 1
        if mismatch:
            logger.info("messages=<%d> | re-embedding the restored archive with the configured model", len(self))
            self.embed_pending()
        self._enforce_limits()

    @classmethod
    def from_state(cls, state: Mapping[str, Any], *, reembed: bool = False, **kwargs: Any) -> SemanticMemory:
        """Build a memory from saved state (see :meth:`load_state`) without calling any embedder.

        ``kwargs`` are constructor arguments; the saved options and embedding model apply unless given here.

        Raises:
            StateError, EmbeddingModelMismatchError, DimensionMismatchError: As :meth:`load_state`.
        """
        memory = cls(**constructor_arguments(state, kwargs))
        memory.load_state(state, reembed=reembed)
        return memory
