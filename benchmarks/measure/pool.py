"""The pool: filler messages embedded once with the real model, which the scale measurements share.

Archives of every size are built from it (larger ones repeat it), with its vectors served by a
``PrecomputedEmbedder``, so no measurement embeds 100,000 texts. Embedding it is timed: the document embedding
cost per message. With a comparison backend, the pool's first texts are embedded again to check that the two
backends' document vectors agree and to compare their cost.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.data.conversations import filler_messages
from benchmarks.measure.tools import backend_of
from benchmarks.results import Pool
from strands_semantic_memory.messages import render_message


def embed_pool(embedder: Any, size: int, compare: Any = None, compare_size: int = 500) -> Pool:
    """Embed ``size`` filler messages once; the timing is the embedding cost per message.

    With ``compare`` (another backend of the same model, e.g. PyTorch beside ONNX Runtime), the first
    ``compare_size`` texts are embedded by it as well: its cost per message, and the largest cosine difference
    between the two backends' document vectors (they should agree to float rounding, which is why the pool is
    embedded only once and shared).
    """
    messages = filler_messages(size, seed=101)
    texts = [render_message(m) for m in messages]
    started = time.perf_counter()
    vectors = embedder.embed_documents(texts)
    seconds = time.perf_counter() - started
    distinct = len(set(texts))
    pool: Pool = {
        "messages": messages,
        "texts": texts,
        "vectors": vectors,
        "seconds": seconds,
        "ms_per_message": seconds * 1000 / size,
        "distinct": distinct,
        "backend": backend_of(embedder),
    }
    if compare is not None:
        subset = texts[: min(compare_size, size)]
        compare.embed_documents(subset[:2])  # load the model outside the timing
        started = time.perf_counter()
        other = np.asarray(compare.embed_documents(subset), dtype=np.float32)
        elapsed = time.perf_counter() - started
        ours = np.asarray(vectors[: len(subset)], dtype=np.float32)
        pool["compare"] = {
            "backend": backend_of(compare),
            "measured_on": len(subset),
            "ms_per_message": elapsed * 1000 / len(subset),
            "default_ms_per_message_same_texts": _time_per_message(embedder, subset),
            "max_cosine_difference": float(np.max(np.abs(np.sum(ours * other, axis=1) - 1.0))),
        }
    return pool


def _time_per_message(embedder: Any, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    embedder.embed_documents(texts)
    return (time.perf_counter() - started) * 1000 / len(texts)
