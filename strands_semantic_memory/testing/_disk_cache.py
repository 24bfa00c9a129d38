"""``DiskCachedEmbedder``: real vectors, remembered on disk, so a test suite or a parameter sweep embeds each text once.

Vectors are keyed by the model (the inner embedder's class and ``model_id``), the kind of text (document or query)
and a SHA-256 of the text. Texts not seen before are embedded by the real model and written in shards
(``<key>-<kind>-<name>.npz``: an array of digests and one of float32 vectors), read back without pickle.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import numpy as np

from strands_semantic_memory.embeddings import Embedder, Vectors

logger = logging.getLogger(__name__)

Kind = Literal["document", "query"]
FLUSH_EVERY = 256
"""Unsaved vectors of one kind after which a shard is written without being asked."""


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class DiskCachedEmbedder:
    """Serves vectors from a folder of shards and embeds, then keeps, only the texts it has not seen.

    The vectors are the inner embedder's own (float32), so a memory built on this embedder searches exactly as one
    built on the inner embedder; the second run of a test suite or a sweep loads them instead of running the model.
    Vectors embedded since the last shard are written by :meth:`flush` (or on leaving a ``with`` block, or every
    :data:`FLUSH_EVERY` new vectors of one kind); shards are named by their contents, so several processes may
    share a folder.

    Attributes:
        inner: The real embedder.
        directory: The folder of shards.
        embedded: How many texts of each kind the inner embedder was asked for (the cache's misses).

    Example:
        ```python
        import tempfile

        from strands_semantic_memory import SemanticMemory
        from strands_semantic_memory.embeddings import resolve_embedder
        from strands_semantic_memory.testing import DiskCachedEmbedder

        with DiskCachedEmbedder(resolve_embedder(), tempfile.mkdtemp()) as embedder:
            memory = SemanticMemory(embedder=embedder)
            memory.add([{"role": "user", "content": [{"text": "The staging port is 6432."}]}])
            assert memory.search("staging port")[0].index == 0
        ```
    """

    def __init__(self, inner: Embedder, directory: str | Path) -> None:
        """Open (or start) the cache of ``inner``'s vectors in ``directory``.

        Args:
            inner: The real embedder; its class name and ``model_id`` key the cache.
            directory: Where the shards live (created when missing).
        """
        self.inner = inner
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        model = f"{type(inner).__name__}-{inner.model_id}"
        self._prefix = hashlib.sha256(model.encode("utf-8")).hexdigest()[:12]
        self._known: dict[Kind, dict[bytes, np.ndarray[Any, Any]]] = {"document": {}, "query": {}}
        self._unsaved: dict[Kind, list[bytes]] = {"document": [], "query": []}
        self.embedded: dict[Kind, int] = {"document": 0, "query": 0}
        for kind, known in self._known.items():
            for shard in sorted(self.directory.glob(f"{self._prefix}-{kind}-*.npz")):
                with np.load(shard, allow_pickle=False) as saved:
                    # numpy's fixed-width bytes drop trailing NUL bytes on reading: pad the digests back
                    digests = (bytes(d).ljust(32, b"\0") for d in saved["digests"])
                    known.update(zip(digests, saved["vectors"], strict=True))

    @property
    def model_id(self) -> str:
        """The inner embedder's model id."""
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        """The inner embedder's dimension."""
        return self.inner.dimension

    def _vectors(self, kind: Kind, texts: Sequence[str]) -> Vectors:
        known = self._known[kind]
        digests = [_digest(text) for text in texts]
        missing = {digest: text for digest, text in zip(digests, texts, strict=True) if digest not in known}
        if missing:
            embed = self.inner.embed_documents if kind == "document" else self.inner.embed_queries
            vectors = np.asarray(embed(list(missing.values())), dtype=np.float32)
            known.update(zip(missing, vectors, strict=True))
            self.embedded[kind] += len(missing)
            self._unsaved[kind].extend(missing)
            if len(self._unsaved[kind]) >= FLUSH_EVERY:
                self.flush()
        return np.stack([known[digest] for digest in digests]).astype(np.float32)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors of texts to be archived: from the cache, or embedded by the inner embedder and kept."""
        return self._vectors("document", texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries: from the cache, or embedded by the inner embedder and kept."""
        return self._vectors("query", texts)

    def flush(self) -> None:
        """Write the vectors embedded since the last flush: one shard per kind, named by its contents."""
        for kind, digests in self._unsaved.items():
            if not digests:
                continue
            name = hashlib.sha256(b"".join(digests)).hexdigest()[:16]
            shard = self.directory / f"{self._prefix}-{kind}-{name}.npz"
            vectors = np.stack([self._known[kind][digest] for digest in digests])
            np.savez(shard, digests=np.array(digests, dtype="S32"), vectors=vectors)
            logger.debug("kind=<%s>, texts=<%d>, shard=<%s> | cached", kind, len(digests), shard.name)
            digests.clear()

    def __enter__(self) -> DiskCachedEmbedder:
        """Use the cache in a ``with`` block: it is flushed when the block ends."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Flush what was embedded in the block."""
        self.flush()
