"""Child Python processes: one that reports JSON lines and is then killed (how the tests stop a process mid-work),
and one run to its end (how the tests watch a process exit)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def killed_after(script: str, lines: int, *, wait: float = 120.0) -> list[Any]:
    """Run ``script`` in a new interpreter (this repository importable), read ``lines`` JSON lines from its stdout,
    then kill it (SIGKILL: no cleanup, no exit handler runs).

    Args:
        script: Python source; it writes each line in one ``os.write`` and then blocks.
        lines: How many lines to read before the kill.
        wait: Seconds to wait for each line before giving up (a child that hangs fails the test, with its stderr).

    Returns:
        The decoded lines, in the order written.
    """
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    received: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            received.put(line)
        received.put(None)

    threading.Thread(target=read, daemon=True).start()
    got: list[Any] = []
    problem = None
    try:
        while len(got) < lines:
            try:
                line = received.get(timeout=wait)
            except queue.Empty:
                problem = f"the child wrote {got}, then nothing for {wait:.0f} s"
                break
            if line is None:
                problem = f"the child ended after writing {got}"
                break
            got.append(json.loads(line))
    finally:
        child.kill()
        child.wait(60)
    if problem is not None:
        assert child.stderr is not None
        raise AssertionError(f"{problem}; its stderr:\n{child.stderr.read()}")
    return got


def run_script(script: str, *, timeout: float = 600.0) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a new interpreter (this repository importable) to its end, its output captured as text.

    Args:
        script: Python source.
        timeout: Seconds the child may take (a child that hangs fails the test).

    Returns:
        The finished process: ``returncode``, ``stdout``, ``stderr``.
    """
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=timeout,
        check=False,
    )
