"""The Archive contract (``archives._protocol``), one suite run against every archive: SQLite in process, SQLite on
a file and PostgreSQL. Vectors are random unit rows where meaning is not the point, the real model where it is."""

from __future__ import annotations

import threading
import uuid

import numpy as np
import pytest

from strands_semantic_memory.archives import Scope, SqliteArchive
from strands_semantic_memory.errors import DimensionMismatchError, EmbeddingModelMismatchError, StateError
from strands_semantic_memory.messages._terms import tokenize
from tests.support.records import DIM, copy_of, record, unit


@pytest.fixture(params=["memory", "file", "postgres"])
def make(request, tmp_path):
    """A factory of archives of one kind: ``make("alice")``; the same name in one test is the same user."""
    suffix = uuid.uuid4().hex[:8]
    made = []

    def make(user: str = "alice"):
        if request.param == "memory":
            archive = SqliteArchive(user_id=user)
        elif request.param == "file":
            archive = SqliteArchive(tmp_path / f"{user}.db", user_id=user)
        else:
            from strands_semantic_memory.archives import PostgresArchive

            archive = PostgresArchive(request.getfixturevalue("pg_uri"), f"{user}-{suffix}")
        made.append(archive)
        return archive

    yield make
    for archive in made:
        archive.close()


def test_keys_are_idempotent_and_indices_are_never_reused(make):
    archive = make()
    first = [record(f"message {n}") for n in range(3)]
    assert archive.add(first) == [0, 1, 2]
    new = record("a new one")
    assert archive.add([first[1], new, new, first[1]]) == [1, 3, 3, 1]
    assert archive.forget([3]) == 1
    assert archive.add([record("after forget")]) == [4]
    assert archive.evict(1, None) == 3 and archive.add([record("after evict")]) == [5]
    assert archive.forget_all() == 2 and archive.add([record("after forget_all")]) == [6]
    assert archive.add(first[:1]) == [7], "an evicted message is not remembered: it may come back"
    assert archive.stats().next_index == 8 and archive.add([]) == []


def test_forgotten_copies_are_refused_evicted_ones_are_not(make):
    archive = make()
    x, y, z = record("the door code is 4711"), record("lunch at noon"), record("call the bank")
    assert archive.add([x, y, z]) == [0, 1, 2]
    archive.forget([0])
    archive.evict(1, None)  # y goes, unremembered
    assert archive.add([copy_of(x), copy_of(y)]) == [None, 3]
    archive.forget_all()
    assert archive.add([copy_of(z), copy_of(y), copy_of(x)]) == [None, None, None]
    assert archive.stats().count == 0


def sample(archive):
    """Six messages over sessions s1, s2 and none, two roles and three times, each with one or two chunk vectors."""
    rng = np.random.default_rng(7)
    specs = [("s1", "user", 10.0), ("s1", "assistant", 20.0), ("s2", "user", 30.0), (None, "user", 40.0),
             ("s2", "assistant", 50.0), (None, "assistant", 60.0)]  # fmt: skip
    texts = ["ferry to the harbour", "the harbour is closed", "harbour ferry timetable", "a quiet evening",
             "ferry tickets sold out", "nothing to report"]  # fmt: skip
    records = [record(t, session=s, role=r, said_at=when) for t, (s, r, when) in zip(texts, specs)]
    assert archive.add(records) == list(range(6))
    vectors = {i: unit(rng.normal(size=(1 + i % 2, DIM))) for i in range(6)}
    archive.bind("test-model", DIM)
    archive.set_vectors(vectors)
    return records, vectors


SCOPES = [
    Scope(),
    Scope(sessions=frozenset({"s1"})),
    Scope(sessions=frozenset({"s2", None})),
    Scope(roles=frozenset({"assistant"})),
    Scope(since=25.0, until=55.0),
    Scope(exclude=frozenset({0, 2})),
    Scope(sessions=frozenset({"s1", "s2"}), roles=frozenset({"user"}), exclude=frozenset({0})),
]


@pytest.mark.parametrize("scope", SCOPES, ids=range(len(SCOPES)))
def test_candidates_are_the_best_hits_the_scope_admits(make, scope):
    archive = make()
    records, vectors = sample(archive)
    stored = {r.index: r for r in archive.get(range(6))}
    admitted = {i for i, r in stored.items() if scope.hit(r)}
    query = unit(np.random.default_rng(1).normal(size=DIM))[0]
    best = {i: float((vectors[i] @ query).max()) for i in admitted}
    found = archive.candidates(tokenize("harbour ferry"), query, 3, scope)
    expected = sorted(best, key=lambda i: -best[i])[:3]
    assert list(found.dense) == expected
    assert [found.dense[i] for i in expected] == pytest.approx([best[i] for i in expected], abs=1e-5)
    matching = {i for i in admitted if {"harbour", "ferri"} & set(tokenize(records[i].text))}
    assert set(found.lexical) <= matching and len(found.lexical) == min(3, len(matching))
    if {0, 2} <= admitted:  # both terms beat one
        assert set(list(found.lexical)[:2]) == {0, 2}
    assert archive.eligible(range(-1, 9), scope) == admitted


def test_get_is_bounded_by_sessions_only(make):
    archive = make()
    sample(archive)
    assert [r.index for r in archive.get([5, 0, 3, 99, 0])] == [0, 3, 5]
    assert [r.index for r in archive.get(range(6), Scope(sessions=frozenset({"s1"})))] == [0, 1]
    assert [r.index for r in archive.get(range(6), Scope(sessions=frozenset({"s1", None})))] == [0, 1, 3, 5]
    narrow = Scope(roles=frozenset({"assistant"}), since=1e9, exclude=frozenset({0}))
    assert [r.index for r in archive.get(range(6), narrow)] == list(range(6)), "hit rules do not bound reads"
    got = archive.get([1])[0]
    assert (got.role, got.session_id, got.said_at, got.time, got.text) == (
        "assistant", "s1", 20.0, 20.0, "the harbour is closed")  # fmt: skip


def test_similarities_pending_and_vectors(make):
    archive = make()
    records, vectors = sample(archive)
    query = unit(np.arange(DIM) + 1.0)[0]
    sims = archive.similarities(query, [1, 3, 42])
    assert sims.keys() == {1, 3} and sims[1] == pytest.approx(float((vectors[1] @ query).max()), abs=1e-5)
    assert archive.add([record("waiting"), record("   ")]) == [6, 7]
    assert [r.index for r in archive.pending(10)] == [6], "a message without text has nothing to embed"
    assert archive.pending(10, exclude=[6]) == [] and archive.stats().pending == 1
    archive.forget([6])
    archive.set_vectors({6: unit(np.ones(DIM))})  # no longer live: ignored
    assert archive.similarities(query, [6]) == {}
    with pytest.raises(DimensionMismatchError):
        archive.set_vectors({7: np.ones((1, DIM + 1), dtype=np.float32)})
    with pytest.raises(EmbeddingModelMismatchError):
        archive.bind("another-model", DIM)
    with pytest.raises(DimensionMismatchError):
        archive.bind("test-model", DIM * 2)
    stats = archive.stats()
    assert (stats.model_id, stats.dimension, stats.count, stats.oldest) == ("test-model", DIM, 7, 0)
    assert stats.nbytes == sum(len(r.data) for r in records) + len(record("   ").data) + sum(
        v.size * 4 for v in vectors.values()
    )


def test_find_keys_find_text_and_records_paging(make):
    archive = make()
    records, _ = sample(archive)
    assert archive.find_keys([records[4].key, "t:missing", records[0].key]) == {records[4].key: 4, records[0].key: 0}
    assert archive.find_text("HARBOUR", None, 10) == [0, 1, 2]
    assert archive.find_text("harbour", None, 2) == [0, 1]
    assert archive.find_text("harbour", Scope(sessions=frozenset({"s2"})), 10) == [2]
    pages, after = [], -1
    while page := archive.records(after, 4):
        pages.append([r.index for r in page])
        after = page[-1].index
    assert pages == [[0, 1, 2, 3], [4, 5]]


def test_forget_and_evict_remove_everything_of_a_message(make):
    archive = make()
    records, vectors = sample(archive)
    query = vectors[2][0]
    assert archive.forget([2, 2, 77]) == 1
    found = archive.candidates(tokenize("timetable harbour"), query, 10, Scope())
    assert 2 not in found.dense and 2 not in found.lexical and archive.find_text("timetable", None, 9) == []
    sizes = {i: len(records[i].data) + vectors[i].size * 4 for i in (3, 4, 5)}
    assert archive.evict(None, sizes[4] + sizes[5] + 1) == 3, "the oldest go first until the bytes fit"
    assert [r.index for r in archive.records(-1, 10)] == [4, 5] and archive.stats().oldest == 4
    assert archive.evict(None, None) == 0 and archive.evict(5, 10**9) == 0
    assert archive.forget_all() == 2
    stats = archive.stats()
    assert (stats.count, stats.pending, stats.nbytes, stats.oldest, stats.next_index) == (0, 0, 0, None, 6)
    assert archive.candidates(["ferri"], query, 5, Scope()) == archive.candidates([], None, 5, Scope())


def test_two_users_never_see_each_other(make):
    alice, bob = make("alice"), make("bob")
    secret = record("alice's locker code is 2231")
    alice.add([secret, record("alice likes ferries")])
    bob.add([record("bob's notes on ferries")])
    alice.set_vectors({0: unit(np.ones(DIM)), 1: unit(np.arange(DIM))})
    assert bob.find_text("locker", None, 5) == [] and [r.text for r in bob.get(range(5))] == ["bob's notes on ferries"]
    found = bob.candidates(tokenize("ferries locker"), unit(np.ones(DIM))[0], 5, Scope())
    assert found.dense == {} and list(found.lexical) == [0]
    assert bob.find_keys([secret.key]) == {} and bob.stats().count == 1
    alice.forget_all()
    assert bob.add([copy_of(secret)]) == [1], "alice's forgotten digests are hers"
    assert bob.stats().count == 2 and alice.stats().count == 0


def test_any_text_round_trips_byte_for_byte(make):
    archive = make()
    token = "x" * 3000
    texts = ["nul \x00 inside", "lone \ud800 surrogate", f"one huge token {token}", "word " * 1_000_000]
    records = [record(text) for text in texts]
    assert archive.add(records) == [0, 1, 2, 3]
    for rec, text, got in zip(records, texts, archive.get(range(4))):
        assert got.data == rec.data and got.message == {"role": "user", "content": [{"text": text}]}
    assert list(archive.candidates(tokenize(token), None, 5, Scope()).lexical) == [2]
    assert list(archive.candidates(["surrog"], None, 5, Scope()).lexical) == [1]


def test_state_references_name_one_archive(make):
    archive, other = make("alice"), make("bob")
    archive.add([record("kept")])
    archive.load_state(archive.to_state())
    assert archive.stats().count == 1
    for state in (other.to_state(), {"kind": "nonsense"}):
        with pytest.raises(StateError):
            archive.load_state(state)
    assert [r.text for r in archive.get([0])] == ["kept"]


def test_threads_share_one_archive(make):
    archive = make()
    results = []

    def write(n):
        results.extend(archive.add([record(f"thread {n} message {k}") for k in range(10)]))
        archive.candidates(["thread"], None, 5, Scope())

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == list(range(40)) and archive.stats().count == 40


def test_dense_candidates_follow_meaning(make, embedder):
    archive = make()
    texts = ["The cat slept on the warm mat all afternoon.", "Quarterly revenue grew five percent.",
             "Our flight to Lisbon leaves at dawn.", "Remember to water the tomato plants."]  # fmt: skip
    archive.add([record(t) for t in texts])
    vectors = embedder.embed_documents(texts)
    archive.bind(embedder.model_id, vectors.shape[1])
    archive.set_vectors({i: vectors[i : i + 1] for i in range(4)})
    for query, expected in [("a kitten dozing on a rug", 0), ("airplane departure time", 2), ("garden chores", 3)]:
        found = archive.candidates(tokenize(query), embedder.embed_queries([query])[0], 2, Scope())
        assert next(iter(found.dense)) == expected, query


def test_candidates_never_come_back_short(make):
    """A narrow scope, or one message whose many chunks are all near, still yields ``depth`` candidates."""
    archive = make()
    rng = np.random.default_rng(3)
    query = unit(rng.normal(size=DIM))[0]
    far = (10, 20, 30)  # the only assistant messages: the farthest by vector, the weakest by words
    texts = [f"ferry {n}" if n not in far else f"ferry and {n} {'many other words ' * 20}" for n in range(60)]
    archive.add([record(text, role="assistant" if n in far else "user") for n, text in enumerate(texts)])
    vectors = {n: unit(query + rng.normal(scale=0.3, size=(1, DIM))) for n in range(60)}
    vectors.update({n: unit(-query + rng.normal(scale=0.3, size=(1, DIM))) for n in far})
    vectors[0] = unit(query + rng.normal(scale=0.01, size=(12, DIM)))  # twelve chunks, all nearest
    archive.set_vectors(vectors)
    found = archive.candidates(["ferri"], query, 3, Scope(roles=frozenset({"assistant"})))
    assert set(found.dense) == set(found.lexical) == set(far)
    found = archive.candidates(["ferri"], query, 3, Scope(exclude=frozenset(range(1, 58))))
    assert set(found.dense) == set(found.lexical) == {0, 58, 59}
    best = {n: float((v @ query).max()) for n, v in vectors.items()}
    assert list(archive.candidates([], query, 4, Scope()).dense) == sorted(best, key=lambda n: -best[n])[:4]


def test_self_statements_are_searched_apart(make):
    archive = make()
    archive.add([record("I live in Lyon and I love cycling."), record("The weather is fine."), record("ok")])
    rng = np.random.default_rng(5)
    text_vectors = {n: unit(rng.normal(size=(1, DIM))) for n in range(3)}
    said = {0: unit(rng.normal(size=(2, DIM)))}  # two statements of message 0
    archive.set_vectors(text_vectors, said)
    query = said[0][1]
    found = archive.candidates(["lyon"], query, 2, Scope(), statements=True)
    assert found.lexical == {} and list(found.dense) == [0] and found.dense[0] == pytest.approx(1.0, abs=1e-5)
    plain = archive.candidates([], query, 3, Scope()).dense
    assert plain[0] == pytest.approx(float(text_vectors[0][0] @ query), abs=1e-5), "statements stay out of it"
    assert archive.similarities(query, [0]) == pytest.approx({0: plain[0]}, abs=1e-5)
    records = archive.get(range(3))
    vector_bytes = sum(v.size for v in (*text_vectors.values(), said[0])) * 4
    assert archive.stats().nbytes == sum(len(r.data) for r in records) + vector_bytes
    archive.forget([0])
    assert archive.candidates([], query, 2, Scope(), statements=True).dense == {}
