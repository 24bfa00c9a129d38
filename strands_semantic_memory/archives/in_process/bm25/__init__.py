"""The in-process BM25 index: incremental, evicted oldest-first, exact top-k with MaxScore pruning.

Modules: ``_index`` (``LexicalIndex``), ``_postings`` (posting lists), ``_topk`` (the pruned top-k).
"""

from strands_semantic_memory.archives.in_process.bm25._index import LexicalIndex

__all__ = ["LexicalIndex"]
