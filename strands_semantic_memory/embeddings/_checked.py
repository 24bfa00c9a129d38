"""Embedding calls with their output checked, and the query cache.

Every vector the engine stores or searches with passes ``documents`` or ``query``:
rows normalized to unit length, one row per text, finite values, the archive's dimension. An embedder's own
exception reaches the caller as ``EmbeddingError`` with the original chained.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from strands_semantic_memory.embeddings._base import Embedder, Vectors, normalize_rows
from strands_semantic_memory.errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingError,
    MissingDependencyError,
    SemanticMemoryError,
)

logger = logging.getLogger(__name__)


class CheckedEmbedder:
    """Checked embedding of documents and (cached) queries. Thread-safe."""

    def __init__(self, embedder: Embedder, dimension: Callable[[], int | None], cache_size: int) -> None:
        """Create the checked embedder.

        Args:
            embedder: The embedding model.
            dimension: Returns the archive's dimension, once known (vectors of another length are refused).
            cache_size: Query embeddings to keep, least recently used dropped first; 0 disables the cache.
        """
        self.embedder = embedder
        self._dimension = dimension
        self._cache_size = cache_size
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self.cache_hits = 0
        self._unavailable: SemanticMemoryError | None = None

    @property
    def unavailable(self) -> str | None:
        """Why the model is unavailable (searches then run lexically, archived messages wait); None when it works."""
        error = self._unavailable
        return None if error is None else f"{type(error).__name__}: {error}"

    @contextmanager
    def _calling_embedder(self) -> Iterator[None]:
        """Map the errors of a call into the embedder.

        A missing model or dependency marks the embedder unavailable; the library's own errors pass; anything else
        becomes an ``EmbeddingError``.
        """
        try:
            yield
        except (ConfigurationError, MissingDependencyError) as error:
            self.mark_unavailable(error)
            raise
        except SemanticMemoryError:
            raise
        except Exception as error:
            raise EmbeddingError(f"the embedder failed: {type(error).__name__}: {error}") from error

    def _checked(self, texts: Sequence[str], *, query: bool) -> Vectors:
        with self._calling_embedder():
            raw = self.embedder.embed_queries(texts) if query else self.embedder.embed_documents(texts)
        try:
            vectors = normalize_rows(raw)
        except Exception as error:
            raise EmbeddingError(f"the embedder returned no usable matrix: {error}") from error
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EmbeddingError(f"embedder returned {vectors.shape[0]} vectors for {len(texts)} texts")
        if not np.all(np.isfinite(vectors)):
            raise EmbeddingError("embedder returned non-finite values")
        dimension = self._dimension()
        if dimension is not None and vectors.shape[1] != dimension:
            raise DimensionMismatchError(
                dimension,
                int(vectors.shape[1]),
                "The archive was built with another embedding model or dimension; restore it with that model.",
            )
        self._unavailable = None
        return vectors

    def mark_unavailable(self, error: SemanticMemoryError) -> None:
        """Record that the model cannot be loaded: logged once, shown by ``stats``, queries not tried again."""
        with self._lock:
            first = self._unavailable is None
            self._unavailable = error
        if first:
            logger.warning(
                "error=<%s> | the embedding model is unavailable: searches use lexical matching only and archived "
                "messages wait for their vectors; fix the model, then call embed_pending() or warm_up()",
                error,
            )

    def warm_up(self, *, wait: bool = True) -> None:
        """Load the model and run it once (the embedder's own ``warm_up`` if it has one, else one query).

        Args:
            wait: True: here, raising what fails. False: in a thread of its own, logging what fails. That thread
                is not a daemon: a process that ends meanwhile waits for the load to finish, since native code
                still running in a thread the interpreter abandons at exit can abort the process.

        Raises:
            ModelUnavailableError, MissingDependencyError: If the model cannot be loaded (``wait=True``).
            EmbeddingError: If the embedder fails otherwise (``wait=True``).
        """
        if wait:
            self._warm_up()
            return
        threading.Thread(target=self._warm_up_logged, name="semantic-memory-warm-up", daemon=False).start()

    def _warm_up(self) -> None:
        started = time.perf_counter()
        warm = getattr(self.embedder, "warm_up", None)
        with self._calling_embedder():
            if callable(warm):
                warm()
            else:
                self.embedder.embed_queries(["warm up"])
        self._unavailable = None
        logger.info("seconds=<%.2f> | embedding model loaded and run once", time.perf_counter() - started)

    def _warm_up_logged(self) -> None:
        try:
            self._warm_up()
        except (ConfigurationError, MissingDependencyError):
            pass  # logged once by mark_unavailable, shown by stats()
        except Exception as error:
            logger.warning("error=<%s> | warming up the embedding model failed; the first call tries again", error)

    def documents(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors for archived texts (always tries the embedder: the queue decides when to retry)."""
        return self._checked(texts, query=False)

    def query(self, text: str) -> Vectors:
        """The unit vector of one query, shape ``(1, dimension)``, from the cache when it was asked before.

        Raises:
            SemanticMemoryError: The model's load failure, without calling it again, once it is unavailable.
        """
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                self.cache_hits += 1
                return cached
            unavailable = self._unavailable
        if unavailable is not None:
            raise unavailable.with_traceback(None)
        vector = self._checked([text], query=True)
        with self._lock:
            if self._cache_size:
                self._cache[text] = vector
                self._evict()
        return vector

    def resize_cache(self, size: int) -> None:
        """Keep at most ``size`` query embeddings from now on (the least recently used go first; 0: none)."""
        with self._lock:
            self._cache_size = size
            self._evict()

    def _evict(self) -> None:
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def clear(self) -> None:
        """Drop cached query vectors (after a restore, the model may differ)."""
        with self._lock:
            self._cache.clear()

    def __len__(self) -> int:
        """Cached queries."""
        return len(self._cache)
