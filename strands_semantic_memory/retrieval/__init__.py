"""Retrieval: one query in, ranked hits and passages out.

Modules: ``_recall`` (the search path: candidates from the store, ranking, passages), ``_ranking`` (pure scoring
and fusion functions), ``_ranking_options`` (their tunables), ``_passages`` (widening hits and merging ranges),
``_assembly`` (passages built from stored records), ``_rerank`` (the optional second stage), ``_relevance``
(whether a turn needs the past: the calibrated gate and the relative cut; ``InjectWhen``).
"""

from strands_semantic_memory.messages._time import TimeBound
from strands_semantic_memory.retrieval._passages import IndexRange, Passage
from strands_semantic_memory.retrieval._ranking_options import RETRIEVAL_MODES, Fusion, RankingOptions, Retrieval
from strands_semantic_memory.retrieval._recall import SearchHit
from strands_semantic_memory.retrieval._relevance import INJECT_WHEN, InjectWhen
from strands_semantic_memory.retrieval._rerank import CrossEncoderReranker, Reranker

__all__ = [
    "INJECT_WHEN",
    "RETRIEVAL_MODES",
    "CrossEncoderReranker",
    "Fusion",
    "IndexRange",
    "InjectWhen",
    "Passage",
    "RankingOptions",
    "Reranker",
    "Retrieval",
    "SearchHit",
    "TimeBound",
]
