"""PostgreSQL + pgvector archive store (kept at this path; the implementation is :mod:`.postgres`)."""

from .postgres import SCHEMA_VERSION, PgVectorStore

__all__ = ["SCHEMA_VERSION", "PgVectorStore"]
