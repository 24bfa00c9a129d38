"""The search statement: dense candidates, lexical candidates and the similarity of each, in one query.

One round trip answers a search (see :func:`candidates_sql`); its rows are tagged by ``kind``:

- ``DENSE``: nearest messages by their best chunk (cosine, unit vectors: ``-(a <#> b)``);
- ``LEXICAL``: full-text matches ranked by ``ts_rank`` over this library's terms;
- ``SIMILARITY``: the exact best-chunk cosine of every candidate that has vectors;
- ``META``: the namespace's live count (``idx``) and dimension (``score``);
- ``PENDING``: ``idx`` is 1 when messages of the namespace wait for their vectors (so ``has_pending`` can be
  answered without another round trip);
- ``INDEXED``: on the exact path, 1 when the HNSW index of the namespace's dimension exists (built by another
  process, say), so the next search can use it;
- ``FETCHED``: how many chunk rows the nearest-vector scan returned (to tell "no more" from "look further").

Both dense paths take the ``fetch`` nearest chunk rows (a top-N sort, not an aggregate over every message) and
keep each message's best. Dense search is exact (a scan of the namespace's vectors) below the store's
``exact_search_below``; above it the partial HNSW index of the dimension is used with ``hnsw.ef_search`` raised
to the rows fetched (a session setting, sent in the same pipeline only when the connection does not have that
value yet, so a steady stream of searches stays at one round trip each). pgvector applies the namespace and
filter conditions after the HNSW scan, so a filtered or shared-table search may come back short: the store then
fetches more, and falls back to the exact scan when the index cannot give enough. A message with many chunks
can likewise fill an exact fetch: it is then widened.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..archive_store import SearchFilter

DENSE, LEXICAL, SIMILARITY, META, PENDING, FETCHED, INDEXED = 0, 1, 2, 3, 4, 5, 6

HNSW_MAX_EF = 1000
"""pgvector's largest ``hnsw.ef_search``: an HNSW scan returns at most this many rows."""


def filter_sql(search_filter: SearchFilter | None, alias: str = "") -> str:
    """SQL conditions (each starting with ``AND``) for a filter; parameters ``roles``, ``since``, ``until``."""
    if search_filter is None:
        return ""
    prefix = f"{alias}." if alias else ""
    parts = []
    if search_filter.roles is not None:
        parts.append(f" AND {prefix}role = ANY(%(roles)s)")
    time = f"coalesce({prefix}said_at, {prefix}archived_at)"
    if search_filter.since is not None:
        parts.append(f" AND {time} >= %(since)s")
    if search_filter.until is not None:
        parts.append(f" AND {time} <= %(until)s")
    return "".join(parts)


@dataclass(frozen=True)
class Plan:
    """Which parts a search statement has.

    Attributes:
        dense: Include the dense side (a query vector was given and the dimension is known).
        lexical: Include the lexical side (the query has terms and ``lexical_k > 0``).
        hnsw: Use the HNSW index for the dense side (else an exact scan).
        dimension: The namespace's dimension (needed for the HNSW expression).
        search_filter: Conditions every candidate must meet.
    """

    dense: bool
    lexical: bool
    hnsw: bool
    dimension: int | None
    search_filter: SearchFilter | None


def candidates_sql(plan: Plan) -> str:
    """The one statement answering a search.

    Its parameters: ``ns``, ``q``, ``tsq``, ``dense_k``, ``lexical_k``, ``fetch`` on the HNSW path, and the
    filter's.
    """
    where = filter_sql(plan.search_filter)
    ctes: list[str] = []
    selects: list[str] = []
    if plan.dense:
        d = plan.dimension
        # The exact scan leaves the vector untyped: the HNSW index is on embedding::vector(d), so it is not used.
        distance = f"embedding::vector({d}) <#> %(q)s" if plan.hnsw else "embedding <#> %(q)s"
        exact_rows = "namespace = %(ns)s AND embedding IS NOT NULL"
        rows = f"dimension = {d} AND namespace = %(ns)s" if plan.hnsw else exact_rows
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
            f"SELECT {INDEXED}, count(*), NULL FROM ssm_namespaces AS n "
            "JOIN pg_class AS c ON c.relname = 'ssm_archive_hnsw_' || n.dimension "
            "JOIN pg_index AS i ON i.indexrelid = c.oid WHERE n.namespace = %(ns)s AND i.indisvalid"
        )
    if plan.lexical:
        ctes.append(
            "lexical AS (SELECT idx, ts_rank(tsv, %(tsq)s::tsquery)::float8 AS score FROM ssm_archive "
            f"WHERE namespace = %(ns)s AND chunk = 0 AND tsv @@ %(tsq)s::tsquery{where} "
            "ORDER BY score DESC, idx LIMIT %(lexical_k)s)"
        )
        selects.append(f"SELECT {LEXICAL}, idx, score FROM lexical")
    if plan.dense:
        pool = "SELECT idx FROM dense UNION SELECT idx FROM lexical" if plan.lexical else "SELECT idx FROM dense"
        ctes.append(
            "similarities AS (SELECT idx, max(-(embedding <#> %(q)s)) AS score FROM ssm_archive "
            f"WHERE namespace = %(ns)s AND idx = ANY(ARRAY({pool})) AND embedding IS NOT NULL GROUP BY idx)"
        )
        selects.append(f"SELECT {SIMILARITY}, idx, score FROM similarities")
    selects.append(
        f"SELECT {META}, next_index - evicted_count - forgotten_count, dimension::float8 FROM ssm_namespaces "
        "WHERE namespace = %(ns)s"
    )
    selects.append(
        f"SELECT {PENDING}, EXISTS (SELECT 1 FROM ssm_archive WHERE namespace = %(ns)s AND pending)::int, NULL"
    )
    head = ("WITH " + ", ".join(ctes) + " ") if ctes else ""
    return head + " UNION ALL ".join(selects)


SIMILARITIES_SQL = (
    "SELECT idx, max(-(embedding <#> %(q)s)) FROM ssm_archive "
    "WHERE namespace = %(ns)s AND idx = ANY(%(indices)s::bigint[]) AND embedding IS NOT NULL GROUP BY idx"
)

GET_SQL = (
    "SELECT idx, data, role, archived_at, said_at FROM ssm_archive "
    "WHERE namespace = %s AND chunk = 0 AND idx = ANY(%s::bigint[])"
)

STATS_SQL = """
SELECT n.dimension, n.next_index, n.evicted_count, n.forgotten_count,
       count(*) FILTER (WHERE a.chunk = 0), coalesce(sum(a.nbytes), 0), coalesce(sum(octet_length(a.data)), 0),
       count(*) FILTER (WHERE a.pending), min(a.idx), max(a.idx), count(a.embedding)
FROM ssm_namespaces AS n LEFT JOIN ssm_archive AS a ON a.namespace = n.namespace
WHERE n.namespace = %s
GROUP BY n.namespace
"""
