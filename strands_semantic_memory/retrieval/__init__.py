"""Retrieval: one query in, ranked hits and context windows out.

Modules: ``_recall`` (the search path: candidates from the store, ranking, windows), ``_ranking`` (pure scoring
and fusion functions), ``_ranking_options`` (their tunables), ``_windows`` (widening hits and merging ranges),
``_assembly`` (windows built from stored records), ``_rerank`` (the optional second stage).
"""

from strands_semantic_memory.retrieval._ranking_options import RETRIEVAL_MODES, Fusion, RankingOptions, Retrieval
from strands_semantic_memory.retrieval._recall import SearchHit, TimeBound
from strands_semantic_memory.retrieval._rerank import CrossEncoderReranker, Reranker
from strands_semantic_memory.retrieval._windows import ContextWindow, IndexRange

__all__ = [
    "RETRIEVAL_MODES",
    "ContextWindow",
    "CrossEncoderReranker",
    "Fusion",
    "IndexRange",
    "RankingOptions",
    "Reranker",
    "Retrieval",
    "SearchHit",
    "TimeBound",
]
