"""``python -m benchmarks.report RESULTS.json [--output DIR]``: render the report again from a run's data."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.report.writer import write_report
from benchmarks.results import Results
from benchmarks.sections import SECTIONS


def main(argv: list[str] | None = None) -> int:
    """Render ``benchmarks.md`` and its figures from the ``benchmarks.json`` a run wrote."""
    parser = argparse.ArgumentParser(description="Render benchmarks.md and its plots from a run's benchmarks.json")
    parser.add_argument("results", type=Path, help="the benchmarks.json a run wrote")
    parser.add_argument("--output", type=Path, default=None, help="folder to write into (default: that file's)")
    args = parser.parse_args(argv)
    results: Results = json.loads(args.results.read_text(encoding="utf-8"))
    path = write_report(results, args.output if args.output is not None else args.results.parent, SECTIONS)
    print(f"wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
