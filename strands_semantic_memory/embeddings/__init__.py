"""Embedding models: the ``Embedder`` protocol, the local default, and name resolution.

Modules: ``_base`` (the protocol), ``_local`` (sentence-transformers, the bundled model), ``onnx`` (the bundled model
on ONNX Runtime), ``_bedrock`` (Amazon Bedrock), ``_quiet`` (loading a model without progress bars), ``_checked``
(``CheckedEmbedder``: every vector a memory stores or searches with, checked, and the query cache).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, get_args

from strands_semantic_memory.embeddings._base import Embedder, Vectors, normalize_rows
from strands_semantic_memory.embeddings._local import DEFAULT_MODEL, SentenceTransformerEmbedder, resolve_local_model
from strands_semantic_memory.embeddings.onnx._runtime import OnnxEmbedder, onnx_available

if TYPE_CHECKING:
    from strands_semantic_memory.embeddings._bedrock import BedrockEmbedder

BEDROCK_PREFIX = "bedrock:"
EmbeddingBackend = Literal["auto", "torch", "onnx"]
"""What runs a local model: ``"auto"`` (ONNX Runtime for the bundled model when installed), PyTorch or ONNX."""
BACKENDS: tuple[EmbeddingBackend, ...] = get_args(EmbeddingBackend)


def resolve_embedder(
    embedding_model: str = DEFAULT_MODEL,
    *,
    aws_region: str | None = None,
    embedding_dimensions: int | None = None,
    backend: EmbeddingBackend = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
) -> Embedder:
    """Build the embedder a model name asks for.

    Args:
        embedding_model: ``"bedrock:<model id>"`` for Amazon Bedrock; anything else is a sentence-transformers
            model name or folder (``"all-MiniLM-L6-v2"``, the default, resolves to the bundled offline weights).
        aws_region: Bedrock only: the AWS region (default: the AWS SDK's own resolution).
        embedding_dimensions: Bedrock only: the output dimension, for models that offer a choice.
        backend: Local models only. ``"torch"``: sentence-transformers on PyTorch. ``"onnx"``: ONNX Runtime
            (``OnnxEmbedder``: same document vectors and ``model_id``, int8 queries, needs the ``onnx``
            extra). ``"auto"`` (default): ONNX Runtime for the bundled all-MiniLM-L6-v2 when the ``onnx`` extra is
            installed, PyTorch otherwise.
        cache_dir: ONNX only: the folder to keep the exported graphs in (default: the library's cache in the user
            cache folder, moved or turned off by the ``STRANDS_SEMANTIC_MEMORY_CACHE`` environment variable).

    Returns:
        The embedder. Nothing is loaded or called yet.

    Raises:
        ConfigurationError: For an unknown Bedrock model, an unsupported dimension, an unknown backend, or
            options given to a model that does not take them.
        ModelUnavailableError: If a local model is not on this machine (models are never downloaded).
    """
    from strands_semantic_memory.errors import ConfigurationError

    if not isinstance(embedding_model, str) or not embedding_model.strip():
        raise ConfigurationError(f"embedding_model must be a non-empty string, got {embedding_model!r}")
    if backend not in BACKENDS:
        raise ConfigurationError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if embedding_model.startswith(BEDROCK_PREFIX):
        if backend == "onnx" or cache_dir is not None:
            raise ConfigurationError("backend='onnx' and cache_dir apply to local models only, not to Bedrock")
        from strands_semantic_memory.embeddings._bedrock import BedrockEmbedder

        return BedrockEmbedder(
            embedding_model[len(BEDROCK_PREFIX) :], region_name=aws_region, dimensions=embedding_dimensions
        )
    if embedding_dimensions is not None:
        raise ConfigurationError(
            f"embedding_dimensions={embedding_dimensions} applies to Bedrock models only; "
            f"'{embedding_model}' is a local sentence-transformers model with a fixed dimension"
        )
    if backend == "auto":
        bundled = resolve_local_model(embedding_model)[1] == resolve_local_model(DEFAULT_MODEL)[1]
        backend = "onnx" if bundled and onnx_available() else "torch"
    if backend == "onnx":
        return OnnxEmbedder(embedding_model, cache_dir=cache_dir)
    if cache_dir is not None:
        raise ConfigurationError("cache_dir applies to backend='onnx' only")
    return SentenceTransformerEmbedder(embedding_model)


__all__ = [
    "BACKENDS",
    "EmbeddingBackend",
    "BedrockEmbedder",
    "BEDROCK_PREFIX",
    "DEFAULT_MODEL",
    "Embedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "Vectors",
    "normalize_rows",
    "onnx_available",
    "resolve_embedder",
]


def __getattr__(name: str) -> Any:
    if name == "BedrockEmbedder":  # imported when named: it needs boto3 only then
        from strands_semantic_memory.embeddings._bedrock import BedrockEmbedder

        return BedrockEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
