"""Run the benchmark suite and regenerate docs/benchmarks.md and its plots.

python -m benchmarks.run                   # full size (about 15 minutes on 2 cores, 4 GB of memory for 1M)
python -m benchmarks.run --quick           # tiny sizes, for a smoke test
python -m benchmarks.run --locomo PATH     # LoCoMo file (default: ../shared/data/locomo/locomo-dev.json)

Everything is measured with the library's default embedder (what ``SemanticMemory()`` builds: ONNX Runtime when
the ``onnx`` extra is installed, PyTorch otherwise). When that is not PyTorch, PyTorch is measured beside it for
comparison (hook latency, query embedding, LoCoMo recall with PyTorch queries); ``--no-compare`` skips that.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from .dataset import build_dataset
from .report import write_report
from .suite import (
    FULL,
    QUICK,
    backend_of,
    embed_pool,
    locomo,
    restore,
    retrieval_quality,
    scale,
    unique_queries,
)

SEED = 13
DEFAULT_LOCOMO = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo-dev.json"
"""The development half of LoCoMo, where the project keeps it (not shipped: CC BY-NC 4.0)."""


def start_postgres(folder: Path) -> tuple[object | None, str | None]:
    """A local PostgreSQL with pgvector from the pgserver package, or (None, None) if unavailable."""
    try:
        import pgserver  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        print("pgvector column skipped: pgserver is not installed", file=sys.stderr)
        return None, None
    try:
        server = pgserver.get_server(str(folder), cleanup_mode="stop")  # type: ignore[attr-defined]
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        return server, server.get_uri()
    except Exception as error:  # report without pgvector rather than fail the whole suite
        print(f"pgvector column skipped: {error}", file=sys.stderr)
        return None, None


def main(argv: list[str] | None = None) -> int:
    """Run every section; a section that fails is reported as failed in the report instead of stopping the run."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument("--out", default="docs", help="folder for benchmarks.md and the plots (default: docs)")
    parser.add_argument("--no-pgvector", action="store_true", help="skip the pgvector latency column")
    parser.add_argument(
        "--locomo",
        default=str(DEFAULT_LOCOMO),
        help="LoCoMo JSON file (locomo10.json of snap-research/LoCoMo, or a subset); 'none' skips the section",
    )
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated sections to run (quality,scale,restore,locomo,loop,turns,open,index,engine)",
    )
    parser.add_argument(
        "--no-compare",
        action="store_true",
        help="measure the default embedder only (no PyTorch rows beside ONNX Runtime)",
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="pin PyTorch to this many intra-op threads for the run (0: the library's default, untouched)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=None,
        help="seconds after which sections not yet started are skipped (default: 780 full size, none quick)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import transformers

        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:
        pass
    from . import scale as large_scale

    settings = QUICK if args.quick else FULL
    scale_settings = (
        large_scale.QUICK_SCALE
        if args.quick
        else dataclasses.replace(
            large_scale.FULL_SCALE,
            turns=5,
            turn_rounds=3,
            open_repeats=3,
            restore_repeats=2,
            index_queries=100,
            engine_sizes=(1_000_000,),
            engine_queries=20,
            engine_rounds=3,
        )
    )
    every = {"quality", "scale", "restore", "locomo", "loop", "turns", "open", "index", "engine"}
    wanted = set(args.only.split(",")) if args.only else every
    deadline = args.deadline if args.deadline is not None else (None if args.quick else 780.0)
    out = Path(args.out)
    started = time.perf_counter()
    load_before = os.getloadavg()

    from strands_semantic_memory.embeddings import SentenceTransformerEmbedder, resolve_embedder

    embedder: Any = resolve_embedder()  # what SemanticMemory() uses: backend "auto"
    _ = embedder.dimension  # loads (or exports) the model outside every timing
    default_backend = backend_of(embedder)
    print(f"[{time.perf_counter() - started:6.0f} s] default embedder: {default_backend['long']}", flush=True)
    compare: Any = None
    if default_backend["name"] != "torch" and not args.no_compare:
        compare = SentenceTransformerEmbedder()  # same model and document vectors, PyTorch for comparison
        _ = compare.dimension
    torch_embedder = compare if compare is not None else embedder if default_backend["name"] == "torch" else None
    threads = query_threads(torch_embedder, 3 if args.quick else 6) if torch_embedder is not None else None
    torch_default_threads = int(threads["default_threads"]) if threads is not None else None
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    steps: dict[str, float] = {}
    results: dict[str, Any] = {}
    errors: dict[str, str] = {}
    skipped: list[str] = []

    def section(name: str, label: str, call: Callable[[], Any]) -> None:
        if name not in wanted:
            return
        begun = time.perf_counter()
        if deadline is not None and begun - started > deadline:
            print(f"[{begun - started:6.0f} s] {label}: skipped (past the {deadline:.0f} s deadline)", flush=True)
            skipped.append(label)
            return
        print(f"[{begun - started:6.0f} s] {label}", flush=True)
        try:
            results[name] = call()
        except Exception as error:  # keep the other sections: the report says what failed
            traceback.print_exc()
            errors[name] = f"{type(error).__name__}: {error}"
        steps[label] = time.perf_counter() - begun

    server, dsn = (None, None)
    if not args.no_pgvector and settings.pg_sizes and "scale" in wanted:
        print(f"[{time.perf_counter() - started:6.0f} s] starting PostgreSQL + pgvector", flush=True)
        server, dsn = start_postgres(Path(tempfile.mkdtemp(prefix="ssm-bench-pg-")))
    pool: dict[str, Any] = {}
    if wanted & {"scale", "restore", "turns", "open", "index", "engine"}:
        print(f"[{time.perf_counter() - started:6.0f} s] embedding the pool", flush=True)
        pool = embed_pool(embedder, settings.pool, compare=compare, compare_size=50 if args.quick else 200)
    section(
        "quality",
        "retrieval quality",
        lambda: retrieval_quality(build_dataset(SEED, per_kind=settings.per_kind), embedder),
    )
    section(
        "scale",
        "latency, archive cost, eviction, memory",
        lambda: scale(
            settings, embedder, pool, pg_dsn=dsn, compare=compare, torch_default_threads=torch_default_threads
        ),
    )
    section("restore", "restore", lambda: restore(settings, embedder, pool))
    if args.locomo.lower() == "none":
        print("LoCoMo skipped: --locomo none", flush=True)
    else:
        limit = 1 if args.quick else None  # quick: the first conversation only
        section(
            "locomo", "LoCoMo", lambda: locomo(Path(args.locomo), embedder, settings.repeats, limit, compare=compare)
        )

    def loop() -> Any:
        from .compaction import compaction_rows

        rows = compaction_rows(embedder, turns=settings.loop_turns)
        local, missing = local_summarizer() if not args.quick else (None, "not in a --quick run")
        if local is not None:
            try:  # prose managers only: the report says why the structured ones are left out
                rows += compaction_rows(
                    embedder,
                    turns=settings.loop_turns,
                    summarizer=local,
                    summarizer_name="SmolLM2-135M",
                    structured=False,
                )
            except Exception as error:  # keep the scripted rows; the report says what failed
                traceback.print_exc()
                missing = f"they failed: {type(error).__name__}: {error}"
        return {"turns": settings.loop_turns, "rows": rows, "local_model_missing": missing}

    section("loop", "Strands loop (compaction rows)", loop)
    large: dict[str, Any] = {}

    def part(key: str, call: Callable[[], Any]) -> Callable[[], Any]:
        def run_part() -> Any:
            large[key] = call()
            return large[key]

        return run_part

    def index_rows() -> Any:
        queries = embedder.embed_queries(unique_queries(scale_settings.index_queries, seed=23))
        return large_scale.vector_index_rows(pool["vectors"], queries, scale_settings)

    section(
        "turns",
        "FileSessionManager turns: JSON state vs durable",
        part("session_turns", lambda: large_scale.session_turn_rows(embedder, pool, scale_settings)),
    )
    section(
        "open",
        "durable open vs JSON restore",
        part("durable_open", lambda: large_scale.durable_open_rows(embedder, pool, scale_settings)),
    )
    section("index", "vector index 1k..1M", part("vector_index", index_rows))
    section(
        "engine",
        "engine at scale",
        part("engine", lambda: large_scale.engine_latency_rows(embedder, pool, scale_settings, compare=compare)),
    )
    if large:
        if "session_turns" in large and "durable_open" in large:
            large["crossover"] = large_scale.crossover(large["session_turns"], large["durable_open"])
        large["caveats"] = [
            "Vectors beyond the pool are synthetic: a Gaussian mixture fitted to the bundled model's embeddings "
            "(benchmarks/scale.py synthetic_vectors); recall@10 on 1M real embeddings was not measured.",
        ]
        results["large"] = large
    results["meta"] = {
        "command": " ".join(["python -m benchmarks.run", *(argv if argv is not None else sys.argv[1:])]),
        "seconds": time.perf_counter() - started,
        "cpus": os.cpu_count(),
        "seed": SEED,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "steps": steps,
        "errors": errors,
        "skipped": skipped,
        "deadline": deadline,
        "torch_threads": args.torch_threads,
        "query_threads": threads,
        "backend": default_backend,
        "compare_backend": backend_of(compare) if compare is not None else None,
        "pool_compare": pool.get("compare"),
        "locomo_path": args.locomo,
        "versions": ", ".join(f"{p} {version(p)}" for p in _PACKAGES if _installed(p)),
    }
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "benchmarks.json" if args.quick else Path(tempfile.gettempdir()) / "ssm-benchmarks.json"
    raw.write_text(json.dumps(results, indent=1, default=_plain))
    path = write_report(results, out)
    print(f"[{time.perf_counter() - started:6.0f} s] wrote {path} (raw results: {raw})", flush=True)
    del server
    return 0


_PACKAGES = ("strands-agents", "faiss-cpu", "sentence-transformers", "onnxruntime", "llama-cpp-python")


def _installed(package: str) -> bool:
    try:
        version(package)
    except Exception:
        return False
    return True


def local_summarizer() -> tuple[Any, str | None]:
    """The demo's local SmolLM2 as a summarizer, or None and why not (its runtime or weights are not installed).

    Greedy decoding as in the demo, at most 160 tokens per summary (structured states: the grammar's own bound).
    """
    try:
        from demo.local_llm import LocalLlamaModel, ModelNotInstalledError
    except ImportError as error:
        return None, f"the demo package could not be imported ({error})"
    try:
        return LocalLlamaModel(max_tokens=160), None
    except ModelNotInstalledError as error:
        return None, f"{error} (bash scripts/bench.sh or scripts/demo.sh installs it)"
    except Exception as error:  # the runtime is there but the model does not load: say so, keep the other rows
        return None, f"the local model did not load ({type(error).__name__}: {error})"


def query_threads(embedder: Any, count: int) -> dict[str, float]:
    """Query-embedding p50 (ms) with PyTorch's default intra-op threads and with one, on distinct queries.

    Leaves PyTorch's setting as it found it.
    """
    import statistics

    import torch

    default = torch.get_num_threads()
    embedder.embed_queries(["warm up"])
    out: dict[str, float] = {"default_threads": float(default)}
    for label, threads in (("default", default), ("one", 1)):
        torch.set_num_threads(threads)
        times = []
        for n in range(count):
            begun = time.perf_counter()
            embedder.embed_queries([f"what did we decide about the {label} thread setting, question {n}?"])
            times.append((time.perf_counter() - begun) * 1000)
        out[f"{label}_p50_ms"] = statistics.median(times)
    torch.set_num_threads(default)
    return out


def _plain(value: Any) -> Any:
    """JSON fallback for numpy scalars and arrays in the raw results."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


if __name__ == "__main__":
    sys.exit(main())
