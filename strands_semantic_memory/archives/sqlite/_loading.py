"""Reading the archive file into the in-process archive's columns, at open.

Nothing is decoded, rendered or tokenized for a message whose terms were stored by the current tokenizer: the
rows are transposed, the terms of every message split from one joined string, the counts and vectors read with
one ``np.frombuffer`` each, and the in-process indexes built in bulk
(``fill``); above the approximate threshold the vector index
is rebuilt from its stored training (``load``),
or trained and its training written back if the file has none that fits. Messages whose terms were stored by
another ``TOKENIZER_VERSION`` are tokenized here, and their terms returned for writing back.

Damaged rows are left out (and listed): values of the wrong type or size, found while the columns are built, and
messages that are not JSON Strands messages, found by SQLite's JSON parser in one query (``_SUSPECTS``) and confirmed
by decoding only the rows it names.
"""

from __future__ import annotations

import gc
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from strands_semantic_memory.archives._state import check_counters
from strands_semantic_memory.archives.in_process._archive import InMemoryArchive
from strands_semantic_memory.archives.in_process._columns import Columns
from strands_semantic_memory.archives.in_process._records import TextOf
from strands_semantic_memory.archives.in_process.faiss._approximate import Trained
from strands_semantic_memory.archives.sqlite._file import ArchiveFile
from strands_semantic_memory.archives.sqlite._writes import (
    CENTROIDS,
    clear_training,
    encode_terms,
    store_terms,
    store_training,
)
from strands_semantic_memory.errors import ArchiveError, StateError
from strands_semantic_memory.messages._codec import CHUNK_BITS, MAX_CHUNKS, decode_message, key_number
from strands_semantic_memory.messages._terms import TOKENIZER_VERSION, count_terms

logger = logging.getLogger(__name__)

_MESSAGES = (
    "SELECT idx, data, role, archived_at, said_at, session_id, key, has_text, terms, term_counts, tokenizer "
    "FROM ssm_messages ORDER BY idx"
)

_SUSPECTS = (
    "SELECT idx, data FROM ssm_messages WHERE CASE WHEN json_valid(CAST(data AS TEXT)) "
    "THEN json_type(CAST(data AS TEXT), '$.role') IS NOT 'text' OR json_type(CAST(data AS TEXT), '$.content') "
    "IS NOT 'array' ELSE 1 END"
)
"""Rows whose message may not decode: not JSON, or without a text role and a content list, by SQLite's JSON check.

SQLite parses without building objects (0.2 s per 100k messages of 400 bytes, against 0.55 s for decoding them in
Python); each row it names is decoded (``readable_message``), so a message SQLite's stricter reading refuses (a
``NaN`` in a tool input, say) is not taken for damaged.
"""

_VECTORS = (
    "SELECT v.idx, v.count, v.data, CAST(l.lists AS BLOB) "
    "FROM ssm_vectors AS v LEFT JOIN ssm_lists AS l ON l.idx = v.idx ORDER BY v.idx"
)

_NUMBER = {int, float}
_OPTIONAL_NUMBER = {int, float, type(None)}
_OPTIONAL_TEXT = {str, type(None)}


class _DamagedRows(Exception):
    """Rows found damaged while the columns were built: ``{index: reason}``."""

    def __init__(self, damaged: dict[int, str]) -> None:
        super().__init__(damaged)
        self.damaged = damaged


_MMAP_BYTES = 1 << 40
"""Memory-mapped reading at open (SQLite caps it at its compile-time maximum, 2 GB by default)."""


@dataclass
class Loaded:
    """What the file holds, ready for the in-process archive.

    Attributes:
        meta: The ``ssm_meta`` values.
        columns: The live records, their terms and vectors.
        retokenized: ``(terms, term_counts, idx)`` of messages tokenized at this open, to write back.
        damaged: Rows left out because they cannot be read: ``{index: what is wrong}`` (kept in the file as they
            are).
    """

    meta: dict[str, Any]
    columns: Columns
    retokenized: list[tuple[bytes, bytes, int]]
    damaged: dict[int, str] = field(default_factory=dict)


def _counter(meta: dict[str, Any], key: str, path: str) -> int:
    value = meta.get(key)
    if not isinstance(value, int) or value < 0:
        raise ArchiveError(f"the archive file '{path}' has an invalid '{key}': {value!r}")
    return value


def load(connection: sqlite3.Connection, path: str, text_of: TextOf) -> Loaded:
    """Everything in the file, as columns; damaged rows are left out (see ``Loaded.damaged``).

    Raises:
        ArchiveError: If the file cannot be read or is inconsistent.
    """
    try:
        meta = dict(connection.execute("SELECT key, value FROM ssm_meta").fetchall())
        dimension = meta.get("dimension")
        if dimension is not None and (not isinstance(dimension, int) or dimension <= 0):
            raise ArchiveError(f"the archive file '{path}' has an invalid dimension: {dimension!r}")
        connection.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")  # reads the blobs without copying pages: 0.35 -> 0.2 s
        try:
            rows = connection.execute(_MESSAGES).fetchall()
            vector_rows = connection.execute(_VECTORS).fetchall()
            suspects = connection.execute(_SUSPECTS).fetchall()
        finally:
            connection.execute("PRAGMA mmap_size=0")  # writes and later reads use SQLite's default I/O
    except sqlite3.Error as error:
        raise ArchiveError(f"reading the archive file '{path}' failed: {error}") from error
    next_index, evicted, forgotten = (
        _counter(meta, k, path) for k in ("next_index", "evicted_count", "forgotten_count")
    )
    try:  # before anything is allocated for the indices the counters claim
        check_counters(next_index, len(rows), evicted, forgotten)
    except StateError as error:
        raise ArchiveError(f"the archive file '{path}' is inconsistent: {error}") from error
    damaged = _undecodable(suspects)  # left out of the count and listed, like any damaged row
    if damaged:
        rows = [r for r in rows if r[0] not in damaged]
        vector_rows = [r for r in vector_rows if r[0] not in damaged]
    while True:  # a damaged row is left out and the columns built again (the first pass finds them all but text)
        columns = Columns(next_index, evicted, forgotten, dimension, indices=np.zeros(0, dtype=np.int64))
        try:
            retokenized = _messages(columns, rows, text_of)
            lists = _vectors(columns, vector_rows, path, text_of)
            break
        except _DamagedRows as found:
            if not found.damaged or not damaged.keys().isdisjoint(found.damaged):
                raise ArchiveError(f"the archive file '{path}' is inconsistent") from found
            damaged.update(found.damaged)
            rows = [r for r in rows if r[0] not in damaged]
            vector_rows = [r for r in vector_rows if r[0] not in damaged]
    for index, reason in sorted(damaged.items())[:20]:
        logger.warning("path=<%s>, row=<%d>, reason=<%s> | damaged archive row left out", path, index, reason)
    columns.trained = _training(meta.get(CENTROIDS), lists, dimension)
    return Loaded(meta=meta, columns=columns, retokenized=retokenized, damaged=damaged)


def _undecodable(suspects: list[Any]) -> dict[int, str]:
    """The rows among ``suspects`` whose message does not decode to a Strands message: ``{index: reason}``."""
    damaged = {}
    for index, data in suspects:
        reason = readable_message(data)
        if reason is not None:
            damaged[int(index)] = reason
    return damaged


def _lenient(text_of: TextOf, path: str) -> TextOf:
    """``text_of`` for the in-process archive: a message found undecodable after opening has no text.

    Its row is refused when read (``SqliteArchive.get``); meanwhile it matches no ``find_text`` and forgetting it
    still works.
    """

    def text(data: bytes) -> str:
        try:
            return text_of(data)
        except (ValueError, TypeError, AttributeError, KeyError, RecursionError) as error:
            logger.warning("path=<%s>, error=<%s> | an archived message cannot be read", path, type(error).__name__)
            return ""

    return text


def readable_message(data: Any) -> str | None:
    """What is wrong with an archived message's bytes (not a decodable Strands message), or None."""
    try:
        message = decode_message(data)
    except (ValueError, TypeError, RecursionError) as error:
        return f"its message does not decode ({type(error).__name__}: {str(error)[:200]})"
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return "its message is not a Strands message (no role)"
    if not isinstance(message.get("content"), list):
        return "its message is not a Strands message (no content list)"
    return None


def _unreadable(data: Any, text_of: TextOf) -> str | None:
    """What is wrong with a message whose text this open needs (its text cannot be derived), or None."""
    try:
        text_of(data)
    except Exception as error:  # whatever a damaged message makes the text derivation raise
        return f"its message cannot be read ({type(error).__name__}: {str(error)[:200]})"
    return None


def _row_problem(row: Any) -> str | None:
    """What is wrong with one message row's values (types and sizes no write gives them), or None."""
    _, _, role, archived_at, said_at, session_id, key, _, terms, term_counts, _ = row
    if type(role) is not str:
        return "its role is not text"
    if session_id is not None and type(session_id) is not str:
        return "its session id is not text"
    if type(archived_at) not in _NUMBER or (said_at is not None and type(said_at) not in _NUMBER):
        return "its times are not numbers"
    if key is not None:
        try:
            key_number(key)
        except (TypeError, ValueError, AttributeError):
            return "its idempotency key is malformed"
    if (terms is not None and type(terms) is not bytes) or type(term_counts) is not bytes or len(term_counts) % 4:
        return "its terms or term counts are malformed"
    try:
        names = terms.decode("utf-8", "surrogatepass").split(" ") if terms else []
    except UnicodeDecodeError:
        return "its terms are not UTF-8"
    if len(names) != len(term_counts) // 4:
        return "its terms and their counts disagree"
    return None


def _columns(rows: list[Any], width: int) -> list[list[Any]]:
    """The columns of fetched rows.

    One list comprehension per column: ``zip(*rows)`` makes an iterator per row, and 100k of them set off the
    garbage collector over every fetched row (0.15-0.4 s at 100k rows, against 0.02 s).
    """
    return [[row[n] for row in rows] for n in range(width)]


def _messages(columns: Columns, rows: list[Any], text_of: TextOf) -> list[tuple[bytes, bytes, int]]:
    """Fill the record columns and terms; returns the rows tokenized here.

    The values are checked in bulk, as a side effect of building the columns (a few set and join calls); only if
    that fails are the rows checked one by one.

    Raises:
        _DamagedRows: Naming the rows that cannot be loaded.
    """
    if not rows:
        return []
    transposed = _columns(rows, 11)
    indices, data, roles, archived_at, said_at, sessions, keys, has_text, terms, term_counts, tokenizers = transposed
    retokenized, unreadable = [], {}
    stale = tokenizers.count(TOKENIZER_VERSION) != len(tokenizers)
    for n, version in enumerate(tokenizers if stale else ()):
        if version != TOKENIZER_VERSION:
            problem = _unreadable(data[n], text_of)
            if problem is not None:
                unreadable[int(indices[n])] = problem
                continue
            terms[n], term_counts[n] = encode_terms(count_terms(text_of(data[n]))[0])
            retokenized.append((terms[n], term_counts[n], indices[n]))
    if unreadable:
        raise _DamagedRows(unreadable)
    try:
        if not (
            set(map(type, roles)) <= {str}
            and set(map(type, archived_at)) <= _NUMBER
            and set(map(type, said_at)) <= _OPTIONAL_NUMBER
            and set(map(type, sessions)) <= _OPTIONAL_TEXT
        ):
            raise ValueError("a value of the wrong type")
        columns.keys = [None if k is None else key_number(k) for k in keys]
        raw_sizes = np.fromiter(map(len, term_counts), dtype=np.int64, count=len(term_counts))
        counts = np.frombuffer(b"".join(term_counts), dtype="<u4")
        joined = b" ".join([t for t in terms if t]).decode("utf-8", "surrogatepass")
        columns.terms = joined.split(" ") if joined else []
        if np.any(raw_sizes % 4) or len(columns.terms) != len(counts):
            raise ValueError("terms and counts disagree")
    except (TypeError, ValueError, AttributeError):  # a damaged row somewhere: find it
        problems = {int(row[0]): _row_problem(row) for row in rows}
        raise _DamagedRows({index: problem for index, problem in problems.items() if problem is not None}) from None
    columns.indices = np.array(indices, dtype=np.int64)
    columns.data = data
    columns.roles = roles
    columns.archived_at = archived_at
    columns.said_at = said_at
    columns.session_ids = sessions
    columns.has_text = [bool(h) for h in has_text]
    sizes = raw_sizes // 4
    ends = np.cumsum(sizes)
    totals = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
    columns.lengths = (totals[ends] - totals[ends - sizes]).astype(np.uint32)
    columns.sizes = sizes
    columns.counts = counts.astype(np.uint32)
    return retokenized


def _vectors(columns: Columns, rows: list[Any], path: str, text_of: TextOf) -> list[bytes] | None:
    """Fill the vector columns and each record's vector count and pending flag.

    Returns:
        The ``ssm_lists`` blob of each message with vectors, in order, or None unless each has one of its size.

    Raises:
        _DamagedRows: Naming messages whose vectors are malformed, or that wait for vectors and cannot be read.
    """
    owner_list, size_list, blobs, list_blobs = _columns(rows, 4)
    owners = np.array(owner_list, dtype=np.int64)
    try:
        sizes = np.array(size_list, dtype=np.int64)
        lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    except (TypeError, ValueError):
        sizes, lengths = np.full(len(rows), -1, dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
    dimension = columns.dimension
    if len(owners) and dimension is None:
        raise ArchiveError(f"the archive file '{path}' holds vectors but no dimension")
    wrong = (sizes < 0) | (sizes > MAX_CHUNKS) | (lengths != sizes * 4 * (dimension or 0))
    wrong |= np.array([type(b) is not bytes for b in blobs], dtype=bool) if len(set(map(type, blobs))) > 1 else False
    if np.any(wrong):
        raise _DamagedRows({int(owners[i]): "its vectors are malformed" for i in np.flatnonzero(wrong)})
    indices = columns.indices
    at = np.minimum(np.searchsorted(indices, owners), max(len(indices) - 1, 0))
    live = indices[at] == owners if len(indices) else np.zeros(len(owners), dtype=bool)
    embedded = np.zeros(len(indices), dtype=bool)
    embedded[at[live]] = True
    pending = np.array(columns.has_text, dtype=bool) & ~embedded
    unreadable = {int(indices[n]): _unreadable(columns.data[n], text_of) for n in np.flatnonzero(pending).tolist()}
    if any(unreadable.values()):  # their text is needed to embed them
        raise _DamagedRows({index: reason for index, reason in unreadable.items() if reason is not None})
    columns.pending = pending.tolist()
    keep = live & (sizes > 0)
    if not keep.all():  # rows without vectors (or of no live message, which writes never leave)
        chosen = np.flatnonzero(keep).tolist()
        blobs, list_blobs = [blobs[i] for i in chosen], [list_blobs[i] for i in chosen]
        owners, sizes = owners[keep], sizes[keep]
    blob = b"".join(blobs)
    total = int(sizes.sum()) if len(sizes) else 0
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


def open_memory(file: ArchiveFile, text_of: TextOf) -> tuple[InMemoryArchive, Loaded]:
    """The in-process archive of everything readable in the file, and what was loaded (meta, damaged rows).

    Terms tokenized at this open (an older file or tokenizer) are written back, so the next open skips that.

    Raises:
        ArchiveError: If the file cannot be read or written, or is inconsistent.
    """
    with collector_paused():
        loaded = load(file.connection, file.path, text_of)
        memory = InMemoryArchive(text_of=_lenient(text_of, file.path))
        try:
            memory.load_columns(loaded.columns)
        except StateError as error:
            raise ArchiveError(f"the archive file '{file.path}' is inconsistent: {error}") from error
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
    return memory, loaded
