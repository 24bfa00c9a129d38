"""Reads of the PostgreSQL archive, each one statement, and what the archive remembers between them.

A ``View`` holds what the last statements reported about the user (live count, dimension, which HNSW
indexes exist, whether messages are pending), so the archive chooses the exact or HNSW plan and answers
``has_pending`` without another round trip. Every read is on an autocommit connection: one statement, one round
trip, one transaction.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from strands_semantic_memory.archives._protocol import (
    ArchiveStats,
    Candidates,
    ContextRequest,
    NeighbourContext,
    SearchFilter,
    StoredRecord,
)
from strands_semantic_memory.archives.postgres._connections import Connections
from strands_semantic_memory.archives.postgres._queries import (
    AROUND,
    DENSE,
    FETCHED,
    GET_SQL,
    HNSW_MAX_EF,
    INDEXED,
    LEXICAL,
    LEXICAL_SCAN_BUDGET,
    META,
    NEAR,
    NEAR_LIVE,
    PENDING,
    SIMILARITIES_SQL,
    SIMILARITY,
    STATS_SQL,
    Plan,
    candidates_sql,
    filter_params,
)
from strands_semantic_memory.archives.postgres._text_search import (
    query_lexemes,
    quoted,
    storable,
    storable_key,
    tsquery_literal,
)
from strands_semantic_memory.embeddings._base import Vectors


@dataclass
class View:
    """What the archive last learned about its user.

    Attributes:
        dimension: The vector length, once known.
        live: The live message count (chooses the exact or HNSW plan; a hint, refreshed by every search).
        hnsw: Dimensions whose HNSW index exists and is valid.
        pending: Whether messages were waiting for vectors, and when that was seen (monotonic seconds).
        hnsw_retry_at: Monotonic time before which a failed index build is not tried again.
        pending_count: Messages waiting for vectors as last counted (at opening and by each vector write).
    """

    dimension: int | None = None
    live: int = 0
    hnsw: set[int] = field(default_factory=set)
    pending: tuple[bool, float] | None = None
    hnsw_retry_at: float = 0.0
    pending_count: int = 0

    def saw_pending(self, pending: bool | None) -> None:
        """Record whether messages are pending (None: unknown, ask next time)."""
        self.pending = None if pending is None else (pending, time.monotonic())

    def recent_pending(self, interval: float) -> bool | None:
        """The pending flag if it was seen less than ``interval`` seconds ago, else None."""
        seen = self.pending
        if seen is not None and time.monotonic() - seen[1] < interval:
            return seen[0]
        return None


_EF_SEARCH: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
"""The ``hnsw.ef_search`` each connection has (session setting): it is sent only when a search needs another."""


def _ranked(scores: dict[int, float]) -> dict[int, float]:
    return dict(sorted(scores.items(), key=lambda item: (-item[1], item[0])))


def candidates(
    connections: Connections,
    user_id: str,
    view: View,
    search: tuple[Vectors | None, str, int, int, SearchFilter | None],
    exact_search_below: int,
    context: ContextRequest | None = None,
) -> Candidates:
    """Answer a search in one statement (rarely more: see ``_queries`` on widening the fetch).

    Args:
        connections: Where connections come from.
        user_id: The user.
        view: Updated with what the statement reports.
        search: ``(vector, query, dense_k, lexical_k, search_filter)`` as in the protocol.
        exact_search_below: Namespaces with fewer messages are searched exactly.
        context: The neighbours to answer as well (see the protocol).
    """
    vector, query, dense_k, lexical_k, search_filter = search
    tsquery = tsquery_literal(query) if lexical_k > 0 else None
    dense = vector is not None and dense_k > 0
    if search_filter is not None and search_filter.is_empty:
        search_filter = None
    hnsw = dense and view.dimension in view.hnsw and view.live >= exact_search_below
    fetch = min(HNSW_MAX_EF, max(40, dense_k * (8 if search_filter is not None else 2)))
    params: dict[str, Any] = {"user": user_id, "tsq": tsquery, "dense_k": dense_k, "lexical_k": lexical_k}
    if tsquery is not None:
        lexemes = query_lexemes(query)
        params.update(terms=lexemes, literals=[quoted(t) for t in lexemes], budget=LEXICAL_SCAN_BUDGET)
    if vector is not None:
        params["q"] = np.asarray(vector[0], dtype=np.float32)
    params.update(filter_params(search_filter))
    floor = True
    if context is not None:
        floor = context.dense_floor
        params.update(
            radius=context.radius, leading=context.leading, weight=context.dense_weight, power=context.lexical_power
        )
    while True:
        params["fetch"] = fetch
        plan = Plan(
            dense, tsquery is not None, hnsw, view.dimension, search_filter, context is not None, "q" in params, floor
        )
        sql = candidates_sql(plan)
        with connections.read("searching") as connection:
            if hnsw and _EF_SEARCH.get(connection) != fetch:
                with connection.pipeline():  # the setting travels with the search
                    connection.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(fetch),))
                    rows = connection.execute(sql, params).fetchall()
                _EF_SEARCH[connection] = fetch
            else:
                rows = connection.execute(sql, params).fetchall()
        found: dict[int, dict[int, float]] = {DENSE: {}, LEXICAL: {}, SIMILARITY: {}}
        fetched = 0
        around: list[int] = []
        near: dict[int, float] = {}
        live: list[int] = []
        for kind, index, score in rows:
            if kind in found:
                found[kind][int(index)] = float(score)
            elif kind == NEAR_LIVE or kind == NEAR:
                if kind == NEAR_LIVE:
                    live.append(int(index))
                if score is not None:
                    near[int(index)] = float(score)
            elif kind == AROUND:
                around.append(int(index))
            elif kind == META:
                view.live = int(index)
                view.dimension = None if score is None else int(score)
            elif kind == PENDING:
                view.saw_pending(bool(index))
            elif kind == FETCHED:
                fetched = int(index)
            elif kind == INDEXED and index and view.dimension is not None:
                view.hnsw.add(view.dimension)
        short = dense and len(found[DENSE]) < min(dense_k, view.live)
        # The exact scan came back short only if several chunks of one message filled it; the HNSW scan also when
        # other users' or filtered-out rows took its ``ef_search`` places (they are removed after the scan,
        # so ``fetched`` counts only this user's rows).
        if short and (fetched >= fetch or hnsw):
            # Look further; once the HNSW index cannot return more, scan exactly.
            hnsw = hnsw and fetch < HNSW_MAX_EF
            fetch = min(HNSW_MAX_EF, fetch * 4) if hnsw else fetch * 4
            continue
        answered = None
        if context is not None and (plan.dense or plan.lexical):  # as candidates_sql answers it
            answered = NeighbourContext(context.radius, frozenset(around), near, frozenset(live))
        return Candidates(
            dense=_ranked(found[DENSE]),
            lexical=_ranked(found[LEXICAL]),
            similarity=found[SIMILARITY],
            context=answered,
        )


def live_count(connection: Any, user_id: str) -> int:
    """Live messages of the user, from its counters (one indexed row)."""
    row = connection.execute(
        "SELECT next_index - evicted_count - forgotten_count FROM ssm_users WHERE user_id = %s", (user_id,)
    ).fetchone()
    return int(row[0])


def any_pending(connection: Any, user_id: str) -> bool:
    """Whether any message of the user waits for vectors (a partial-index lookup)."""
    row = connection.execute(
        "SELECT EXISTS (SELECT 1 FROM ssm_archive WHERE user_id = %s AND pending)", (user_id,)
    ).fetchone()
    return bool(row[0])


def pending(connection: Any, user_id: str, exclude: set[int], limit: int | None) -> list[tuple[int, str]]:
    """``(index, searchable text)`` of messages waiting for vectors, oldest first."""
    rows = connection.execute(
        "SELECT idx, body FROM ssm_archive WHERE user_id = %s AND chunk = 0 AND pending "
        "AND NOT (idx = ANY(%s::bigint[])) ORDER BY idx LIMIT %s",
        (user_id, sorted(exclude), limit),
    ).fetchall()
    return [(int(i), body or "") for i, body in rows]


def similarities(connection: Any, user_id: str, vector: Vectors, indices: Sequence[int]) -> dict[int, float]:
    """Best-chunk cosine similarity of the query to each given message that has vectors."""
    params = {"q": np.asarray(vector[0], dtype=np.float32), "user": user_id, "indices": list(indices)}
    return {int(i): float(s) for i, s in connection.execute(SIMILARITIES_SQL, params).fetchall()}


def get(connection: Any, user_id: str, indices: Sequence[int]) -> dict[int, StoredRecord]:
    """Live records by index, with the archived bytes exactly as they were given."""
    rows = connection.execute(GET_SQL, {"user": user_id, "indices": sorted(set(indices))}).fetchall()
    return {
        int(i): StoredRecord(
            index=int(i), data=bytes(data), role=role, archived_at=float(at), said_at=said, session_id=session
        )
        for i, data, role, at, said, session in rows
    }


def find_keys(connection: Any, user_id: str, keys: Sequence[str]) -> dict[str, int]:
    """The live index of each record whose idempotency key is among ``keys`` (the unique key index)."""
    stored = {storable_key(k): k for k in keys}
    rows = connection.execute(
        "SELECT key, idx FROM ssm_archive WHERE user_id = %s AND chunk = 0 AND key = ANY(%s::text[])",
        (user_id, sorted(stored)),
    ).fetchall()
    return {stored[str(k)]: int(i) for k, i in rows}


FIND_TEXT_BATCH = 5000
"""Messages read per statement by ``find_text``."""


def find_text(connection: Any, user_id: str, needle: str) -> list[int]:
    """Live indices whose searchable text contains ``needle`` under Python's ``str.casefold``, ascending.

    The comparison runs here, not in SQL, so that it is exactly the in-process archives' (``casefold`` maps ``ß`` to
    ``ss`` and final sigma to sigma; PostgreSQL's ``lower()`` does neither, and folds only ASCII under the ``C``
    ctype). The user's searchable texts are read in pages of ``FIND_TEXT_BATCH`` by index: deletion by
    text reads them all (a privacy operation, not a search).
    """
    wanted = storable(needle).casefold()
    found: list[int] = []
    last = -1
    while True:
        rows = connection.execute(
            "SELECT idx, body FROM ssm_archive WHERE user_id = %s AND chunk = 0 AND idx > %s ORDER BY idx LIMIT %s",
            (user_id, last, FIND_TEXT_BATCH),
        ).fetchall()
        found.extend(int(i) for i, body in rows if wanted in (body or "").casefold())
        if len(rows) < FIND_TEXT_BATCH:
            return found
        last = int(rows[-1][0])


def bounds(connection: Any, user_id: str) -> tuple[int, int] | None:
    """Oldest and newest live index (the two ends of the primary key)."""
    low, high = connection.execute(
        "SELECT min(idx), max(idx) FROM ssm_archive WHERE user_id = %s AND chunk = 0", (user_id,)
    ).fetchone()
    return None if low is None else (int(low), int(high))


def stats(connection: Any, user_id: str) -> ArchiveStats:
    """Counts and bytes of the user."""
    row = connection.execute(STATS_SQL, (user_id,)).fetchone()
    dimension, next_index, evicted, forgotten, count, total, message_bytes, pending, low, high, vectors = row
    return ArchiveStats(
        message_count=int(count),
        total_bytes=int(total),
        message_bytes=int(message_bytes),
        vector_count=int(vectors),
        dimension=dimension,
        pending_count=int(pending),
        evicted_count=int(evicted),
        archived_total=int(next_index),
        oldest_index=None if low is None else int(low),
        newest_index=None if high is None else int(high),
        forgotten_count=int(forgotten),
    )
