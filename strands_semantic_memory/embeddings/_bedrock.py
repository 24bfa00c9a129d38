"""Amazon Bedrock embeddings through boto3's ``bedrock-runtime`` client (``InvokeModel``).

Supported models and their request bodies (from the Bedrock model parameter documentation):

- ``amazon.titan-embed-text-v1``: 1536 dimensions, one text per call, ``{"inputText": str}``.
- ``amazon.titan-embed-text-v2:0``: 1024 (default), 512 or 256 dimensions, one text per call,
  ``{"inputText": str, "dimensions": int, "normalize": true}``.
- ``cohere.embed-english-v3`` and ``cohere.embed-multilingual-v3``: 1024 dimensions, up to 96 texts per call,
  ``{"texts": [...], "input_type": "search_document" | "search_query", "truncate": "END",
  "embedding_types": ["float"]}``.

Throttling and transient errors are retried by botocore's own retry handler (``standard`` mode by default); this
module never sleeps. Titan models take one text per call, so their documents are embedded with a few calls in
flight at once (boto3 clients are thread-safe).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import ConfigurationError, EmbeddingError, MissingDependencyError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BedrockModelSpec:
    """What the library knows about one Bedrock embedding model.

    Attributes:
        model_id: The Bedrock model id.
        family: ``"titan-v1"``, ``"titan-v2"`` or ``"cohere-v3"`` (selects the request format).
        default_dimension: Output dimension when none is asked for.
        dimensions: The dimensions the model can produce.
        max_batch: Texts per ``InvokeModel`` call.
        max_chars: Longest text accepted; longer ones are cut (and logged), the archive keeps the full message.
    """

    model_id: str
    family: str
    default_dimension: int
    dimensions: tuple[int, ...]
    max_batch: int
    max_chars: int


KNOWN_MODELS: dict[str, BedrockModelSpec] = {
    spec.model_id: spec
    for spec in (
        BedrockModelSpec("amazon.titan-embed-text-v1", "titan-v1", 1536, (1536,), 1, 40_000),
        BedrockModelSpec("amazon.titan-embed-text-v2:0", "titan-v2", 1024, (1024, 512, 256), 1, 40_000),
        BedrockModelSpec("cohere.embed-english-v3", "cohere-v3", 1024, (1024,), 96, 2048),
        BedrockModelSpec("cohere.embed-multilingual-v3", "cohere-v3", 1024, (1024,), 96, 2048),
    )
}

_RECOVERY_HINTS = {
    "AccessDeniedException": "grant bedrock:InvokeModel on this model and enable model access in the Bedrock console",
    "ResourceNotFoundException": "check the model id and that the model is offered in this region",
    "ValidationException": "the request was rejected; check embedding_dimensions and the model id",
    "UnrecognizedClientException": "check the AWS credentials",
}


class BedrockEmbedder:
    """An ``Embedder`` over Amazon Bedrock embedding models.

    Example:
        ```python
        embedder = BedrockEmbedder("amazon.titan-embed-text-v2:0", region_name="us-east-1", dimensions=512)
        memory = SemanticMemory(embedder=embedder)
        # or: SemanticMemory(embedding_model="bedrock:amazon.titan-embed-text-v2:0", embedding_dimensions=512)
        ```
    """

    def __init__(
        self,
        model_id: str,
        *,
        region_name: str | None = None,
        dimensions: int | None = None,
        client: Any | None = None,
        session: Any | None = None,
        max_attempts: int = 8,
        retry_mode: str = "standard",
        max_concurrency: int = 4,
    ) -> None:
        """Configure the embedder. Nothing is called until the first embedding.

        Args:
            model_id: A Bedrock embedding model id (see ``KNOWN_MODELS``).
            region_name: AWS region; default: the AWS SDK's own resolution (``AWS_REGION``, profile, ...).
            dimensions: Output dimension, for models that offer a choice.
            client: A ready ``bedrock-runtime`` client (credentials, endpoint, retries are then yours).
            session: A ``boto3.Session`` to create the client from (default: a new default session).
            max_attempts: Total attempts per call, retries included (botocore's retry configuration).
            retry_mode: botocore retry mode: ``"standard"`` or ``"adaptive"`` (client-side rate limiting too).
            max_concurrency: Calls in flight at once for one-text-per-call models.

        Raises:
            ConfigurationError: For an unknown model id or an unsupported dimension.
        """
        spec = KNOWN_MODELS.get(model_id)
        if spec is None:
            raise ConfigurationError(
                f"unknown Bedrock embedding model '{model_id}'; supported: {', '.join(sorted(KNOWN_MODELS))}"
            )
        if dimensions is not None and dimensions not in spec.dimensions:
            raise ConfigurationError(
                f"embedding_dimensions={dimensions} is not offered by {model_id}; choose one of "
                f"{', '.join(str(d) for d in spec.dimensions)}"
            )
        if max_attempts < 1 or max_concurrency < 1:
            raise ConfigurationError("max_attempts and max_concurrency must be >= 1")
        self.spec = spec
        self.region_name = region_name
        self._dimension = dimensions or spec.default_dimension
        self._client = client
        self._session = session
        self._max_attempts = max_attempts
        self._retry_mode = retry_mode
        self._max_concurrency = max_concurrency

    @property
    def model_id(self) -> str:
        """``bedrock:<model id>``: the name that selects this model again."""
        return f"bedrock:{self.spec.model_id}"

    @property
    def dimension(self) -> int:
        """The output dimension (known without calling the service)."""
        return self._dimension

    configured_dimension = dimension
    """The dimension is known before any call: restores compare it with the archive's without embedding."""

    @property
    def client(self) -> Any:
        """The ``bedrock-runtime`` client, created on first use."""
        if self._client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError as error:
                raise MissingDependencyError("Bedrock embeddings", "", "boto3") from error
            session = self._session or boto3.Session()
            config = Config(
                retries={"total_max_attempts": self._max_attempts, "mode": self._retry_mode},
                user_agent_extra="strands-semantic-memory",
            )
            try:
                self._client = session.client("bedrock-runtime", region_name=self.region_name, config=config)
            except Exception as error:  # NoRegionError and friends
                raise EmbeddingError(
                    f"could not create a Bedrock client: {error}. Pass aws_region=... or set AWS_REGION"
                ) from error
        return self._client

    def _body(self, texts: Sequence[str], *, query: bool) -> dict[str, Any]:
        family = self.spec.family
        if family == "titan-v1":
            return {"inputText": texts[0]}
        if family == "titan-v2":
            return {"inputText": texts[0], "dimensions": self._dimension, "normalize": True}
        return {
            "texts": list(texts),
            "input_type": "search_query" if query else "search_document",
            "truncate": "END",
            "embedding_types": ["float"],
        }

    def _parse(self, payload: dict[str, Any], count: int) -> list[list[float]]:
        if self.spec.family.startswith("titan"):
            vectors = [payload["embedding"]]
        else:
            embeddings = payload["embeddings"]
            vectors = embeddings["float"] if isinstance(embeddings, dict) else embeddings
        if len(vectors) != count:
            raise EmbeddingError(f"{self.spec.model_id} returned {len(vectors)} embeddings for {count} texts")
        return vectors

    def _invoke(self, texts: Sequence[str], query: bool) -> list[list[float]]:
        body = self._body(texts, query=query)
        try:
            response = self.client.invoke_model(
                modelId=self.spec.model_id,
                body=json.dumps(body),
                contentType="application/json",
                accept="application/json",
            )
            payload = json.loads(response["body"].read())
            return self._parse(payload, len(texts))
        except EmbeddingError:
            raise
        except Exception as error:
            code = getattr(error, "response", {}).get("Error", {}).get("Code") if hasattr(error, "response") else None
            hint = _RECOVERY_HINTS.get(code or "", "")
            if type(error).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
                hint = "configure AWS credentials (aws configure, AWS_PROFILE or environment variables)"
            message = f"Bedrock embedding with {self.spec.model_id} failed: {error}"
            raise EmbeddingError(f"{message}. {hint}" if hint else message) from error

    def _embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        limit = self.spec.max_chars
        prepared = []
        for text in texts:
            if len(text) > limit:
                logger.debug("chars=<%d>, limit=<%d> | text cut to the model's input limit", len(text), limit)
            prepared.append(text[:limit] if text.strip() else " ")
        batches = [prepared[i : i + self.spec.max_batch] for i in range(0, len(prepared), self.spec.max_batch)]
        if len(batches) == 1:
            results = [self._invoke(batches[0], query)]
        else:
            with ThreadPoolExecutor(max_workers=min(self._max_concurrency, len(batches))) as pool:
                results = list(pool.map(lambda batch: self._invoke(batch, query), batches))
        array = np.asarray([v for batch in results for v in batch], dtype=np.float32)
        if array.shape != (len(texts), self._dimension):
            raise EmbeddingError(
                f"{self.spec.model_id} returned vectors of shape {array.shape}, "
                f"expected ({len(texts)}, {self._dimension})"
            )
        return array

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts to archive (Cohere: ``input_type="search_document"``)."""
        return self._embed(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed queries (Cohere: ``input_type="search_query"``)."""
        return self._embed(texts, query=True)
