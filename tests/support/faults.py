"""Fault injection around the real embedder: a failing, a hanging and a counting wrapper (the model itself runs)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from strands_semantic_memory.embeddings import Embedder, Vectors


class Faulty:
    """The real embedder, with switches: ``failing`` raises ConnectionError, ``hang`` blocks until released."""

    def __init__(self, inner: Embedder, model_id: str | None = None) -> None:
        self.inner = inner
        self.failing = False
        self.reject: str | None = None  # a text containing this is refused (one bad message in a batch)
        self.release = threading.Event()
        self.hang = False
        self.calls: list[tuple[str, int]] = []
        self._model_id = model_id or inner.model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def _check(self, kind: str, texts: Sequence[str]) -> None:
        self.calls.append((kind, len(texts)))
        if self.hang:
            self.release.wait(60)
        if self.failing:
            raise ConnectionError("the embedding service is down")
        if self.reject is not None and any(self.reject in t for t in texts):
            raise ValueError(f"rejected text {self.reject}")

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self._check("documents", texts)
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self._check("queries", texts)
        return self.inner.embed_queries(texts)


def text(role: str, words: str, tracking_id: str | None = None) -> dict:
    """A Strands message with one text block (and a tracking id when given)."""
    message: dict = {"role": role, "content": [{"text": words}]}
    if tracking_id is not None:
        message["tracking_id"] = tracking_id
    return message
