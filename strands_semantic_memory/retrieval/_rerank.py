"""Optional second-stage ranking: the ``Reranker`` protocol and a cross-encoder implementation.

Used only when configured. No cross-encoder weights ship on PyPI, so none is bundled: ranking quality depends
entirely on the model you supply, and this project publishes no numbers for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from strands_semantic_memory.errors import EmbeddingError, MissingDependencyError

logger = logging.getLogger(__name__)


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) pairs; higher means more relevant."""

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """Score each text against the query.

        Args:
            query: The user's question.
            texts: Candidate passages.

        Returns:
            One score per text, same order.
        """
        ...


class CrossEncoderReranker:
    """A ``Reranker`` over a sentence-transformers ``CrossEncoder`` (any model name or folder it accepts).

    The model loads on first use.
    """

    def __init__(self, model_name_or_path: str, *, device: str = "cpu", batch_size: int = 32, max_length: int = 512):
        """Configure the reranker.

        Args:
            model_name_or_path: A cross-encoder folder or hub name (for example ``cross-encoder/ms-marco-MiniLM-L6-v2``
                if it is in your Hugging Face cache).
            device: Torch device.
            batch_size: Pairs per forward pass.
            max_length: Token limit per pair.
        """
        self.model_name_or_path = model_name_or_path
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self._model: Any | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The loaded ``CrossEncoder``."""
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import CrossEncoder
                except ImportError as error:
                    raise MissingDependencyError("CrossEncoderReranker", "", "sentence-transformers") from error
                logger.info("model=<%s> | loading cross-encoder", self.model_name_or_path)
                try:
                    self._model = CrossEncoder(self.model_name_or_path, device=self.device, max_length=self.max_length)
                except Exception as error:
                    raise EmbeddingError(
                        f"could not load the cross-encoder '{self.model_name_or_path}': {error}"
                    ) from error
            return self._model

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """Score each text against the query with the cross-encoder."""
        if not texts:
            return []
        scores = self.model.predict(
            [(query, text) for text in texts], batch_size=self.batch_size, show_progress_bar=False
        )
        return [float(s) for s in scores]
