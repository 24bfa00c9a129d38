"""The in-process vector index: FAISS, exact below a size threshold and approximate (IVF) above it.

Modules: ``_store`` (``FaissIndex``), ``_exact`` (the flat tier), ``_approximate`` (the IVF tier).
"""

from strands_semantic_memory.archives.in_process.faiss._store import FaissIndex

__all__ = ["FaissIndex"]
