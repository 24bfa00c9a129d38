"""Shared fixtures: the real bundled embedding model, loaded once per test session."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from benchmarks.dataset import TOPICS
from strands_semantic_memory import SemanticMemory, SentenceTransformerEmbedder
from strands_semantic_memory.embeddings import Vectors


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


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2, loaded once."""
    model = SentenceTransformerEmbedder()
    assert model.dimension == 384
    return model


@pytest.fixture
def counting_embedder(embedder: SentenceTransformerEmbedder) -> CountingEmbedder:
    return CountingEmbedder(embedder)


def text_message(role: str, text: str) -> dict:
    return {"role": role, "content": [{"text": text}]}


_SUBJECTS = TOPICS  # the benchmark's everyday and technical topics
_VERBS = [
    "We discussed",
    "Let me explain",
    "Here is an update on",
    "I have a question about",
    "Thanks for the notes on",
]
_DETAILS = [
    "the meeting is on Thursday at 3pm",
    "it needs about 40 minutes",
    "we should compare two options first",
    "the draft has 12 pages",
    "Alice will review it tomorrow",
    "there were 7 open items",
    "the cost was 230 euros",
    "it depends on the weather",
    "I prefer the second approach",
    "version 2 fixed the issue",
]


def distractor_conversation(count: int, seed: int = 7) -> list[dict]:
    """A deterministic conversation of ``count`` messages on varied everyday topics."""
    rng = random.Random(seed)
    messages = []
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"{rng.choice(_VERBS)} {rng.choice(_SUBJECTS)}: {rng.choice(_DETAILS)}, and {rng.choice(_DETAILS)}."
        messages.append(text_message(role, text))
    return messages


REFERENCE = "BK-7731-QZ"
PLANTED_TURN = f"My booking reference is {REFERENCE}. Please keep it out of any summary but remember it exactly."
TOPIC_TURNS = [
    f"Question {i}: how do {a} and {b} compare for {c}?"
    for i, (a, b, c) in enumerate(
        [
            ("hash tables", "binary search trees", "lookups"),
            ("linked lists", "arrays", "insertion"),
            ("heaps", "sorted arrays", "priority queues"),
            ("tries", "hash sets", "prefix search"),
            ("B-trees", "red-black trees", "disk storage"),
            ("quicksort", "mergesort", "stability"),
            ("BFS", "DFS", "shortest paths"),
            ("Dijkstra", "Bellman-Ford", "negative edges"),
            ("union-find", "DFS", "connectivity"),
            ("skip lists", "balanced trees", "concurrency"),
            ("bloom filters", "hash sets", "memory use"),
            ("dynamic programming", "memoized recursion", "knapsack"),
        ]
    )
]


def make_agent(model, manager, hook=None, **kwargs):
    from strands import Agent

    hooks = [hook] if hook is not None else []
    return Agent(model=model, conversation_manager=manager, hooks=hooks, callback_handler=None, **kwargs)


# ------------------------------------------------------------------ stores: one behavioural suite, two stores

STORES = ["in_memory", "pgvector"]


@pytest.fixture(scope="session")
def pg_uri(tmp_path_factory):
    """A real PostgreSQL with pgvector, started from the pgserver package for this test session."""
    try:
        import pgserver
    except ImportError as error:
        pytest.skip(f"pgserver is not installed ({error}); pip install 'strands-semantic-memory[test]'")
    try:
        server = pgserver.get_server(str(tmp_path_factory.mktemp("pgdata")), cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    except Exception as error:  # pragma: no cover - depends on the machine
        pytest.skip(f"PostgreSQL with pgvector could not start here: {error}")
    yield server.get_uri()
    del server


_namespace_counter = iter(range(10**9))


def new_namespace(prefix: str = "test") -> str:
    import os

    return f"{prefix}-{os.getpid()}-{next(_namespace_counter)}"


def store_for(kind: str, request):
    if kind == "in_memory":
        return None
    from strands_semantic_memory.stores.pgvector_store import PgVectorStore

    return PgVectorStore(request.getfixturevalue("pg_uri"), new_namespace())


@pytest.fixture(params=STORES)
def store_kind(request):
    return request.param


@pytest.fixture
def make_memory(store_kind, request, embedder):
    """Build a SemanticMemory on the parametrized store (``embedder=`` defaults to the bundled model)."""

    def make(**kwargs):
        kwargs.setdefault("embedder", embedder)
        if "store" not in kwargs:
            kwargs["store"] = store_for(store_kind, request)
        return SemanticMemory(**kwargs)

    return make


@pytest.fixture
def memory(make_memory) -> SemanticMemory:
    return make_memory()
