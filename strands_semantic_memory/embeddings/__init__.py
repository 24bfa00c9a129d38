"""Embedding models: the ``Embedder`` protocol, the bundled local model, Amazon Bedrock, and the worker.

- ``_base``: the protocol and the check of what a model returns;
- ``_local``: sentence-transformers models offline (the bundled all-MiniLM-L6-v2 by default);
- ``_onnx``: the bundled model on ONNX Runtime (the default);
- ``_bedrock``: Amazon Bedrock's embedding models;
- ``_worker``: the one thread per embedder that calls it, queries first.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from strands_semantic_memory.embeddings._base import Embedder, Vectors
from strands_semantic_memory.embeddings._local import _BUNDLED_NAMES, DEFAULT_MODEL, SentenceTransformerEmbedder
from strands_semantic_memory.embeddings._onnx import OnnxEmbedder, onnx_available
from strands_semantic_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from strands_semantic_memory.embeddings._bedrock import BedrockEmbedder

__all__ = [
    "BEDROCK_PREFIX",
    "DEFAULT_MODEL",
    "BedrockEmbedder",
    "Embedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "Vectors",
    "resolve_embedder",
]

BEDROCK_PREFIX = "bedrock:"
_shared: dict[tuple[Any, ...], Embedder] = {}
_shared_lock = threading.Lock()


def resolve_embedder(
    embedding_model: str = DEFAULT_MODEL, *, aws_region: str | None = None, embedding_dimensions: int | None = None
) -> Embedder:
    """The embedder a model name asks for, one per name and process (so its memories share one worker).

    Args:
        embedding_model: ``"bedrock:<model id>"`` for Amazon Bedrock; anything else a local sentence-transformers
            model (``"all-MiniLM-L6-v2"``, the default, is the bundled offline copy, run on ONNX Runtime when it is
            installed: ``OnnxEmbedder``, else on PyTorch).
        aws_region: Bedrock only: the AWS region.
        embedding_dimensions: Bedrock only: the output dimension, for models that offer a choice.

    Raises:
        ConfigurationError: For an unknown Bedrock model or options the model does not take.
        ModelUnavailableError: If a local model is not on this machine (models are never downloaded).
    """
    if not isinstance(embedding_model, str) or not embedding_model.strip():
        raise ConfigurationError(f"embedding_model must be a non-empty string, got {embedding_model!r}")
    bedrock = embedding_model.startswith(BEDROCK_PREFIX)
    if not bedrock and (aws_region is not None or embedding_dimensions is not None):
        raise ConfigurationError(
            f"aws_region and embedding_dimensions apply to Bedrock models, not {embedding_model!r}"
        )
    key = (embedding_model, aws_region, embedding_dimensions)
    with _shared_lock:
        embedder = _shared.get(key)
        if embedder is None:
            if bedrock:
                from strands_semantic_memory.embeddings._bedrock import BedrockEmbedder

                embedder = BedrockEmbedder(
                    embedding_model[len(BEDROCK_PREFIX) :], region_name=aws_region, dimensions=embedding_dimensions
                )
            elif embedding_model in _BUNDLED_NAMES and onnx_available():
                embedder = OnnxEmbedder(embedding_model)
            else:
                embedder = SentenceTransformerEmbedder(embedding_model)
            _shared[key] = embedder
        return embedder


def __getattr__(name: str) -> Any:
    if name == "BedrockEmbedder":
        from strands_semantic_memory.embeddings._bedrock import BedrockEmbedder

        return BedrockEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
