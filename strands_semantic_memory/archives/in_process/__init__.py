"""The in-process archive: records in the process, vectors in FAISS, BM25 beside them.

Modules: ``_archive`` (``InMemoryArchive``), ``_records`` (the record table), ``_search`` (dense and
lexical candidates), ``_columns`` (saving and restoring in bulk, by columns), ``_types`` (array types); ``bm25/`` (the
incremental lexical index) and ``faiss/`` (the exact and approximate vector tiers).
"""

from strands_semantic_memory.archives.in_process._archive import InMemoryArchive

__all__ = ["InMemoryArchive"]
