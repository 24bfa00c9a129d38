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

from .archive import (
    MAX_CHUNKS,
    ArchivedRecord,
    decode_message,
    encode_message,
    message_index,
    record_nbytes,
    vector_id,
)
from .embeddings import DEFAULT_MODEL, Embedder, Vectors, normalize_rows, resolve_embedder
from .errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    SemanticMemoryError,
    StateError,
)
from .lexical import LexicalIndex
from .rendering import chunk_text, render_message
from .rerank import Reranker
from .state import SavedArchive, SavedRecord, dump_state, load_state
from .stores import FaissVectorStore, VectorStore
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
        rrf_k: int = 60,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
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
            rrf_k: The constant of reciprocal-rank fusion: each ranking contributes ``1 / (rrf_k + rank)``.
            embedder: A ready :class:`~strands_semantic_memory.embeddings.Embedder`, instead of a model name.
            store: A :class:`~strands_semantic_memory.stores.VectorStore`; default: an in-process FAISS index.
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

        self._lock = threading.RLock()
        self._store: VectorStore | None = store
        self._lexical = LexicalIndex()
        self._records: dict[int, ArchivedRecord] = {}
        self._oldest = 0
        self._next_index = 0
        self._by_tracking_id: dict[str, int] = {}
        self._pending: set[int] = set()
        self._in_flight: set[int] = set()
        self._total_bytes = 0
        self._evicted_count = 0
        self._last_embedding_failure: float | None = None
        self._last_embedding_error: str | None = None
        self._query_cache: OrderedDict[str, Vectors] = OrderedDict()
        self._version = 0
        self._counters = {"searches": 0, "query_cache_hits": 0, "embedding_failures": 0}
        self._evicted_vectors: list[tuple[int, int]] = []  # (index, vector count) evicted, not yet removed

    # ------------------------------------------------------------------ properties

    @property
    def version(self) -> int:
        """Increases on every change to the archive; lets callers cache work derived from it."""
        return self._version

    @property
    def store(self) -> VectorStore | None:
        """The vector store (created on the first embedding when none was given)."""
        return self._store

    def __len__(self) -> int:
        """Number of archived messages."""
        return len(self._records)

    @property
    def indices(self) -> range:
        """The live archive indices, oldest first (always one contiguous run)."""
        with self._lock:
            return range(self._oldest, self._oldest + len(self._records)) if self._records else range(0)

    def get(self, index: int) -> Message:
        """A copy of the archived message at ``index``.

        Raises:
            KeyError: If no message has that index (never archived, or evicted).
        """
        with self._lock:
            record = self._records.get(index)
        if record is None:
            raise KeyError(f"no archived message with index {index}")
        return record.message

    def messages(self, start: int | None = None, end: int | None = None) -> list[tuple[int, Message]]:
        """Archived ``(index, message)`` pairs with ``start <= index <= end``, oldest first."""
        with self._lock:
            lo = self._oldest if start is None else max(start, self._oldest)
            hi = self._next_index - 1 if end is None else end
            records = [self._records[i] for i in range(lo, hi + 1) if i in self._records]
        return [(r.index, r.message) for r in records]

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
        """
        self._validate(messages)
        encoded = [(encode_message(m), m) for m in messages]
        indices: list[int] = []
        with self._lock:
            added = 0
            for data, message in encoded:
                tracking_id = message.get("tracking_id") or None
                if tracking_id is not None and tracking_id in self._by_tracking_id:
                    indices.append(self._by_tracking_id[tracking_id])
                    continue
                index = self._next_index
                self._next_index += 1
                text = render_message(message)
                has_text = bool(text.strip())
                terms = self._lexical.add(index, text)
                record = ArchivedRecord(
                    index=index,
                    data=data,
                    role=str(message["role"]),
                    tracking_id=tracking_id,
                    vector_count=0,
                    pending=has_text,
                    nbytes=record_nbytes(len(data), 0, 0, terms),
                    lexical_terms=terms,
                )
                if not self._records:
                    self._oldest = index
                self._records[index] = record
                self._total_bytes += record.nbytes
                if tracking_id is not None:
                    self._by_tracking_id[tracking_id] = index
                if has_text:
                    self._pending.add(index)
                indices.append(index)
                added += 1
            if added:
                self._version += 1
                logger.debug("archived=<%d>, total=<%d> | messages archived", added, len(self._records))
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
            claimed = sorted(self._pending - self._in_flight)
            self._in_flight.update(claimed)
            texts: list[str] = []
            owners: list[tuple[int, int]] = []  # (index, chunk number)
            for index in claimed:
                rendered = render_message(self._records[index].message)
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
                owners.extend((index, n) for n in range(len(chunks)))
        if not claimed:
            return 0
        try:
            vectors = self._embed(texts, query=False) if texts else np.zeros((0, 0), dtype=np.float32)
        except Exception as error:
            with self._lock:
                self._in_flight.difference_update(claimed)
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
        with self._lock:
            self._in_flight.difference_update(claimed)
            self._last_embedding_failure = None
            self._last_embedding_error = None
            live = [i for i in claimed if i in self._records and i in self._pending]
            if texts:
                store = self._ensure_store(vectors.shape[1])
                live_set = set(live)
                keep = [row for row, (index, _) in enumerate(owners) if index in live_set]
                ids = np.array([vector_id(*owners[row]) for row in keep], dtype=np.int64)
                store.add(ids, vectors[keep])
            counts: dict[int, int] = {}
            for index, _ in owners:
                counts[index] = counts.get(index, 0) + 1
            dimension = self._store.dimension if self._store is not None else 0
            for index in live:
                record = self._records[index]
                self._total_bytes -= record.nbytes
                record.vector_count = counts.get(index, 0)
                record.pending = False
                record.nbytes = record_nbytes(len(record.data), record.vector_count, dimension, record.lexical_terms)
                self._total_bytes += record.nbytes
                self._pending.discard(index)
            self._version += 1
            self._enforce_limits()
        return len(live)

    def _embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        raw = self.embedder.embed_queries(texts) if query else self.embedder.embed_documents(texts)
        vectors = normalize_rows(raw)
        if vectors.shape[0] != len(texts):
            raise SemanticMemoryError(f"embedder returned {vectors.shape[0]} vectors for {len(texts)} texts")
        if not np.all(np.isfinite(vectors)):
            raise SemanticMemoryError("embedder returned non-finite values")
        if self._store is not None and vectors.shape[1] != self._store.dimension:
            raise DimensionMismatchError(
                self._store.dimension,
                int(vectors.shape[1]),
                "The archive was built with another embedding model or dimension; restore it with that model.",
            )
        return vectors

    def _ensure_store(self, dimension: int) -> VectorStore:
        if self._store is None:
            self._store = FaissVectorStore(dimension)
        return self._store

    # ------------------------------------------------------------------ limits and eviction

    def _enforce_limits(self) -> list[int]:
        """Evict oldest records while a limit is exceeded. Caller holds the lock."""
        evicted: list[int] = []
        count_limit, byte_limit = self.max_num_archived_messages, self.max_memory_archived_messages
        while self._records and (
            (count_limit is not None and len(self._records) > count_limit)
            or (byte_limit is not None and self._total_bytes > byte_limit and len(self._records) > 1)
        ):
            evicted.append(self._oldest)
            self._evict_one_locked()
        if byte_limit is not None and self._total_bytes > byte_limit:
            logger.warning(
                "bytes=<%d>, limit=<%d> | the newest archived message alone exceeds max_memory_archived_messages; "
                "it is kept",
                self._total_bytes,
                byte_limit,
            )
        if evicted:
            self._remove_evicted_vectors()
            self._version += 1
            logger.info(
                "evicted=<%d>, oldest_kept=<%d> | evicted oldest archived messages to stay within limits",
                len(evicted),
                self._oldest,
            )
        return evicted

    def _evict_one_locked(self) -> ArchivedRecord:
        record = self._records.pop(self._oldest)
        self._oldest += 1
        self._total_bytes -= record.nbytes
        self._pending.discard(record.index)
        if record.tracking_id is not None:
            self._by_tracking_id.pop(record.tracking_id, None)
        self._evicted_count += 1
        self._evicted_vectors.append((record.index, record.vector_count))
        return record

    def _remove_evicted_vectors(self) -> None:
        """Remove the vectors and postings of records evicted since the last call. Caller holds the lock."""
        self._lexical.evict_before(self._oldest)
        ids = [vector_id(i, n) for i, count in self._evicted_vectors for n in range(count)]
        self._evicted_vectors.clear()
        if ids and self._store is not None:
            self._store.remove(np.array(ids, dtype=np.int64))

    def evict_oldest(self, count: int = 1) -> list[int]:
        """Evict the ``count`` oldest messages from the archive and the index together.

        Args:
            count: How many to evict.

        Returns:
            Their archive indices.
        """
        with self._lock:
            evicted = [self._evict_one_locked().index for _ in range(min(count, len(self._records)))]
            if evicted:
                self._remove_evicted_vectors()
                self._version += 1
            return evicted

    def clear(self) -> None:
        """Forget every archived message. Indices keep increasing from where they were."""
        with self._lock:
            self.evict_oldest(len(self._records))

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
        if not self._pending:
            return
        failure = self._last_embedding_failure
        if failure is not None and time.monotonic() - failure < self.embedding_retry_interval:
            return
        self._embed_pending(raise_errors=False)

    def _dense_candidates(self, vector: Vectors, want: int) -> dict[int, float]:
        """Archive index -> cosine similarity of its best chunk, for the ``want`` nearest messages."""
        store = self._store
        if store is None or len(store) == 0:
            return {}
        best: dict[int, float] = {}
        fetch = want
        while True:
            scores, ids = store.search(vector, fetch)
            best.clear()
            for score, vid in zip(scores.tolist(), ids.tolist(), strict=True):
                index = message_index(vid)
                if index in self._records and index not in best:
                    best[index] = float(score)
            if len(best) >= want or len(ids) < fetch:
                return best
            fetch *= 2  # several chunks of one message matched; look further for distinct messages

    def _similarities(self, vector: Vectors, indices: list[int]) -> dict[int, float]:
        """Cosine similarity of the query to each message's best chunk (messages without vectors are left out)."""
        store = self._store
        owners = [(i, n) for i in indices if i in self._records for n in range(self._records[i].vector_count)]
        if store is None or not owners:
            return {}
        vectors = store.fetch(np.array([vector_id(i, n) for i, n in owners], dtype=np.int64))
        result: dict[int, float] = {}
        for (index, _), score in zip(owners, (vectors @ vector[0]).tolist(), strict=True):
            result[index] = max(result.get(index, -1.0), float(score))
        return result

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
            dense = self._dense_candidates(vector, depth if mode == "hybrid" else want) if (
                vector is not None and mode != "lexical"
            ) else {}
            lexical: dict[int, float] = {}
            if mode != "dense":
                scores, ids = self._lexical.search(query, depth if mode == "hybrid" else want)
                lexical = {i: s for i, s in zip(ids.tolist(), scores.tolist(), strict=True) if i in self._records}
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
                missing = [i for i, _ in ranked if i not in similarity]
                similarity.update(self._similarities(vector, missing))
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
            if not self._records:
                return []
        want = max(k, pool, self.rerank_candidates if self.reranker is not None else 0)
        ranked = self._ranked(query, want, threshold)
        with self._lock:
            found = [(self._records[i], s, sim) for i, s, sim in ranked if i in self._records]
        hits = [SearchHit(index=r.index, score=s, message=r.message, similarity=sim) for r, s, sim in found]
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
            if not self._records:
                return []
            lowest, highest = self._oldest, self._oldest + len(self._records) - 1
            ranges = expand_and_merge(scores, radius, lowest, highest)
            windows = []
            for span in ranges:
                records = [self._records[i] for i in range(span.start, span.end + 1) if i in self._records]
                windows.append((span, records))
        return [
            ContextWindow(
                start=span.start,
                end=span.end,
                messages=[r.message for r in records],
                hit_indices=list(span.hit_indices),
                score=window_score([s for i, s in pool_scores.items() if span.start <= i <= span.end]),
                indices=[r.index for r in records],
                hit_scores=[scores[i] for i in span.hit_indices],
            )
            for span, records in windows
        ]

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
            message_bytes = sum(len(r.data) for r in self._records.values())
            vector_count = sum(r.vector_count for r in self._records.values())
            dimension = self._store.dimension if self._store is not None else None
            embedding_bytes = vector_count * (dimension or 0) * 4
            count = len(self._records)
            return {
                "message_count": count,
                "total_memory": self._total_bytes,
                "message_bytes": message_bytes,
                "embedding_bytes": embedding_bytes,
                "bookkeeping_bytes": self._total_bytes - message_bytes - embedding_bytes,
                "vector_count": vector_count,
                "embedding_dimension": dimension,
                "embedding_model": self.embedder.model_id,
                "pending_embedding_count": len(self._pending),
                "last_embedding_error": self._last_embedding_error,
                "evicted_count": self._evicted_count,
                "archived_total": self._next_index,
                "oldest_index": self._oldest if count else None,
                "newest_index": self._oldest + count - 1 if count else None,
                "max_num_archived_messages": self.max_num_archived_messages,
                "max_memory_archived_messages": self.max_memory_archived_messages,
                "memory_utilization": (
                    self._total_bytes / self.max_memory_archived_messages if self.max_memory_archived_messages else None
                ),
                **self._counters,
            }

    # ------------------------------------------------------------------ state

    def to_state(self) -> dict[str, Any]:
        """Everything needed to restore this archive, as JSON types only (no pickle), versioned.

        Returns:
            The state; see :mod:`strands_semantic_memory.state` for the layout.
        """
        with self._lock:
            if self._store is not None:
                ids, vectors = self._store.export()
                dimension: int | None = self._store.dimension
            else:
                ids, vectors, dimension = np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), None
            records = [
                SavedRecord(index=r.index, data=r.data, vectors=r.vector_count, pending=r.pending)
                for r in self._records.values()
            ]
            saved = SavedArchive(
                model_id=self.embedder.model_id,
                dimension=dimension,
                next_index=self._next_index,
                evicted_count=self._evicted_count,
                records=records,
                vector_ids=ids,
                vectors=vectors,
            )
        return dump_state(saved)

    def load_state(self, state: Mapping[str, Any], *, reembed: bool = False) -> None:
        """Replace this memory's archive with a saved one, without calling the embedder.

        Args:
            state: What :meth:`to_state` returned (possibly after a JSON round trip).
            reembed: If the state was built with another embedding model than this memory's, embed every
                message again with this memory's model instead of refusing.

        Raises:
            StateError: If the state is corrupt, inconsistent, or not ours.
            EmbeddingModelMismatchError: If it was built with another embedding model and ``reembed`` is False.
        """
        saved = load_state(state)
        mismatch = saved.model_id != self.embedder.model_id
        if mismatch and not reembed:
            raise EmbeddingModelMismatchError(saved.model_id, self.embedder.model_id)
        # Embedders that know their dimension without a call (Bedrock) are checked now; others on first use.
        known_dimension = getattr(self.embedder, "configured_dimension", None)
        if not mismatch and saved.dimension is not None and known_dimension not in (None, saved.dimension):
            if not reembed:
                raise DimensionMismatchError(
                    saved.dimension,
                    int(known_dimension),
                    "Restore with the dimension that built the archive, or pass reembed=True.",
                )
            mismatch = True
        records: dict[int, ArchivedRecord] = {}
        counts: dict[int, int] = {}
        for vid in saved.vector_ids.tolist():
            counts[message_index(vid)] = counts.get(message_index(vid), 0) + 1
        if len(set(saved.vector_ids.tolist())) != len(saved.vector_ids):
            raise StateError("saved state has duplicate vector ids")
        expected_indices = list(range(saved.records[0].index, saved.records[-1].index + 1)) if saved.records else []
        if [r.index for r in saved.records] != expected_indices:
            raise StateError("saved state records are not one contiguous run of indices")
        lexical = LexicalIndex()  # rebuilt from the messages: tokenizing is cheap, and no embedder is called
        for raw in saved.records:
            if counts.get(raw.index, 0) != raw.vectors:
                raise StateError(
                    f"saved state record {raw.index} claims {raw.vectors} vectors but {counts.get(raw.index, 0)} are stored"
                )
            message = decode_message(raw.data)
            terms = lexical.add(raw.index, render_message(message))
            vectors = 0 if mismatch else raw.vectors
            pending = bool(render_message(message).strip()) if mismatch else raw.pending
            records[raw.index] = ArchivedRecord(
                index=raw.index,
                data=raw.data,
                role=str(message.get("role")),
                tracking_id=message.get("tracking_id") or None,
                vector_count=vectors,
                pending=pending,
                nbytes=record_nbytes(len(raw.data), vectors, saved.dimension or 0, terms),
                lexical_terms=terms,
            )
        if set(counts) - set(records):
            raise StateError("saved state has vectors for messages that are not in it")
        # The restored vectors go into a fresh store: whatever this memory held before is replaced.
        store: VectorStore | None = None
        if not mismatch and saved.dimension is not None and len(saved.vector_ids):
            store = FaissVectorStore(saved.dimension)
            store.add(saved.vector_ids, saved.vectors)  # saved as stored: already unit length
        with self._lock:
            self._store = store
            self._lexical = lexical
            self._records = records
            self._oldest = saved.records[0].index if saved.records else saved.next_index
            self._next_index = saved.next_index
            self._by_tracking_id = {r.tracking_id: r.index for r in records.values() if r.tracking_id}
            self._pending = {r.index for r in records.values() if r.pending}
            self._in_flight = set()
            self._total_bytes = sum(r.nbytes for r in records.values())
            self._evicted_count = saved.evicted_count
            self._query_cache.clear()
            self._version += 1
        logger.debug("messages=<%d>, vectors=<%d> | archive restored", len(records), len(saved.vector_ids))
        if mismatch:
            logger.info("messages=<%d> | re-embedding the restored archive with the configured model", len(records))
            self.embed_pending()
        with self._lock:
            self._enforce_limits()

    @classmethod
    def from_state(
        cls, state: Mapping[str, Any], *, reembed: bool = False, **kwargs: Any
    ) -> SemanticMemory:
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
                kwargs["embedding_dimensions"] = embedding.get("dimension")
        memory = cls(**kwargs)
        memory.load_state(state, reembed=reembed)
        return memory

