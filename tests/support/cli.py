"""The command line as an operator runs it: ``python -m strands_semantic_memory`` in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_cli(
    *args: str | Path,
    cwd: Path | None = None,
    stdin: str = "",
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run ``strands-semantic-memory ARGS`` (as ``python -m``, this repository importable) and wait for it.

    Args:
        args: The command's arguments.
        cwd: The folder it runs in.
        stdin: What is typed at its prompts (nothing: end of input at once).
        env: Variables set on top of this process's environment (the archive options' STRANDS_SEMANTIC_MEMORY_*).
        timeout: Seconds before the test fails.

    Returns:
        The finished process, its output as text.
    """
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    for name in [
        n for n in environment if n.startswith("STRANDS_SEMANTIC_MEMORY_") and n != "STRANDS_SEMANTIC_MEMORY_CACHE"
    ]:
        if env is None or name not in env:
            del environment[name]  # an operator's own settings never leak into a test
    return subprocess.run(
        [sys.executable, "-m", "strands_semantic_memory", *map(str, args)],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=timeout,
    )
