"""Where the archive lives: archive stores (in process, PostgreSQL) and the vector stores inside them."""

from .archive_store import ArchiveStore, NewRecord, StoreStats
from .base import Ids, VectorStore
from .faiss_store import FaissVectorStore
from .in_memory import InMemoryArchive

__all__ = ["ArchiveStore", "FaissVectorStore", "Ids", "InMemoryArchive", "NewRecord", "StoreStats", "VectorStore"]
