"""A search sees every write made before it (issue 39.7), without write work on the read path (issue 36).

With background embedding a search embeds the few newest pending messages itself (at most
``QUERY_TIME_LIMIT``) and scores them as if their vectors were stored; their vectors go to the embedding thread,
which stores them without embedding them again. Beyond the bound the search does not wait: it says how many it
matched by their words only. Real model throughout: the embedders are the bundled model wrapped to record, hold
the embedding thread, or fail (not mocks); the archive is the real in-process one, recording who writes to it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives import InMemoryArchive
from strands_semantic_memory.embeddings import Vectors
from tests.support.conversations import text_message
from tests.support.embedders import EMBEDDING_THREAD, RecordingEmbedder

SISTER = "My sister Ana is moving to Porto in March."
SIBLING = "Where is my sibling relocating?"  # shares no word with SISTER
RECITAL = "Maya's violin recital is on Friday at 6 pm in the school hall."
PERFORMANCE = "When is the kid's music performance?"  # shares no word with RECITAL
BOUND = 32  # QUERY_TIME_LIMIT, as the docs state it


class WriteRecordingArchive(InMemoryArchive):
    """The real in-process archive; records the thread of every vector write."""

    def __init__(self) -> None:
        super().__init__()
        self.vector_writers: list[str] = []

    def set_vectors(self, vectors: Mapping[int, Vectors]) -> int:
        self.vector_writers.append(threading.current_thread().name)
        return super().set_vectors(vectors)


def _until(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def test_a_search_in_background_mode_stores_nothing_and_what_it_embeds_is_not_embedded_again(embedder):
    held = RecordingEmbedder(embedder, hold=True)
    archive = WriteRecordingArchive()
    memory = SemanticMemory(embedder=held, archive=archive, embedding="background")
    memory.add([text_message("user", "the first note, which the embedding thread holds")])
    assert held.started.wait(60), "the thread holds the first batch"
    memory.add([text_message("user", SISTER)])  # pending, not claimed by the held thread
    try:
        hits = memory.search(SIBLING, top_k=1)
        assert [h.index for h in hits] == [1] and hits[0].similarity is not None, "found by meaning at once"
        assert archive.vector_writers == [], "the search stored no vector"
        assert memory.stats().vector_count == 0
    finally:
        held.release.set()
    _until(lambda: memory.stats().pending_embedding_count == 0)  # the thread stores both, no embed_pending
    assert set(archive.vector_writers) == {EMBEDDING_THREAD}, "only the thread writes vectors"
    assert held.embedded_by(SISTER) == ["MainThread"], "the search's vectors were stored, not computed again"
    assert memory.search(SIBLING, top_k=1)[0].index == 1
    memory.close()


def test_two_writes_then_an_immediate_search_find_the_one_that_only_meaning_matches(embedder):
    """Issue 39.7's reproduction on the engine: two texts written, then a search that only their meaning matches."""
    held = RecordingEmbedder(embedder, hold=True)
    memory = SemanticMemory(embedder=held, embedding="background")
    try:
        memory.add([text_message("user", RECITAL)])
        memory.add([text_message("user", "Buy oat milk, eggs and two lemons.")])
        hits = memory.search(PERFORMANCE, top_k=1, min_score=0.3)
        assert [h.message["content"][0]["text"] for h in hits] == [RECITAL]
        assert memory.stats().unembedded_at_last_search == 0, "every pending message was scored by meaning"
    finally:
        held.release.set()
    memory.close()


def test_beyond_the_bound_a_search_scores_the_newest_and_says_how_many_it_matched_by_words_only(embedder, caplog):
    held = RecordingEmbedder(embedder, hold=True)
    memory = SemanticMemory(embedder=held, embedding="background")
    memory.add([text_message("user", SISTER)])  # index 0, the oldest: held by the thread
    assert held.started.wait(60)
    memory.add([text_message("user", f"note {i}: the garden rota for week {i}") for i in range(1, 39)])
    memory.add([text_message("user", RECITAL)])  # index 39, the newest
    try:
        with caplog.at_level(logging.INFO, logger="strands_semantic_memory"):
            hits = memory.search(PERFORMANCE, top_k=1)
            assert hits[0].index == 39 and hits[0].similarity is not None, "the newest pending are scored"
            assert memory.stats().unembedded_at_last_search == 40 - BOUND
            memory.configure(retrieval="dense")
            assert 0 not in [h.index for h in memory.search(SIBLING, top_k=5)], "dense: the oldest has no vector"
            memory.configure(retrieval="hybrid")
            # min_score applies to what was scored; a message matched by its words only passes, as a stored
            # message without a vector does
            assert [h.index for h in memory.search("Porto Friday", top_k=5, min_score=0.95)] == [0]
        told = [r for r in caplog.records if "newest pending" in r.getMessage()]
        assert len(told) == 1 and told[0].levelno == logging.INFO, "said once, not on every search"
    finally:
        held.release.set()
    assert memory.embed_pending() >= 0 and memory.stats().pending_embedding_count == 0
    assert memory.search(SIBLING, top_k=1)[0].index == 0
    assert memory.stats().unembedded_at_last_search == 0
    memory.close()


class DocumentOutage(RecordingEmbedder):
    """The real model whose document embedding can be switched off (queries still work)."""

    def __init__(self, inner) -> None:
        super().__init__(inner, hold=True)
        self.documents_down = False

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.documents_down and threading.current_thread().name != EMBEDDING_THREAD:
            self.calls.append((threading.current_thread().name, list(texts)))
            raise ConnectionError("embedding service unavailable")
        return super().embed_documents(texts)


def test_a_failing_embedder_at_query_time_leaves_the_search_lexical_for_pending_messages(embedder, caplog):
    outage = DocumentOutage(embedder)
    memory = SemanticMemory(embedder=outage, embedding="background", embedding_retry_interval=3600)
    memory.add([text_message("user", "the first note, which the embedding thread holds")])
    assert outage.started.wait(60)
    memory.add([text_message("user", SISTER)])
    outage.documents_down = True
    try:
        with caplog.at_level(logging.WARNING, logger="strands_semantic_memory"):
            hits = memory.search("Ana Porto", top_k=1)
            assert [h.index for h in hits] == [1] and hits[0].similarity is None, "found by its words"
            assert memory.stats().unembedded_at_last_search == 2
            calls = len(outage.calls)
            memory.search("Ana Porto March", top_k=1)
            assert len(outage.calls) == calls, "no second failing call within the retry interval"
        assert len([r for r in caplog.records if "pending messages" in r.getMessage()]) == 1
    finally:
        outage.documents_down = False
        outage.release.set()
    assert memory.embed_pending() >= 1 and memory.stats().pending_embedding_count == 0
    memory.close()


@pytest.mark.parametrize("retrieval", ["hybrid", "dense"])
def test_an_inline_memory_still_embeds_before_archive_returns(embedder, retrieval):
    recording = RecordingEmbedder(embedder)
    memory = SemanticMemory(embedder=recording, retrieval=retrieval)
    memory.add([text_message("user", SISTER)])
    assert memory.stats().pending_embedding_count == 0
    assert memory.search(SIBLING, top_k=1)[0].index == 0
    assert recording.embedded_by(SISTER) == ["MainThread"]
