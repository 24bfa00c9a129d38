import numpy as np
import pytest

from strands_semantic_memory.archives.in_process.faiss._approximate import ApproximateIndex, Trained
from strands_semantic_memory.archives.in_process.faiss._store import FaissIndex
from strands_semantic_memory.embeddings import normalize_rows
from strands_semantic_memory.errors import ConfigurationError, DimensionMismatchError
from tests.support.scores import FLOAT16_TOLERANCE, SCORE_TOLERANCE, assert_ranks_like_brute_force


def brute_force(vectors: dict[int, np.ndarray], query: np.ndarray, k: int) -> list[int]:
    ids = sorted(vectors)
    scores = np.array([float(vectors[i] @ query[0]) for i in ids])
    order = np.argsort(-scores, kind="stable")[:k]
    return [ids[i] for i in order]


def clustered(rng: np.random.Generator, count: int, centres: np.ndarray) -> np.ndarray:
    """Unit vectors around given centres: neighbourhoods like real embeddings have, unlike uniform noise."""
    owner = rng.integers(0, len(centres), size=count)
    noise = rng.normal(size=(count, centres.shape[1])) * 0.8 / np.sqrt(centres.shape[1])
    return normalize_rows(centres[owner] + noise)


def test_matches_brute_force_after_adds_and_removes():
    rng = np.random.default_rng(0)
    store = FaissIndex(16, min_compact=5, compact_ratio=0.05)
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
        some = np.array(sorted(live)[:5], dtype=np.int64)
        np.testing.assert_array_equal(store.fetch(some), np.stack([live[int(i)] for i in some]))
    exported_ids, exported = store.export()
    assert exported_ids.tolist() == sorted(live)
    for i, v in zip(exported_ids.tolist(), exported):
        np.testing.assert_allclose(v, live[i], rtol=1e-6)


def test_removed_ids_never_come_back_before_compaction():
    store = FaissIndex(4, min_compact=1000)
    vectors = normalize_rows(np.eye(4))
    store.add(np.arange(4, dtype=np.int64), vectors)
    store.remove(np.array([0], dtype=np.int64))
    _, ids = store.search(vectors[:1], 4)
    assert 0 not in ids.tolist() and len(ids) == 3
    assert len(store) == 3


def test_unknown_and_repeated_removals_do_not_change_the_count():
    store = FaissIndex(4, min_compact=1000)
    store.add(np.arange(4, dtype=np.int64), normalize_rows(np.eye(4)))
    store.remove(np.array([99, 1, 1], dtype=np.int64))
    store.remove(np.array([1], dtype=np.int64))
    assert len(store) == 3
    assert store.export()[0].tolist() == [0, 2, 3]


def test_ids_added_out_of_order_are_still_found():
    rng = np.random.default_rng(3)
    store = FaissIndex(8, min_compact=2, compact_ratio=0.01)
    vectors = normalize_rows(rng.normal(size=(40, 8)))
    order = [*range(10, 40), *range(0, 10)]  # an embedding retried later: older ids arrive last
    for i in order:
        store.add(np.array([i * 256], dtype=np.int64), vectors[i : i + 1])
    wanted = np.array([5 * 256, 30 * 256, 0], dtype=np.int64)
    np.testing.assert_array_equal(store.fetch(wanted), vectors[[5, 30, 0]])
    store.remove(np.array([5 * 256, 6 * 256, 7 * 256], dtype=np.int64))  # compacts (min_compact=2)
    live = {i * 256: vectors[i] for i in range(40) if i not in (5, 6, 7)}
    np.testing.assert_array_equal(store.fetch(np.array([30 * 256], dtype=np.int64)), vectors[[30]])
    query = vectors[8:9]
    assert_ranks_like_brute_force(store.search(query, 10)[1].tolist(), live, query, 10, tolerance=SCORE_TOLERANCE)
    assert store.export()[0].tolist() == sorted(live)


def test_fetch_of_an_unknown_id_raises_key_error():
    store = FaissIndex(4)
    store.add(np.array([1, 2], dtype=np.int64), normalize_rows(np.eye(4)[:2]))
    with pytest.raises(KeyError):
        store.fetch(np.array([3], dtype=np.int64))


def test_wrong_dimension_is_refused():
    store = FaissIndex(8)
    with pytest.raises(DimensionMismatchError) as info:
        store.add(np.array([1], dtype=np.int64), np.ones((1, 4), dtype=np.float32))
    assert (info.value.expected, info.value.actual) == (8, 4)


@pytest.mark.parametrize("option", ["approximate_above", "nlist", "nprobe"])
def test_size_options_must_be_positive(option):
    with pytest.raises(ConfigurationError, match=option):
        FaissIndex(8, **{option: 0})


def test_search_threads_setting_is_restored_for_the_caller():
    import faiss

    store = FaissIndex(8, search_threads=1)
    vectors = normalize_rows(np.random.default_rng(1).normal(size=(50, 8)))
    store.add(np.arange(50, dtype=np.int64), vectors)
    before = faiss.omp_get_max_threads()
    _, single = store.search(vectors[:1], 5)
    assert faiss.omp_get_max_threads() == before
    multi = FaissIndex(8, search_threads=None)
    multi.add(np.arange(50, dtype=np.int64), vectors)
    assert multi.search(vectors[:1], 5)[1].tolist() == single.tolist()


def recall_at_10(store: FaissIndex, live: dict[int, np.ndarray], queries: np.ndarray) -> float:
    hits = 0
    for query in queries:
        exact = brute_force(live, query[None], 10)
        found = store.search(query[None], 10)[1].tolist()
        hits += len(set(exact) & set(found))
    return hits / (10 * len(queries))


def test_switches_to_approximate_search_above_the_threshold_and_keeps_recall():
    dimension, threshold = 32, 1500
    rng = np.random.default_rng(7)
    centres = normalize_rows(rng.normal(size=(200, dimension)))
    vectors = clustered(rng, 3000, centres)
    ids = np.arange(3000, dtype=np.int64) * 256 + 1
    queries = clustered(rng, 40, centres)
    live = dict(zip(ids.tolist(), vectors, strict=True))
    recalls = {}
    for nprobe in (1, 16):
        store = FaissIndex(dimension, approximate_above=threshold, nlist=32, nprobe=nprobe)
        store.add(ids[:threshold], vectors[:threshold])
        assert not store.approximate  # at the threshold: still exact
        exact_bytes = store.nbytes / len(store)
        store.add(ids[threshold:], vectors[threshold:])
        assert store.approximate and len(store) == 3000
        assert store.nbytes / len(store) < exact_bytes  # float16 codes instead of float32 vectors
        recalls[nprobe] = recall_at_10(store, live, queries)
    assert recalls[16] >= 0.97  # half the lists probed
    assert recalls[1] < 0.9  # one list: the index really is approximate, and the check can tell
    # Fetched vectors and scores are within float16 rounding of the originals.
    np.testing.assert_allclose(store.fetch(ids[:50]), vectors[:50], atol=2e-3)
    scores, found = store.search(vectors[10:11], 1)
    assert found.tolist() == [ids[10]] and abs(scores[0] - 1.0) < 2e-3


def test_exact_below_the_threshold_matches_brute_force():
    dimension = 32
    rng = np.random.default_rng(5)
    centres = normalize_rows(rng.normal(size=(200, dimension)))
    vectors = clustered(rng, 1500, centres)
    ids = np.arange(1500, dtype=np.int64) * 256
    store = FaissIndex(dimension, approximate_above=1500, nlist=32, nprobe=1)
    store.add(ids, vectors)
    assert not store.approximate
    live = dict(zip(ids.tolist(), vectors, strict=True))
    for query in clustered(rng, 20, centres):  # exact: the top 10 as brute force ranks them, up to float32 rounding
        found = store.search(query[None], 10)[1].tolist()
        assert_ranks_like_brute_force(found, live, query[None], 10, tolerance=SCORE_TOLERANCE)


def test_approximate_index_removes_adds_exports_and_switches_back():
    rng = np.random.default_rng(9)
    dimension = 16
    centres = normalize_rows(rng.normal(size=(30, dimension)))
    vectors = clustered(rng, 1200, centres)
    ids = np.arange(1200, dtype=np.int64) * 256
    store = FaissIndex(dimension, approximate_above=1000, nlist=16, nprobe=16)  # nprobe = nlist: exhaustive
    store.add(ids, vectors)
    assert store.approximate
    live = dict(zip(ids.tolist(), vectors, strict=True))
    doomed = ids[::3]
    store.remove(np.concatenate([doomed, [123456789]]))  # an unknown id is ignored
    for i in doomed.tolist():
        del live[i]
    assert len(store) == len(live)
    query = vectors[:1]
    assert doomed[0] not in store.search(query, 20)[1].tolist()
    # Every list probed: the exact top 10, ranked by float16 scores (near ties may come in either order).
    assert_ranks_like_brute_force(store.search(query, 10)[1].tolist(), live, query, 10, tolerance=FLOAT16_TOLERANCE)
    extra = clustered(rng, 5, centres)
    extra_ids = np.arange(2000, 2005, dtype=np.int64) * 256
    store.add(extra_ids, extra)
    live.update(zip(extra_ids.tolist(), extra, strict=True))
    assert store.search(extra[2:3], 1)[1].tolist() == [extra_ids[2]]
    exported_ids, exported = store.export()
    assert exported_ids.tolist() == sorted(live)
    np.testing.assert_allclose(exported, np.stack([live[i] for i in sorted(live)]), atol=2e-3)
    # Below half the threshold the store goes back to exact search, with every vector.
    store.remove(np.array(sorted(live)[:400], dtype=np.int64))
    for i in sorted(live)[:400]:
        del live[i]
    assert not store.approximate and len(store) == len(live)
    assert_ranks_like_brute_force(store.search(query, 10)[1].tolist(), live, query, 10, tolerance=SCORE_TOLERANCE)


def test_switching_to_the_approximate_index_writes_nothing_to_stderr(capfd):
    """FAISS's k-means warns on stderr when it gets too few training points per list; the switch samples enough."""
    rng = np.random.default_rng(5)
    centres = normalize_rows(rng.standard_normal((40, 32)).astype(np.float32))
    store = FaissIndex(32, approximate_above=3_000)
    store.add(np.arange(4_000, dtype=np.int64), clustered(rng, 4_000, centres))
    assert store.approximate
    assert capfd.readouterr().err == ""


def small_approximate_store() -> FaissIndex:
    """Approximate above 1,000 vectors of 16 dimensions, 16 lists."""
    return FaissIndex(16, approximate_above=1000, nlist=16, nprobe=4)


def switched_store(
    rng: np.random.Generator,
) -> tuple[FaissIndex, ApproximateIndex, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """An approximate store (switched at 1001 vectors, 300 added after), its index, ids, vectors, the list of
    each id (as ``assignments()`` gives them) and the mixture's centres."""
    centres = normalize_rows(rng.normal(size=(30, 16)))
    vectors = clustered(rng, 1300, centres).astype(np.float32)
    ids = np.arange(1300, dtype=np.int64) * 256
    store = small_approximate_store()
    store.add(ids[:1001], vectors[:1001])
    store.add(ids[1001:], vectors[1001:])
    index = store.approximate_index
    assert index is not None
    assigned_ids, lists = index.assignments()
    assert assigned_ids.tolist() == ids.tolist()
    return store, index, ids, vectors, lists, centres


def test_load_from_a_stored_training_rebuilds_the_same_index_without_training(caplog):
    rng = np.random.default_rng(3)
    store, index, ids, vectors, lists, centres = switched_store(rng)
    assert lists.tolist() == index.lists(ids).tolist()
    queries = clustered(rng, 20, centres).astype(np.float32)
    caplog.set_level("INFO")
    loaded = small_approximate_store()
    loaded.load(ids, vectors, Trained(centroids=index.centroids.copy(), lists=lists))
    assert not [r for r in caplog.records if "switched" in r.getMessage()]
    assert loaded.approximate_index is not None
    assert np.array_equal(loaded.approximate_index.centroids, index.centroids)
    for query in queries:
        expected, found = store.search(query[None], 10), loaded.search(query[None], 10)
        assert found[1].tolist() == expected[1].tolist() and found[0].tolist() == expected[0].tolist()
    # the id map came back too: vectors fetch by id (float16 storage) and removals take effect
    assert np.allclose(loaded.fetch(ids[:5]), vectors[:5], atol=1e-3)
    nearest = loaded.search(queries[0][None], 3)[1]
    loaded.remove(nearest)
    assert len(loaded) == len(ids) - 3
    assert not set(loaded.search(queries[0][None], 10)[1].tolist()) & set(nearest.tolist())
    # training again, as the load does without a stored training, samples other vectors: other centroids
    retrained = small_approximate_store()
    retrained.load(ids, vectors)
    assert retrained.approximate_index is not None
    assert not np.array_equal(retrained.approximate_index.centroids, index.centroids)


def test_load_ignores_a_training_that_does_not_fit(caplog):
    _, index, ids, vectors, lists, _ = switched_store(np.random.default_rng(4))
    wrong = [
        Trained(centroids=index.centroids[:, :8].copy(), lists=lists),  # another dimension
        Trained(centroids=index.centroids, lists=lists[:-1]),  # a vector without its list
        Trained(centroids=index.centroids, lists=np.full_like(lists, 16)),  # lists out of range
        Trained(centroids=index.centroids[:8].copy(), lists=lists % 8),  # not the configured nlist
    ]
    for trained in wrong:
        caplog.clear()
        caplog.set_level("INFO")
        loaded = small_approximate_store()
        loaded.load(ids, vectors, trained)
        assert [r for r in caplog.records if "switched" in r.getMessage()]  # trained instead
        assert loaded.approximate_index is not None and len(loaded) == len(ids)
    # below half the threshold the stored training is not used: exact search
    small = FaissIndex(16, approximate_above=3000)
    small.load(ids, vectors, Trained(centroids=index.centroids, lists=lists))
    assert not small.approximate and small.approximate_index is None
    with pytest.raises(ValueError, match="empty"):
        small.load(ids, vectors)
