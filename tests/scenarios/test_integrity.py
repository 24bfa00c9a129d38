"""The engine's guarantees: any text archives, failures stay contained, exactly once, atomic restore."""

from __future__ import annotations

import json
import threading

import pytest

from strands_semantic_memory import SemanticMemory, SemanticMemoryError
from strands_semantic_memory.archives import InMemoryArchive
from strands_semantic_memory.errors import (
    ArchiveError,
    EmbeddingError,
    InvalidMessageError,
    InvalidMessageTypeError,
    StateError,
)
from tests.support.archives import restored as restored_memory
from tests.support.conversations import distractor_conversation, text_message
from tests.support.embedders import CountingEmbedder, FlakyEmbedder

HOSTILE = [
    text_message("user", "before\x00after NUL"),
    {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "x\ud800y"}]}}],
    },
    text_message("assistant", "token " + "ab" * 1600 + " end"),  # one 3.2 KB token (PostgreSQL's limit is 2,046 bytes)
    text_message("user", "ending in a lone low surrogate \udfff"),
    text_message("assistant", "é中文 mixed 🎉 text"),
]


class PoisonEmbedder(CountingEmbedder):
    """The real model, except that it rejects any batch holding a text with POISON in it (like a service's 400)."""

    def embed_documents(self, texts):
        if any("POISON" in t for t in texts):
            raise ValueError("the service rejected one input")
        return super().embed_documents(texts)


def test_any_text_archives_byte_for_byte_on_every_store(make_memory):
    memory = make_memory()
    big = text_message("user", "five megabytes " + "lorem ipsum dolor " * 290_000)
    messages = [*HOSTILE, big]
    indices = memory.add(messages)
    assert indices == list(range(len(messages)))
    for index, message in zip(indices, messages):
        assert memory.get(index) == message
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == 0
    assert memory.search("lone low surrogate", top_k=1)[0].index == 3
    restored = restored_memory(memory)
    assert [m for _, m in restored.messages()] == messages


def test_one_rejected_text_leaves_only_that_message_pending(embedder):
    poison = PoisonEmbedder(embedder)
    memory = SemanticMemory(embedder=poison)
    messages = distractor_conversation(16)
    messages[9] = text_message("user", "this one carries POISON for the embedding service")
    memory.add(messages)
    stats = memory.get_memory_usage_stats()
    assert stats["pending_embedding_count"] == 1
    assert stats["vector_count"] == 15
    assert "ValueError" in stats["last_embedding_error"]
    assert memory.search(messages[3]["content"][0]["text"], top_k=1)[0].index == 3
    assert memory.search("POISON embedding service", top_k=1)[0].index == 9  # still found lexically


def test_archive_honours_the_retry_interval(embedder):
    flaky = FlakyEmbedder(embedder)
    memory = SemanticMemory(embedder=flaky, embedding_retry_interval=3600)
    flaky.failing = True
    memory.add([text_message("user", "first while the service is down")])
    calls = flaky.document_calls
    for n in range(5):
        memory.add([text_message("user", f"message {n} during the outage")])
    assert flaky.document_calls == calls, "no resend of the backlog within the retry interval"
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == 6
    flaky.failing = False
    assert memory.embed_pending() == 6  # an explicit call ignores the interval
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == 0


def test_embedder_failures_surface_as_embedding_error_with_the_cause(embedder):
    flaky = FlakyEmbedder(embedder)
    flaky.failing = True
    memory = SemanticMemory(embedder=flaky, retrieval="dense")
    memory.add([text_message("user", "kept although the service is down")])
    with pytest.raises(EmbeddingError) as raised:
        memory.embed_pending()
    assert isinstance(raised.value.__cause__, ConnectionError)
    with pytest.raises(EmbeddingError) as raised:
        memory.search("service")
    assert isinstance(raised.value.__cause__, ConnectionError)


def test_input_errors_are_library_errors_and_the_stdlib_type(embedder):
    memory = SemanticMemory(embedder=embedder)
    with pytest.raises(InvalidMessageTypeError) as raised:
        memory.add(text_message("user", "a dict, not a list"))  # type: ignore[arg-type]
    assert isinstance(raised.value, TypeError) and isinstance(raised.value, SemanticMemoryError)
    with pytest.raises(InvalidMessageError) as raised:
        memory.add([text_message("user", "fine"), {"role": "user", "content": "not a list"}])
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, SemanticMemoryError)
    assert len(memory) == 0, "nothing archived when one message is invalid"


class FailingVectorsArchive(InMemoryArchive):
    """The real in-process archive, whose vector write fails once after the records were committed."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_next = True

    def set_vectors(self, vectors):
        if self.fail_next:
            self.fail_next = False
            raise ArchiveError("vector write failed after the commit")
        return super().set_vectors(vectors)


def test_archive_is_exactly_once(embedder):
    memory = SemanticMemory(embedder=embedder, archive=FailingVectorsArchive())
    messages = [dict(text_message("user", f"turn {i}"), tracking_id=f"id-{i}") for i in range(4)]
    assert memory.add(messages) == [0, 1, 2, 3], "committed, so add() does not raise"
    assert memory.add(messages) == [0, 1, 2, 3], "a retry does not archive twice"
    assert len(memory) == 4
    reused = dict(text_message("user", "different words, same id"), tracking_id="id-0")
    assert memory.add([reused]) == [4], "a different message reusing a tracking id is archived too"
    twice = text_message("user", "ok")
    assert memory.add([twice, twice]) == [5, 6], "without tracking ids equal texts are distinct messages"
    assert memory.embed_pending() == 0 or len(memory) == 7
    assert memory.get_memory_usage_stats()["pending_embedding_count"] == 0


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda s: s.update(next_index=-1),
        lambda s: s.update(next_index=1 << 60),
        lambda s: s["records"][3].update(vectors=9),
        lambda s: s["records"][5].update(index=2),
        lambda s: s["records"][1].update(message={"role": "user", "content": "text"}),
        lambda s: s.update(evicted_count=-4),
        lambda s: s["records"][0].update(archived_at="yesterday"),
    ],
)
def test_a_bad_state_leaves_the_live_memory_exactly_as_it_was(embedder, corrupt):
    live = SemanticMemory(embedder=embedder)
    live.add(distractor_conversation(12))
    before = (live.messages(), live.search("budget", top_k=5), live.get_memory_usage_stats()["total_memory"])
    other = SemanticMemory(embedder=embedder)
    other.add(distractor_conversation(20, seed=3))
    state = json.loads(json.dumps(other.to_state()))
    corrupt(state)
    with pytest.raises(StateError):
        live.load_state(state)
    assert (live.messages(), live.search("budget", top_k=5), live.get_memory_usage_stats()["total_memory"]) == before


def test_deep_nesting_is_a_state_error(embedder):
    memory = SemanticMemory(embedder=embedder)
    memory.add([text_message("user", "x")])
    state = json.loads(json.dumps(memory.to_state()))
    nested: dict = {"text": "deep"}
    for _ in range(100_000):
        nested = {"json": nested}
    state["records"][0]["message"]["content"] = [{"toolResult": {"content": [nested]}}]
    with pytest.raises(StateError):
        memory.load_state(state)
    assert memory.get(0) == text_message("user", "x")


class GatedEmbedder(CountingEmbedder):
    """The real model, made to wait inside embed_documents until released (to interleave a restore)."""

    def __init__(self, inner):
        super().__init__(inner)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.gate = False

    def embed_documents(self, texts):
        if self.gate:
            self.entered.set()
            self.release.wait(30)
        return super().embed_documents(texts)


def test_a_restore_during_embedding_never_gets_a_stale_vector(embedder):
    saved = SemanticMemory(embedder=embedder)
    saved.add([text_message("user", "the restored archive talks about sailing boats")])
    state = saved.to_state()
    gated = GatedEmbedder(embedder)
    memory = SemanticMemory(embedder=gated)
    gated.gate = True
    worker = threading.Thread(target=memory.add, args=([text_message("user", "quantum chromodynamics lecture")],))
    worker.start()
    assert gated.entered.wait(30)
    memory.load_state(state)  # index 0 now belongs to another message
    gated.release.set()
    worker.join(30)
    hit = memory.search("sailing boats", top_k=1)[0]
    assert hit.index == 0 and hit.similarity is not None and hit.similarity > 0.5
    assert memory.get_memory_usage_stats()["vector_count"] == 1
