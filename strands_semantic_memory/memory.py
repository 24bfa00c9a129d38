"""SemanticMemory: the engine behind the conversation manager, the hook and the Strands memory store.

A facade: it holds the lock and orders the steps; each step is a module named after its job. Archiving: the
messages are validated and encoded (:mod:`.archive`), committed to the store in one call, then embedded outside
the lock (:mod:`.embedding_queue`); a failing embedder leaves them pending, never lost. Recall:
:mod:`.recall`. Options: :mod:`.options`; state: :mod:`.state`; stats: :mod:`.stats`.

Every public method is safe to call from several threads at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from strands.types.content import Message

from .archive import decode_message
from .embedding_queue import EmbeddingQueue
from .embeddings import DEFAULT_MODEL, Embedder, resolve_embedder
from .errors import ConfigurationError, InvalidMessageError, InvalidMessageTypeError, SemanticMemoryError, StateError
from .intake import new_records
from .options import MemoryOptions
from .query_encoder import Encoder
from .recall import Recall, SearchHit, TimeBound, make_filter
from .rerank import Reranker
from .state import check_compatibility, constructor_arguments
from .stats import MemoryStats, build_stats
from .stores import resolve_store
from .stores.archive_store import ArchiveStore, StoredRecord
from .windows import ContextWindow

logger = logging.getLogger(__name__)

__all__ = ["SearchHit", "SemanticMemory"]


class SemanticMemory:
    """A lossless, searchable archive of Strands messages.

    Example:
        ```python
        memory = SemanticMemory(top_k=3, context_radius=2)
        memory.archive(messages)
        for window in memory.retrieve("what was the order number?"):
            print(window.start, window.end, window.messages)
        ```
    """

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
            embedding_model: Local sentence-transformers model name or folder (default: the bundled
                all-MiniLM-L6-v2), or ``"bedrock:<model id>"``. Ignored when ``embedder`` is given.
            top_k: Hits returned by :meth:`search` and widened by :meth:`retrieve` unless overridden per call.
            context_radius: Neighbouring messages added on each side of a hit by :meth:`retrieve`.
            min_score: Minimum cosine similarity of a hit (-1..1), in every retrieval mode; None keeps all.
            max_num_archived_messages: Keep at most this many messages (oldest evicted first); None: no limit.
            max_memory_archived_messages: Keep at most this many estimated bytes; None: no limit.
            embedder: A ready :class:`~strands_semantic_memory.embeddings.Embedder`, instead of a model name.
            store: Where the archive lives, an :class:`~strands_semantic_memory.stores.ArchiveStore`: default in
                process (:class:`InMemoryArchive`); ``PgVectorStore`` to share it between processes.
            archive_path: A file for a durable archive on this machine (:class:`SqliteArchive`); reopened from
                the same path by a new process. Not together with ``store``.
            reranker: A :class:`~strands_semantic_memory.rerank.Reranker` to reorder candidates; default none.
            aws_region: Bedrock only: the region (default: the AWS SDK's resolution).
            embedding_dimensions: Bedrock only: output dimension for models that offer a choice.
            **options: Further :class:`~strands_semantic_memory.options.MemoryOptions` (``retrieval``,
                ``ranking``, ``rerank_candidates``, ``chunk_chars``, ``max_chunks_per_message``,
                ``query_cache_size``, ``embedding_retry_interval``, ``embedding_batch_size``).

        Raises:
            ConfigurationError: If an option is unknown or out of range (the message names it).
        """
        unknown = set(options) - MemoryOptions.names()
        if unknown:
            raise ConfigurationError(f"unknown option(s) {sorted(unknown)}; see MemoryOptions")
        self._options = MemoryOptions(
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
        self._queue = self._new_queue()
        self._recall = Recall(self._archive, self._encoder, self._store_lock, lambda: self._options, reranker)
        self._version = 0
        self._searches = 0

    def _new_queue(self) -> EmbeddingQueue:
        options = self._options
        return EmbeddingQueue(
            self._encoder.documents,
            chunk_chars=options.chunk_chars,
            max_chunks=options.max_chunks_per_message,
            retry_interval=options.embedding_retry_interval,
            batch_size=options.embedding_batch_size,
        )

    # ------------------------------------------------------------------ options and properties

    @property
    def options(self) -> MemoryOptions:
        """The current options (frozen; change them with :meth:`configure`)."""
        return self._options

    def configure(self, **changes: Any) -> None:
        """Change options (validated first; nothing changes on an error)."""
        self._options = self._options.replace(**changes)
        self._queue = self._new_queue() if {"chunk_chars", "max_chunks_per_message"} & set(changes) else self._queue

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

    def __len__(self) -> int:
        """Number of archived messages."""
        with self._store_lock:
            return len(self._archive)

    def _records(self, start: int | None = None, end: int | None = None) -> dict[int, StoredRecord]:
        with self._store_lock:
            bounds = self._archive.bounds()
            if bounds is None:
                return {}
            lo = bounds[0] if start is None else max(start, bounds[0])
            hi = bounds[1] if end is None else min(end, bounds[1])
            return self._archive.get(list(range(lo, hi + 1)))

    @property
    def indices(self) -> list[int]:
        """The live archive indices, oldest first (forgotten messages leave holes)."""
        return sorted(self._records())

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
            found = self._archive.get([index]).get(index)
        if found is None:
            raise KeyError(f"no archived message with index {index}")
        return found

    def messages(self, start: int | None = None, end: int | None = None) -> list[tuple[int, Message]]:
        """Archived ``(index, message)`` pairs with ``start <= index <= end``, oldest first."""
        return [(i, decode_message(r.data)) for i, r in sorted(self._records(start, end).items())]

    # ------------------------------------------------------------------ archiving

    def archive(self, messages: Sequence[Message], *, timestamps: Sequence[TimeBound] | None = None) -> list[int]:
        """Archive messages verbatim, in order, in one commit, then make them searchable.

        Archiving the same message again (same tracking id and content) returns its existing index. A message
        with nothing to embed is archived without a vector. If embedding fails, the messages are archived all
        the same and embedded later (see :mod:`.embedding_queue`).

        Args:
            messages: Strands message dicts, oldest first (copied: later changes do not reach the archive).
            timestamps: When each message was said (epoch seconds or datetimes), aligned with ``messages``. By
                default a message's ``metadata.custom.timestamp`` (ISO 8601 or epoch seconds) is used if present.

        Returns:
            The archive index of each message, same order.

        Raises:
            InvalidMessageError, InvalidMessageTypeError: If an item is not a message (nothing is archived).
            StoreError: If the store cannot commit them; nothing is archived.
        """
        records = new_records(messages, timestamps)
        with self._store_lock:
            before = len(self._archive)
            indices = self._archive.add(records)
            added = len(self._archive) - before
        if added:
            self._bump()
            logger.debug("archived=<%d> | messages archived", added)
        # Committed: from here on nothing may raise, or a caller's retry would look like a lost archive.
        if self._queue.due():
            self._embed(raise_errors=False)
        self._enforce_limits()
        return indices

    def _embed(self, *, raise_errors: bool) -> int:
        try:
            updated = self._queue.run(self._archive, self._store_lock, raise_errors=raise_errors)
        except SemanticMemoryError:
            if raise_errors:
                raise
            return 0
        except Exception as error:  # a store failing while saving vectors: the messages stay pending
            if raise_errors:
                raise
            logger.warning("error=<%s> | storing vectors failed; the messages stay pending", error)
            return 0
        if updated:
            self._bump()
        return updated

    def embed_pending(self) -> int:
        """Embed every message still waiting for its vectors, now (ignores the retry interval).

        Returns:
            How many messages were embedded.

        Raises:
            EmbeddingError: If the embedder fails (the messages stay archived and pending).
        """
        return self._embed(raise_errors=True)

    def _bump(self) -> None:
        with self._lock:
            self._version += 1

    # ------------------------------------------------------------------ removal

    def _enforce_limits(self) -> list[int]:
        options = self._options
        with self._store_lock:
            evicted = self._archive.enforce_limits(
                options.max_num_archived_messages, options.max_memory_archived_messages
            )
            limit = options.max_memory_archived_messages
            if limit is not None and self._archive.stats().total_bytes > limit:
                logger.warning(
                    "limit=<%d> | the newest archived message alone exceeds max_memory_archived_messages; it is kept",
                    limit,
                )
        if evicted:
            self._bump()
            logger.info(
                "evicted=<%d>, newest_evicted=<%d> | oldest archived messages evicted", len(evicted), evicted[-1]
            )
        return evicted

    def evict_oldest(self, count: int = 1) -> list[int]:
        """Evict the ``count`` oldest messages from the archive and the indexes together; returns their indices."""
        with self._store_lock:
            evicted = self._archive.evict_oldest(count)
        if evicted:
            self._bump()
        return evicted

    def clear(self) -> None:
        """Forget every archived message by eviction. Indices keep increasing from where they were."""
        self.evict_oldest(len(self))

    def forget(self, indices: Iterable[int] | None = None, *, query: str | None = None) -> list[int]:
        """Delete messages for good (privacy): records, vectors, lexical entries, database rows.

        A forgotten message is never returned again; state saved afterwards no longer holds it (save the session
        again so older saved state is replaced).

        Args:
            indices: Archive indices to delete (unknown ones are ignored).
            query: Also delete every message whose text contains this, case-insensitively. Exact substring
                matching, deliberately: deletion must be predictable, never "similar enough".

        Returns:
            The deleted indices, ascending.
        """
        targets = list(indices or [])
        if any(not isinstance(i, int) or isinstance(i, bool) for i in targets):
            raise InvalidMessageTypeError("forget() takes integer archive indices")
        if query is not None and (not isinstance(query, str) or not query.strip()):
            raise InvalidMessageError("forget(query=...) needs a non-empty string")
        with self._store_lock:
            if query is not None:
                targets.extend(self._archive.find_text(query))
            removed = self._archive.forget(sorted(set(targets))) if targets else []
        if removed:
            self._bump()
            logger.info("forgotten=<%d> | archived messages deleted on request", len(removed))
        return removed

    # ------------------------------------------------------------------ recall

    def _prepare(self) -> None:
        with self._lock:
            self._searches += 1
        if self._queue.due():
            with self._store_lock:
                waiting = self._archive.has_pending()
            if waiting:
                self._embed(raise_errors=False)

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
        """Find the archived messages most relevant to ``query``.

        Args:
            query: The text to look for.
            top_k: How many hits at most (default: ``options.top_k``).
            min_score: Minimum cosine similarity (default: ``options.min_score``); messages without a vector
                are not filtered by it.
            roles: Only messages of these roles.
            since: Only messages said (else archived) at or after this time (epoch seconds or datetime).
            until: Only messages said (else archived) at or before this time.

        Returns:
            Hits, most relevant first. Empty for an empty query or archive.

        Raises:
            EmbeddingError: If the query cannot be embedded in dense mode (hybrid falls back to lexical).
        """
        k = self._options.top_k if top_k is None else top_k
        self._prepare()
        threshold = self._options.min_score if min_score is None else min_score
        return self._recall.search(query, k, threshold, make_filter(roles, since, until))[:k]

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
        """Search, widen each hit by the context radius, and merge overlapping or adjacent ranges.

        Each window is scored with every candidate inside it (the search looks ``3 * top_k`` deep), so a passage
        whose neighbours also match outranks an isolated hit (see :func:`~.windows.window_score`). Arguments as
        in :meth:`search`, plus ``context_radius`` (default: ``options.context_radius``).

        Returns:
            Windows in conversation order, each with its score.
        """
        k = self._options.top_k if top_k is None else top_k
        radius = self._options.context_radius if context_radius is None else context_radius
        self._prepare()
        threshold = self._options.min_score if min_score is None else min_score
        return self._recall.windows(query, k, radius, threshold, make_filter(roles, since, until))

    # ------------------------------------------------------------------ stats and state

    def stats(self) -> MemoryStats:
        """Typed usage statistics (see :class:`~strands_semantic_memory.stats.MemoryStats`)."""
        with self._store_lock:
            stats = self._archive.stats()
        return build_stats(
            stats,
            self._options,
            embedding_model=self.embedder.model_id,
            store=type(self._archive).__name__,
            last_embedding_error=self._queue.last_error,
            searches=self._searches,
            query_cache_hits=self._encoder.cache_hits,
            embedding_failures=self._queue.failures,
        )

    def get_memory_usage_stats(self) -> dict[str, Any]:
        """:meth:`stats` as a dict (``message_count``, ``total_memory``, ``pending_embedding_count``, ...)."""
        return self.stats().as_dict()

    def to_state(self) -> dict[str, Any]:
        """Everything needed to restore this memory, as JSON types only (no pickle), versioned.

        In process, the whole archive with its vectors; with a persistent store (SQLite, PostgreSQL), a
        reference to it. The options are saved too, and restored by :meth:`from_state` unless overridden.
        """
        with self._store_lock:
            state = self._archive.export_state(self.embedder.model_id)
        state["options"] = self._options.to_dict()
        return state

    def load_state(self, state: Mapping[str, Any], *, reembed: bool = False) -> None:
        """Replace this memory's archive with a saved one, without calling the embedder.

        Atomic: a state that fails validation leaves this memory exactly as it was.

        Args:
            state: What :meth:`to_state` returned (possibly after a JSON round trip).
            reembed: If another embedding model or dimension built it, embed every message again instead of
                refusing.

        Raises:
            StateError: If the state is corrupt, inconsistent, or not ours.
            EmbeddingModelMismatchError: If another embedding model built it and ``reembed`` is False.
            DimensionMismatchError: If another dimension built it and ``reembed`` is False.
        """
        known = getattr(self.embedder, "configured_dimension", None)
        mismatch = check_compatibility(state, self.embedder.model_id, known, reembed=reembed)
        with self._lock, self._store_lock:
            try:
                self._archive.load_state(state, reembed=mismatch)
            except RecursionError as error:
                raise StateError("saved state is nested too deeply to be an archive") from error
            self._queue.reset()
            self._encoder.clear()
            self._version += 1
        if mismatch:
            logger.info("messages=<%d> | re-embedding the restored archive with the configured model", len(self))
            self.embed_pending()
        self._enforce_limits()

    @classmethod
    def from_state(cls, state: Mapping[str, Any], *, reembed: bool = False, **kwargs: Any) -> SemanticMemory:
        """Build a memory from saved state without calling any embedder.

        Args:
            state: What :meth:`to_state` returned.
            reembed: See :meth:`load_state`.
            **kwargs: Constructor arguments. Options saved with the state are restored unless given here;
                ``embedding_model`` defaults to the model that built the archive.

        Raises:
            StateError: If the state is corrupt or not ours.
            EmbeddingModelMismatchError: If the embedder differs from the archive's model and ``reembed`` is False.
        """
        kwargs = constructor_arguments(state, kwargs)
        memory = cls(**kwargs)
        memory.load_state(state, reembed=reembed)
        return memory
