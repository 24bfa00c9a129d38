"""SemanticMemory: the engine behind the conversation manager and the hook, usable on its own.

It archives Strands messages verbatim, embeds a text rendering of each, and finds them again by meaning.

Archiving happens in two steps so a failing embedding service never loses a message:

1. under the lock, each new message gets the next archive index and is stored, marked *pending*;
2. outside the lock, pending messages are embedded in one batch; under the lock again, their vectors are
   added to the store (incrementally) and the limits are enforced.

If step 2 fails the messages stay archived and pending, are reported by the stats, and are embedded on a later
``archive`` or ``search`` (at most once per ``embedding_retry_interval`` seconds) or by :meth:`embed_pending`.

Every public method is safe to call from several threads at once.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from strands.types.content import Message

from .archive import MAX_CHUNKS, decode_message, encode_message
from .embeddings import DEFAULT_MODEL, Embedder, Vectors, normalize_rows, resolve_embedder
from .errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    SemanticMemoryError,
    StateError,
)
from .rendering import chunk_text, render_message
from .rerank import Reranker
from .stores import VectorStore
from .stores.archive_store import ArchiveStore, NewRecord
from .stores.in_memory import InMemoryArchive
from .windows import ContextWindow, expand_and_merge, window_score

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchHit:
    """One archived message found by a search.

    Attributes:
        index: The message's archive index.
        score: Its relevance: cosine similarity of the best-matching chunk, or the reranker's score when a
            reranker is configured. Higher is more relevant.
        message: A copy of the archived message, exactly as archived.
        similarity: The cosine similarity of the query to the message's best-matching chunk (equal to ``score`` in
            dense mode without a reranker); None when it is unknown (the message has no vector yet, or the query
            was not embedded).
    """

    index: int
    score: float
    message: Message
    similarity: float | None


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
        retrieval: str = "hybrid",
        rrf_k: int = 10,
        embedder: Embedder | None = None,
        store: ArchiveStore | VectorStore | None = None,
        reranker: Reranker | None = None,
        rerank_candidates: int = 20,
        aws_region: str | None = None,
        embedding_dimensions: int | None = None,
        chunk_chars: int = 1000,
        max_chunks_per_message: int = 64,
        query_cache_size: int = 256,
        embedding_retry_interval: float = 30.0,
    ) -> None:
        """Create an empty memory. Nothing is loaded until the first message is embedded.

        Args:
            embedding_model: Local sentence-transformers model name or folder (default: the bundled
                all-MiniLM-L6-v2), or ``"bedrock:<model id>"``. Ignored when ``embedder`` is given.
            top_k: Hits returned by :meth:`search` and used by :meth:`retrieve` unless overridden per call.
            context_radius: Neighbouring messages added on each side of a hit by :meth:`retrieve`.
            min_score: Drop hits whose cosine similarity to the query is below this (-1 to 1), in every retrieval
                mode, before any reranking. Messages not embedded yet are not filtered. None keeps every hit.
            max_num_archived_messages: Keep at most this many messages; the oldest are evicted first.
            max_memory_archived_messages: Keep the estimated memory (see :mod:`strands_semantic_memory.archive`)
                at most this many bytes; the oldest are evicted first.
            retrieval: ``"hybrid"`` (BM25 and dense rankings fused by reciprocal rank, the default), ``"dense"``
                (embeddings only) or ``"lexical"`` (BM25 only). See ``docs/benchmarks.md`` for how they compare.
            rrf_k: The constant of reciprocal-rank fusion: each ranking contributes ``1 / (rrf_k + rank)``. The
                default, 10, was chosen on the benchmark's development seed (7) and is reported on seed 13.
            embedder: A ready :class:`~strands_semantic_memory.embeddings.Embedder`, instead of a model name.
            store: Where the archive lives: an :class:`~strands_semantic_memory.stores.ArchiveStore` such as
                ``PgVectorStore`` (shared by processes), or a :class:`~strands_semantic_memory.stores.VectorStore`
                for the in-process archive's vectors. Default: in process, vectors in FAISS.
            reranker: A :class:`~strands_semantic_memory.rerank.Reranker` to reorder candidates; default none.
            rerank_candidates: How many dense candidates the reranker sees.
            aws_region: Bedrock only: the region (default: the AWS SDK's resolution).
            embedding_dimensions: Bedrock only: output dimension for models that offer a choice.
            chunk_chars: A message's rendered text is embedded in chunks of at most this many characters.
            max_chunks_per_message: At most this many chunks of one message are embedded (text beyond them is
                archived but not searchable; a warning says so). At most 256.
            query_cache_size: How many query embeddings to keep (repeated questions skip the embedder).
            embedding_retry_interval: Seconds between automatic retries of pending embeddings after a failure.

        Raises:
            ConfigurationError: If an option is out of range (the message names it).
        """
        for name, value in (("top_k", top_k), ("rerank_candidates", rerank_candidates), ("chunk_chars", chunk_chars)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigurationError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(context_radius, int) or isinstance(context_radius, bool) or context_radius < 0:
            raise ConfigurationError(f"context_radius must be an integer >= 0, got {context_radius!r}")
        if min_score is not None and not (isinstance(min_score, (int, float)) and math.isfinite(min_score)):
            raise ConfigurationError(f"min_score must be a finite number or None, got {min_score!r}")
        for name, limit in (
            ("max_num_archived_messages", max_num_archived_messages),
            ("max_memory_archived_messages", max_memory_archived_messages),
        ):
            if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
                raise ConfigurationError(f"{name} must be a positive integer or None, got {limit!r}")
        if not 1 <= max_chunks_per_message <= MAX_CHUNKS:
            raise ConfigurationError(f"max_chunks_per_message must be in 1..{MAX_CHUNKS}, got {max_chunks_per_message}")
        if retrieval not in ("hybrid", "dense", "lexical"):
            raise ConfigurationError(f"retrieval must be 'hybrid', 'dense' or 'lexical', got {retrieval!r}")
        if not isinstance(rrf_k, int) or rrf_k < 1:
            raise ConfigurationError(f"rrf_k must be an integer >= 1, got {rrf_k!r}")
        if query_cache_size < 0:
            raise ConfigurationError(f"query_cache_size must be >= 0, got {query_cache_size}")

        self.embedder: Embedder = embedder or resolve_embedder(
            embedding_model, aws_region=aws_region, embedding_dimensions=embedding_dimensions
        )
        self.top_k = top_k
        self.context_radius = context_radius
        self.min_score = None if min_score is None else float(min_score)
        self.max_num_archived_messages = max_num_archived_messages
        self.max_memory_archived_messages = max_memory_archived_messages
        self.reranker = reranker
        self.retrieval = retrieval
        self.rrf_k = rrf_k
        self.rerank_candidates = rerank_candidates
        self.chunk_chars = chunk_chars
        self.max_chunks_per_message = max_chunks_per_message
        self.query_cache_size = query_cache_size
        self.embedding_retry_interval = embedding_retry_interval

        if isinstance(store, ArchiveStore):
            self._archive: ArchiveStore = store
        elif store is None or isinstance(store, VectorStore):
            self._archive = InMemoryArchive(store)
        else:
            raise ConfigurationError(
                f"store must be an ArchiveStore (e.g. PgVectorStore) or a VectorStore (e.g. FaissVectorStore), "
                f"got {type(store).__name__}"
            )
        bind = getattr(self._archive, "bind", None)
        if callable(bind):  # shared stores record which model embeds the namespace, and refuse another
            bind(self.embedder.model_id)
        self._lock = threading.RLock()
        self._in_flight: set[int] = set()
        self._last_embedding_failure: float | None = None
        self._last_embedding_error: str | None = None
        self._query_cache: OrderedDict[str, Vectors] = OrderedDict()
        self._version = 0
        self._counters = {"searches": 0, "query_cache_hits": 0, "embedding_failures": 0}

    # ------------------------------------------------------------------ properties

    @property
    def version(self) -> int:
        """Increases on every change made through this object; lets callers cache work derived from it."""
        return self._version

    @property
    def archive_store(self) -> ArchiveStore:
        """Where the archive is kept (an :class:`InMemoryArchive` unless another store was given)."""
        return self._archive

    @property
    def store(self) -> VectorStore | None:
        """The in-process vector store (FAISS by default; created with the first vectors), if there is one."""
        return getattr(self._archive, "vector_store", None)

    def __len__(self) -> int:
        """Number of archived messages."""
        with self._lock:
            return len(self._archive)

    @property
    def indices(self) -> range:
        """The live archive indices, oldest first (always one contiguous run)."""
        with self._lock:
            bounds = self._archive.bounds()
        return range(bounds[0], bounds[1] + 1) if bounds else range(0)

    def get(self, index: int) -> Message:
        """A copy of the archived message at ``index``.

        Raises:
            KeyError: If no message has that index (never archived, or evicted).
        """
        with self._lock:
            data = self._archive.get([index]).get(index)
        if data is None:
            raise KeyError(f"no archived message with index {index}")
        return decode_message(data)

    def messages(self, start: int | None = None, end: int | None = None) -> list[tuple[int, Message]]:
        """Archived ``(index, message)`` pairs with ``start <= index <= end``, oldest first."""
        with self._lock:
            bounds = self._archive.bounds()
            if bounds is None:
                return []
            lo = bounds[0] if start is None else max(start, bounds[0])
            hi = bounds[1] if end is None else min(end, bounds[1])
            found = self._archive.get(list(range(lo, hi + 1)))
        return [(i, decode_message(found[i])) for i in sorted(found)]

    # ------------------------------------------------------------------ archiving

    @staticmethod
    def _validate(messages: Sequence[Message]) -> None:
        if isinstance(messages, Mapping) or not isinstance(messages, Sequence):
            raise TypeError(f"archive() takes a list of messages, got {type(messages).__name__}")
        for position, message in enumerate(messages):
            if not isinstance(message, Mapping):
                raise TypeError(f"messages[{position}] is a {type(message).__name__}, not a Strands message dict")
            if not isinstance(message.get("role"), str):
                raise ValueError(f"messages[{position}] has no string 'role'")
            if not isinstance(message.get("content"), list):
                raise ValueError(
                    f"messages[{position}] 'content' must be a list of content blocks, "
                    f"got {type(message.get('content')).__name__}"
                )

    def archive(self, messages: Sequence[Message]) -> list[int]:
        """Archive messages verbatim, in order, and make them searchable.

        A message already archived (same Strands ``tracking_id``) is not archived twice: its existing index is
        returned. A message with nothing to embed (an image only, empty content) is archived without a vector.
        If embedding fails, the messages are archived all the same and embedded later (see the module doc).

        Args:
            messages: Strands message dicts, oldest first. They are copied; later changes to them do not reach
                the archive.

        Returns:
            The archive index of each message, same order.

        Raises:
            TypeError, ValueError: If an item is not a Strands message (nothing is archived then).
            StoreError: If the store cannot commit them (a database that cannot be reached); nothing is archived.
        """
        self._validate(messages)
        records = [
            NewRecord(
                data=encode_message(m),
                role=str(m["role"]),
                tracking_id=m.get("tracking_id") or None,
                text=render_message(m),
            )
            for m in messages
        ]
        with self._lock:
            before = len(self._archive)
            indices = self._archive.add(records)
            added = len(self._archive) - before
            if added:
                self._version += 1
                logger.debug("archived=<%d>, total=<%d> | messages archived", added, len(self._archive))
        self._embed_pending(raise_errors=False)
        with self._lock:
            self._enforce_limits()
        return indices

    def embed_pending(self) -> int:
        """Embed every message still waiting for its vectors, now.

        Returns:
            How many messages were embedded.

        Raises:
            EmbeddingError: If the embedder fails (the messages stay archived and pending).
        """
        return self._embed_pending(raise_errors=True)

    def _embed_pending(self, raise_errors: bool) -> int:
        with self._lock:
            claimed = self._archive.pending(exclude=self._in_flight)
            self._in_flight.update(i for i, _ in claimed)
        if not claimed:
            return 0
        texts: list[str] = []
        owners: list[int] = []
        for index, rendered in claimed:
            chunks, truncated = chunk_text(rendered, self.chunk_chars, self.max_chunks_per_message)
            if truncated:
                logger.warning(
                    "index=<%d>, chars=<%d>, chunks=<%d> | message text beyond the last chunk is archived but not "
                    "searchable; raise max_chunks_per_message or chunk_chars to embed it all",
                    index,
                    len(rendered),
                    len(chunks),
                )
            texts.extend(chunks)
            owners.extend([index] * len(chunks))
        claimed_ids = [i for i, _ in claimed]
        try:
            vectors = self._embed(texts, query=False) if texts else np.zeros((0, 0), dtype=np.float32)
        except Exception as error:
            with self._lock:
                self._in_flight.difference_update(claimed_ids)
                self._last_embedding_failure = time.monotonic()
                self._last_embedding_error = f"{type(error).__name__}: {error}"
                self._counters["embedding_failures"] += 1
            logger.warning(
                "pending=<%d>, error=<%s> | embedding failed; the messages are archived and will be embedded on a "
                "later archive or search, or by embed_pending()",
                len(claimed),
                error,
            )
            if raise_errors:
                raise
            return 0
        rows: dict[int, list[int]] = {}
        for row, owner in enumerate(owners):
            rows.setdefault(owner, []).append(row)
        width = vectors.shape[1] if texts else 0
        by_index: dict[int, Vectors] = {
            i: vectors[rows[i]] if i in rows else np.zeros((0, width), dtype=np.float32) for i in claimed_ids
        }
        with self._lock:
            try:
                updated = self._archive.set_vectors(by_index)
            finally:
                self._in_flight.difference_update(claimed_ids)
            self._last_embedding_failure = None
            self._last_embedding_error = None
            self._version += 1
            self._enforce_limits()
        return updated

    def _embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        raw = self.embedder.embed_queries(texts) if query else self.embedder.embed_documents(texts)
        vectors = normalize_rows(raw)
        if vectors.shape[0] != len(texts):
            raise SemanticMemoryError(f"embedder returned {vectors.shape[0]} vectors for {len(texts)} texts")
        if not np.all(np.isfinite(vectors)):
            raise SemanticMemoryError("embedder returned non-finite values")
        dimension = self._archive.dimension
        if dimension is not None and vectors.shape[1] != dimension:
            raise DimensionMismatchError(
                dimension,
                int(vectors.shape[1]),
                "The archive was built with another embedding model or dimension; restore it with that model.",
            )
        return vectors

    # ------------------------------------------------------------------ limits and eviction

    def _enforce_limits(self) -> list[int]:
        """Evict oldest records while a limit is exceeded. Caller holds the lock."""
        evicted = self._archive.enforce_limits(self.max_num_archived_messages, self.max_memory_archived_messages)
        byte_limit = self.max_memory_archived_messages
        if byte_limit is not None and self._archive.stats().total_bytes > byte_limit:
            logger.warning(
                "limit=<%d> | the newest archived message alone exceeds max_memory_archived_messages; it is kept",
                byte_limit,
            )
        if evicted:
            self._version += 1
            logger.info(
                "evicted=<%d>, oldest_evicted=<%d>, newest_evicted=<%d> | evicted oldest archived messages to stay "
                "within limits",
                len(evicted),
                evicted[0],
                evicted[-1],
            )
        return evicted

    def evict_oldest(self, count: int = 1) -> list[int]:
        """Evict the ``count`` oldest messages from the archive and the indexes together.

        Args:
            count: How many to evict.

        Returns:
            Their archive indices.
        """
        with self._lock:
            evicted = self._archive.evict_oldest(count)
            if evicted:
                self._version += 1
            return evicted

    def clear(self) -> None:
        """Forget every archived message. Indices keep increasing from where they were."""
        with self._lock:
            self.evict_oldest(len(self._archive))

    # ------------------------------------------------------------------ search

    def _query_vector(self, query: str) -> Vectors:
        with self._lock:
            cached = self._query_cache.get(query)
            if cached is not None:
                self._query_cache.move_to_end(query)
                self._counters["query_cache_hits"] += 1
                return cached
        vector = self._embed([query], query=True)
        if self.query_cache_size:
            with self._lock:
                self._query_cache[query] = vector
                while len(self._query_cache) > self.query_cache_size:
                    self._query_cache.popitem(last=False)
        return vector

    def _retry_pending_if_due(self) -> None:
        failure = self._last_embedding_failure
        if failure is not None and time.monotonic() - failure < self.embedding_retry_interval:
            return
        with self._lock:
            if not self._archive.has_pending():
                return
        self._embed_pending(raise_errors=False)

    def _ranked(self, query: str, want: int, threshold: float | None) -> list[tuple[int, float, float | None]]:
        """Candidates ``(index, score, similarity)`` for a query, best first, ``min_score`` applied.

        Dense ranks by cosine similarity, lexical by BM25, hybrid by reciprocal-rank fusion of both rankings
        (each taken ``max(3 * want, 30)`` deep). In hybrid mode a failing embedder degrades to lexical results
        with a warning; in dense mode it raises.
        """
        mode = self.retrieval
        depth = max(3 * want, 30)
        vector: Vectors | None = None
        if mode != "lexical" or threshold is not None:
            try:
                vector = self._query_vector(query)
            except Exception as error:
                if mode == "dense":
                    raise
                logger.warning("error=<%s> | query embedding failed; using lexical results only", error)
        with self._lock:
            dense: dict[int, float] = {}
            if vector is not None and mode != "lexical":
                dense = self._archive.dense_search(vector, depth if mode == "hybrid" else want)
            lexical: dict[int, float] = {}
            if mode != "dense":
                lexical = self._archive.lexical_search(query, depth if mode == "hybrid" else want)
            if mode == "dense":
                ranked = sorted(dense.items(), key=lambda item: (-item[1], item[0]))
            elif mode == "lexical":
                ranked = sorted(lexical.items(), key=lambda item: (-item[1], item[0]))
            else:
                fused: dict[int, float] = {}
                for ranking in (dense, lexical):
                    ordered = sorted(ranking.items(), key=lambda item: (-item[1], item[0]))
                    for rank, (index, _) in enumerate(ordered):
                        fused[index] = fused.get(index, 0.0) + 1.0 / (self.rrf_k + rank + 1)
                ranked = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
            similarity = dict(dense)
            if vector is not None:
                missing = [i for i, _ in ranked[: want + 10] if i not in similarity]
                similarity.update(self._archive.similarities(vector, missing))
        result = [(i, s, similarity.get(i)) for i, s in ranked]
        if threshold is not None:
            # A message without a vector (pending, or nothing to embed) has no similarity; it was found lexically.
            result = [(i, s, sim) for i, s, sim in result if sim is None or sim >= threshold]
        return result[:want]

    def _search(self, query: str, top_k: int | None, min_score: float | None, pool: int = 0) -> list[SearchHit]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        k = self.top_k if top_k is None else top_k
        threshold = self.min_score if min_score is None else min_score
        if k < 1 or not query.strip():
            return []
        self._retry_pending_if_due()
        with self._lock:
            self._counters["searches"] += 1
            if not len(self._archive):
                return []
        want = max(k, pool, self.rerank_candidates if self.reranker is not None else 0)
        ranked = self._ranked(query, want, threshold)
        with self._lock:
            found = self._archive.get([i for i, _, _ in ranked])
        hits = [
            SearchHit(index=i, score=s, message=decode_message(found[i]), similarity=sim)
            for i, s, sim in ranked
            if i in found
        ]
        if self.reranker is not None and hits:
            hits = self._rerank(query, hits)
        return hits

    def search(self, query: str, top_k: int | None = None, min_score: float | None = None) -> list[SearchHit]:
        """Find the archived messages most relevant to ``query``.

        Args:
            query: The text to look for.
            top_k: How many hits at most (default: ``self.top_k``).
            min_score: Minimum cosine similarity between query and message, in every retrieval mode (default:
                ``self.min_score``). Messages without a vector (not embedded yet) are not filtered by it.

        Returns:
            Hits, most relevant first: by cosine similarity (dense), BM25 (lexical), reciprocal-rank fusion
            (hybrid), or the reranker's score when one is configured. Empty for an empty query or archive.

        Raises:
            EmbeddingError: If the query cannot be embedded in dense mode (hybrid falls back to lexical).
        """
        k = self.top_k if top_k is None else top_k
        return self._search(query, top_k, min_score)[:k]

    def _rerank(self, query: str, hits: list[SearchHit]) -> list[SearchHit]:
        scores = self.reranker.rerank(query, [render_message(h.message) for h in hits])  # type: ignore[union-attr]
        if len(scores) != len(hits):
            raise SemanticMemoryError(f"reranker returned {len(scores)} scores for {len(hits)} passages")
        rescored = [
            SearchHit(index=h.index, score=float(s), message=h.message, similarity=h.similarity)
            for h, s in zip(hits, scores, strict=True)
        ]
        return sorted(rescored, key=lambda h: (-h.score, h.index))

    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
    ) -> list[ContextWindow]:
        """Search, widen each hit by the context radius, and merge overlapping or adjacent ranges.

        The windows are built around the ``top_k`` hits. Each window is then scored with every candidate that
        falls inside it (the search looks ``3 * top_k`` deep), so a passage whose neighbouring messages also
        match outranks an isolated hit of the same strength (see
        :func:`~strands_semantic_memory.windows.window_score`).

        Args:
            query: The text to look for.
            top_k: Hits to widen (default: ``self.top_k``).
            context_radius: Neighbours on each side (default: ``self.context_radius``).
            min_score: Minimum cosine similarity of a hit (default: ``self.min_score``).

        Returns:
            Windows in conversation order, each with its score.
        """
        k = self.top_k if top_k is None else top_k
        radius = self.context_radius if context_radius is None else context_radius
        candidates = self._search(query, top_k, min_score, pool=3 * k)
        hits = candidates[:k]
        if not hits:
            return []
        scores = {h.index: h.score for h in hits}
        pool_scores = {h.index: h.score for h in candidates}
        with self._lock:
            bounds = self._archive.bounds()
            if bounds is None:
                return []
            ranges = expand_and_merge(scores, radius, *bounds)
            found = self._archive.get([i for span in ranges for i in range(span.start, span.end + 1)])
        windows = []
        for span in ranges:
            indices = [i for i in range(span.start, span.end + 1) if i in found]
            windows.append(
                ContextWindow(
                    start=span.start,
                    end=span.end,
                    messages=[decode_message(found[i]) for i in indices],
                    hit_indices=list(span.hit_indices),
                    score=window_score([s for i, s in pool_scores.items() if span.start <= i <= span.end]),
                    indices=indices,
                    hit_scores=[scores[i] for i in span.hit_indices],
                )
            )
        return windows

    # ------------------------------------------------------------------ stats

    def get_memory_usage_stats(self) -> dict[str, Any]:
        """Usage statistics.

        Returns:
            A dict with ``message_count``, ``total_memory`` (estimated bytes; see
            :mod:`strands_semantic_memory.archive`), ``message_bytes``, ``embedding_bytes``, ``bookkeeping_bytes``,
            ``vector_count``, ``embedding_dimension``, ``embedding_model``, ``pending_embedding_count``,
            ``last_embedding_error``, ``evicted_count``, ``archived_total``, ``oldest_index``, ``newest_index``,
            ``max_num_archived_messages``, ``max_memory_archived_messages``, ``memory_utilization`` (0-1, or None
            without a byte limit), ``searches``, ``query_cache_hits`` and ``embedding_failures``.
        """
        with self._lock:
            stats = self._archive.stats()
        embedding_bytes = stats.vector_count * (stats.dimension or 0) * 4
        limit = self.max_memory_archived_messages
        return {
            "message_count": stats.message_count,
            "total_memory": stats.total_bytes,
            "message_bytes": stats.message_bytes,
            "embedding_bytes": embedding_bytes,
            "bookkeeping_bytes": stats.total_bytes - stats.message_bytes - embedding_bytes,
            "vector_count": stats.vector_count,
            "embedding_dimension": stats.dimension,
            "embedding_model": self.embedder.model_id,
            "retrieval": self.retrieval,
            "store": type(self._archive).__name__,
            "pending_embedding_count": stats.pending_count,
            "last_embedding_error": self._last_embedding_error,
            "evicted_count": stats.evicted_count,
            "archived_total": stats.archived_total,
            "oldest_index": stats.oldest_index,
            "newest_index": stats.newest_index,
            "max_num_archived_messages": self.max_num_archived_messages,
            "max_memory_archived_messages": limit,
            "memory_utilization": stats.total_bytes / limit if limit else None,
            **self._counters,
        }

    # ------------------------------------------------------------------ state

    def to_state(self) -> dict[str, Any]:
        """Everything needed to restore this archive, as JSON types only (no pickle), versioned.

        With the in-process store this is the whole archive, vectors included; with a shared store (PostgreSQL)
        it only references the namespace, since the database is the persistence.

        Returns:
            The state; see :mod:`strands_semantic_memory.state` for the layout.
        """
        with self._lock:
            return self._archive.export_state(self.embedder.model_id)

    def load_state(self, state: Mapping[str, Any], *, reembed: bool = False) -> None:
        """Replace this memory's archive with a saved one, without calling the embedder.

        Args:
            state: What :meth:`to_state` returned (possibly after a JSON round trip).
            reembed: If the state was built with another embedding model or dimension than this memory's,
                embed every message again instead of refusing.

        Raises:
            StateError: If the state is corrupt, inconsistent, or not ours.
            EmbeddingModelMismatchError: If it was built with another embedding model and ``reembed`` is False.
            DimensionMismatchError: If it was built with another dimension and ``reembed`` is False.
        """
        if not isinstance(state, Mapping):
            raise StateError(f"saved state must be a JSON object, got {type(state).__name__}")
        embedding = state.get("embedding")
        if not isinstance(embedding, Mapping) or not isinstance(embedding.get("model_id"), str):
            raise StateError("saved state is missing 'embedding.model_id'")
        saved_model, saved_dimension = embedding["model_id"], embedding.get("dimension")
        mismatch = saved_model != self.embedder.model_id
        if mismatch and not reembed:
            raise EmbeddingModelMismatchError(saved_model, self.embedder.model_id)
        # Embedders that know their dimension without a call (Bedrock) are checked now; others on first use.
        known_dimension = getattr(self.embedder, "configured_dimension", None)
        if not mismatch and saved_dimension is not None and known_dimension not in (None, saved_dimension):
            if not reembed:
                raise DimensionMismatchError(
                    int(saved_dimension),
                    int(known_dimension),
                    "Restore with the dimension that built the archive, or pass reembed=True.",
                )
            mismatch = True
        with self._lock:
            self._archive.load_state(state, reembed=mismatch)
            self._in_flight = set()
            self._query_cache.clear()
            self._version += 1
        if mismatch:
            logger.info("messages=<%d> | re-embedding the restored archive with the configured model", len(self))
            self.embed_pending()
        with self._lock:
            self._enforce_limits()

    @classmethod
    def from_state(cls, state: Mapping[str, Any], *, reembed: bool = False, **kwargs: Any) -> SemanticMemory:
        """Build a memory from saved state without calling any embedder.

        Args:
            state: What :meth:`to_state` returned.
            reembed: See :meth:`load_state`.
            **kwargs: Constructor options. ``embedding_model`` defaults to the model that built the archive.

        Returns:
            The restored memory.

        Raises:
            StateError: If the state is corrupt or not ours.
            EmbeddingModelMismatchError: If ``embedding_model``/``embedder`` differs from the archive's model and
                ``reembed`` is False.
        """
        if not isinstance(state, Mapping):
            raise StateError(f"saved state must be a JSON object, got {type(state).__name__}")
        if "embedder" not in kwargs and "embedding_model" not in kwargs:
            embedding = state.get("embedding")
            model_id = embedding.get("model_id") if isinstance(embedding, Mapping) else None
            if not isinstance(model_id, str):
                raise StateError("saved state is missing 'embedding.model_id'")
            kwargs["embedding_model"] = model_id
            if model_id.startswith("bedrock:") and "embedding_dimensions" not in kwargs:
                kwargs["embedding_dimensions"] = embedding.get("dimension") if isinstance(embedding, Mapping) else None
        memory = cls(**kwargs)
        memory.load_state(state, reembed=reembed)
        return memory
