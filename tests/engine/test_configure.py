"""configure(): every option takes effect on the next call, and the running parts keep their state.

Real model throughout: the embedders are the bundled model wrapped to count calls, fail, or pause (not mocks).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from strands_semantic_memory import MemoryOptions, SemanticMemory
from strands_semantic_memory.embeddings import Vectors
from strands_semantic_memory.errors import ConfigurationError
from tests.support.conversations import distractor_conversation, text_message
from tests.support.embedders import CountingEmbedder, FlakyEmbedder


class PausingEmbedder(CountingEmbedder):
    """The real model, whose document embedding waits for ``release`` once ``started`` is set (a slow service)."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.started = threading.Event()
        self.release = threading.Event()
        self.batches: list[int] = []

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(len(texts))
        self.started.set()
        assert self.release.wait(15), "the test never released the embedder"
        return super().embed_documents(texts)


def test_a_smaller_embedding_batch_size_splits_the_next_archive(make_memory, counting_embedder):
    memory = make_memory(embedder=counting_embedder)
    memory.configure(embedding_batch_size=1)
    memory.add([text_message("user", f"note {i} about the garden") for i in range(3)])
    assert (counting_embedder.document_calls, counting_embedder.documents_embedded) == (3, 3)
    assert memory.stats().pending_embedding_count == 0
    memory.configure(embedding_batch_size=2)
    memory.add([text_message("user", f"more {i} about the garden") for i in range(3)])
    assert (counting_embedder.document_calls, counting_embedder.documents_embedded) == (5, 6)


def test_a_changed_retry_interval_is_honoured_by_the_next_automatic_run(make_memory, embedder):
    flaky = FlakyEmbedder(embedder)
    memory = make_memory(embedder=flaky, embedding_retry_interval=3600)
    flaky.failing = True
    memory.add([text_message("user", "the wifi password is hunter2-blue")])
    flaky.failing = False
    memory.add([text_message("user", "second")])
    assert flaky.document_calls == 0, "within the hour after a failure nothing is retried automatically"
    memory.configure(embedding_retry_interval=0)
    memory.add([text_message("user", "third")])
    assert flaky.document_calls == 1 and memory.stats().pending_embedding_count == 0
    flaky.failing = True
    memory.add([text_message("user", "fourth")])
    memory.configure(embedding_retry_interval=3600)
    flaky.failing = False
    memory.add([text_message("user", "fifth")])
    assert flaky.document_calls == 1 and memory.stats().pending_embedding_count == 2
    assert memory.embed_pending() == 2


def test_shrinking_the_query_cache_evicts_the_least_recent(embedder):
    counting = CountingEmbedder(embedder)
    memory = SemanticMemory(embedder=counting, query_cache_size=3)
    memory.add(distractor_conversation(5))
    for query in ("budget", "chess", "garden"):
        memory.search(query)
    assert counting.query_calls == 3
    memory.configure(query_cache_size=1)
    memory.search("garden")
    assert counting.query_calls == 3, "the most recent query stays cached"
    memory.search("budget")
    assert counting.query_calls == 4, "older queries were evicted by the shrink"
    memory.configure(query_cache_size=0)
    memory.search("budget")
    memory.search("budget")
    assert counting.query_calls == 6, "a size of 0 disables the cache"
    memory.configure(query_cache_size=2)
    memory.search("chess")
    memory.search("chess")
    assert counting.query_calls == 7
    assert memory.stats().query_cache_hits == 2


def test_configure_during_an_embedding_run_keeps_its_claims(embedder):
    """Vectors being computed while the chunking changes are stored once; nobody embeds those messages twice, and
    ``embed_pending`` returns only once the run in flight has stored them."""
    pausing = PausingEmbedder(embedder)
    memory = SemanticMemory(embedder=pausing)
    messages = [text_message("user", f"note {i} about the garden") for i in range(4)]
    archiving = threading.Thread(target=memory.add, args=(messages,))
    pending_after: list[int] = []
    waiting = threading.Thread(target=lambda: [memory.embed_pending(), pending_after.append(_pending(memory))])
    archiving.start()
    try:
        assert pausing.started.wait(60)
        memory.configure(chunk_chars=500, embedding_batch_size=2)
        waiting.start()  # the messages are claimed by the run in flight: it waits for that run
    finally:
        pausing.release.set()
        archiving.join(60)
        waiting.join(60)
    assert pending_after == [0]
    assert pausing.batches == [4] and pausing.documents_embedded == 4
    assert memory.stats().pending_embedding_count == 0 and memory.stats().vector_count == 4
    assert [h.index for h in memory.search("note 2 about the garden", top_k=1)] == [2]


def test_options_are_read_from_options_and_an_option_set_as_an_attribute_is_refused(embedder):
    memory = SemanticMemory(embedder=embedder, top_k=4)
    assert memory.options.top_k == 4
    with pytest.raises(AttributeError):
        memory.top_k  # noqa: B018 - options are not attributes of the memory
    with pytest.raises(AttributeError, match=r"configure\(top_k=\.\.\.\)"):
        memory.top_k = 5
    assert memory.options.top_k == 4, "the refused assignment changed nothing"
    memory.configure(top_k=5)
    assert memory.options.top_k == 5


def test_configure_names_an_unknown_option(embedder):
    memory = SemanticMemory(embedder=embedder)
    version = memory.version
    with pytest.raises(ConfigurationError, match="top_kk"):
        memory.configure(top_kk=3)  # type: ignore[call-arg]
    assert memory.version == version and memory.options.top_k == 3


def test_the_typed_option_bags_name_exactly_the_options():
    """``OptionChanges`` (what configure takes) is every ``MemoryOptions`` field; ``MemoryTunables`` the fields the
    constructor takes as further keywords; ``MemoryArguments`` every keyword of the constructor."""
    import inspect

    from strands_semantic_memory.engine import MemoryArguments, MemoryTunables, OptionChanges

    fields = MemoryOptions.names()
    named = {
        name
        for name, parameter in inspect.signature(SemanticMemory.__init__).parameters.items()
        if name != "self" and parameter.kind is not inspect.Parameter.VAR_KEYWORD
    }
    assert set(OptionChanges.__optional_keys__) == fields
    assert set(MemoryTunables.__optional_keys__) == fields - named
    assert set(MemoryArguments.__optional_keys__) == named | fields


def _pending(memory: SemanticMemory) -> int:
    return memory.stats().pending_embedding_count
