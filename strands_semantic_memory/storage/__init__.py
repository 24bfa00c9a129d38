"""Strands' storage protocol over the archive: what Strands' context management stashes stays findable by meaning.

``SemanticStorage`` is a ``strands.storage.Storage`` (``write``, ``read``, ``delete``, ``list``, ``search`` over
bytes under string keys) for ``Agent(storage=...)``, ``ContextManager(stash={"storage": ...})`` or
``ContextOffloader(storage=...)``. Each entry is archived exactly in a ``SemanticMemory`` (in process, SQLite or
PostgreSQL), its text indexed by the hybrid engine; ``SemanticMemoryHook(storage=...)`` brings back what left the
context, and ``memory_tools(storage)`` lets the model search it.

Modules: ``_storage`` (``SemanticStorage``), ``_entries`` (an entry as an archived record, and the text indexed for
it), ``_keys`` (which record holds each key, kept in step with the archive), ``_context`` (what the hook brings
back for a turn: entries outside the active context, within the view), ``_strands`` (the private parts of Strands'
storage module a backend needs), ``_summarization`` (``BudgetSummarization``, the strategy for Strands'
``ContextManager`` that keeps the hook's share of the window free).
"""

from strands_semantic_memory.storage._storage import SemanticStorage
from strands_semantic_memory.storage._summarization import BudgetSummarization

__all__ = ["BudgetSummarization", "SemanticStorage"]
