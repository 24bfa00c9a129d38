"""Retrieval: pure functions from an archive's candidates to ranked hits and passages.

- ``_ranking``: the one ranking formula (fusion, dense floor, conversation context);
- ``_passages``: hits widened into passages, and packed into a budget;
- ``_relevance``: whether a turn needs the past at all, and which hits are worth their tokens.
"""

from strands_semantic_memory.retrieval._passages import Passage
from strands_semantic_memory.retrieval._ranking import RankingOptions, Retrieval
from strands_semantic_memory.retrieval._relevance import InjectWhen, Relevance

__all__ = ["InjectWhen", "Passage", "RankingOptions", "Relevance", "Retrieval"]
