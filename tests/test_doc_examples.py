"""The documented examples run cleanly: no warning the reader did not cause, no output between the progress dots.

Issue 41: the durable-SQLite guide's example closed the archive under the running embedding thread, which logged
``storing vectors failed``; and what the examples printed (their ``print`` calls, and the replies Strands' default
callback handler streams) landed between pytest's progress dots.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
WORKER = "semantic-memory-embedding"  # the memory's embedding thread
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def first_example(page: str) -> str:
    return FENCE.findall((REPOSITORY / page).read_text(encoding="utf-8"))[0]


def test_the_durable_sqlite_example_logs_no_warning_or_error(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    code = first_example("docs/guides/durable-sqlite.md")
    with caplog.at_level(logging.WARNING, logger="strands_semantic_memory"):
        exec(compile(code, "durable-sqlite.md", "exec"), {"__name__": "example"})
        for thread in threading.enumerate():  # a thread left running logs after the example returns
            if thread.name.startswith(WORKER):
                thread.join(timeout=30)
    logged = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.WARNING]
    assert logged == []


@pytest.mark.subprocess
@pytest.mark.slow
def test_a_run_of_the_documented_examples_shows_only_the_progress_dots(tmp_path):
    """The memory-manager guide prints, and its agents' replies stream to stdout: none of it reaches the run's
    output unless an example fails."""
    page = "docs/guides/memory-manager.md"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'bt'}", page]
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(
        command, cwd=REPOSITORY, env=environment, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    first = done.stdout.splitlines()[0]
    assert re.fullmatch(r"\.+\s+\[100%\]", first), done.stdout[:3000]
    assert "Noted. (reply to:" not in done.stdout and "BK-7731-QZ" not in done.stdout
