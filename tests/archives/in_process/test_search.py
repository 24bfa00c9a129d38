"""The in-process archive's vectorized paths agree with the record-by-record ones."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_semantic_memory.archives._protocol import SearchFilter
from strands_semantic_memory.archives.in_process._records import RecordTable
from strands_semantic_memory.archives.in_process._search import _alive, _live, dense_hits, lexical_hits
from strands_semantic_memory.archives.in_process.bm25._index import LexicalIndex
from strands_semantic_memory.archives.in_process.faiss._store import FaissIndex
from strands_semantic_memory.messages._codec import CHUNK_BITS


@settings(max_examples=200, deadline=None)
@given(
    base=st.integers(0, 50),
    size=st.integers(0, 40),
    removed=st.sets(st.integers(0, 39)),
    trim=st.booleans(),
    asked=st.lists(st.integers(-5, 120), max_size=30),
)
def test_alive_matches_membership(base: int, size: int, removed: set[int], trim: bool, asked: list[int]) -> None:
    table = RecordTable(base)
    for n in range(size):
        table.append(f"m{n}".encode(), "user", None, 0.0, None, None, 1)
    for n in sorted(removed):
        if n < size:
            table.remove(base + n)
    if trim:
        table.advance_oldest()
    indices = np.asarray(asked, dtype=np.int64)
    expected = [i in table for i in asked]
    assert _alive(table, indices).tolist() == expected
    assert _live(table, indices).tolist() == [i for i, ok in zip(asked, expected, strict=True) if ok]


@settings(max_examples=60, deadline=None)
@given(
    chunks=st.lists(st.integers(1, 3), min_size=1, max_size=30),
    removed=st.sets(st.integers(0, 29)),
    k=st.integers(1, 12),
    seed=st.integers(0, 2**16),
)
def test_dense_hits_unfiltered_equal_the_per_hit_walk(chunks: list[int], removed: set[int], k: int, seed: int) -> None:
    """Each message's best chunk, best first, k of them: the vectorized path and the filtered walk agree."""
    rng = np.random.default_rng(seed)
    table, store = RecordTable(0), FaissIndex(8)
    for n, count in enumerate(chunks):
        table.append(f"m{n}".encode(), "user", None, 0.0, None, None, 1)
        vectors = rng.normal(size=(count, 8)).astype(np.float32)
        store.add(
            np.asarray([(n << CHUNK_BITS) | c for c in range(count)]),
            vectors / np.linalg.norm(vectors, axis=1)[:, None],
        )
        table.set_vector_count(n, count)
    for n in sorted(removed):
        if n < len(chunks):
            store.remove(np.asarray([(n << CHUNK_BITS) | c for c in range(chunks[n])]))
            table.remove(n)
    query = rng.normal(size=(1, 8)).astype(np.float32)
    query /= np.linalg.norm(query)
    everyone = SearchFilter(roles=frozenset({"user"}))  # not empty: takes the per-hit walk
    fast = dense_hits(table, store, query, k, None)
    walked = dense_hits(table, store, query, k, everyone)
    assert list(fast.items()) == list(walked.items())
    assert len(fast) == min(k, table.live)


_WORDS = ["apple", "river", "stone", "cloud", "amber", "seven", "lantern", "harbor"]


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6), min_size=1, max_size=30),
    removed=st.sets(st.integers(0, 29)),
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3),
    k=st.integers(1, 12),
)
def test_lexical_hits_unfiltered_equal_the_per_hit_walk(
    texts: list[list[str]], removed: set[int], query: list[str], k: int
) -> None:
    table, index = RecordTable(0), LexicalIndex()
    for n, words in enumerate(texts):
        table.append(f"m{n}".encode(), "user", None, 0.0, None, None, 1)
        index.add(n, " ".join(words))
    gone = [n for n in sorted(removed) if n < len(texts)]
    index.remove(gone)
    for n in gone:
        table.remove(n)
    everyone = SearchFilter(roles=frozenset({"user"}))
    fast = lexical_hits(table, index, " ".join(query), k, None)
    assert list(fast.items()) == list(lexical_hits(table, index, " ".join(query), k, everyone).items())
    assert not set(fast) & set(gone)
