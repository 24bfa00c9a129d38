"""Embedders for tests: the real bundled model, wrapped to count calls or to fail on demand (not mocks)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence

from strands_semantic_memory.embeddings import SentenceTransformerEmbedder, Vectors


class CountingEmbedder:
    """Wraps a real embedder and counts its calls (instrumentation, not a mock: the real model embeds)."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        self.inner = inner
        self.document_calls = 0
        self.query_calls = 0
        self.documents_embedded = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.document_calls += 1
        self.documents_embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self.query_calls += 1
        return self.inner.embed_queries(texts)


class FlakyEmbedder(CountingEmbedder):
    """A real embedder whose service can be switched off, like a network embedding API that fails."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        super().__init__(inner)
        self.failing = False

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.failing:
            raise ConnectionError("embedding service unavailable")
        return super().embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        if self.failing:
            raise ConnectionError("embedding service unavailable")
        return super().embed_queries(texts)


EMBEDDING_THREAD = "semantic-memory-embedding"
"""The name of a memory's background embedding thread."""


class RecordingEmbedder(CountingEmbedder):
    """The real model; records the thread and texts of each document call, and can hold the calls of a memory's
    embedding thread until ``release`` is set (``started`` is set when that thread calls). Calls from any other
    thread (an ``embed_pending`` caller, a search embedding pending messages) are recorded, never held."""

    def __init__(self, inner: SentenceTransformerEmbedder, *, hold: bool = False) -> None:
        super().__init__(inner)
        self.threads: list[str] = []
        self.calls: list[tuple[str, list[str]]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        name = threading.current_thread().name
        self.threads.append(name)
        self.calls.append((name, list(texts)))
        if name == EMBEDDING_THREAD:
            self.started.set()
            assert self.release.wait(60), "the test never released the embedder"
        return super().embed_documents(texts)

    def embedded_by(self, text: str) -> list[str]:
        """The threads whose document calls held ``text``, one entry per call."""
        return [name for name, texts in self.calls if text in texts]


class RejectingEmbedder(CountingEmbedder):
    """The real model, except that it rejects any batch of documents holding a text with ``marker`` in it, like an
    embedding service answering 400 to one input. ``rejections`` counts the refused calls; ``rejected`` is set at
    the first."""

    def __init__(self, inner: SentenceTransformerEmbedder, marker: str = "POISON") -> None:
        super().__init__(inner)
        self.marker = marker
        self.rejections = 0
        self.rejected = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if any(self.marker in text for text in texts):
            self.rejections += 1
            self.rejected.set()
            raise ValueError("the service rejected one input")
        return super().embed_documents(texts)


class WarmUpRecorder(CountingEmbedder):
    """The real model with its ``warm_up``; records the thread that warmed it up and signals when it is done."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        super().__init__(inner)
        self.warmed_on: list[str] = []
        self.warmed = threading.Event()

    def warm_up(self) -> None:
        self.inner.warm_up()
        self.warmed_on.append(threading.current_thread().name)
        self.warmed.set()


class NeverEmbeds:
    """Stands in for the bundled model (same id and dimension) and never finishes embedding: for a child process that
    is killed while its embedding thread holds a batch. Each document call writes ``{"embedding": n}`` to stdout."""

    model_id = "sentence-transformers/all-MiniLM-L6-v2"
    dimension = 384

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        os.write(1, (json.dumps({"embedding": len(texts)}) + "\n").encode())  # one write: never interleaved
        threading.Event().wait()
        raise AssertionError("unreachable")

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        threading.Event().wait()
        raise AssertionError("unreachable")


class RenamedEmbedder(CountingEmbedder):
    """The real model under another model id: an archive it fills counts as built by another embedding model."""

    def __init__(self, inner: SentenceTransformerEmbedder, model_id: str = "renamed-minilm") -> None:
        super().__init__(inner)
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id
