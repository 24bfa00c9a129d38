"""Run the benchmark suite and regenerate docs/benchmarks.md, its plots and the run's data (benchmarks.json).

python -m benchmarks.run                   # full size (about 15 minutes on 2 cores, 4 GB of memory for 1M)
python -m benchmarks.run --quick           # tiny sizes, for a smoke test: written to build/benchmarks-quick
python -m benchmarks.run --locomo PATH     # LoCoMo file (default: ../shared/data/locomo/locomo-dev.json)
python -m benchmarks.run --output DIR      # write the report, plots and data into DIR
python -m benchmarks.run --only locomo_loop --loop-limit 2 --loop-questions 40   # part of LoCoMo in the loop

The sections, their measurements and their order are the table in ``benchmarks.sections``. LoCoMo in the loop
(every row of ``benchmarks.measure.locomo_loop.ROWS`` at W = 16,000 and 32,000 characters, every conversation and
question of the file) and the cold start run last. Estimated from quick runs, they add some 4 to 6 minutes and 1 to
2 minutes to a full run; the default deadline of 780 s skips them when the sections before take longer, so a full
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
import json
import logging
import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, cast

from benchmarks.data.locomo import LOCOMO_DEV
from benchmarks.measure.base import Run
from benchmarks.measure.pool import embed_pool
from benchmarks.measure.quality import SEED
from benchmarks.measure.sizes import FULL_SIZES, LOOP_WINDOWS, QUICK_SIZES, Sizes
from benchmarks.measure.tools import backend_of, query_threads
from benchmarks.report.writer import write_report
from benchmarks.results import QueryThreads, Results, RunMeta
from benchmarks.sections import SECTIONS, Section, measurements

DEFAULT_LOCOMO = LOCOMO_DEV
"""The development half of LoCoMo, where the project keeps it (not shipped: CC BY-NC 4.0)."""
FULL_OUTPUT = Path("docs")
"""Where a full run writes: the committed report."""
QUICK_OUTPUT = Path("build") / "benchmarks-quick"
"""Where a quick run writes unless ``--output`` says otherwise (ignored by git)."""
NAMES = tuple(measurement.name for measurement in measurements())
"""Every measurement, in the order a run takes them (``--only`` picks some)."""
_PACKAGES = ("strands-agents", "faiss-cpu", "sentence-transformers", "onnxruntime", "llama-cpp-python")


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


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m benchmarks.run``."""
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
    parser.add_argument("--only", default=None, help=f"comma-separated sections to run ({','.join(NAMES)})")
    parser.add_argument(
        "--loop-limit",
        type=int,
        default=None,
        help=f"LoCoMo in the loop: only the first N conversations (default: all; --quick: {QUICK_SIZES.loop_limit})",
    )
    parser.add_argument(
        "--loop-questions",
        type=int,
        default=None,
        help=f"LoCoMo in the loop: only the first N questions of each conversation (default: all; --quick: "
        f"{QUICK_SIZES.loop_questions})",
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
    return parser


@dataclass
class Progress:
    """How the run goes: its clock, the time per section, failures, and what the deadline skipped."""

    deadline: float | None
    started: float = field(default_factory=time.perf_counter)
    steps: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        """Print one progress line with the seconds since the start."""
        print(f"[{time.perf_counter() - self.started:6.0f} s] {line}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the wanted sections; a section that fails is reported as failed in the report instead of stopping the run."""
    cli = parser()
    args = cli.parse_args(argv)
    wanted = set(args.only.split(",")) if args.only else set(NAMES)
    if unknown := wanted - set(NAMES):
        cli.error(f"--only: unknown sections {', '.join(sorted(unknown))} (known: {', '.join(NAMES)})")
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    progress = Progress(args.deadline if args.deadline is not None else sizes.deadline)
    load_before = os.getloadavg()
    _quiet_libraries()
    run, threads, server = prepare(args, sizes, wanted, progress)
    measured = measure(run, wanted, progress)
    results = cast(Results, {"meta": run_meta(args, argv, run, threads, progress, load_before), **measured})
    out = output_folder(args.output, quick=args.quick)
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "benchmarks.json"
    raw.write_text(json.dumps(results, indent=1, default=_plain))
    path = write_report(results, out, SECTIONS)
    progress.say(f"wrote {path} (the run's data: {raw})")
    del server
    return 0


def _quiet_libraries() -> None:
    """Warnings only, no tokenizer threads fighting the run's, no progress bars."""
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import transformers

        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:
        pass


def prepare(
    args: argparse.Namespace, sizes: Sizes, wanted: set[str], progress: Progress
) -> tuple[Run, QueryThreads | None, object | None]:
    """Load the embedders, check PyTorch's threads, start PostgreSQL and embed the pool, as the wanted sections need.

    Returns:
        The run every measurement shares, the PyTorch thread check, and the PostgreSQL server (kept until the end).
    """
    from strands_semantic_memory.embeddings import SentenceTransformerEmbedder, resolve_embedder

    embedder: Any = resolve_embedder()  # what SemanticMemory() uses: backend "auto"
    _ = embedder.dimension  # loads (or exports) the model outside every timing
    default_backend = backend_of(embedder)
    progress.say(f"default embedder: {default_backend['long']}")
    compare: Any = None
    if default_backend["name"] != "torch" and not args.no_compare:
        compare = SentenceTransformerEmbedder()  # same model and document vectors, PyTorch for comparison
        _ = compare.dimension
    torch_embedder = compare if compare is not None else embedder if default_backend["name"] == "torch" else None
    threads = query_threads(torch_embedder, sizes.thread_queries) if torch_embedder is not None else None
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    server, dsn = (None, None)
    if not args.no_pgvector and sizes.run.pg_sizes and "scale" in wanted:
        progress.say("starting PostgreSQL + pgvector")
        server, dsn = start_postgres(Path(tempfile.mkdtemp(prefix="ssm-bench-pg-")))
    run = Run(
        sizes=sizes,
        embedder=embedder,
        compare=compare,
        torch_default_threads=int(threads["default_threads"]) if threads is not None else None,
        pg_dsn=dsn,
        locomo=None if args.locomo.lower() == "none" else Path(args.locomo),
        loop_windows=tuple(args.loop_windows),
        loop_limit=args.loop_limit if args.loop_limit is not None else sizes.loop_limit,
        loop_questions=args.loop_questions if args.loop_questions is not None else sizes.loop_questions,
    )
    if any(m.uses_pool and m.name in wanted for m in measurements()):
        progress.say("embedding the pool")
        run.pool = embed_pool(embedder, sizes.run.pool, compare=compare, compare_size=sizes.compare_size)
    return run, threads, server


def measure(run: Run, wanted: set[str], progress: Progress, sections: Sequence[Section] = SECTIONS) -> dict[str, Any]:
    """Every wanted measurement in the table's order, within the deadline; each section's data from what ran."""
    results: dict[str, Any] = {}
    for section in sections:
        measured: dict[str, Any] = {}
        for measurement in section.measurements:
            if measurement.name not in wanted:
                continue
            if (reason := measurement.skip(run)) is not None:
                print(reason, flush=True)
                continue
            begun = time.perf_counter()
            if progress.deadline is not None and begun - progress.started > progress.deadline:
                progress.say(f"{measurement.label}: skipped (past the {progress.deadline:.0f} s deadline)")
                progress.skipped.append(measurement.label)
                continue
            progress.say(measurement.label)
            try:
                measured[measurement.result_key()] = measurement.measure(run)
            except Exception as error:  # keep the other sections: the report says what failed
                traceback.print_exc()
                progress.errors[measurement.name] = f"{type(error).__name__}: {error}"
            progress.steps[measurement.label] = time.perf_counter() - begun
        data = section.data(measured)
        if data is not None:
            results[section.name] = data
    return results


def run_meta(
    args: argparse.Namespace,
    argv: list[str] | None,
    run: Run,
    threads: QueryThreads | None,
    progress: Progress,
    load_before: tuple[float, float, float],
) -> RunMeta:
    """How the run went: its command, machine, load, embedders, time per section, failures and skips."""
    return {
        "command": " ".join(["python -m benchmarks.run", *(argv if argv is not None else sys.argv[1:])]),
        "seconds": time.perf_counter() - progress.started,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "seed": SEED,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "steps": progress.steps,
        "errors": progress.errors,
        "skipped": progress.skipped,
        "deadline": progress.deadline,
        "torch_threads": args.torch_threads,
        "query_threads": threads,
        "backend": backend_of(run.embedder),
        "compare_backend": backend_of(run.compare) if run.compare is not None else None,
        "pool_compare": run.pool.get("compare") if run.pool is not None else None,
        "locomo_path": args.locomo,
        "versions": ", ".join(f"{p} {version(p)}" for p in _PACKAGES if _installed(p)),
    }


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


def _installed(package: str) -> bool:
    try:
        version(package)
    except Exception:
        return False
    return True


def _plain(value: Any) -> Any:
    """JSON fallback for numpy scalars and arrays in the raw results."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


if __name__ == "__main__":
    sys.exit(main())
