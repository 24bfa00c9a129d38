"""Restore: a saved archive restored from JSON state (no embedding), against the naive restore that embeds again."""

from __future__ import annotations

import gc
import json
import time
from typing import Any, ClassVar

import numpy as np

from benchmarks.measure.base import Measurement, Run
from benchmarks.measure.naive import NaiveMemory
from benchmarks.measure.sizes import Settings
from benchmarks.measure.tools import PrecomputedEmbedder, build_memory, cyclic_messages, spread
from benchmarks.results import Pool, RestoreResult
from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.messages import render_message


def restore(settings: Settings, embedder: Any, pool: Pool) -> RestoreResult:
    """Save and restore an archive of ``restore_size`` messages: ours (no embedding) vs naive (re-embedding)."""
    pre = PrecomputedEmbedder(embedder, pool["texts"], pool["vectors"])
    messages = cyclic_messages(pool, settings.restore_size)
    memory = build_memory(pre, messages)
    payload = json.dumps(memory.to_state())
    calls_before = (pre.document_calls, pre.query_calls)
    seconds = []
    for _ in range(settings.repeats):
        gc.collect()
        started = time.perf_counter()
        restored = SemanticMemory.from_state(json.loads(payload), embedder=pre)
        seconds.append(time.perf_counter() - started)
        assert len(restored) == len(messages)
        del restored
    embedding_calls = (pre.document_calls - calls_before[0]) + (pre.query_calls - calls_before[1])
    naive = NaiveMemory(embedder, pool["vectors"].shape[1])
    subset = [f"{render_message(m)} (naive restore {n})" for n, m in enumerate(messages[: settings.naive_restore_size])]
    naive.bulk_load(subset, embedder.embed_documents(subset[:1]).repeat(len(subset), axis=0))
    naive_payload = naive.dump()
    started = time.perf_counter()
    NaiveMemory.restore(naive_payload, embedder, pool["vectors"].shape[1])  # embeds every message again
    naive_seconds = (time.perf_counter() - started) * len(messages) / len(subset)
    return {
        "size": len(messages),
        "seconds": float(np.median(seconds)),
        "spread": spread(seconds),
        "embedding_calls": embedding_calls,
        "state_bytes": len(payload),
        "naive_seconds": naive_seconds,
        "naive_measured_on": len(subset),
    }


class Restore(Measurement):
    """Restore of ``run.sizes.run.restore_size`` messages from JSON state."""

    name: ClassVar[str] = "restore"
    label: ClassVar[str] = "restore"
    uses_pool: ClassVar[bool] = True

    def measure(self, run: Run) -> RestoreResult:
        """Ours against the naive restore, on the run's pool."""
        return restore(run.sizes.run, run.embedder, run.require_pool())
