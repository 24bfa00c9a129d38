"""Searching the in-process archive: dense and lexical candidates over its record table.

Functions over the archive's parts (record table, vector store, lexical index), so the archive class keeps to
bookkeeping. Searches fetch more than ``k`` when a filter or several chunks of one message may discard hits, and
double the fetch until ``k`` distinct live messages are found or the index has no more.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..archive import message_index, vector_id
from ..embeddings.base import Vectors
from ..lexical import LexicalIndex
from .archive_store import SearchFilter
from .faiss_store import FaissVectorStore
from .records import RecordTable


def accepts(table: RecordTable, search_filter: SearchFilter | None, index: int) -> bool:
    """Whether ``index`` is live and passes the filter."""
    if index not in table:
        return False
    if search_filter is None or search_filter.is_empty:
        return True
    return search_filter.accepts(table.role(index), table.time(index))


def dense_hits(
    table: RecordTable,
    store: FaissVectorStore | None,
    vector: Vectors,
    k: int,
    search_filter: SearchFilter | None,
) -> dict[int, float]:
    """The ``k`` messages whose best chunk is nearest the query, with that chunk's similarity."""
    if store is None or len(store) == 0 or k <= 0:
        return {}
    filtered = search_filter is not None and not search_filter.is_empty
    best: dict[int, float] = {}
    fetch = max(4 * k, 64) if filtered else k
    while True:
        scores, ids = store.search(vector, fetch)
        best.clear()
        for score, vid in zip(scores.tolist(), ids.tolist(), strict=True):
            index = message_index(vid)
            if index not in best and accepts(table, search_filter, index):
                best[index] = float(score)
                if len(best) >= k:
                    return best
        if len(ids) < fetch:
            return best
        fetch *= 2  # several chunks of one message, or filtered-out messages: look further


def lexical_hits(
    table: RecordTable, lexical: LexicalIndex, query: str, k: int, search_filter: SearchFilter | None
) -> dict[int, float]:
    """The ``k`` best BM25 matches among live messages that pass the filter."""
    if k <= 0:
        return {}
    filtered = search_filter is not None and not search_filter.is_empty
    fetch = max(4 * k, 64) if filtered else k
    while True:
        scores, ids = lexical.search(query, fetch)
        found: dict[int, float] = {}
        for index, score in zip(ids.tolist(), scores.tolist(), strict=True):
            if accepts(table, search_filter, index):
                found[index] = score
                if len(found) >= k:
                    return found
        if len(ids) < fetch:
            return found
        fetch *= 2


def similarities(
    table: RecordTable, store: FaissVectorStore | None, vector: Vectors, indices: Sequence[int]
) -> dict[int, float]:
    """Cosine similarity of the query to each live message's best chunk (messages without vectors left out)."""
    counts = table.vector_counts
    owners = [(i, n) for i in indices if i in table for n in range(counts[i - table.base])]
    if store is None or not owners:
        return {}
    vectors = store.fetch(np.array([vector_id(i, n) for i, n in owners], dtype=np.int64))
    result: dict[int, float] = {}
    # einsum, not matmul: numpy sends a matrix-vector product to multithreaded OpenBLAS, whose spinning threads
    # measured 16.7 ms against 0.14 ms at 2,700 x 384 on a busy 2-core machine.
    for (index, _), score in zip(owners, np.einsum("ij,j->i", vectors, vector[0]).tolist(), strict=True):
        result[index] = max(result.get(index, -1.0), float(score))
    return result
