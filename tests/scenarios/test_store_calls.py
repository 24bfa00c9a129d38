"""How many store calls one hook-style retrieval makes (one hook turn is one or two transactions).

The store is a real :class:`InMemoryArchive`, wrapped in a proxy that only counts the calls it forwards. A search
is one ``candidates`` call that also answers the neighbours the ranking scores (a ``ContextRequest``); the passages'
records are one ``get``. A store that leaves that request unanswered (``UnservingStore``) still gives the same
results, through ``similarities`` and ``get``.
"""

from collections import Counter

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives import InMemoryArchive
from tests.support.scores import SCORE_TOLERANCE


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
    memory = SemanticMemory(embedder=embedder, archive=store, top_k=2, context_radius=1)
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": t}]} for i, t in enumerate(TOPICS)]
    memory.add(messages * 3)  # 18 messages: the passages must be widened and merged from several hits
    memory.embed_pending()
    return memory, store


class UnservingStore(CountingStore):
    """A store that takes the ``context`` request and leaves it unanswered, as the protocol allows."""

    def candidates(self, vector, query, dense_k, lexical_k, search_filter=None, *, context=None):
        self.calls["candidates"] += 1
        return self._store.candidates(vector, query, dense_k, lexical_k, search_filter)


@pytest.mark.parametrize("roles", [None, ["user"]])
@pytest.mark.parametrize("retrieval", ["hybrid", "dense", "lexical"])
def test_retrieve_reads_the_records_in_one_get(counted, retrieval, roles):
    memory, store = counted
    memory.configure(retrieval=retrieval)
    store.calls.clear()
    passages = memory.retrieve("what is the locker code?", roles=roles)
    assert passages and any("4471" in str(w.messages) for w in passages)
    assert store.calls["get"] == 1, store.calls
    assert store.calls["candidates"] == 1, store.calls
    assert store.calls["similarities"] == 0, store.calls  # the neighbours came with the candidates
    for passage in passages:  # the passages hold exactly the live messages of their ranges
        assert passage.indices == list(range(passage.start, passage.end + 1))
        assert passage.messages == [memory.get(i) for i in passage.indices]


def test_retrieve_matches_search_after_the_single_read(counted):
    memory, store = counted
    hits = memory.search("who reviews the migration plan?", top_k=2)
    passages = memory.retrieve("who reviews the migration plan?", top_k=2, context_radius=1)
    assert sorted(i for w in passages for i in w.hit_indices) == sorted(h.index for h in hits)
    for passage in passages:
        scores = {h.index: h.score for h in hits}
        # Two searches: a hit's similarity may come from FAISS on one and from the einsum of the neighbours on the
        # other (a candidate of one depth is a neighbour at another), equal up to float32 rounding.
        assert passage.hit_scores == pytest.approx([scores[i] for i in passage.hit_indices], rel=0, abs=SCORE_TOLERANCE)


def test_archive_does_not_count_the_store(counted):
    memory, store = counted
    store.calls.clear()
    version = memory.version
    kites = {"role": "user", "content": [{"text": "a brand new message about kites"}], "tracking_id": "kites-1"}
    first = memory.add([kites])
    assert store.calls["__len__"] == 0 and store.calls["bounds"] == 0, store.calls
    assert memory.version > version
    version = memory.version
    assert memory.add([kites]) == first  # the same message again: its index, and no change
    assert memory.version == version  # nothing was added: nothing changed
    assert store.calls["__len__"] == 0, store.calls


QUESTIONS = [
    "what is the locker code?",
    "who reviews the migration plan?",
    "when is the standup?",
    "toner for the printer",
    "backup of the staging database",
]


@pytest.mark.parametrize("roles", [None, ["assistant"]])
@pytest.mark.parametrize("retrieval", ["hybrid", "dense", "lexical"])
def test_a_store_that_leaves_the_context_request_unanswered_gives_the_same_results(embedder, retrieval, roles):
    archive = InMemoryArchive()
    serving, unserving = CountingStore(archive), UnservingStore(archive)
    memories = [
        SemanticMemory(embedder=embedder, archive=s, top_k=3, retrieval=retrieval) for s in (serving, unserving)
    ]
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": t}]} for i, t in enumerate(TOPICS)]
    memories[0].add(messages * 4)
    memories[0].embed_pending()
    found = 0
    for question in QUESTIONS:
        ours, theirs = (m.retrieve(question, roles=roles) for m in memories)
        found += bool(ours)
        assert [(w.start, w.end, w.hit_indices, w.hit_scores) for w in ours] == [
            (w.start, w.end, w.hit_indices, w.hit_scores) for w in theirs
        ]
        assert [(h.index, h.score) for h in memories[0].search(question, top_k=5, roles=roles)] == [
            (h.index, h.score) for h in memories[1].search(question, top_k=5, roles=roles)
        ]
    assert found >= 3
    assert serving.calls["similarities"] == 0, serving.calls
    # The unserving store is asked for the neighbours separately: similarities with a query vector, records without.
    assert unserving.calls["similarities" if retrieval != "lexical" else "get"] > len(QUESTIONS), unserving.calls


def test_neighbours_forgotten_after_archiving_are_not_ranked(counted):
    memory, store = counted
    best = memory.search("what is the locker code?", top_k=1)[0].index
    memory.forget([i for i in range(best - 3, best + 4) if i != best and i >= 0])  # its whole neighbourhood
    live = set(store._store.get(list(range(18))))
    store.calls.clear()
    found = memory.search("what is the locker code?", top_k=18)
    assert found and best in {h.index for h in found}
    assert {h.index for h in found} <= live
    assert store.calls["similarities"] == 0 and store.calls["get"] == 1, store.calls
