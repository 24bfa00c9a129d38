"""Embedding every archived message again: after a change of embedding model, or to rebuild every vector.

``SemanticMemory.reembed`` (in ``_memory``) drops the archive's vectors (``drop_vectors``: every message with text
becomes pending, the messages themselves stay, and the archive is bound to the configured model), then embeds the
backlog batch by batch in the calling thread, reporting progress after each batch. Until it ends, searches answer
from the lexical index for the messages still pending, as they do for any backlog; if it is interrupted, what is
still pending is embedded by ``embed_pending`` (or the next write or search), and ``reembed`` may simply run again.

A durable archive filled by another model refuses a memory of the new model (``EmbeddingModelMismatchError``):
``drop_vectors(archive, model_id)`` first, then build the memory over it and call ``reembed`` (the command line's
``reembed`` does exactly this).
"""

from __future__ import annotations

from dataclasses import dataclass

from strands_semantic_memory.archives._protocol import Archive
from strands_semantic_memory.errors import EmbeddingModelMismatchError

__all__ = ["ReembedProgress", "drop_vectors"]


@dataclass(frozen=True)
class ReembedProgress:
    """How far ``reembed`` has come, reported after each batch.

    Attributes:
        done: Messages embedded so far.
        total: Messages to embed (those with text when the vectors were dropped).
    """

    done: int
    total: int


def drop_vectors(archive: Archive, model_id: str) -> None:
    """Delete every vector of an archive, mark each message with text pending, and bind it to ``model_id``.

    The messages, their indices and their lexical index stay. Afterwards a memory with the model ``model_id`` opens
    the archive, and embeds the backlog (``embed_pending``, or ``reembed``).

    Args:
        archive: The archive (open; not in use by a memory of another model).
        model_id: The embedding model that will fill it (``Embedder.model_id``).

    Raises:
        ArchiveError: If the archive cannot be written (nothing is dropped).
    """
    try:
        archive.bind(model_id)  # PostgreSQL: recorded now, so the drop below binds the namespace to it
    except EmbeddingModelMismatchError:
        pass  # SQLite refuses another model while the file holds vectors: bound again once they are gone
    archive.load_state(archive.export_state(model_id), reembed=True)
    archive.bind(model_id)
