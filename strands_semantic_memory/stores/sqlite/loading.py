"""Reading the archive file into the in-process archive's columns, at open.

Nothing is decoded, rendered or tokenized for a message whose terms were stored by the current tokenizer: the
rows are transposed, the terms of every message split from one joined string, the counts and vectors read with
one ``np.frombuffer`` each, and the in-process indexes built in bulk
(:func:`~strands_semantic_memory.stores.in_memory_state.fill`). Messages without stored terms (a file of schema
version 1) or stored by another ``TOKENIZER_VERSION`` are tokenized here, and their terms returned for writing back.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...archive import CHUNK_BITS, key_number
from ...errors import StateError, StoreError
from ...lexical import TOKENIZER_VERSION, count_terms
from ..in_memory import InMemoryArchive
from ..in_memory_state import Columns
from ..records import TextOf
from .file import ArchiveFile
from .writes import encode_terms, store_terms

logger = logging.getLogger(__name__)

_MESSAGES = (
    "SELECT idx, data, role, archived_at, said_at, key, has_text, terms, term_counts, tokenizer "
    "FROM ssm_messages ORDER BY idx"
)


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
        rows = connection.execute(_MESSAGES).fetchall()
        vector_rows = connection.execute("SELECT idx, count, data FROM ssm_vectors ORDER BY idx").fetchall()
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
    retokenized = _messages(columns, rows, text_of)
    _vectors(columns, vector_rows, path)
    return Loaded(meta=meta, columns=columns, retokenized=retokenized)


def _messages(columns: Columns, rows: list[Any], text_of: TextOf) -> list[tuple[bytes, bytes, int]]:
    """Fill the record columns and terms; returns the rows tokenized here."""
    if not rows:
        return []
    transposed = [list(column) for column in zip(*rows, strict=True)]
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


def _vectors(columns: Columns, rows: list[Any], path: str) -> None:
    """Fill the vector columns and each record's vector count and pending flag."""
    live = set(columns.indices.tolist())
    embedded = {int(row[0]) for row in rows}
    columns.pending = [h and i not in embedded for i, h in zip(columns.indices.tolist(), columns.has_text, strict=True)]
    rows = [row for row in rows if row[0] in live and row[1]]
    dimension = columns.dimension
    if rows and dimension is None:
        raise StoreError(f"the archive file '{path}' holds vectors but no dimension")
    owner_list, size_list, blobs = zip(*rows, strict=True) if rows else ((), (), ())
    owners = np.array(owner_list, dtype=np.int64)
    sizes = np.array(size_list, dtype=np.int64)
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
    counts = np.zeros(len(columns.indices), dtype=np.int64)
    counts[np.searchsorted(columns.indices, owners)] = sizes
    columns.vector_counts = counts


def open_memory(file: ArchiveFile, text_of: TextOf) -> tuple[InMemoryArchive, dict[str, Any]]:
    """The in-process archive of everything in the file, and the file's ``ssm_meta`` values.

    Terms tokenized at this open (an older file or tokenizer) are written back, so the next open skips that.

    Raises:
        StoreError: If the file cannot be read or written, or is inconsistent.
    """
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
    logger.debug(
        "path=<%s>, messages=<%d>, vectors=<%d> | archive opened",
        file.path,
        len(memory),
        len(loaded.columns.vector_ids),
    )
    return memory, loaded.meta
