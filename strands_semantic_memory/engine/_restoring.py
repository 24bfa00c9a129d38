"""Restoring: ``SemanticMemory.load_state()``, the ordered replacement of a memory's archive by a saved one.

The order matters: the saved state is checked against the embedding model first (nothing changes on an error);
then, holding the memory's lock and the store lock, ``restore_archive``
replaces the archive, and the running parts forget what belonged to the old one (the embedding queue's claims,
whose vectors are dropped when they arrive; cached query vectors; the count of handed-out indices). Only then, with
the locks released, a state built by another model is embedded again, and the size limits are enforced.
The state format itself is ``_saved_state``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from strands_semantic_memory.engine import _removal as removal
from strands_semantic_memory.stores._saved_state import check_compatibility, restore_archive

if TYPE_CHECKING:
    from strands_semantic_memory.embeddings import Embedder
    from strands_semantic_memory.engine._options import MemoryOptions
    from strands_semantic_memory.engine._wiring import MemoryParts

logger = logging.getLogger(__name__)

__all__ = ["load_state"]


def load_state(
    parts: MemoryParts, embedder: Embedder, options: MemoryOptions, state: Mapping[str, Any], *, reembed: bool
) -> None:
    """Replace the archive in ``parts`` with the saved one (see ``SemanticMemory.load_state``).

    Args:
        parts: The memory's running parts.
        embedder: The memory's embedder (its model and dimension are checked against the state's).
        options: The memory's options (the limits enforced after the restore).
        state: What ``SemanticMemory.to_state()`` returned.
        reembed: Embed every message again, instead of refusing, if another model or dimension built it.

    Raises:
        StateError: If the state is corrupt, inconsistent, or not ours.
        EmbeddingModelMismatchError: If another embedding model built it and ``reembed`` is False.
        DimensionMismatchError: If another dimension built it and ``reembed`` is False.
    """
    known = getattr(embedder, "configured_dimension", None)
    mismatch = check_compatibility(state, embedder.model_id, known, reembed=reembed)
    with parts.lock, parts.store_lock:
        restore_archive(parts.archive, state, reembed=mismatch)
        parts.queue.reset()
        parts.encoder.clear()
        parts.added.reset()  # the restored archive may hand out lower indices
        parts.changed()
    if mismatch:
        logger.info("messages=<%d> | re-embedding the restored archive with the configured model", parts.locked(len))
        parts.embed_pending()
    parts.removed(parts.locked(removal.enforce_limits, options))
