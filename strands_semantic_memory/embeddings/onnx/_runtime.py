"""Sentence-transformers models run by ONNX Runtime: PyTorch's document vectors, int8 queries in ~3 ms.

Why: embedding the user's question was most of the hook's time (10-16 ms of 12-19 ms with PyTorch on 2 cores).
For one short query the cost is framework overhead and fp32 matrix products, not batching. Measured side by side
(one process per candidate, taking turns, on 2 cores shared with other work), the p50 of one query was:
PyTorch with its default 2 threads 0.9-1.3 s while the other core was busy (its OpenMP pool waits for a
descheduled thread; 6 ms in a quiet moment), PyTorch on 1 thread 25-40 ms, ONNX Runtime fp32 15-26 ms, the int8
query graph 1.9-5.8 ms (1.4-1.8 ms in the quietest rounds). In one process taking turns question by question over
the LoCoMo dev questions (13 tokens median, 1 thread, load average about 3): fp32 6.5 ms, int8 with one activation
scale per tensor 2.9 ms, int8 with row scaling (today's query graph) 3.3 ms.

What runs where:

- Documents go through the fp32 graph exported from the PyTorch model. Its vectors equal PyTorch's to float
  rounding (max |cosine difference| below 1e-6 on every LoCoMo dev turn), so an archive built with either
  backend is searched by the other: both carry the same ``model_id``.
- Queries go through a copy of that graph whose MatMul weights are int8 (per output channel, symmetric, 7 bits:
  u8 x s8 products then fit 16 bits, so CPUs without VNNI compute the same integers as CPUs with it) and whose
  activations are quantized at run time, each token's row scaled to unit maximum first
  (``_quantize``). Query vectors are never stored, so the archive is
  unaffected. On the 996 LoCoMo dev questions their cosine to the fp32 vector is 0.9974 on average and never below
  0.9960, and dense recall (the query vector alone decides) R@5/10/25/50 is 44.2/54.5/67.8/77.3 against
  43.7/54.1/67.4/76.9 with fp32 queries (within 0.5 points; one scale per tensor, the query graph before row
  scaling: cosine 0.9940 mean, 0.9887 min, R@10 1.3 points off). ``query_precision="float32"`` keeps fp32 queries.

Files: the exported graphs are kept in a cache (``_cache``: the platform's user cache folder, moved or turned off by
the ``STRANDS_SEMANTIC_MEMORY_CACHE`` environment variable, or ``cache_dir=``). The first process on a machine
exports the model from PyTorch (6-7 s on a quiet 2-core machine); later processes load the cached graphs without
importing PyTorch or sentence-transformers (well under a second). With the cache turned off, every process exports
in memory and writes nothing.

Needs the ``onnx`` extra (``onnxruntime``, and ``onnx`` to export and quantize).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from strands_semantic_memory.embeddings._base import Vectors
from strands_semantic_memory.embeddings._local import DEFAULT_MODEL, locate_model
from strands_semantic_memory.embeddings.onnx._cache import onnx_cache_dir, prepare_graphs
from strands_semantic_memory.embeddings.onnx._dependencies import require_package
from strands_semantic_memory.errors import (
    ConfigurationError,
    EmbeddingError,
    MissingDependencyError,
    ModelUnavailableError,
    SemanticMemoryError,
)

logger = logging.getLogger(__name__)

QUERY_PRECISIONS = ("int8", "float32")


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
    ort = require_package("onnxruntime")
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
    load_target: str,
    model_id: str,
    query_precision: str,
    cache_dir: Path | None,
    document_threads: int,
    query_threads: int,
) -> _Runtime:
    require_package("onnxruntime")
    from tokenizers import Tokenizer

    exported, int8 = prepare_graphs(load_target, model_id, query_precision == "int8", onnx_cache_dir(cache_dir))
    tokenizer = Tokenizer.from_str(exported.tokenizer)
    tokenizer.no_padding()
    tokenizer.enable_truncation(exported.max_seq_length)
    documents = _session(exported.graph, document_threads)
    queries = _session(int8, query_threads) if int8 is not None else documents
    return _Runtime(documents, queries, tokenizer, exported.max_seq_length, exported.do_lower_case, exported.dimension)


class OnnxEmbedder:
    """An ``Embedder`` running a sentence-transformers model on ONNX Runtime.

    Same model names and folders as ``SentenceTransformerEmbedder``
    (``all-MiniLM-L6-v2`` is the bundled offline model) and the same ``model_id``: documents are embedded by the
    fp32 graph, whose vectors equal PyTorch's, so archives move freely between the two backends. Queries use int8
    weights by default (see the module documentation for the measured cost and recall).

    Example:
        ```python
        from strands_semantic_memory import SemanticMemory
        from strands_semantic_memory.embeddings import OnnxEmbedder

        memory = SemanticMemory(embedder=OnnxEmbedder(query_precision="float32"))
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
            query_precision: ``"int8"`` (default, about 2x faster per short query than fp32 on one thread) or
                ``"float32"``.
            cache_dir: The folder to keep the exported graphs in (created if missing). None (default): the
                library's cache, ``<user cache folder>/strands-semantic-memory/onnx``, which the
                ``STRANDS_SEMANTIC_MEMORY_CACHE`` environment variable moves (a folder) or turns off (``off``).
            batch_size: Documents per run; documents are sorted by length first so a batch pads little.
            document_threads: ONNX Runtime threads for documents (default: up to 2, the CPUs available).
            query_threads: Threads for a query (default 1). One short query has too little work to share:
                measured on 2 cores (per-tensor int8 graph), query p50 2.4 ms on 1 thread against 3.8 ms on 2
                (threads that do not spin are woken for every call) when idle, 3.1 against 5.1 ms with other work
                running.
            query_prefix: Prepended to queries.
            document_prefix: Prepended to documents.

        Raises:
            ConfigurationError: For an unknown precision or a non-positive size or thread count.
            ModelUnavailableError: If the model is not on this machine (it is never downloaded).
        """
        if query_precision not in QUERY_PRECISIONS:
            raise ConfigurationError(f"query_precision must be one of {QUERY_PRECISIONS}, got {query_precision!r}")
        if batch_size <= 0:
            raise ConfigurationError(f"batch_size must be > 0, got {batch_size}")
        available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        document_threads = min(2, available) if document_threads is None else document_threads
        query_threads = 1 if query_threads is None else query_threads
        if document_threads <= 0 or query_threads <= 0:
            raise ConfigurationError(
                f"thread counts must be > 0, got document_threads={document_threads}, query_threads={query_threads}"
            )
        self._load_target, self._model_id = locate_model(model_name_or_path)
        self.query_precision = query_precision
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self.batch_size = batch_size
        self.document_threads = document_threads
        self.query_threads = query_threads
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self._load_error: SemanticMemoryError | None = None

    @property
    def model_id(self) -> str:
        """The model's name as stored with archives: the same as the PyTorch backend's."""
        return self._model_id

    @property
    def _runtime(self) -> _Runtime:
        """The loaded sessions, shared in the process by embedders of the same model, precision and threads.

        A failed load is remembered: later calls raise the same error at once instead of exporting again
        (``warm_up`` tries again).
        """
        key = (self._load_target, self.query_precision, self.document_threads, self.query_threads)
        runtime = _runtimes.get(key)
        if runtime is not None:
            return runtime
        if self._load_error is not None:
            raise self._load_error.with_traceback(None)
        with _runtimes_lock:
            runtime = _runtimes.get(key)
            if runtime is None:
                try:
                    runtime = _load_runtime(
                        self._load_target,
                        self._model_id,
                        self.query_precision,
                        self.cache_dir,
                        self.document_threads,
                        self.query_threads,
                    )
                except (MissingDependencyError, ModelUnavailableError) as error:
                    self._load_error = error
                    raise
                except Exception as error:
                    self._load_error = ModelUnavailableError(
                        self._model_id, f"ONNX Runtime could not load it ({type(error).__name__}: {error})"
                    )
                    raise self._load_error from error
                _runtimes[key] = runtime
        return runtime

    def warm_up(self) -> None:
        """Load (or export) the model now and run both graphs once, so the first real call does not pay for it.

        Raises:
            ModelUnavailableError: If the model cannot be loaded or exported.
            MissingDependencyError: If the ``onnx`` extra is not installed.
        """
        self._load_error = None
        self.embed_queries(["warm up"])
        self.embed_documents(["warm up"])

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
        """Embed texts to archive with the fp32 graph (see ``Embedder``)."""
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
