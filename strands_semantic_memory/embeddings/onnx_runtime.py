"""Sentence-transformers models run by ONNX Runtime: PyTorch's document vectors, int8 queries in ~2 ms.

Why: embedding the user's question was most of the hook's time (10-16 ms of 12-19 ms with PyTorch on 2 cores).
For one short query the cost is framework overhead and fp32 matrix products, not batching. Measured side by side
(one process per candidate, taking turns, on 2 cores shared with other work), the p50 of one query was:
PyTorch with its default 2 threads 0.9-1.3 s while the other core was busy (its OpenMP pool waits for a
descheduled thread; 6 ms in a quiet moment), PyTorch on 1 thread 25-40 ms, ONNX Runtime fp32 15-26 ms, this
module's int8 query graph 1.9-5.8 ms (1.4-1.8 ms in the quietest rounds).

What runs where:

- Documents go through the fp32 graph exported from the PyTorch model. Its vectors equal PyTorch's to float
  rounding (max |cosine difference| below 1e-6 on every LoCoMo dev turn), so an archive built with either
  backend is searched by the other: both carry the same ``model_id``.
- Queries go through a copy of that graph whose MatMul weights are int8, per output channel, symmetric, 7 bits
  (``reduce_range``: u8 x s8 products then fit 16 bits, so CPUs without VNNI compute the same integers as CPUs
  with it). Query vectors are never stored, so the archive is unaffected; their cosine to the fp32 vector is
  >= 0.98 and dense recall on LoCoMo dev moved by under one point (R@5/10/25/50 36.78/46.65/59.94/70.67 fp32
  queries, 36.94/47.48/60.66/71.35 int8 queries). ``query_precision="float32"`` keeps fp32 queries.

Files: none by default. The graph is exported in memory (a few seconds, once per process) from the PyTorch
model, which is then dropped. With ``cache_dir=`` (a folder the caller chooses) the exported graphs are kept
there, keyed by a digest of the model folder, and later processes load them without importing PyTorch or
sentence-transformers (well under a second).

Needs the ``onnx`` extra (``onnxruntime``, and ``onnx`` to export and quantize).
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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigurationError, EmbeddingError, MissingDependencyError
from .base import Vectors
from .local import DEFAULT_MODEL, load_sentence_transformer_uncached, resolve_local_model

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

ONNX_EXTRA = "onnx"
CACHE_FORMAT = 1
"""Version of the exported graph and of the cache layout; a change makes old cache entries unused."""
QUERY_PRECISIONS = ("int8", "float32")
_OPSET = 17
_QUANT_BITS = 7


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


def _require(package: str) -> Any:
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
    _require("onnx")
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


def quantize_weights_int8(graph: bytes, bits: int = _QUANT_BITS) -> bytes:
    """Dynamic int8 quantization of every MatMul with a constant 2-D weight, in memory.

    Each such ``MatMul(x, W)`` becomes ``DynamicQuantizeLinear(x)`` (u8, per tensor, computed at run time),
    ``MatMulInteger`` with ``W`` quantized per output column (symmetric, ``bits`` bits, zero point 0), a cast and a
    rescale: the pattern ONNX Runtime fuses into its ``DynamicQuantizeMatMul`` kernel. Embeddings, attention
    products, layer norms and pooling stay fp32. (onnxruntime's own ``quantize_dynamic`` writes temporary files
    and also quantizes the embedding tables, which costs accuracy and gains no speed.)

    Args:
        graph: A serialized fp32 ONNX model.
        bits: Bits of the weights, 2..8; 7 keeps u8 x s8 products within 16 bits on every x86 CPU.

    Returns:
        The serialized quantized model.

    Raises:
        MissingDependencyError: If ``onnx`` is not installed.
        ConfigurationError: For bits outside 2..8.
    """
    if not 2 <= bits <= 8:
        raise ConfigurationError(f"bits must be in 2..8, got {bits}")
    onnx = _require("onnx")
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load_from_string(graph)
    initializers = {init.name: init for init in model.graph.initializer}
    limit = 2 ** (bits - 1) - 1
    nodes: list[Any] = []
    added: list[Any] = []
    replaced: set[str] = set()
    quantized_inputs: dict[str, tuple[str, str, str]] = {}
    for node in model.graph.node:
        weight = initializers.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if weight is None or len(weight.dims) != 2:
            nodes.append(node)
            continue
        values = numpy_helper.to_array(weight).astype(np.float32)
        scale = np.abs(values).max(axis=0) / limit
        scale[scale == 0] = 1.0
        quantized = np.clip(np.rint(values / scale), -limit, limit).astype(np.int8)
        source = node.input[0]
        if source not in quantized_inputs:  # q, k and v share their input: quantize it once
            quantized_inputs[source] = (f"{source}/q", f"{source}/scale", f"{source}/zero")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [source], list(quantized_inputs[source])))
        q_input, input_scale, input_zero = quantized_inputs[source]
        name = f"{weight.name}/int8"
        replaced.add(weight.name)
        added += [
            numpy_helper.from_array(quantized, name),
            numpy_helper.from_array(np.zeros(values.shape[1], np.int8), f"{name}/zero"),
            numpy_helper.from_array(scale.astype(np.float32), f"{name}/scale"),
        ]
        out = node.output[0]
        nodes += [
            helper.make_node("MatMulInteger", [q_input, name, input_zero, f"{name}/zero"], [f"{out}/i32"]),
            helper.make_node("Cast", [f"{out}/i32"], [f"{out}/f32"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [input_scale, f"{name}/scale"], [f"{out}/scale"]),
            helper.make_node("Mul", [f"{out}/f32", f"{out}/scale"], [out]),
        ]
    kept = [init for init in model.graph.initializer if init.name not in replaced]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept + added)
    logger.debug("matmuls=<%d> | quantized the query graph to int8", len(replaced))
    return bytes(model.SerializeToString())


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


class _ModelCache:
    """Exported graphs in a folder the caller chose: ``<key>.fp32.onnx``, ``<key>.int8.onnx``, ``<key>.json``."""

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
            int8_path = self._path("int8.onnx")
            int8 = int8_path.read_bytes() if want_int8 and int8_path.exists() else None
        except (OSError, ValueError, KeyError, TypeError) as error:
            logger.debug("folder=<%s>, error=<%s> | no usable cached ONNX model", self.folder, error)
            return None
        return exported, int8

    def save(self, exported: ExportedModel, int8: bytes | None) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(self._path("fp32.onnx"), exported.graph)
            if int8 is not None:
                _write_atomic(self._path("int8.onnx"), int8)
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


@dataclass
class _Runtime:
    """The loaded sessions and tokenizer of one model (shared by embedders in the process)."""

    documents: Any
    queries: Any
    tokenizer: Any
    max_seq_length: int
    do_lower_case: bool
    dimension: int


_runtimes: dict[tuple[Any, ...], _Runtime] = {}
_runtimes_lock = threading.Lock()


def _session(graph: bytes, threads: int) -> Any:
    ort = _require("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle worker threads spinning between calls took the other core from FAISS and the caller's own work.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def _load_runtime(
    load_target: str, query_precision: str, cache_dir: Path | None, document_threads: int, query_threads: int
) -> _Runtime:
    _require("onnxruntime")
    from tokenizers import Tokenizer

    want_int8 = query_precision == "int8"
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
        if cache is not None:
            cache.save(exported, int8)
    elif found is None and cache is not None:
        cache.save(exported, None)
    tokenizer = Tokenizer.from_str(exported.tokenizer)
    tokenizer.no_padding()
    tokenizer.enable_truncation(exported.max_seq_length)
    documents = _session(exported.graph, document_threads)
    queries = _session(int8, query_threads) if int8 is not None else documents
    return _Runtime(documents, queries, tokenizer, exported.max_seq_length, exported.do_lower_case, exported.dimension)


class OnnxEmbedder:
    """An :class:`~strands_semantic_memory.embeddings.Embedder` running a sentence-transformers model on ONNX Runtime.

    Same model names and folders as :class:`~strands_semantic_memory.embeddings.SentenceTransformerEmbedder`
    (``all-MiniLM-L6-v2`` is the bundled offline model) and the same ``model_id``: documents are embedded by the
    fp32 graph, whose vectors equal PyTorch's, so archives move freely between the two backends. Queries use int8
    weights by default (see the module documentation for the measured cost and recall).

    Example:
        ```python
        from strands_semantic_memory import SemanticMemory
        from strands_semantic_memory.embeddings import OnnxEmbedder

        memory = SemanticMemory(embedder=OnnxEmbedder(cache_dir="~/.cache/my-app/onnx"))
        ```
    """

    def __init__(
        self,
        model_name_or_path: str = DEFAULT_MODEL,
        *,
        query_precision: str = "int8",
        cache_dir: str | os.PathLike[str] | None = None,
        batch_size: int = 32,
        document_threads: int | None = None,
        query_threads: int | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        """Create the embedder; the model is exported or loaded on first use.

        Args:
            model_name_or_path: A sentence-transformers model (Transformer, mean or cls Pooling, Normalize).
            query_precision: ``"int8"`` (default, about 5x faster per query) or ``"float32"``.
            cache_dir: A folder to keep the exported graphs in (created if missing); None writes no files and
                exports in memory in each process.
            batch_size: Documents per run; documents are sorted by length first so a batch pads little.
            document_threads: ONNX Runtime threads for documents (default: up to 2, the CPUs available).
            query_threads: Threads for a query (default: up to 2). On a loaded 2-core machine 2 threads gave
                a lower p50 and p95 than 1; on an idle one 1 thread was marginally faster.
            query_prefix: Prepended to queries.
            document_prefix: Prepended to documents.

        Raises:
            ConfigurationError: For an unknown precision or a non-positive size or thread count.
        """
        if query_precision not in QUERY_PRECISIONS:
            raise ConfigurationError(f"query_precision must be one of {QUERY_PRECISIONS}, got {query_precision!r}")
        if batch_size <= 0:
            raise ConfigurationError(f"batch_size must be > 0, got {batch_size}")
        available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        document_threads = min(2, available) if document_threads is None else document_threads
        query_threads = min(2, available) if query_threads is None else query_threads
        if document_threads <= 0 or query_threads <= 0:
            raise ConfigurationError(
                f"thread counts must be > 0, got document_threads={document_threads}, query_threads={query_threads}"
            )
        self._load_target, self._model_id = resolve_local_model(model_name_or_path)
        self.query_precision = query_precision
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self.batch_size = batch_size
        self.document_threads = document_threads
        self.query_threads = query_threads
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix

    @property
    def model_id(self) -> str:
        """The model's name as stored with archives: the same as the PyTorch backend's."""
        return self._model_id

    @property
    def _runtime(self) -> _Runtime:
        key = (self._load_target, self.query_precision, self.cache_dir, self.document_threads, self.query_threads)
        with _runtimes_lock:
            runtime = _runtimes.get(key)
            if runtime is None:
                runtime = _load_runtime(
                    self._load_target, self.query_precision, self.cache_dir, self.document_threads, self.query_threads
                )
                _runtimes[key] = runtime
        return runtime

    @property
    def dimension(self) -> int:
        """Vector length (loads the model on first access)."""
        return self._runtime.dimension

    def _run(self, session: Any, texts: Sequence[str], prefix: str) -> Vectors:
        runtime = self._runtime
        inputs = [prefix + text for text in texts]
        if runtime.do_lower_case:
            inputs = [text.lower() for text in inputs]
        try:
            encodings = (
                runtime.tokenizer.encode_batch(inputs) if len(inputs) > 1 else [runtime.tokenizer.encode(inputs[0])]
            )
            order = sorted(range(len(inputs)), key=lambda i: len(encodings[i].ids))
            out = np.empty((len(inputs), runtime.dimension), dtype=np.float32)
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                width = max(len(encodings[i].ids) for i in rows)
                ids: npt.NDArray[np.int64] = np.zeros((len(rows), width), dtype=np.int64)
                mask: npt.NDArray[np.int64] = np.zeros((len(rows), width), dtype=np.int64)
                for row, index in enumerate(rows):
                    length = len(encodings[index].ids)
                    ids[row, :length] = encodings[index].ids
                    mask[row, :length] = 1
                out[rows] = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        except Exception as error:
            raise EmbeddingError(f"embedding with '{self._model_id}' on ONNX Runtime failed: {error}") from error
        return out

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts to archive with the fp32 graph (see :class:`Embedder`)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._run(self._runtime.documents, texts, self.document_prefix)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed queries with the query graph (int8 unless ``query_precision="float32"``)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._run(self._runtime.queries, texts, self.query_prefix)


def onnx_available() -> bool:
    """Whether the ``onnx`` extra is installed (onnxruntime and onnx importable), without importing them."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))
