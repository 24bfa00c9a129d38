"""Amazon Bedrock embeddings through boto3's ``bedrock-runtime`` client (``InvokeModel``).

Models and their request bodies (from the Bedrock model parameter documentation): ``amazon.titan-embed-text-v1``
(1536 dimensions, one text per call), ``amazon.titan-embed-text-v2:0`` (1024, 512 or 256, one text per call),
``cohere.embed-english-v3`` and ``cohere.embed-multilingual-v3`` (1024, up to 96 texts per call, with
``input_type`` telling queries from documents). Throttling and transient errors are retried by botocore's own
handler; this module never sleeps. Titan's one-text calls run a few at a time (boto3 clients are thread-safe).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import ConfigurationError, EmbeddingError, MissingDependencyError

__all__ = ["MODELS", "BedrockEmbedder"]

logger = logging.getLogger(__name__)

MODELS: dict[str, tuple[str, tuple[int, ...], int, int]] = {
    "amazon.titan-embed-text-v1": ("titan-v1", (1536,), 1, 40_000),
    "amazon.titan-embed-text-v2:0": ("titan-v2", (1024, 512, 256), 1, 40_000),
    "cohere.embed-english-v3": ("cohere-v3", (1024,), 96, 2048),
    "cohere.embed-multilingual-v3": ("cohere-v3", (1024,), 96, 2048),
}
"""Model id -> (request family, dimensions offered (the first is the default), texts per call, longest text)."""

_HINTS = {
    "AccessDeniedException": "grant bedrock:InvokeModel on this model and enable model access in the Bedrock console",
    "ResourceNotFoundException": "check the model id and that the model is offered in this region",
    "ValidationException": "the request was rejected; check embedding_dimensions and the model id",
    "UnrecognizedClientException": "check the AWS credentials",
    "NoCredentialsError": "configure AWS credentials (aws configure, AWS_PROFILE or environment variables)",
}


class BedrockEmbedder:
    """An ``Embedder`` over an Amazon Bedrock embedding model.

    Example:
        ```python notest
        memory = SemanticMemory(embedding_model="bedrock:amazon.titan-embed-text-v2:0", embedding_dimensions=512)
        ```
    """

    def __init__(
        self,
        model_id: str,
        *,
        region_name: str | None = None,
        dimensions: int | None = None,
        client: Any | None = None,
        max_attempts: int = 8,
        max_concurrency: int = 4,
    ) -> None:
        """Configure the embedder; nothing is called until the first embedding.

        Args:
            model_id: A Bedrock embedding model id (``MODELS``).
            region_name: The AWS region (default: the AWS SDK's own resolution).
            dimensions: The output dimension, for models that offer a choice.
            client: A ready ``bedrock-runtime`` client (credentials, endpoint and retries are then yours).
            max_attempts: Attempts per call, retries included (botocore's retry configuration).
            max_concurrency: Calls in flight at once for one-text-per-call models.

        Raises:
            ConfigurationError: For an unknown model id or a dimension the model does not offer.
        """
        if model_id not in MODELS:
            raise ConfigurationError(f"unknown Bedrock embedding model '{model_id}'; supported: {', '.join(MODELS)}")
        self._family, offered, self._batch, self._max_chars = MODELS[model_id]
        if dimensions is not None and dimensions not in offered:
            raise ConfigurationError(f"embedding_dimensions={dimensions} is not offered by {model_id}: {offered}")
        if max_attempts < 1 or max_concurrency < 1:
            raise ConfigurationError("max_attempts and max_concurrency must be >= 1")
        self._id, self.region_name = model_id, region_name
        self._dimension = dimensions or offered[0]
        self._client, self._attempts, self._concurrency = client, max_attempts, max_concurrency

    @property
    def model_id(self) -> str:
        """``bedrock:<model id>``: the name that selects this model again."""
        return f"bedrock:{self._id}"

    @property
    def dimension(self) -> int:
        """The output dimension (known without calling the service)."""
        return self._dimension

    @property
    def client(self) -> Any:
        """The ``bedrock-runtime`` client, created on first use."""
        if self._client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError as error:
                raise MissingDependencyError("Bedrock embeddings", "", "boto3") from error
            config = Config(retries={"total_max_attempts": self._attempts, "mode": "standard"})
            try:
                self._client = boto3.Session().client("bedrock-runtime", region_name=self.region_name, config=config)
            except Exception as error:  # NoRegionError and friends
                raise EmbeddingError(f"no Bedrock client ({type(error).__name__}): pass aws_region=...") from error
        return self._client

    def _invoke(self, texts: Sequence[str], query: bool) -> list[list[float]]:
        if self._family == "cohere-v3":
            kind = "search_query" if query else "search_document"
            body: dict[str, Any] = {"texts": list(texts), "input_type": kind, "truncate": "END"}
            body["embedding_types"] = ["float"]
        else:
            body = {"inputText": texts[0]}
            if self._family == "titan-v2":
                body.update(dimensions=self._dimension, normalize=True)
        try:
            response = self.client.invoke_model(modelId=self._id, body=json.dumps(body), accept="application/json")
            payload = json.loads(response["body"].read())
            found = payload.get("embeddings", {})
            vectors = [payload["embedding"]] if "embedding" in payload else found.get("float", found)
        except Exception as error:  # botocore's ClientError, credentials, a malformed answer
            code = getattr(error, "response", {}).get("Error", {}).get("Code", type(error).__name__)
            hint = _HINTS.get(code, "")
            raise EmbeddingError(
                f"Bedrock embedding with {self._id} failed ({code}){'. ' + hint if hint else ''}"
            ) from (error)
        if len(vectors) != len(texts):
            raise EmbeddingError(f"{self._id} returned {len(vectors)} embeddings for {len(texts)} texts")
        return list(vectors)

    def _embed(self, texts: Sequence[str], query: bool) -> Vectors:
        prepared = [t[: self._max_chars] if t.strip() else " " for t in texts]
        batches = [prepared[i : i + self._batch] for i in range(0, len(prepared), self._batch)]
        with ThreadPoolExecutor(max_workers=min(self._concurrency, max(1, len(batches)))) as pool:
            results = list(pool.map(lambda batch: self._invoke(batch, query), batches))
        return np.asarray([v for batch in results for v in batch], dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors of texts to archive."""
        return self._embed(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of queries."""
        return self._embed(texts, query=True)
