"""How many store calls one hook-style retrieval makes (issue 15: one hook turn is one or two transactions).

The store is a real :class:`InMemoryArchive`, wrapped in a proxy that only counts the calls it forwards.
"""

from collections import Counter

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.stores import InMemoryArchive


class CountingStore:
    """Forwards every call to a real store and counts the calls by method name."""

    def __init__(self, store):
        self._store = store
        self.calls = Counter()

    def __len__(self):
        self.calls["__len__"] += 1
        return len(self._store)

    def __getattr__(self, name):
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute

        def counted(*args, **kwargs):
            self.calls[name] += 1
            return attribute(*args, **kwargs)

        return counted


TOPICS = [
    "the invoice for the Lisbon office is due on Friday",
    "we moved the standup to half past nine",
    "my locker code is 4471, please keep it",
    "the printer on floor two is out of toner",
    "Dana will review the migration plan tomorrow",
    "the staging database was restored from last night's backup",
]


@pytest.fixture
def counted(embedder):
    store = CountingStore(InMemoryArchive())
    memory = SemanticMemory(embedder=embedder, store=store, top_k=2, context_radius=1)
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": t}]} for i, t in enumerate(TOPICS)]
    memory.archive(messages * 3)  # 18 messages: the windows must be widened and merged from several hits
    memory.embed_pending()
    return memory, store


@pytest.mark.parametrize("retrieval", ["hybrid", "dense", "lexical"])
def test_retrieve_reads_the_records_in_one_get(counted, retrieval):
    memory, store = counted
    memory.configure(retrieval=retrieval)
    store.calls.clear()
    windows = memory.retrieve("what is the locker code?")
    assert windows and any("4471" in str(w.messages) for w in windows)
    assert store.calls["get"] == 1, store.calls
    assert store.calls["candidates"] == 1, store.calls
    for window in windows:  # the windows hold exactly the live messages of their ranges
        assert window.indices == list(range(window.start, window.end + 1))
        assert window.messages == [memory.get(i) for i in window.indices]


def test_retrieve_matches_search_after_the_single_read(counted):
    memory, store = counted
    hits = memory.search("who reviews the migration plan?", top_k=2)
    windows = memory.retrieve("who reviews the migration plan?", top_k=2, context_radius=1)
    assert sorted(i for w in windows for i in w.hit_indices) == sorted(h.index for h in hits)
    for window in windows:
        scores = {h.index: h.score for h in hits}
        assert window.hit_scores == [scores[i] for i in window.hit_indices]


def test_archive_does_not_count_the_store(counted):
    memory, store = counted
    store.calls.clear()
    version = memory.version
    kites = {"role": "user", "content": [{"text": "a brand new message about kites"}], "tracking_id": "kites-1"}
    first = memory.archive([kites])
    assert store.calls["__len__"] == 0 and store.calls["bounds"] == 0, store.calls
    assert memory.version > version
    version = memory.version
    assert memory.archive([kites]) == first  # the same message again: its index, and no change
    assert memory.version == version  # nothing was added: nothing changed
    assert store.calls["__len__"] == 0, store.calls
