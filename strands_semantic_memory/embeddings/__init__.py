"""Embedding models: the :class:`Embedder` protocol, the local default, and name resolution."""

from __future__ import annotations

from .base import Embedder, Vectors, normalize_rows
from .local import DEFAULT_MODEL, SentenceTransformerEmbedder

BEDROCK_PREFIX = "bedrock:"


def resolve_embedder(
    embedding_model: str = DEFAULT_MODEL,
    *,
    aws_region: str | None = None,
    embedding_dimensions: int | None = None,
) -> Embedder:
    """Build the embedder a model name asks for.

    Args:
        embedding_model: ``"bedrock:<model id>"`` for Amazon Bedrock; anything else is a sentence-transformers
            model name or folder (``"all-MiniLM-L6-v2"``, the default, resolves to the bundled offline weights).
        aws_region: Bedrock only: the AWS region (default: the AWS SDK's own resolution).
        embedding_dimensions: Bedrock only: the output dimension, for models that offer a choice.

    Returns:
        The embedder. Nothing is loaded or called yet.

    Raises:
        ConfigurationError: For an unknown Bedrock model, an unsupported dimension, or Bedrock-only options given
            with a local model.
    """
    from ..errors import ConfigurationError

    if not isinstance(embedding_model, str) or not embedding_model.strip():
        raise ConfigurationError(f"embedding_model must be a non-empty string, got {embedding_model!r}")
    if embedding_model.startswith(BEDROCK_PREFIX):
        from .bedrock import BedrockEmbedder

        return BedrockEmbedder(
            embedding_model[len(BEDROCK_PREFIX) :], region_name=aws_region, dimensions=embedding_dimensions
        )
    if embedding_dimensions is not None:
        raise ConfigurationError(
            f"embedding_dimensions={embedding_dimensions} applies to Bedrock models only; "
            f"'{embedding_model}' is a local sentence-transformers model with a fixed dimension"
        )
    return SentenceTransformerEmbedder(embedding_model)


__all__ = [
    "BEDROCK_PREFIX",
    "DEFAULT_MODEL",
    "Embedder",
    "SentenceTransformerEmbedder",
    "Vectors",
    "normalize_rows",
    "resolve_embedder",
]
