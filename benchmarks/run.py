"""Run the benchmark suite and regenerate docs/benchmarks.md and its plots.

python -m benchmarks.run            # full size (about 10 minutes on 2 cores)
python -m benchmarks.run --quick    # tiny sizes, for a smoke test
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from .dataset import build_dataset
from .report import write_report
from .suite import FULL, QUICK, embed_pool, restore, retrieval_quality, scale, strands_loop

SEED = 13


def start_postgres(folder: Path) -> tuple[object | None, str | None]:
    """A local PostgreSQL with pgvector from the pgserver package, or (None, None) if unavailable."""
    try:
        import pgserver
    except ImportError:
        return None, None
    try:
        server = pgserver.get_server(str(folder), cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        return server, server.get_uri()
    except Exception as error:  # report without pgvector rather than fail the whole suite
        print(f"pgvector column skipped: {error}", file=sys.stderr)
        return None, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument("--out", default="docs", help="folder for benchmarks.md and the plots (default: docs)")
    parser.add_argument("--no-pgvector", action="store_true", help="skip the pgvector latency column")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import transformers

        transformers.utils.logging.disable_progress_bar()
    except ImportError:
        pass
    settings = QUICK if args.quick else FULL
    out = Path(args.out)
    started = time.perf_counter()

    from strands_semantic_memory import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    _ = embedder.dimension

    def step(name: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {name}", flush=True)

    server, dsn = (None, None)
    if not args.no_pgvector and settings.pg_sizes:
        step("starting PostgreSQL + pgvector")
        server, dsn = start_postgres(Path(tempfile.mkdtemp(prefix="ssm-bench-pg-")))
    step("embedding the pool")
    pool = embed_pool(embedder, settings.pool)
    step("retrieval quality")
    quality = retrieval_quality(build_dataset(SEED, per_kind=settings.per_kind), embedder)
    step("latency, archive cost, eviction, memory")
    scale_results = scale(settings, embedder, pool, pg_dsn=dsn)
    step("restore")
    restore_results = restore(settings, embedder, pool)
    step("Strands loop")
    loop = strands_loop(settings, embedder)
    meta = {
        "command": "python -m benchmarks.run" + (" --quick" if args.quick else ""),
        "seconds": time.perf_counter() - started,
        "cpus": os.cpu_count(),
        "seed": SEED,
        "versions": ", ".join(f"{p} {version(p)}" for p in ("strands-agents", "faiss-cpu", "sentence-transformers")),
    }
    path = write_report(
        {"quality": quality, "scale": scale_results, "restore": restore_results, "loop": loop, "meta": meta}, out
    )
    step(f"wrote {path}")
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
