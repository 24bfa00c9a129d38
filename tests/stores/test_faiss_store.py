import numpy as np
import pytest

from strands_semantic_memory import DimensionMismatchError, FaissVectorStore
from strands_semantic_memory.embeddings import normalize_rows


def brute_force(vectors: dict[int, np.ndarray], query: np.ndarray, k: int) -> list[int]:
    ids = sorted(vectors)
    scores = np.array([float(vectors[i] @ query[0]) for i in ids])
    order = np.argsort(-scores, kind="stable")[:k]
    return [ids[i] for i in order]


def test_matches_brute_force_after_adds_and_removes():
    rng = np.random.default_rng(0)
    store = FaissVectorStore(16, min_compact=5, compact_ratio=0.05)
    live: dict[int, np.ndarray] = {}
    next_id = 0
    for step in range(30):
        batch = normalize_rows(rng.normal(size=(7, 16)))
        ids = np.arange(next_id, next_id + 7, dtype=np.int64)
        next_id += 7
        store.add(ids, batch)
        live.update(zip(ids.tolist(), batch))
        doomed = rng.choice(sorted(live), size=3, replace=False)
        store.remove(np.array(doomed, dtype=np.int64))
        for d in doomed:
            del live[int(d)]
        query = normalize_rows(rng.normal(size=(1, 16)))
        _, found = store.search(query, 10)
        assert found.tolist() == brute_force(live, query, 10), f"step {step}"
        assert len(store) == len(live)
    exported_ids, exported = store.export()
    assert sorted(exported_ids.tolist()) == sorted(live)
    for i, v in zip(exported_ids.tolist(), exported):
        np.testing.assert_allclose(v, live[i], rtol=1e-6)


def test_removed_ids_never_come_back_before_compaction():
    store = FaissVectorStore(4, min_compact=1000)
    vectors = normalize_rows(np.eye(4))
    store.add(np.arange(4, dtype=np.int64), vectors)
    store.remove(np.array([0], dtype=np.int64))
    _, ids = store.search(vectors[:1], 4)
    assert 0 not in ids.tolist() and len(ids) == 3


def test_wrong_dimension_is_refused():
    store = FaissVectorStore(8)
    with pytest.raises(DimensionMismatchError) as info:
        store.add(np.array([1], dtype=np.int64), np.ones((1, 4), dtype=np.float32))
    assert (info.value.expected, info.value.actual) == (8, 4)


def test_search_threads_setting_is_restored_for_the_caller():
    import faiss

    store = FaissVectorStore(8, search_threads=1)
    vectors = normalize_rows(np.random.default_rng(1).normal(size=(50, 8)))
    store.add(np.arange(50, dtype=np.int64), vectors)
    before = faiss.omp_get_max_threads()
    _, single = store.search(vectors[:1], 5)
    assert faiss.omp_get_max_threads() == before
    multi = FaissVectorStore(8, search_threads=None)
    multi.add(np.arange(50, dtype=np.int64), vectors)
    assert multi.search(vectors[:1], 5)[1].tolist() == single.tolist()
