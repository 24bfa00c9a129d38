"""The in-process vector index: FAISS, exact below a size threshold and approximate (IVF) above it.

Modules: ``_store`` (``FaissVectorStore``), ``_exact`` (the flat tier), ``_approximate`` (the IVF tier).
"""

from strands_semantic_memory.stores.in_process.faiss._store import FaissVectorStore

__all__ = ["FaissVectorStore"]
