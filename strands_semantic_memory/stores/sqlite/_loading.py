"""Reading the archive file into the in-process archive's columns, at open.

Nothing is decoded, rendered or tokenized for a message whose terms were stored by the current tokenizer: the
rows are transposed, the terms of every message split from one joined string, the counts and vectors read with
one ``np.frombuffer`` each, and the in-process indexes built in bulk
(``fill``); above the approximate threshold the vector index
is rebuilt from its stored training (``load``),
or trained and its training written back if the file has none that fits. Messages without stored terms (a file of schema
version 1) or stored by another ``TOKENIZER_VERSION`` are tokenized here, and their terms returned for writing back.
"""

from __future__ import annotations

import gc
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from strands_semantic_memory.errors import StateError, StoreError
from strands_semantic_memory.messages._codec import CHUNK_BITS, key_number
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION, count_terms
from strands_semantic_memory.stores._saved_state import check_counters
from strands_semantic_memory.stores.in_process._archive import InMemoryArchive
from strands_semantic_memory.stores.in_process._records import TextOf
from strands_semantic_memory.stores.in_process._saved import Columns
from strands_semantic_memory.stores.in_process.faiss._approximate import Trained
from strands_semantic_memory.stores.sqlite._file import ArchiveFile
from strands_semantic_memory.stores.sqlite._writes import (
    CENTROIDS,
    clear_training,
    encode_terms,
    store_terms,
    store_training,
)

logger = logging.getLogger(__name__)

_MESSAGES = (
    "SELECT idx, data, role, archived_at, said_at, key, has_text, terms, term_counts, tokenizer "
    "FROM ssm_messages ORDER BY idx"
)

_VECTORS = (
    "SELECT v.idx, v.count, v.data, CAST(l.lists AS BLOB) "
    "FROM ssm_vectors AS v LEFT JOIN ssm_lists AS l ON l.idx = v.idx ORDER BY v.idx"
)

_MMAP_BYTES = 1 << 40
"""Memory-mapped reading at open (SQLite caps it at its compile-time maximum, 2 GB by default)."""


@dataclass
class Loaded:
    """What the file holds, ready for the in-process archive.

    Attributes:
        meta: The ``ssm_meta`` values.
        columns: The live records, their terms and vectors.
        retokenized: ``(terms, term_counts, idx)`` of messages tokenized at this open, to write back.
    """

    meta: dict[str, Any]
    columns: Columns
    retokenized: list[tuple[bytes, bytes, int]]


def _counter(meta: dict[str, Any], key: str, path: str) -> int:
    value = meta.get(key)
    if not isinstance(value, int) or value < 0:
        raise StoreError(f"the archive file '{path}' has an invalid '{key}': {value!r}")
    return value


def load(connection: sqlite3.Connection, path: str, text_of: TextOf) -> Loaded:
    """Everything in the file, as columns.

    Raises:
        StoreError: If the file cannot be read or is inconsistent.
    """
    try:
        meta = dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall())
        connection.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")  # reads the blobs without copying pages: 0.35 -> 0.2 s
        try:
            rows = connection.execute(_MESSAGES).fetchall()
            vector_rows = connection.execute(_VECTORS).fetchall()
        finally:
            connection.execute("PRAGMA mmap_size=0")  # writes and later reads use SQLite's default I/O
    except sqlite3.Error as error:
        raise StoreError(f"reading the archive file '{path}' failed: {error}") from error
    dimension = meta.get("dimension")
    if dimension is not None and (not isinstance(dimension, int) or dimension <= 0):
        raise StoreError(f"the archive file '{path}' has an invalid dimension: {dimension!r}")
    columns = Columns(
        next_index=_counter(meta, "next_index", path),
        evicted_count=_counter(meta, "evicted_count", path),
        forgotten_count=_counter(meta, "forgotten_count", path),
        dimension=dimension,
        indices=np.zeros(0, dtype=np.int64),
    )
    try:  # before anything is allocated for the indices the counters claim
        check_counters(columns.next_index, len(rows), columns.evicted_count, columns.forgotten_count)
    except StateError as error:
        raise StoreError(f"the archive file '{path}' is inconsistent: {error}") from error
    retokenized = _messages(columns, rows, text_of)
    lists = _vectors(columns, vector_rows, path)
    columns.trained = _training(meta.get(CENTROIDS), lists, dimension)
    return Loaded(meta=meta, columns=columns, retokenized=retokenized)


def _columns(rows: list[Any], width: int) -> list[list[Any]]:
    """The columns of fetched rows.

    One list comprehension per column: ``zip(*rows)`` makes an iterator per row, and 100k of them set off the
    garbage collector over every fetched row (0.15-0.4 s at 100k rows, against 0.02 s).
    """
    return [[row[n] for row in rows] for n in range(width)]


def _messages(columns: Columns, rows: list[Any], text_of: TextOf) -> list[tuple[bytes, bytes, int]]:
    """Fill the record columns and terms; returns the rows tokenized here."""
    if not rows:
        return []
    transposed = _columns(rows, 10)
    indices, data, roles, archived_at, said_at, keys, has_text, terms, term_counts, tokenizers = transposed
    retokenized = []
    stale = tokenizers.count(TOKENIZER_VERSION) != len(tokenizers)
    for n, version in enumerate(tokenizers if stale else ()):
        if version != TOKENIZER_VERSION:
            terms[n], term_counts[n] = encode_terms(count_terms(text_of(data[n]))[0])
            retokenized.append((terms[n], term_counts[n], indices[n]))
    columns.indices = np.array(indices, dtype=np.int64)
    columns.data = data
    columns.roles = roles
    columns.keys = [None if k is None else key_number(k) for k in keys]
    columns.archived_at = archived_at
    columns.said_at = said_at
    columns.has_text = [bool(h) for h in has_text]
    counts = np.frombuffer(b"".join(term_counts), dtype="<u4")
    sizes = np.fromiter(map(len, term_counts), dtype=np.int64, count=len(term_counts)) // 4
    ends = np.cumsum(sizes)
    totals = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
    columns.lengths = (totals[ends] - totals[ends - sizes]).astype(np.uint32)
    columns.sizes = sizes
    columns.counts = counts.astype(np.uint32)
    joined = b" ".join([t for t in terms if t]).decode("utf-8", "surrogatepass")
    columns.terms = joined.split(" ") if joined else []
    if len(columns.terms) != len(counts):
        raise StoreError(f"stored terms and counts disagree: {len(columns.terms)} terms, {len(counts)} counts")
    return retokenized


def _vectors(columns: Columns, rows: list[Any], path: str) -> list[bytes] | None:
    """Fill the vector columns and each record's vector count and pending flag.

    Returns:
        The ``ssm_lists`` blob of each message with vectors, in order, or None unless each has one of its size.
    """
    owner_list, size_list, blobs, list_blobs = _columns(rows, 4)
    owners = np.array(owner_list, dtype=np.int64)
    sizes = np.array(size_list, dtype=np.int64)
    indices = columns.indices
    at = np.minimum(np.searchsorted(indices, owners), max(len(indices) - 1, 0))
    live = indices[at] == owners if len(indices) else np.zeros(len(owners), dtype=bool)
    embedded = np.zeros(len(indices), dtype=bool)
    embedded[at[live]] = True
    columns.pending = (np.array(columns.has_text, dtype=bool) & ~embedded).tolist()
    keep = live & (sizes > 0)
    if not keep.all():  # rows without vectors (or of no live message, which writes never leave)
        chosen = np.flatnonzero(keep).tolist()
        blobs, list_blobs = [blobs[i] for i in chosen], [list_blobs[i] for i in chosen]
        owners, sizes = owners[keep], sizes[keep]
    dimension = columns.dimension
    if len(owners) and dimension is None:
        raise StoreError(f"the archive file '{path}' holds vectors but no dimension")
    blob = b"".join(blobs)
    total = int(sizes.sum()) if len(sizes) else 0
    if dimension is not None and len(blob) != total * dimension * 4:
        raise StoreError(f"the archive file '{path}' has vector rows of the wrong size")
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    columns.vector_ids = (np.repeat(owners << CHUNK_BITS, sizes) + (np.arange(total) - starts)).astype(np.int64)
    columns.vectors = (
        np.frombuffer(blob, dtype="<f4").reshape(total, dimension).astype(np.float32, copy=False)
        if dimension is not None
        else np.zeros((0, 0), dtype=np.float32)
    )
    counts = np.zeros(len(indices), dtype=np.int64)
    counts[np.searchsorted(indices, owners)] = sizes
    columns.vector_counts = counts
    if None in list_blobs:
        return None
    lengths = np.fromiter(map(len, list_blobs), dtype=np.int64, count=len(list_blobs))
    return list(list_blobs) if np.array_equal(lengths, sizes * 4) else None


def _training(centroids: Any, lists: list[bytes] | None, dimension: int | None) -> Trained | None:
    """The stored training of the approximate index, if the file holds one that covers every vector.

    Whether it fits the vectors (shapes, list numbers) is checked where it is used
    (``load``).
    """
    if not isinstance(centroids, bytes) or lists is None or not dimension or len(centroids) % (4 * dimension):
        return None
    return Trained(
        centroids=np.frombuffer(centroids, dtype="<f4").reshape(-1, dimension).astype(np.float32),
        lists=np.frombuffer(b"".join(lists), dtype="<i4").astype(np.int64),
    )


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (unless it already was), for a burst of allocations.

    Opening builds hundreds of thousands of row tuples that live until their columns are built: each collection
    the allocations set off walks all of them again (0.3-0.5 s of a 2 s reopen at 100k messages on 2 busy cores).
    They are freed by reference counting; a cycle made meanwhile is collected once the collector resumes.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _store_training(file: ArchiveFile, memory: InMemoryArchive, loaded: Loaded) -> None:
    """Write the approximate index's training if this open trained it, or drop a stored one it did not use."""
    index = memory.approximate_index
    trained = loaded.columns.trained
    if index is not None:
        if trained is None or not np.array_equal(index.centroids, trained.centroids):
            with file.transaction() as connection:
                store_training(connection, index.centroids, *index.assignments())
            logger.info(
                "path=<%s>, lists=<%d> | training of the approximate index stored", file.path, len(index.centroids)
            )
    elif CENTROIDS in loaded.meta:
        with file.transaction() as connection:
            clear_training(connection)


def open_memory(file: ArchiveFile, text_of: TextOf) -> tuple[InMemoryArchive, dict[str, Any]]:
    """The in-process archive of everything in the file, and the file's ``ssm_meta`` values.

    Terms tokenized at this open (an older file or tokenizer) are written back, so the next open skips that.

    Raises:
        StoreError: If the file cannot be read or written, or is inconsistent.
    """
    with collector_paused():
        loaded = load(file.connection, file.path, text_of)
        memory = InMemoryArchive(text_of=text_of)
        try:
            memory.load_columns(loaded.columns)
        except StateError as error:
            raise StoreError(f"the archive file '{file.path}' is inconsistent: {error}") from error
    if loaded.retokenized:
        with file.transaction() as connection:
            store_terms(connection, loaded.retokenized)
        logger.info("path=<%s>, messages=<%d> | terms stored for the current tokenizer", file.path, len(memory))
    _store_training(file, memory, loaded)
    logger.debug(
        "path=<%s>, messages=<%d>, vectors=<%d> | archive opened",
        file.path,
        len(memory),
        len(loaded.columns.vector_ids),
    )
    return memory, loaded.meta
