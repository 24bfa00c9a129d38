"""Strands' storage protocol over the archive: what Strands' context management stashes stays findable by meaning.

``SemanticStorage`` is a ``strands.storage.Storage`` for ``Agent(storage=...)`` or ``ContextManager(stash=...)``:
each entry is archived exactly in a ``SemanticMemory`` and indexed by the hybrid engine, and
``SemanticMemoryHook(storage=...)`` brings back what Strands' ``ContextManager`` summarized away.

Modules: ``_storage`` (``SemanticStorage``), ``_entries`` (an entry as an archived record, its indexed text, what
Strands' stash keys say), ``_keys`` (which records hold each key, kept in step with the archive),
``_summarization`` (``BudgetSummarization``, the ``ContextManager`` strategy that keeps the memory's share free).
"""

from strands_semantic_memory.storage._storage import SemanticStorage
from strands_semantic_memory.storage._summarization import BudgetSummarization

__all__ = ["BudgetSummarization", "SemanticStorage"]
