"""SemanticMemory: the engine behind the conversation manager, the hook and the Strands memory store.

A facade: it validates the arguments and hands each call to a module named after its job. ``wiring`` builds
the running parts (store lock, encoder, embedding queue, recall path), keeps them in step with ``configure``
and counts changes (``version``). Archiving: ``archiving`` (``intake`` checks and
encodes the messages, one store call commits them, ``embedding_queue`` embeds them outside the lock; a failing
embedder leaves them pending, never lost). Recall: ``recall``; reading by index: ``reading``; eviction and
forgetting: ``removal``; options: ``options``; saved state: ``state`` and ``restoring``; stats:
``stats``.

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

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from strands.types.content import Message

from strands_semantic_memory.embeddings import DEFAULT_MODEL, Embedder, resolve_embedder
from strands_semantic_memory.engine import _reading as reading
from strands_semantic_memory.engine import _removal as removal
from strands_semantic_memory.engine import _restoring as restoring
from strands_semantic_memory.engine._archiving import archive_messages
from strands_semantic_memory.engine._options import MemoryOptions
from strands_semantic_memory.engine._stats import MemoryStats
from strands_semantic_memory.engine._wiring import MemoryParts
from strands_semantic_memory.retrieval._recall import SearchHit, TimeBound, make_filter
from strands_semantic_memory.retrieval._rerank import Reranker
from strands_semantic_memory.retrieval._windows import ContextWindow
from strands_semantic_memory.stores import resolve_store
from strands_semantic_memory.stores._protocol import ArchiveStore, StoredRecord
from strands_semantic_memory.stores._saved_state import constructor_arguments, export_memory

__all__ = ["SearchHit", "SemanticMemory"]


class SemanticMemory:
    """A lossless, searchable archive of Strands messages (an example: the module docstring; options: MemoryOptions)."""

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
            embedding_model: A sentence-transformers name or folder (default: all-MiniLM-L6-v2) or ``"bedrock:<id>"``.
            top_k: Hits per search (this and the next four: ``MemoryOptions``).
            context_radius: Neighbouring messages added on each side of a hit by ``retrieve``.
            min_score: Minimum cosine similarity of a hit (-1..1); None keeps all.
            max_num_archived_messages: Keep at most this many messages (oldest evicted first); None: no limit.
            max_memory_archived_messages: Keep at most this many estimated bytes; None: no limit.
            embedder: A ready ``Embedder``, instead of a model name.
            store: Where the archive lives (``stores``; default: in process).
            archive_path: A file for a durable archive (``SqliteArchive``); not together with ``store``.
            reranker: A ``Reranker`` to reorder candidates; default none.
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
        archive = resolve_store(store, archive_path)
        self.embedder: Embedder = embedder or resolve_embedder(
            embedding_model, aws_region=aws_region, embedding_dimensions=embedding_dimensions
        )
        self._parts = MemoryParts.build(archive, self.embedder, lambda: self._options, reranker)
        if self._options.embedding == "background":  # what a durable archive left pending is embedded now
            self._parts.queue.catch_up(archive, self._parts.store_lock)

    @property
    def options(self) -> MemoryOptions:
        """The current options (frozen; change them with ``configure``)."""
        return self._options

    def configure(self, **changes: Any) -> None:
        """Change options, in effect from the next call (validated first; nothing changes on an error); a change."""
        with self._parts.lock:
            self._options = self._options.replace(**changes)
            self._parts.reconfigure(self._options)
        self._parts.changed()

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
        return self._parts.recall.reranker

    @property
    def version(self) -> int:
        """Increases on every change made through this object; lets callers cache work derived from it."""
        return self._parts.version

    @property
    def archive_store(self) -> ArchiveStore:
        """Where the archive is kept."""
        return self._parts.archive

    def __len__(self) -> int:
        """Number of archived messages."""
        return self._parts.locked(len)

    @property
    def indices(self) -> list[int]:
        """The live archive indices, oldest first (forgotten messages leave holes)."""
        return sorted(self._parts.locked(reading.live_records))

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
        return self._parts.locked(reading.read_record, index)

    def messages(self, start: int | None = None, end: int | None = None) -> list[tuple[int, Message]]:
        """Archived ``(index, message)`` pairs with ``start <= index <= end``, oldest first."""
        return reading.decoded(self._parts.locked(reading.live_records, start, end))

    def archive(self, messages: Sequence[Message], *, timestamps: Sequence[TimeBound] | None = None) -> list[int]:
        """Archive messages verbatim in one commit (again: the existing index), then embed them if possible.

        Args:
            messages: Strands message dicts, oldest first (copied: later changes do not reach the archive).
            timestamps: When each was said (epoch seconds or datetimes); default: ``metadata.custom.timestamp``.

        Returns:
            The archive index of each message, same order.

        Raises:
            InvalidMessageError, InvalidMessageTypeError, StoreError: Nothing is archived.
        """
        return archive_messages(self._parts, self._options, messages, timestamps)

    def embed_pending(self) -> int:
        """Embed every pending message now and wait for the background thread's batch; returns how many were embedded.

        Ignores the retry interval after a failure. With ``embedding="background"``, call it before anything that
        needs the vectors (a dense search, ``min_score``, a test).

        Raises:
            EmbeddingError: If the embedder fails (the messages stay archived and pending).
            ModelUnavailableError: If the model cannot be loaded.
        """
        return self._parts.embed_pending()

    def warm_up(self, *, wait: bool = True) -> None:
        """Load the embedding model now, so the first user turn does not wait for it (see docs/guides).

        Args:
            wait: True (default): load here and raise what fails. False: load in a thread and return at once (a
                call that needs the model meanwhile waits for that load, never starts another).

        Raises:
            ModelUnavailableError: If the model cannot be loaded (``wait=True``).
            EmbeddingError: If the embedder fails otherwise (``wait=True``).
        """
        self._parts.encoder.warm_up(wait=wait)

    def close(self) -> None:
        """Stop the background embedding thread after its batch, then close the store.

        Messages still pending stay pending: a durable archive embeds them when it is opened again.
        """
        self._parts.queue.close()
        self._parts.archive.close()

    def __enter__(self) -> SemanticMemory:
        """The memory itself; ``close`` runs on exit."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the memory."""
        self.close()

    def evict_oldest(self, count: int = 1) -> list[int]:
        """Evict the ``count`` oldest messages from the archive and the indexes together; returns their indices."""
        return self._parts.removed(self._parts.locked(lambda store: store.evict_oldest(count)))

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
        return self._parts.removed(self._parts.locked(removal.forget, removal.forget_request(indices, query), query))

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
        return self._parts.ready_recall().search(query, top_k, min_score, make_filter(roles, since, until))

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

        Arguments and errors as in ``search``; windows come in conversation order.
        """
        recall = self._parts.ready_recall()
        return recall.windows(query, top_k, context_radius, min_score, make_filter(roles, since, until))

    def stats(self) -> MemoryStats:
        """Typed usage statistics (see ``MemoryStats``)."""
        return self._parts.stats(self._options, self.embedder.model_id)

    def get_memory_usage_stats(self) -> dict[str, Any]:
        """``stats`` as a dict (``message_count``, ``total_memory``, ``pending_embedding_count``, ...)."""
        return self.stats().as_dict()

    def to_state(self) -> dict[str, Any]:
        """What restores this memory, JSON types only, versioned: the archive (or a reference) and the options."""
        return self._parts.locked(export_memory, self.embedder.model_id, self._options)

    def load_state(self, state: Mapping[str, Any], *, reembed: bool = False) -> None:
        """Replace the archive with a saved one, without calling the embedder; on an error nothing changes.

        Args:
            state: What ``to_state`` returned (possibly after a JSON round trip).
            reembed: Embed every message again, instead of refusing, if another model or dimension built it.

        Raises:
            StateError: If the state is corrupt, inconsistent, or not ours.
            EmbeddingModelMismatchError: If another embedding model built it and ``reembed`` is False.
            DimensionMismatchError: If another dimension built it and ``reembed`` is False.
        """
        restoring.load_state(self._parts, self.embedder, self._options, state, reembed=reembed)

    @classmethod
    def from_state(cls, state: Mapping[str, Any], *, reembed: bool = False, **kwargs: Any) -> SemanticMemory:
        """Build a memory from saved state without calling any embedder; ``kwargs`` override the saved arguments.

        Raises:
            StateError, EmbeddingModelMismatchError, DimensionMismatchError: As ``load_state``.
        """
        memory = cls(**constructor_arguments(state, kwargs))
        memory.load_state(state, reembed=reembed)
        return memory
