"""An embedder that remembers its vectors on disk, so a parameter sweep embeds each text once.

Vectors are keyed by the model, the kind of text (document or query) and a SHA-256 of the text; each batch of texts
not seen before is embedded by the real model and written as one shard (``<key>-<n>.npz``: an array of digests and
one of float32 vectors, read without pickle). Ranking sweeps (``benchmarks.loo``) then only re-rank.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from strands_semantic_memory.embeddings import Embedder
from strands_semantic_memory.embeddings._base import Vectors

logger = logging.getLogger(__name__)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class CachedEmbedder:
    """Serves vectors from a folder of shards; embeds (and saves) only texts it has not seen.

    Args:
        inner: The real embedder (its ``model_id`` and class name key the cache).
        directory: Where the shards live (created if missing).
    """

    def __init__(self, inner: Embedder, directory: Path) -> None:
        self.inner = inner
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        model = f"{type(inner).__name__}-{inner.model_id}"
        self._prefix = hashlib.sha256(model.encode("utf-8")).hexdigest()[:12]
        self._known: dict[str, dict[bytes, np.ndarray[Any, Any]]] = {"document": {}, "query": {}}
        self._unsaved: dict[str, list[bytes]] = {"document": [], "query": []}
        self.embedded = {"document": 0, "query": 0}
        for kind, known in self._known.items():
            for shard in sorted(self.directory.glob(f"{self._prefix}-{kind}-*.npz")):
                with np.load(shard, allow_pickle=False) as saved:
                    known.update(zip((bytes(d) for d in saved["digests"]), saved["vectors"], strict=True))

    @property
    def model_id(self) -> str:
        """The inner embedder's model id."""
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        """The inner embedder's dimension."""
        return self.inner.dimension

    def _vectors(self, kind: str, texts: Sequence[str]) -> Vectors:
        known = self._known[kind]
        digests = [_digest(t) for t in texts]
        missing = {d: t for d, t in zip(digests, texts, strict=True) if d not in known}
        if missing:
            embed = self.inner.embed_documents if kind == "document" else self.inner.embed_queries
            vectors = np.asarray(embed(list(missing.values())), dtype=np.float32)
            known.update(zip(missing, vectors, strict=True))
            self.embedded[kind] += len(missing)
            self._unsaved[kind].extend(missing)
            if len(self._unsaved[kind]) >= 256:
                self.flush()
        return np.stack([known[d] for d in digests]).astype(np.float32)

    def flush(self) -> None:
        """Write the vectors embedded since the last flush (one shard per kind, named by its contents)."""
        for kind, digests in self._unsaved.items():
            if not digests:
                continue
            name = hashlib.sha256(b"".join(digests)).hexdigest()[:16]
            shard = self.directory / f"{self._prefix}-{kind}-{name}.npz"
            vectors = np.stack([self._known[kind][d] for d in digests])
            np.savez(shard, digests=np.array(digests, dtype="S32"), vectors=vectors)
            logger.debug("kind=<%s>, texts=<%d>, shard=<%s> | cached", kind, len(digests), shard.name)
            digests.clear()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors of archived texts (cached)."""
        return self._vectors("document", texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of queries (cached)."""
        return self._vectors("query", texts)
