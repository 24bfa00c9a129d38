"""Vector stores: the :class:`VectorStore` protocol and the default in-process FAISS store."""

from .base import Ids, VectorStore
from .faiss_store import FaissVectorStore

__all__ = ["FaissVectorStore", "Ids", "VectorStore"]
