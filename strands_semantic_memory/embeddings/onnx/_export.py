"""Export a sentence-transformers model to ONNX, in memory, with pooling and normalization inside the graph.

``_runtime`` runs what this module produces; ``_cache`` keeps it between processes (an export imports PyTorch
and takes seconds); ``_quantize`` derives the int8 query graph from it.
"""

from __future__ import annotations

import io
import logging
import threading
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strands_semantic_memory.embeddings._local import load_sentence_transformer_uncached
from strands_semantic_memory.embeddings.onnx._dependencies import require_package
from strands_semantic_memory.errors import ConfigurationError, EmbeddingError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

__all__ = [
    "EXPORT_VERSION",
    "ExportedModel",
    "export_count",
    "export_sentence_transformer",
]

EXPORT_VERSION = 1
"""Version of what ``export_sentence_transformer`` builds; part of the cache key, so a change is never served
a graph an older exporter built."""
OPSET = 17

_exports = 0
_exports_lock = threading.Lock()


def export_count() -> int:
    """How many exports this process has run (a cached load runs none)."""
    return _exports


def _count_export() -> None:
    global _exports
    with _exports_lock:
        _exports += 1


@dataclass(frozen=True)
class ExportedModel:
    """An exported model: the fp32 graph and what is needed to tokenize for it.

    Attributes:
        graph: The serialized ONNX model: inputs ``input_ids`` and ``attention_mask`` (int64, batch x tokens),
            output ``embedding`` (float32, batch x dimension, unit rows: pooling and normalization included).
        tokenizer: The ``tokenizers`` JSON of the model's fast tokenizer.
        max_seq_length: Tokens kept per text (sentence-transformers' truncation).
        do_lower_case: Whether sentence-transformers lower-cases texts before tokenizing.
        dimension: Length of the vectors.
    """

    graph: bytes
    tokenizer: str
    max_seq_length: int
    do_lower_case: bool
    dimension: int


def _pooling_mode(model: SentenceTransformer) -> str:
    """The pooling the model uses, checked to be one this export reproduces."""
    modules: list[Any] = list(model)
    names = [type(module).__name__ for module in modules]
    if (
        len(modules) < 2
        or names[0] != "Transformer"
        or names[1] != "Pooling"
        or any(n != "Normalize" for n in names[2:])
    ):
        raise ConfigurationError(
            f"the ONNX backend exports Transformer + Pooling (+ Normalize) models only, this one has {names}; "
            "use backend='torch'"
        )
    pooling = modules[1]
    config = pooling.get_config_dict() if hasattr(pooling, "get_config_dict") else {}
    mode = str(config.get("pooling_mode", getattr(pooling, "pooling_mode", "")))
    if mode not in ("mean", "cls") or config.get("include_prompt", True) is not True:
        raise ConfigurationError(f"the ONNX backend supports mean or cls pooling, this model uses {mode!r}")
    return mode


def export_sentence_transformer(load_target: str) -> ExportedModel:
    """Export a sentence-transformers model to an in-memory ONNX graph (fp32, pooling and normalization inside).

    A private copy of the model is loaded with eager attention (its graph is the one ONNX Runtime fuses) and
    dropped afterwards; nothing is written to disk.

    Args:
        load_target: A folder or hub name sentence-transformers can load.

    Returns:
        The exported model.

    Raises:
        MissingDependencyError: If ``onnx`` (needed by the exporter) is not installed.
        ConfigurationError: If the model has modules the export does not reproduce.
        EmbeddingError: If the model cannot be loaded or exported.
    """
    require_package("onnx")
    import torch

    st_model = load_sentence_transformer_uncached(load_target, "cpu", {"attn_implementation": "eager"})
    mode = _pooling_mode(st_model)
    modules: list[Any] = list(st_model)
    transformer, pooling = modules[0], modules[1]
    encoder = transformer.auto_model.eval()
    dimension = int(pooling.get_config_dict().get("embedding_dimension", 0) or encoder.config.hidden_size)
    max_seq_length = int(st_model.max_seq_length or transformer.tokenizer.model_max_length)

    class PooledEncoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
            )[0]
            if mode == "cls":
                pooled = hidden[:, 0]
            else:
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1)

    example_ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102], [101, 2023, 102, 0, 0, 0]])
    example_mask = (example_ids != 0).to(torch.int64)
    buffer: Any = io.BytesIO()
    started = time.perf_counter()
    try:
        # The TorchScript exporter needs no extra package beyond onnx and exports this encoder in seconds;
        # torch's newer exporter needs onnxscript and takes several times longer. Its deprecation and tracer
        # warnings concern the export, not the caller: they are not shown.
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                PooledEncoder(),
                (example_ids, example_mask),
                buffer,
                dynamo=False,
                input_names=["input_ids", "attention_mask"],
                output_names=["embedding"],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    "embedding": {0: "batch"},
                },
                opset_version=OPSET,
            )
    except Exception as error:
        raise EmbeddingError(f"exporting '{load_target}' to ONNX failed: {type(error).__name__}: {error}") from error
    seconds = time.perf_counter() - started
    _count_export()
    logger.info("model=<%s>, seconds=<%.2f> | exported the embedding model to ONNX", load_target, seconds)
    backend_tokenizer = transformer.tokenizer.backend_tokenizer
    return ExportedModel(
        graph=buffer.getvalue(),
        tokenizer=backend_tokenizer.to_str(),
        max_seq_length=max_seq_length,
        do_lower_case=bool(getattr(transformer, "do_lower_case", False)),
        dimension=dimension,
    )
