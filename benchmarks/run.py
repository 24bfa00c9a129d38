"""Run the benchmark suite and regenerate docs/benchmarks.md, its plots and the run's data (benchmarks.json).

python -m benchmarks.run                   # full size (about 15 minutes on 2 cores, 4 GB of memory for 1M)
python -m benchmarks.run --quick           # tiny sizes, for a smoke test: written to build/benchmarks-quick
python -m benchmarks.run --locomo PATH     # LoCoMo file (default: ../shared/data/locomo/locomo-dev.json)
python -m benchmarks.run --output DIR      # write the report, plots and data into DIR
python -m benchmarks.run --only locomo_loop --loop-limit 2 --loop-questions 40   # part of LoCoMo in the loop

LoCoMo in the loop (every row of ``benchmarks.loop.ROWS`` at W = 16,000 and 32,000 characters, every conversation
and question of the file) and the cold start run last. Estimated from quick runs, they add some 4 to 6 minutes and 1
to 2 minutes to a full run; the default deadline of 780 s skips them when the sections before take longer, so a full
regeneration raises it (``--deadline 3000``).

A full run writes into ``docs/``; a quick run never does unless ``--output`` names it, so the committed report is
only ever replaced by a full run. ``python -m benchmarks.report DIR/benchmarks.json`` renders the report again
from a run's data.

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
import platform
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar

from .dataset import build_dataset
from .measuring import backend_of, unique_queries
from .report import write_report
from .results import (
    ColdStartResult,
    CompactionRow,
    LargeResult,
    LocomoLoopResult,
    LoopResult,
    Pool,
    QueryThreads,
    Results,
    RunMeta,
    Spread,
    VectorIndexRow,
)
from .suite import FULL, QUICK, embed_pool, locomo, restore, retrieval_quality, scale

T = TypeVar("T")

SEED = 13
DEFAULT_LOCOMO = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo-dev.json"
"""The development half of LoCoMo, where the project keeps it (not shipped: CC BY-NC 4.0)."""
FULL_OUTPUT = Path("docs")
"""Where a full run writes: the committed report."""
QUICK_OUTPUT = Path("build") / "benchmarks-quick"
"""Where a quick run writes unless ``--output`` says otherwise (ignored by git)."""
SECTIONS = (
    "quality",
    "scale",
    "restore",
    "locomo",
    "loop",
    "turns",
    "open",
    "index",
    "engine",
    "locomo_loop",
    "cold_start",
)
"""Every section, in the order a run measures them (``--only`` picks some)."""
LOOP_WINDOWS = (16_000, 32_000)
"""Windows (characters) of LoCoMo in the loop."""
QUICK_LOOP_LIMIT = 1
QUICK_LOOP_QUESTIONS = 10
"""A quick run plays the first conversation and asks its first 10 questions."""


@dataclasses.dataclass(frozen=True)
class ColdStartSettings:
    """Repeats of the cold-start section: fresh processes per measurement, and turns per manager."""

    empty_runs: int = 3
    warm_runs: int = 5
    first_turn_runs: int = 3
    turns: int = 60


FULL_COLD_START = ColdStartSettings()
QUICK_COLD_START = ColdStartSettings(empty_runs=1, warm_runs=2, first_turn_runs=1, turns=20)


def output_folder(output: str | None, *, quick: bool) -> Path:
    """Where a run writes: ``output`` when given, else ``docs`` for a full run and a git-ignored folder for a quick one.

    Args:
        output: The ``--output`` folder, or None.
        quick: Whether the run is a ``--quick`` one (tiny sizes, numbers not worth committing).

    Returns:
        The folder for ``benchmarks.md``, the plots and ``benchmarks.json``.
    """
    if output is not None:
        return Path(output)
    return QUICK_OUTPUT if quick else FULL_OUTPUT


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
    parser.add_argument(
        "--output",
        default=None,
        help=f"folder for benchmarks.md, the plots and benchmarks.json (default: {FULL_OUTPUT}; --quick: {QUICK_OUTPUT})",
    )
    parser.add_argument("--no-pgvector", action="store_true", help="skip the pgvector latency column")
    parser.add_argument(
        "--locomo",
        default=str(DEFAULT_LOCOMO),
        help="LoCoMo JSON file (locomo10.json of snap-research/LoCoMo, or a subset); 'none' skips the section",
    )
    parser.add_argument(
        "--only",
        default=None,
        help=f"comma-separated sections to run ({','.join(SECTIONS)})",
    )
    parser.add_argument(
        "--loop-limit",
        type=int,
        default=None,
        help=f"LoCoMo in the loop: only the first N conversations (default: all; --quick: {QUICK_LOOP_LIMIT})",
    )
    parser.add_argument(
        "--loop-questions",
        type=int,
        default=None,
        help=f"LoCoMo in the loop: only the first N questions of each conversation (default: all; --quick: "
        f"{QUICK_LOOP_QUESTIONS})",
    )
    parser.add_argument(
        "--loop-windows",
        type=int,
        nargs="+",
        default=list(LOOP_WINDOWS),
        help="LoCoMo in the loop: the model's windows in characters (default: 16000 32000)",
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
    wanted = set(args.only.split(",")) if args.only else set(SECTIONS)
    unknown = wanted - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown sections {', '.join(sorted(unknown))} (known: {', '.join(SECTIONS)})")
    deadline = args.deadline if args.deadline is not None else (None if args.quick else 780.0)
    out = output_folder(args.output, quick=args.quick)
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
    errors: dict[str, str] = {}
    skipped: list[str] = []

    def section(name: str, label: str, call: Callable[[], T]) -> T | None:
        """Run one section when it is wanted and the deadline allows; None when it did not run or failed."""
        if name not in wanted:
            return None
        begun = time.perf_counter()
        if deadline is not None and begun - started > deadline:
            print(f"[{begun - started:6.0f} s] {label}: skipped (past the {deadline:.0f} s deadline)", flush=True)
            skipped.append(label)
            return None
        print(f"[{begun - started:6.0f} s] {label}", flush=True)
        result: T | None = None
        try:
            result = call()
        except Exception as error:  # keep the other sections: the report says what failed
            traceback.print_exc()
            errors[name] = f"{type(error).__name__}: {error}"
        steps[label] = time.perf_counter() - begun
        return result

    server, dsn = (None, None)
    if not args.no_pgvector and settings.pg_sizes and "scale" in wanted:
        print(f"[{time.perf_counter() - started:6.0f} s] starting PostgreSQL + pgvector", flush=True)
        server, dsn = start_postgres(Path(tempfile.mkdtemp(prefix="ssm-bench-pg-")))
    pool: Pool | None = None
    if wanted & {"scale", "restore", "turns", "open", "index", "engine"}:
        print(f"[{time.perf_counter() - started:6.0f} s] embedding the pool", flush=True)
        pool = embed_pool(embedder, settings.pool, compare=compare, compare_size=50 if args.quick else 200)

    def with_pool(call: Callable[[Pool], T]) -> Callable[[], T]:
        def run_with_pool() -> T:
            assert pool is not None, "the pool is embedded whenever a section that needs it is wanted"
            return call(pool)

        return run_with_pool

    quality = section(
        "quality",
        "retrieval quality",
        lambda: retrieval_quality(build_dataset(SEED, per_kind=settings.per_kind), embedder),
    )
    scaled = section(
        "scale",
        "latency, archive cost, eviction, memory",
        with_pool(
            lambda pool: scale(
                settings, embedder, pool, pg_dsn=dsn, compare=compare, torch_default_threads=torch_default_threads
            )
        ),
    )
    restored = section("restore", "restore", with_pool(lambda pool: restore(settings, embedder, pool)))
    loco = None
    if args.locomo.lower() == "none":
        print("LoCoMo skipped: --locomo none", flush=True)
    else:
        limit = 1 if args.quick else None  # quick: the first conversation only
        loco = section(
            "locomo", "LoCoMo", lambda: locomo(Path(args.locomo), embedder, settings.repeats, limit, compare=compare)
        )

    def loop() -> LoopResult:
        from .compaction import compaction_rows

        rows: list[CompactionRow] = compaction_rows(embedder, turns=settings.loop_turns)
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

    looped = section("loop", "Strands loop (compaction rows)", loop)

    def index_rows(pool: Pool) -> list[VectorIndexRow]:
        queries = embedder.embed_queries(unique_queries(scale_settings.index_queries, seed=23))
        return large_scale.vector_index_rows(pool["vectors"], queries, scale_settings)

    large: LargeResult = {}
    turns = section(
        "turns",
        "FileSessionManager turns: JSON state vs durable",
        with_pool(lambda pool: large_scale.session_turn_rows(embedder, pool, scale_settings)),
    )
    if turns is not None:
        large["session_turns"] = turns
    opens = section(
        "open",
        "durable open vs JSON restore",
        with_pool(lambda pool: large_scale.durable_open_rows(embedder, pool, scale_settings)),
    )
    if opens is not None:
        large["durable_open"] = opens
    index = section("index", "vector index 1k..1M", with_pool(index_rows))
    if index is not None:
        large["vector_index"] = index
    engine = section(
        "engine",
        "engine at scale",
        with_pool(lambda pool: large_scale.engine_latency_rows(embedder, pool, scale_settings, compare=compare)),
    )
    if engine is not None:
        large["engine"] = engine
    loop_limit = args.loop_limit if args.loop_limit is not None else (QUICK_LOOP_LIMIT if args.quick else None)
    loop_questions = (
        args.loop_questions if args.loop_questions is not None else (QUICK_LOOP_QUESTIONS if args.quick else None)
    )
    delivered = section(
        "locomo_loop",
        "LoCoMo in the loop",
        lambda: locomo_loop(
            Path(args.locomo) if args.locomo.lower() != "none" else None,
            embedder,
            windows=args.loop_windows,
            limit=loop_limit,
            questions=loop_questions,
        ),
    )
    cold = section(
        "cold_start",
        "cold start and the reducing turn",
        lambda: cold_start(QUICK_COLD_START if args.quick else FULL_COLD_START),
    )
    if large:
        if turns is not None and opens is not None:
            large["crossover"] = large_scale.crossover(turns, opens)
        large["caveats"] = [
            "Vectors beyond the pool are synthetic: a Gaussian mixture fitted to the bundled model's embeddings "
            "(benchmarks/scale.py synthetic_vectors); recall@10 on 1M real embeddings was not measured.",
        ]
    meta: RunMeta = {
        "command": " ".join(["python -m benchmarks.run", *(argv if argv is not None else sys.argv[1:])]),
        "seconds": time.perf_counter() - started,
        "python": platform.python_version(),
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
        "pool_compare": pool.get("compare") if pool is not None else None,
        "locomo_path": args.locomo,
        "versions": ", ".join(f"{p} {version(p)}" for p in _PACKAGES if _installed(p)),
    }
    results: Results = {"meta": meta}
    if quality is not None:
        results["quality"] = quality
    if scaled is not None:
        results["scale"] = scaled
    if restored is not None:
        results["restore"] = restored
    if loco is not None:
        results["locomo"] = loco
    if looped is not None:
        results["loop"] = looped
    if large:
        results["large"] = large
    if delivered is not None:
        results["locomo_loop"] = delivered
    if cold is not None:
        results["cold_start"] = cold
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "benchmarks.json"
    raw.write_text(json.dumps(results, indent=1, default=_plain))
    path = write_report(results, out)
    print(f"[{time.perf_counter() - started:6.0f} s] wrote {path} (the run's data: {raw})", flush=True)
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


def locomo_loop(
    path: Path | None,
    embedder: Any,
    *,
    windows: Sequence[int] = LOOP_WINDOWS,
    limit: int | None = None,
    questions: int | None = None,
) -> LocomoLoopResult:
    """Every row of ``benchmarks.loop.ROWS`` at every window, on the first ``limit`` conversations of ``path``.

    Args:
        path: The LoCoMo file, or None when the run skips LoCoMo.
        embedder: The run's embedder (loaded: the rows time a warm process).
        windows: The model's windows, in characters.
        limit: Only the first ``limit`` conversations (None: all).
        questions: Only the first ``questions`` questions of each conversation (None: all).

    Returns:
        The results, or ``{"skipped": why}`` without a LoCoMo file.
    """
    if path is None:
        return {"skipped": "LoCoMo in the loop was not run: `--locomo none`"}
    if not path.is_file():
        print(f"LoCoMo in the loop skipped: {path} not found", flush=True)
        return {"skipped": f"LoCoMo in the loop was not run: the data file `{path}` was not found"}
    from .loop import ROWS, load_loop_conversations, run_loop

    conversations = load_loop_conversations(path)[:limit]
    started = time.perf_counter()
    measured = run_loop(
        path,
        windows=windows,
        rows=tuple(ROWS),
        embedder=embedder,
        limit=limit,
        questions=questions,
        progress=lambda line: print(f"    {line}", flush=True),
    )
    return {
        "windows": measured["windows"],
        "rows": list(ROWS),
        "conversations": [c.name for c in conversations],
        "exchanges": {c.name: len(c.exchanges) for c in conversations},
        "questions": questions,
        "seconds": time.perf_counter() - started,
    }


def cold_start(settings: ColdStartSettings) -> ColdStartResult:
    """Cold start and the reducing turn (``benchmarks.cold_start.run``), as the run's data.

    Args:
        settings: Fresh processes per measurement and turns per manager.

    Returns:
        Every measurement with its run-to-run spread (seconds).
    """
    from . import cold_start as cold

    measured = cold.run(
        empty_runs=settings.empty_runs,
        warm_runs=settings.warm_runs,
        first_turn_runs=settings.first_turn_runs,
        turns=settings.turns,
    )
    return cold_start_result(measured, settings.turns)


def cold_start_result(measured: Any, turns: int) -> ColdStartResult:
    """``benchmarks.cold_start.Results`` as plain data: each repeated measurement as min, median, max and runs.

    Args:
        measured: What ``benchmarks.cold_start.run`` returned.
        turns: Turns per manager of the reducing-turn measurement.

    Returns:
        The same measurements, JSON-ready.
    """

    def spread(runs: Any) -> Spread:
        return {"min": runs.min, "median": runs.median, "max": runs.max, "runs": len(runs.runs)}

    return {
        "cold": [
            {
                "cache": row.cache,
                "first_retrieve": spread(row.first_retrieve),
                "importing": spread(row.importing),
                "process": spread(row.process),
                "exports": list(row.exports),
                "torch_imported": row.torch_imported,
            }
            for row in measured.cold
        ],
        "first_turns": [
            {
                "warm_up": row.warm_up,
                "pause": row.pause,
                "first_turn": spread(row.first_turn),
                "start_to_answer": spread(row.start_to_answer),
            }
            for row in measured.first_turns
        ],
        "turns": [
            {
                "manager": row.manager,
                "reducing": spread(row.reducing) if row.reductions else None,
                "other": spread(row.other),
                "reductions": row.reductions,
            }
            for row in measured.turns
        ],
        "load_average": list(measured.load_average),
        "turns_per_manager": turns,
    }


def query_threads(embedder: Any, count: int) -> QueryThreads:
    """Query-embedding p50 (ms) with PyTorch's default intra-op threads and with one, on distinct queries.

    Leaves PyTorch's setting as it found it.
    """
    import torch

    default = torch.get_num_threads()
    embedder.embed_queries(["warm up"])
    p50: dict[str, float] = {}
    for label, threads in (("default", default), ("one", 1)):
        torch.set_num_threads(threads)
        times = []
        for n in range(count):
            begun = time.perf_counter()
            embedder.embed_queries([f"what did we decide about the {label} thread setting, question {n}?"])
            times.append((time.perf_counter() - begun) * 1000)
        p50[label] = statistics.median(times)
    torch.set_num_threads(default)
    return {"default_threads": float(default), "default_p50_ms": p50["default"], "one_p50_ms": p50["one"]}


def _plain(value: Any) -> Any:
    """JSON fallback for numpy scalars and arrays in the raw results."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


if __name__ == "__main__":
    sys.exit(main())
