"""The archive at scale: approximate vector search at 1M vectors, reopening, restoring, memory, a fresh process.

- ``archives._vectors.VectorIndex`` grown to 1,000,000 vectors one message at a time (as archiving does): search
  latency on one thread and recall@10 against exact search. The vectors beyond the real ones are synthetic: a real
  LoCoMo vector of the bundled model plus Gaussian noise (cosine about 0.75 to it), renormalized, so they keep the
  real ones' neighbourhoods; queries are real LoCoMo questions' vectors. Recall on 1M real embeddings is not measured.
- Reopening a durable archive of 100,000 messages (``SqliteArchive(path)``: the file's vectors are loaded).
- Restoring 10,000 messages from JSON state (``SemanticMemory.from_state``), with no embedding call.
- Memory per message at 100,000 in process (a child process's growth while it archives them).
- A fresh process's first search (``python -c``): import, ``SemanticMemory()``, 10 messages, one search.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import _speed
from benchmarks.common import Section, Settings, spread, table

BLOCK = 50_000


def _block(real: np.ndarray, number: int) -> np.ndarray:
    """Synthetic block ``number`` (always the same vectors for the same number)."""
    rng = np.random.default_rng(number)
    centres = real[rng.integers(0, len(real), BLOCK)]
    sample = centres + rng.standard_normal(centres.shape, dtype=np.float32) * 0.045
    out: np.ndarray = (sample / np.linalg.norm(sample, axis=1, keepdims=True)).astype(np.float32)
    return out


def vector_index(
    real: np.ndarray, queries: np.ndarray, count: int, approximate_above: int | None = None
) -> dict[str, Any]:
    """Grow a ``VectorIndex`` to ``count`` vectors and search it; recall@10 against an exact scan of the same."""
    from strands_semantic_memory.archives._vectors import APPROXIMATE_ABOVE, VectorIndex

    before = _speed.rss()
    index = VectorIndex(real.shape[1], approximate_above or APPROXIMATE_ABOVE)
    best: list[np.ndarray] = [np.full((len(queries), 10), -np.inf, dtype=np.float32),
                              np.zeros((len(queries), 10), dtype=np.int64)]  # fmt: skip
    started = time.perf_counter()
    for number in range(0, -(-count // BLOCK)):
        block = _block(real, number)[: count - number * BLOCK]
        for row in range(len(block)):
            index.add(number * BLOCK + row, block[row : row + 1], None)
        scores = queries @ block.T  # exact: keep the running top 10
        merged = np.concatenate([best[0], scores], axis=1)
        ids = np.concatenate([best[1], np.broadcast_to(np.arange(len(block)) + number * BLOCK, scores.shape)], axis=1)
        top = np.argsort(-merged, axis=1)[:, :10]
        best = [np.take_along_axis(merged, top, 1), np.take_along_axis(ids, top, 1)]
    build = time.perf_counter() - started
    grown = _speed.rss() - before
    latencies, hits = [], 0
    for row, query in enumerate(queries):
        started = time.perf_counter()
        found = index.search(query, 10)
        latencies.append((time.perf_counter() - started) * 1000)
        hits += len(set(found) & set(best[1][row].tolist()))
    return {"count": count, "build_seconds": build, "approximate": index._ivf is not None,
            "search": _speed.latency_summary(latencies), "recall_at_10": hits / (10 * len(queries)),
            "bytes_per_vector": grown / count}  # fmt: skip


def reopen(source: Path, repeats: int) -> dict[str, Any]:
    """Seconds to open a durable archive (its vectors loaded), ``repeats`` times on a copy of the cached file."""
    from strands_semantic_memory.archives import SqliteArchive

    with tempfile.TemporaryDirectory(prefix="ssm-open-") as folder:
        path = _speed.copy_archive(source, Path(folder))
        SqliteArchive(path, user_id=_speed.USER).close()  # the first open after a copy settles the WAL
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            archive = SqliteArchive(path, user_id=_speed.USER)
            times.append(time.perf_counter() - started)
            count = archive.stats().count
            archive.close()
        return {"count": count, "seconds": spread(times), "file_bytes": path.stat().st_size}


class _Counting:
    """The cached embedder, counting document calls (a restore must make none)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.documents = inner, 0
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.documents += 1
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Any:
        return self.inner.embed_queries(texts)


def restore(locomo: Path, size: int, repeats: int) -> dict[str, Any]:
    """Seconds from a JSON payload to a restored in-process memory of ``size`` messages (``json.loads`` included)."""
    from strands_semantic_memory import SemanticMemory

    embedder = _Counting(_speed.cached_embedder())
    with SemanticMemory(embedder=embedder, embedding="background", user_id=_speed.USER) as memory:
        _speed.fill(memory, _speed.locomo_messages(locomo, size))
        payload = json.dumps(memory.to_state(), separators=(",", ":"))
    embedder.documents = 0
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        restored = SemanticMemory.from_state(json.loads(payload), embedder=embedder)
        times.append(time.perf_counter() - started)
        assert restored.stats().count == size and restored.stats().pending == 0
        restored.close()
    return {"count": size, "seconds": spread(times), "state_bytes": len(payload), "embedding_calls": embedder.documents}


def memory_child(locomo: Path, size: int) -> dict[str, Any]:
    """In this (child) process: resident growth while ``size`` messages are archived in process."""
    from strands_semantic_memory import SemanticMemory

    embedder = _speed.cached_embedder()  # its vectors are loaded before the baseline
    messages = _speed.locomo_messages(locomo, size)
    embedder.embed_documents(["load the model"])
    before = _speed.rss()
    memory = SemanticMemory(embedder=embedder, embedding="background", user_id=_speed.USER)
    _speed.fill(memory, messages)
    grown = _speed.rss() - before
    text = sum(len(m["content"][0]["text"].encode()) for m, _ in messages)
    return {"count": size, "bytes_per_message": grown / size, "text_bytes_per_message": text / size}


FIRST_SEARCH = """
import json, time
started = time.perf_counter()
from strands_semantic_memory import SemanticMemory
imported = time.perf_counter()
memory = SemanticMemory()
built = time.perf_counter()
memory.add([{"role": "user" if i % 2 == 0 else "assistant",
             "content": [{"text": f"message {i}: the order number is ORD-{1000 + i}, shipped to Lisbon"}]}
            for i in range(10)])
added = time.perf_counter()
first = memory.search("what was the order number?")
done = time.perf_counter()
while memory.search("which order number went to Lisbon?").lexical_only:
    time.sleep(0.05)
dense = time.perf_counter()
print(json.dumps({"import": imported - started, "add": added - built, "first": done - started,
                  "first_lexical": first.lexical_only,
                  "dense": dense - started, "found": bool(first)}))
"""


def child(arguments: list[str]) -> tuple[dict[str, Any], float]:
    """Run a child Python with this checkout first on its path; its last line of output as JSON, and its seconds."""
    environment = {**os.environ, "PYTHONPATH": str(_speed.ROOT)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *arguments], capture_output=True, text=True, env=environment, check=False,
                          cwd=_speed.ROOT)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the child failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), time.perf_counter() - started


def run(settings: Settings) -> dict[str, Any]:
    vectors, durable, restored, resident, fresh, asked, switch = _speed.sized(
        settings, (1_000_000, 100_000, 10_000, 100_000, 3, 200, None), (60_000, 2_000, 1_000, 2_000, 1, 20, None),
        (6_000, 200, 100, 200, 1, 10, 2_500))  # fmt: skip
    embedder = _speed.cached_embedder()
    real = np.asarray(embedder.embed_documents([t for _, t, *_ in _speed.locomo_turns(settings.locomo)]))
    queries = np.asarray(embedder.embed_queries(_speed.questions(settings.locomo)[:asked]))
    embedder.flush()
    firsts = [child(["-c", FIRST_SEARCH]) for _ in range(fresh)]
    return {
        "vector_index": vector_index(real, queries, vectors, switch),
        "reopen": reopen(_speed.cached_archive(settings.locomo, durable), 3),
        "restore": restore(settings.locomo, restored, 3),
        "memory": child(["-m", "benchmarks.scale", str(settings.locomo), str(resident)])[0],
        "first_search": {key: spread([f[key] for f, _ in firsts]) for key in ("import", "add", "first", "dense")}
        | {"process": spread([seconds for _, seconds in firsts]), "lexical": [f["first_lexical"] for f, _ in firsts]},
    }


def render(data: dict[str, Any], output: Path) -> str:
    v, o, r, m, f = data["vector_index"], data["reopen"], data["restore"], data["memory"], data["first_search"]
    s = _speed.with_spread
    rows = [
        [f"vector search, {v['count']:,} vectors ({'approximate' if v['approximate'] else 'exact'})",
         f"p50 {_speed.ms(v['search']['p50'])} ms, p99 {_speed.ms(v['search']['p99'])} ms; recall@10 "
         f"{v['recall_at_10']:.3f}; built in {v['build_seconds']:.0f} s; {v['bytes_per_vector']:,.0f} bytes/vector"],
        [f"reopen a durable archive of {o['count']:,}", f"{s(o['seconds'], 2)} s ({o['file_bytes'] / 1e6:,.0f} MB file)"],
        [f"restore {r['count']:,} from JSON state", f"{s(r['seconds'], 2)} s ({r['state_bytes'] / 1e6:,.1f} MB of "
         f"JSON, {r['embedding_calls']} embedding calls)"],
        [f"memory per message at {m['count']:,} (in process)", f"{m['bytes_per_message']:,.0f} bytes of process "
         f"growth ({m['text_bytes_per_message']:,.0f} of them the text)"],
        ["a fresh process's first search", f"{s(f['first'], 2)} s from the import to the first result (import "
         f"{s(f['import'], 2)} s; the first `add`, inline embedding waiting for the model to load, {s(f['add'], 2)} s; "
         f"searched by words: {f['lexical']}); {s(f['dense'], 2)} s to a search with the query vector; the whole "
         f"process {s(f['process'], 2)} s"],
    ]  # fmt: skip
    return "\n\n".join(
        [
            "`benchmarks/scale.py`. Timings are median (min to max) of repeated runs. The vector index's vectors beyond "
            "the real LoCoMo ones are synthetic (a real vector plus Gaussian noise, renormalized): recall@10 on a million "
            "real embeddings was not measured. The first search: the core keeps no model cache to fill (the bundled "
            "weights are read on every start), so a first-ever run is a warm one; the OS file cache was not dropped.",
            table(["what", "measured"], rows),
        ]
    )


SECTION = Section("scale", "The archive at scale", run, render)

if __name__ == "__main__":
    print(json.dumps(memory_child(Path(sys.argv[1]), int(sys.argv[2]))))
