"""Saving and restoring a whole memory: the engine's half of saved state.

The archive's half (the versioned JSON layout, its checks, ``SavedArchive``) is ``archives._state``; this module
decides whether a saved archive fits the configured embedding model (``check_compatibility``), which
``SemanticMemory`` arguments restore a saved memory (``constructor_arguments``: its options, its model, a durable
archive's file), and adds the options to what an archive exports (``export_memory``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strands_semantic_memory.archives._protocol import Archive
from strands_semantic_memory.engine._options import MemoryOptions
from strands_semantic_memory.errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbeddingModelMismatchError,
    StateError,
)

__all__ = ["check_compatibility", "constructor_arguments", "export_memory", "restore_archive"]


def check_compatibility(state: Mapping[str, Any], model_id: str, known_dimension: int | None, *, reembed: bool) -> bool:
    """Decide whether a saved archive can be restored under the configured embedding model.

    Args:
        state: Saved state (only its ``embedding`` block is read).
        model_id: The configured embedder's model id.
        known_dimension: The configured embedder's dimension when it is known without a call, else None.
        reembed: Whether re-embedding every message is allowed.

    Returns:
        True when the archive must be re-embedded (another model or dimension, and ``reembed`` allows it).

    Raises:
        StateError: If the state has no ``embedding.model_id``.
        EmbeddingModelMismatchError: Another model built it and ``reembed`` is False.
        DimensionMismatchError: Another dimension built it and ``reembed`` is False.
    """
    if not isinstance(state, Mapping):
        raise StateError(f"saved state must be a JSON object, got {type(state).__name__}")
    embedding = state.get("embedding")
    if not isinstance(embedding, Mapping) or not isinstance(embedding.get("model_id"), str):
        raise StateError("saved state is missing 'embedding.model_id'")
    saved_model, saved_dimension = embedding["model_id"], embedding.get("dimension")
    if saved_model != model_id:
        if not reembed:
            raise EmbeddingModelMismatchError(saved_model, model_id)
        return True
    if isinstance(saved_dimension, int) and known_dimension not in (None, saved_dimension):
        if not reembed:
            raise DimensionMismatchError(
                saved_dimension,
                int(known_dimension),
                "Restore with the dimension that built the archive, or pass reembed=True.",
            )
        return True
    return False


def constructor_arguments(state: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``SemanticMemory`` arguments to restore a saved memory: its saved options and model, then ``overrides``.

    Raises:
        StateError: If the state names no embedding model or holds invalid options.
    """
    if not isinstance(state, Mapping):
        raise StateError(f"saved state must be a JSON object, got {type(state).__name__}")
    embedding = state.get("embedding")
    model_id = embedding.get("model_id") if isinstance(embedding, Mapping) else None
    if not isinstance(model_id, str):
        raise StateError("saved state is missing 'embedding.model_id'")
    arguments: dict[str, Any] = {}
    saved = state.get("options")
    if isinstance(saved, Mapping):
        try:
            arguments.update(MemoryOptions.from_dict(saved).to_dict())
        except (ConfigurationError, TypeError) as error:
            raise StateError(f"saved state has invalid options: {error}") from error
    reference = state.get("archive")
    if (
        isinstance(reference, Mapping)
        and reference.get("kind") == "sqlite"
        and isinstance(reference.get("path"), str)
        and "archive" not in overrides
        and "archive_path" not in overrides
    ):
        arguments["archive_path"] = reference["path"]  # a durable archive: reopen its file
    saved_user = state.get("user_id")
    if isinstance(saved_user, str) and "archive" not in overrides and "user_id" not in overrides:
        arguments["user_id"] = saved_user  # the memory is built for the user whose state it is
    if "embedder" not in overrides and "embedding_model" not in overrides:
        arguments["embedding_model"] = model_id
        if model_id.startswith("bedrock:") and "embedding_dimensions" not in overrides:
            arguments["embedding_dimensions"] = embedding.get("dimension")  # type: ignore[union-attr]
    arguments.update(overrides)
    return arguments


def export_memory(archive: Archive, model_id: str, options: MemoryOptions) -> dict[str, Any]:
    """What ``SemanticMemory.to_state`` returns: the archive's state (or reference) with the options added."""
    state = archive.export_state(model_id)
    state["options"] = options.to_dict()
    return state


def restore_archive(archive: Archive, state: Mapping[str, Any], *, reembed: bool) -> None:
    """Replace what ``archive`` holds with a saved archive (validated first); deep nesting is a StateError too."""
    try:
        archive.load_state(state, reembed=reembed)
    except RecursionError as error:
        raise StateError("saved state is nested too deeply to be an archive") from error
