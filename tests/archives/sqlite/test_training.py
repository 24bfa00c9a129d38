"""The durable archive stores the approximate index's training, so reopening it above the threshold trains nothing."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from strands_semantic_memory.archives.in_process.faiss._store import DEFAULT_APPROXIMATE_ABOVE, FaissIndex
from strands_semantic_memory.archives.sqlite import SqliteArchive
from tests.support.records import DIMENSION, message, record, unit_vectors

CHUNKS = 255  # vectors per message: 200 messages cross the 50k threshold without 50k rows
SWITCHED = "switched to the approximate index"


def archive_messages(archive: SqliteArchive, first: int, count: int) -> None:
    """Archive ``count`` messages and give each ``CHUNKS`` random unit vectors."""
    indices = archive.add([record(message(f"message {first + n} about topic {n % 7}")) for n in range(count)])
    archive.set_vectors({i: unit_vectors(10_000 + i, CHUNKS) for i in indices})


def queries() -> np.ndarray:
    return unit_vectors(4242, 12)


def results(archive: SqliteArchive) -> list[tuple[list[int], list[float]]]:
    store = archive._memory.vector_store
    assert store is not None
    found = []
    for query in queries():
        scores, ids = store.search(query[None], 10)
        found.append((ids.tolist(), scores.tolist()))
    return found


def counts(archive: SqliteArchive) -> tuple[int, bool]:
    """Rows of ``ssm_lists`` and whether the centroids are stored (read on the archive's own connection)."""
    connection = archive._conn()
    rows = connection.execute("SELECT COUNT(*) FROM ssm_lists").fetchone()[0]
    stored = connection.execute("SELECT COUNT(*) FROM ssm_meta WHERE key = 'ivf_centroids'").fetchone()[0]
    return int(rows), bool(stored)


@pytest.fixture
def approximate(tmp_path: Path) -> tuple[Path, np.ndarray, list[tuple[list[int], list[float]]]]:
    """A closed archive in the approximate tier (switched at 51k vectors, then 5k more added): its path, centroids
    and search results before closing."""
    path = tmp_path / "archive.sqlite3"
    archive = SqliteArchive(path)
    archive_messages(archive, 0, DEFAULT_APPROXIMATE_ABOVE // CHUNKS + 4)
    store = archive._memory.vector_store
    assert store is not None and store.approximate
    archive_messages(archive, len(archive), 20)  # after the switch: a new training would sample other vectors
    assert store.approximate_index is not None
    centroids = store.approximate_index.centroids
    before = results(archive)
    archive.close()
    return path, centroids.copy(), before


def test_reopening_above_the_threshold_rebuilds_the_saved_index_without_training(approximate, caplog):
    path, centroids, before = approximate
    caplog.set_level(logging.INFO)
    archive = SqliteArchive(path)
    store = archive._memory.vector_store
    assert store is not None and store.approximate
    assert not [r for r in caplog.records if SWITCHED in r.getMessage()]
    assert store.approximate_index is not None and np.array_equal(store.approximate_index.centroids, centroids)
    assert results(archive) == before
    # training again on the same vectors (what the previous release did at every open) gives other centroids
    ids, vectors = store.export()
    retrained = FaissIndex(DIMENSION)
    retrained.add(ids, vectors)
    assert retrained.approximate_index is not None
    assert not np.array_equal(retrained.approximate_index.centroids, centroids)
    archive.close()


def test_each_later_write_adds_only_its_messages_lists(approximate):
    path, _, _ = approximate
    archive = SqliteArchive(path)
    rows, _ = counts(archive)
    archive_messages(archive, len(archive), 3)
    assert counts(archive) == (rows + 3, True)
    store = archive._memory.vector_store
    assert store is not None
    blob = archive._conn().execute("SELECT lists FROM ssm_lists ORDER BY idx DESC LIMIT 1").fetchone()[0]
    newest = archive.bounds()[1]  # type: ignore[index]
    ids = np.array([(newest << 8) + n for n in range(CHUNKS)], dtype=np.int64)
    assert store.approximate_index is not None
    assert np.frombuffer(blob, dtype="<i4").tolist() == store.approximate_index.lists(ids).tolist()
    before = results(archive)
    archive.close()
    reopened = SqliteArchive(path)
    assert results(reopened) == before
    reopened.close()


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM ssm_meta WHERE key = 'ivf_centroids'",  # centroids lost
        "DELETE FROM ssm_lists WHERE idx = 7",  # a message whose lists are missing
        "UPDATE ssm_meta SET value = x'00000000' WHERE key = 'ivf_centroids'",  # centroids of another size
        # a list number out of range
        "UPDATE ssm_lists SET lists = CAST(x'ffff0000' || substr(lists, 5) AS BLOB) WHERE idx = 3",
    ],
)
def test_a_missing_or_inconsistent_training_is_trained_again_and_stored(approximate, caplog, damage):
    path, _, _ = approximate
    with sqlite3.connect(path) as connection:
        connection.execute(damage)
    connection.close()
    caplog.set_level(logging.INFO)
    archive = SqliteArchive(path)
    assert [r for r in caplog.records if SWITCHED in r.getMessage()]  # trained, as before this release
    store = archive._memory.vector_store
    assert store is not None and store.approximate_index is not None
    centroids, before = store.approximate_index.centroids.copy(), results(archive)
    assert counts(archive) == (len(archive), True)  # the new training is stored, for every message
    archive.close()
    caplog.clear()
    reopened = SqliteArchive(path)
    assert not [r for r in caplog.records if SWITCHED in r.getMessage()]
    store = reopened._memory.vector_store
    assert store is not None and store.approximate_index is not None
    assert np.array_equal(store.approximate_index.centroids, centroids)
    assert results(reopened) == before
    reopened.close()


def test_back_in_the_exact_tier_the_training_is_deleted(approximate):
    path, _, _ = approximate
    archive = SqliteArchive(path)
    archive.evict_oldest(len(archive) - DEFAULT_APPROXIMATE_ABOVE // (2 * CHUNKS) + 2)
    store = archive._memory.vector_store
    assert store is not None and not store.approximate
    assert counts(archive) == (0, False)
    archive.close()
    reopened = SqliteArchive(path)
    store = reopened._memory.vector_store
    assert store is not None and not store.approximate
    reopened.close()


def test_reembedding_deletes_the_training(approximate):
    path, _, _ = approximate
    archive = SqliteArchive(path)
    archive.load_state(archive.export_state("model"), reembed=True)
    assert counts(archive) == (0, False)
    assert archive._memory.vector_store is None
    archive.close()
