"""Export a sentence-transformers model to ONNX, quantize its query graph to int8, and cache both.

``_runtime`` runs what this module produces. The export happens in
memory from the PyTorch model (a few seconds, once per process); ``prepare_graphs`` keeps the graphs in a
folder the caller chooses, keyed by a digest of the model folder (the query graph also by its version), so later
processes load them without importing PyTorch or sentence-transformers. Why int8 queries and what they cost in
accuracy: see ``onnx_runtime`` and ``onnx_quantize``.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strands_semantic_memory.embeddings._local import load_sentence_transformer_uncached
from strands_semantic_memory.embeddings.onnx._quantize import QUERY_GRAPH_VERSION, quantize_weights_int8
from strands_semantic_memory.errors import ConfigurationError, EmbeddingError, MissingDependencyError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

__all__ = [
    "CACHE_FORMAT",
    "ExportedModel",
    "export_sentence_transformer",
    "prepare_graphs",
    "quantize_weights_int8",
    "require_package",
]

ONNX_EXTRA = "onnx"
CACHE_FORMAT = 1
"""Version of the exported graph and of the cache layout; a change makes old cache entries unused."""
_OPSET = 17


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


def require_package(package: str) -> Any:
    """Import an ONNX dependency, or fail with an ImportError that names the extra to install."""
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as error:
        raise MissingDependencyError("ONNX Runtime embeddings", ONNX_EXTRA, package) from error


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
                opset_version=_OPSET,
            )
    except Exception as error:
        raise EmbeddingError(f"exporting '{load_target}' to ONNX failed: {type(error).__name__}: {error}") from error
    seconds = time.perf_counter() - started
    logger.info(
        "model=<%s>, seconds=<%.2f> | exported the embedding model to ONNX (pass cache_dir= to keep it)",
        load_target,
        seconds,
    )
    backend_tokenizer = transformer.tokenizer.backend_tokenizer
    return ExportedModel(
        graph=buffer.getvalue(),
        tokenizer=backend_tokenizer.to_str(),
        max_seq_length=max_seq_length,
        do_lower_case=bool(getattr(transformer, "do_lower_case", False)),
        dimension=dimension,
    )


def _folder_digest(folder: Path) -> str:
    """sha256 over every file of a model folder (names and contents), for cache keys."""
    digest = hashlib.sha256(f"format={CACHE_FORMAT}".encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


_QUERY_GRAPH = f"int8-v{QUERY_GRAPH_VERSION}.onnx"
"""File suffix of the cached query graph: a graph built by another version of the quantization is never loaded."""
_OLD_QUERY_GRAPHS = ("int8.onnx", *(f"int8-v{version}.onnx" for version in range(2, QUERY_GRAPH_VERSION)))
"""Query graphs this module wrote before (version 1 had no version in its name): removed when replaced."""


class _ModelCache:
    """Exported graphs in a folder the caller chose: ``<key>.fp32.onnx``, ``<key>.int8-v<N>.onnx``, ``<key>.json``."""

    def __init__(self, folder: Path, digest: str) -> None:
        self.folder = folder
        self.digest = digest

    def _path(self, suffix: str) -> Path:
        return self.folder / f"{self.digest[:32]}.{suffix}"

    def load(self, want_int8: bool) -> tuple[ExportedModel, bytes | None] | None:
        try:
            meta = json.loads(self._path("json").read_text(encoding="utf-8"))
            if meta.get("format") != CACHE_FORMAT or meta.get("digest") != self.digest:
                return None
            exported = ExportedModel(
                graph=self._path("fp32.onnx").read_bytes(),
                tokenizer=str(meta["tokenizer"]),
                max_seq_length=int(meta["max_seq_length"]),
                do_lower_case=bool(meta["do_lower_case"]),
                dimension=int(meta["dimension"]),
            )
            int8_path = self._path(_QUERY_GRAPH)
            int8 = int8_path.read_bytes() if want_int8 and int8_path.exists() else None
        except (OSError, ValueError, KeyError, TypeError) as error:
            logger.debug("folder=<%s>, error=<%s> | no usable cached ONNX model", self.folder, error)
            return None
        return exported, int8

    def save_query_graph(self, int8: bytes) -> None:
        """Add the query graph to a complete entry (and remove the query graphs of older versions)."""
        try:
            _write_atomic(self._path(_QUERY_GRAPH), int8)
            for old in _OLD_QUERY_GRAPHS:
                self._path(old).unlink(missing_ok=True)
        except OSError as error:
            logger.warning("folder=<%s>, error=<%s> | could not cache the ONNX query graph", self.folder, error)

    def save(self, exported: ExportedModel, int8: bytes | None) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(self._path("fp32.onnx"), exported.graph)
            if int8 is not None:
                self.save_query_graph(int8)
            meta = {
                "format": CACHE_FORMAT,
                "digest": self.digest,
                "max_seq_length": exported.max_seq_length,
                "do_lower_case": exported.do_lower_case,
                "dimension": exported.dimension,
                "tokenizer": exported.tokenizer,
            }
            _write_atomic(self._path("json"), json.dumps(meta).encode("utf-8"))  # written last: marks complete
        except OSError as error:
            logger.warning("folder=<%s>, error=<%s> | could not cache the ONNX model", self.folder, error)


def prepare_graphs(load_target: str, want_int8: bool, cache_dir: Path | None) -> tuple[ExportedModel, bytes | None]:
    """The fp32 graph and, if wanted, the int8 query graph: from the cache, else exported (and then cached).

    Args:
        load_target: The model folder (or name) sentence-transformers loads.
        want_int8: Whether the int8 query graph is needed.
        cache_dir: Where exported graphs are kept; None exports every time. Only a local folder is cached.

    Returns:
        The exported model and the int8 graph (None when not wanted).
    """
    folder = Path(load_target)
    cache = _ModelCache(cache_dir, _folder_digest(folder)) if cache_dir is not None and folder.is_dir() else None
    if cache_dir is not None and cache is None:
        logger.info("model=<%s> | not a local folder: the ONNX export is not cached", load_target)
    found = cache.load(want_int8) if cache is not None else None
    if found is not None:
        exported, int8 = found
        logger.info("model=<%s>, cache=<%s> | loaded the ONNX model from the cache", load_target, cache_dir)
    else:
        exported, int8 = export_sentence_transformer(load_target), None
    if want_int8 and int8 is None:
        int8 = quantize_weights_int8(exported.graph)
        if cache is not None and found is not None:  # a cached fp32 graph without this version's query graph
            cache.save_query_graph(int8)
        elif cache is not None:
            cache.save(exported, int8)
    elif found is None and cache is not None:
        cache.save(exported, None)
    return exported, int8
