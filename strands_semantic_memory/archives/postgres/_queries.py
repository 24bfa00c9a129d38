"""The search statement: dense candidates, lexical candidates and the similarity of each, in one query.

One round trip answers a search (see ``candidates_sql``); its rows are tagged by ``kind``:

- ``DENSE``: nearest messages by their best chunk (cosine, unit vectors: ``-(a <#> b)``);
- ``LEXICAL``: full-text matches ranked by ``ts_rank`` over this library's terms (over the messages matching
  the query's selective terms first: see ``_lexical_ctes``);
- ``SIMILARITY``: the best-chunk cosine of every candidate that has vectors, when a query vector is given (a
  dense candidate's is its dense score);
- ``META``: the user's live count (``idx``) and dimension (``score``);
- ``PENDING``: ``idx`` is 1 when messages of the user wait for their vectors (so ``has_pending`` can be
  answered without another round trip);
- ``INDEXED``: on the exact path, 1 when the HNSW index of the user's dimension exists (built by another
  process, say), so the next search can use it;
- ``FETCHED``: how many chunk rows the nearest-vector scan returned (to tell "no more" from "look further");
- ``AROUND``, ``NEAR_LIVE``, ``NEAR``: the candidates' neighbours, when the search asks for them (a
  ``ContextRequest``): ``AROUND`` lists the candidates whose
  neighbourhoods are answered (the ``leading`` strongest by the request's base score), ``NEAR_LIVE`` each live
  neighbour the filter accepts, ``NEAR`` each other live neighbour that has vectors; ``score`` is the neighbour's
  best-chunk cosine (NULL without vectors or query vector). See ``_context_ctes``: the engine then needs no
  ``similarities`` or ``get`` round trip before reading the passages.

Both dense paths take the ``fetch`` nearest chunk rows (a top-N sort, not an aggregate over every message) and
keep each message's best. Dense search is exact (a scan of the user's vectors) below the archive's
``exact_search_below``; above it the partial HNSW index of the dimension is used with ``hnsw.ef_search`` raised
to the rows fetched (a session setting, sent in the same pipeline only when the connection does not have that
value yet, so a steady stream of searches stays at one round trip each). pgvector applies the user and
filter conditions after the HNSW scan, so a filtered or shared-table search may come back short: the archive then
fetches more, and falls back to the exact scan when the index cannot give enough. A message with many chunks
can likewise fill an exact fetch: it is then widened.
"""

from __future__ import annotations

from dataclasses import dataclass

from strands_semantic_memory.archives._protocol import SearchFilter

DENSE, LEXICAL, SIMILARITY, META, PENDING, FETCHED, INDEXED, AROUND, NEAR_LIVE, NEAR = range(10)

HNSW_MAX_EF = 1000
"""pgvector's largest ``hnsw.ef_search``: an HNSW scan returns at most this many rows."""


def scope_sql(search_filter: SearchFilter | None, alias: str = "") -> str:
    """The SQL condition (starting with ``AND``) of a filter's scope, or nothing; parameter ``sessions``.

    Every row carries its message's ``session_id`` (vector rows too), so the condition applies to any row.
    """
    if search_filter is None or search_filter.sessions is None:
        return ""
    column = f"{alias}.session_id" if alias else "session_id"
    named = f"{column} = ANY(%(sessions)s::text[])"
    return f" AND ({named} OR {column} IS NULL)" if None in search_filter.sessions else f" AND {named}"


def filter_params(search_filter: SearchFilter | None) -> dict[str, object]:
    """The parameters of ``filter_sql`` and ``scope_sql``."""
    if search_filter is None:
        return {}
    sessions = sorted(s for s in search_filter.sessions or () if s is not None)
    return {
        "roles": sorted(search_filter.roles or ()),
        "since": search_filter.since,
        "until": search_filter.until,
        "sessions": sessions,
        "exclude": sorted(search_filter.exclude),
    }


def filter_sql(search_filter: SearchFilter | None, alias: str = "") -> str:
    """SQL conditions (each starting with ``AND``) a hit must meet: the scope, then the filter's conditions on hits.

    Parameters: ``filter_params``.
    """
    if search_filter is None:
        return ""
    prefix = f"{alias}." if alias else ""
    parts = [scope_sql(search_filter, alias)]
    if search_filter.roles is not None:
        parts.append(f" AND {prefix}role = ANY(%(roles)s)")
    time = f"coalesce({prefix}said_at, {prefix}archived_at)"
    if search_filter.since is not None:
        parts.append(f" AND {time} >= %(since)s")
    if search_filter.until is not None:
        parts.append(f" AND {time} <= %(until)s")
    if search_filter.exclude:
        parts.append(f" AND NOT ({prefix}idx = ANY(%(exclude)s::bigint[]))")
    return "".join(parts)


@dataclass(frozen=True)
class Plan:
    """Which parts a search statement has.

    Attributes:
        dense: Include the dense side (a query vector was given and the dimension is known).
        lexical: Include the lexical side (the query has terms and ``lexical_k > 0``).
        hnsw: Use the HNSW index for the dense side (else an exact scan).
        dimension: The user's dimension (needed for the HNSW expression).
        search_filter: Conditions every candidate must meet.
        context: Answer the neighbours of the leading candidates too (parameters ``radius`` and ``leading``).
        vector: A query vector was given (the neighbours' similarities are computed; the lexical side may be
            searched with a vector for ``min_score`` even when the dense side is not).
        floor: The context request's ``dense_floor``.
    """

    dense: bool
    lexical: bool
    hnsw: bool
    dimension: int | None
    search_filter: SearchFilter | None
    context: bool = False
    vector: bool = False
    floor: bool = True


def candidates_sql(plan: Plan) -> str:
    """The one statement answering a search.

    Its parameters: ``user``, ``q``, ``tsq``, ``terms``, ``literals``, ``budget``, ``dense_k``, ``lexical_k``,
    ``fetch`` on the HNSW path, and the filter's.
    """
    where = filter_sql(plan.search_filter)
    ctes: list[str] = []
    selects: list[str] = []
    if plan.dense:
        d = plan.dimension
        # The exact scan leaves the vector untyped: the HNSW index is on embedding::vector(d), so it is not used.
        distance = f"embedding::vector({d}) <#> %(q)s" if plan.hnsw else "embedding <#> %(q)s"
        exact_rows = "user_id = %(user)s AND embedding IS NOT NULL"
        rows = f"dimension = {d} AND user_id = %(user)s" if plan.hnsw else exact_rows
        ctes.append(
            f"nearest AS (SELECT idx, -({distance}) AS score FROM ssm_archive WHERE {rows}{where} "
            f"ORDER BY {distance} LIMIT %(fetch)s)"
        )
        ctes.append(
            "dense AS (SELECT idx, max(score) AS score FROM nearest GROUP BY idx "
            "ORDER BY score DESC, idx LIMIT %(dense_k)s)"
        )
        selects.append(f"SELECT {FETCHED}, count(*), NULL::float8 FROM nearest")
    if plan.dense:
        selects.append(f"SELECT {DENSE}, idx, score FROM dense")
    if plan.dense and not plan.hnsw:
        selects.append(
            f"SELECT {INDEXED}, count(*), NULL FROM ssm_users AS n "
            "JOIN pg_class AS c ON c.relname = 'ssm_archive_hnsw_' || n.dimension "
            "JOIN pg_index AS i ON i.indexrelid = c.oid WHERE n.user_id = %(user)s AND i.indisvalid"
        )
    if plan.lexical:
        ctes.extend(_lexical_ctes(where))
        selects.append(f"SELECT {LEXICAL}, idx, score FROM lexical")
    if plan.dense:
        # A dense candidate's score is already its best chunk's similarity (its nearest chunk row was fetched):
        # only the lexical candidates the dense side did not find are computed.
        selects.append(f"SELECT {SIMILARITY}, idx, score FROM dense")
    if (plan.dense or plan.vector) and plan.lexical:
        # With a query vector but no dense side (a lexical search with ``min_score``) every lexical candidate's.
        lexical_only = "SELECT idx FROM lexical" + (" EXCEPT SELECT idx FROM dense" if plan.dense else "")
        ctes.append(
            "similarities AS (SELECT idx, max(-(embedding <#> %(q)s)) AS score FROM ssm_archive "
            f"WHERE user_id = %(user)s AND idx = ANY(ARRAY({lexical_only})) "
            "AND embedding IS NOT NULL GROUP BY idx)"
        )
        selects.append(f"SELECT {SIMILARITY}, idx, score FROM similarities")
    if plan.context and (plan.dense or plan.lexical):
        ctes.extend(_context_ctes(plan, where, scope_sql(plan.search_filter)))
        selects.append(f"SELECT {AROUND}, idx, NULL FROM around")
        selects.append(
            f"SELECT CASE WHEN live THEN {NEAR_LIVE} ELSE {NEAR} END, idx, score FROM context "
            "WHERE live OR score IS NOT NULL"
        )
    selects.append(
        f"SELECT {META}, next_index - evicted_count - forgotten_count, dimension::float8 FROM ssm_users "
        "WHERE user_id = %(user)s"
    )
    selects.append(
        f"SELECT {PENDING}, EXISTS (SELECT 1 FROM ssm_archive WHERE user_id = %(user)s AND pending)::int, NULL"
    )
    head = ("WITH " + ", ".join(ctes) + " ") if ctes else ""
    return head + " UNION ALL ".join(selects)


def _context_ctes(plan: Plan, where: str, scope: str) -> list[str]:
    """The neighbours within ``radius`` of the ``leading`` strongest candidates (``archives._scoring.strongest``).

    Each leading candidate's neighbourhood is read as one primary-key range (``idx BETWEEN idx - radius AND
    idx + radius``): one index descent per candidate instead of one per neighbour (an ``idx = ANY(...)`` list of
    the ~900 neighbours of 150 candidates at 100k messages touched 5,600 buffers against 3,400, and took 1 ms
    more). Only rows in the filter's scope are read (``scope``: a neighbour outside it is neither live nor scored).
    Its rows tell whether a neighbour is live (its message row exists) and accepted by the filter as a hit, and its
    best-chunk cosine; the similarity is computed per row, before the grouping, so only narrow rows are grouped.
    Candidates are left out (what the engine needs of them is already in the answer). Overlapping neighbourhoods
    read a row twice, which neither ``bool_or`` nor ``max`` counts. ``OFFSET 0`` keeps the range scan a lateral
    subquery (flattened, the planner may join the whole user to the ranges). Parameters: ``radius``,
    ``leading``, ``weight``, ``power``, ``user``, ``q`` (with a vector) and the filter's.
    """
    sides, joins, parts = [], [], []
    if plan.dense:
        sides.append("SELECT idx FROM dense")
        known = "SELECT idx, score FROM dense" + (
            " UNION ALL SELECT idx, score FROM similarities" if plan.lexical else ""
        )
        joins.append(f"LEFT JOIN ({known}) AS k ON k.idx = p.idx")
        if plan.floor:
            joins.append("CROSS JOIN (SELECT min(score) AS floor FROM dense) AS f")
            parts.append("%(weight)s * coalesce(greatest(k.score - f.floor, 0), 0)")
        else:
            parts.append("%(weight)s * coalesce(k.score, 0)")
    if plan.lexical:
        sides.append("SELECT idx FROM lexical")
        joins.append("LEFT JOIN lexical AS l ON l.idx = p.idx CROSS JOIN (SELECT max(score) AS best FROM lexical) AS b")
        parts.append(
            "(1 - %(weight)s) * power(greatest(coalesce(l.score / CASE WHEN b.best > 0 THEN b.best ELSE 1 END, 0), 0), "
            "%(power)s)"
        )
    score = "-(embedding <#> %(q)s)" if plan.vector else "NULL::float8"
    return [
        f"around AS (SELECT p.idx FROM ({' UNION '.join(sides)}) AS p {' '.join(joins)} "
        f"ORDER BY {' + '.join(parts)} DESC, p.idx LIMIT %(leading)s)",
        "context AS (SELECT r.idx, bool_or(r.live) AS live, max(r.score) AS score FROM around AS a CROSS JOIN LATERAL "
        f"(SELECT idx, chunk = 0{where} AS live, {score} AS score FROM ssm_archive WHERE user_id = %(user)s{scope} "
        "AND idx BETWEEN a.idx - %(radius)s::int AND a.idx + %(radius)s::int OFFSET 0) AS r "
        f"WHERE r.idx NOT IN ({' UNION '.join(sides)}) GROUP BY r.idx)",
    ]


LEXICAL_SCAN_BUDGET = 2500
"""Messages the lexical side may expect to rank before it leaves out the query's most frequent terms (see
``_lexical_ctes``). Measured at 100k messages, ``lexical_k=150``, load average 10 on 2 cores, against ranking
every match: 2,500 kept the top 20 identical for 36 of 40 queries (13 of 20 shared at worst) and took the
search statement from 121 to 71 ms p50; 1,000 took it to 51 ms but shared 5 of the top 20 on a typical query."""

_TERM_FREQUENCIES = (
    "SELECT e.lexeme, e.freq FROM pg_stats AS s, "
    "unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(lexeme, freq) "
    "WHERE s.schemaname = current_schema() AND s.tablename = 'ssm_archive' AND s.attname = 'tsv'"
)


def _lexical_ctes(where: str) -> list[str]:
    """The lexical side: ``ts_rank`` over the messages that match the query's selective terms.

    ``ts_rank`` has no notion of how common a term is, and ranking every match of a frequent word costs one heap
    visit per match (a 7-term query over 100k messages matched 11,371 of them on 7,921 pages: 82 ms of its
    87 ms). The query's terms are therefore taken rarest first, by the frequencies ``ANALYZE`` keeps for the
    ``tsv`` column (``pg_stats.most_common_elems``; a term missing there is rarer than any listed), until their
    expected matches in the user would pass ``LEXICAL_SCAN_BUDGET``; the rarest is always taken. Only
    messages matching a taken term are ranked, with the whole query, so their scores are unchanged. When fewer
    than ``lexical_k`` match them, the best of the messages that match only the left-out terms fill the list.
    A user whose terms all fit the budget (any small one, or a table never analyzed) is searched exactly
    as with the plain query.

    Parameters: ``user``, ``tsq`` (the whole query), ``terms`` and ``literals`` (each lexeme raw and quoted),
    ``budget``, ``lexical_k``, and the filter's.
    """
    rank = "ts_rank(tsv, %(tsq)s::tsquery)::float8"
    rows = f"FROM ssm_archive WHERE user_id = %(user)s AND chunk = 0{where}"
    return [
        "terms AS (SELECT t.literal, coalesce(f.freq, 0) AS freq FROM unnest(%(terms)s::text[], %(literals)s::text[]) "
        f"AS t(lexeme, literal) LEFT JOIN ({_TERM_FREQUENCIES}) AS f ON f.lexeme = t.lexeme)",
        "reach AS (SELECT literal, row_number() OVER w AS n, sum(freq) OVER w * (SELECT "
        "next_index - evicted_count - forgotten_count FROM ssm_users WHERE user_id = %(user)s) AS expected "
        "FROM terms WINDOW w AS (ORDER BY freq, literal))",
        "narrow AS (SELECT string_agg(literal, ' | ') FILTER (WHERE n = 1 OR expected <= %(budget)s)::tsquery AS q, "
        "count(*) FILTER (WHERE n > 1 AND expected > %(budget)s) AS left_out FROM reach)",
        f"selective AS (SELECT idx, {rank} AS score {rows} AND tsv @@ (SELECT q FROM narrow) "
        "ORDER BY score DESC, idx LIMIT %(lexical_k)s)",
        f"frequent AS (SELECT idx, {rank} AS score {rows} AND (SELECT left_out FROM narrow) > 0 "
        "AND (SELECT count(*) FROM selective) < %(lexical_k)s AND tsv @@ %(tsq)s::tsquery "
        "AND NOT tsv @@ (SELECT q FROM narrow) ORDER BY score DESC, idx "
        "LIMIT greatest(%(lexical_k)s - (SELECT count(*) FROM selective), 0))",
        "lexical AS (SELECT idx, score FROM selective UNION ALL SELECT idx, score FROM frequent)",
    ]


SIMILARITIES_SQL = (
    "SELECT idx, max(-(embedding <#> %(q)s)) FROM ssm_archive "
    "WHERE user_id = %(user)s AND idx = ANY(%(indices)s::bigint[]) AND embedding IS NOT NULL GROUP BY idx"
)

GET_SQL = (
    # One primary-key lookup per wanted index, whatever the planner believes about the user's size: with
    # ``idx = ANY(...)`` and stale statistics (a user just filled in bulk) it walked the whole user by
    # (user_id, chunk) and filtered on idx (12 ms for 15 records of 10k, against 0.2 ms; OFFSET 0 keeps the
    # lateral subquery from being flattened into that join).
    "SELECT a.idx, a.data, a.role, a.archived_at, a.said_at, a.session_id FROM unnest(%(indices)s::bigint[]) AS "
    "wanted(idx) CROSS JOIN LATERAL (SELECT idx, data, role, archived_at, said_at, session_id FROM ssm_archive "
    "WHERE user_id = %(user)s AND idx = wanted.idx AND chunk = 0 OFFSET 0) AS a"
)

STATS_SQL = """
SELECT n.dimension, n.next_index, n.evicted_count, n.forgotten_count,
       count(*) FILTER (WHERE a.chunk = 0), coalesce(sum(a.nbytes), 0), coalesce(sum(octet_length(a.data)), 0),
       count(*) FILTER (WHERE a.pending), min(a.idx), max(a.idx), count(a.embedding)
FROM ssm_users AS n LEFT JOIN ssm_archive AS a ON a.user_id = n.user_id
WHERE n.user_id = %s
GROUP BY n.user_id
"""
