"""The suite's own plugin (``tests/support/suite.py``): a long test is named every interval, a leak fails the run."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[1]


def run_pytest(folder: Path, source: str) -> subprocess.CompletedProcess[str]:
    (folder / "test_inner.py").write_text(source, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "SSM_TEST_HEARTBEAT": "0.5"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "tests.support.suite", "-p", "no:cacheprovider"]
    return subprocess.run(
        [*command, str(folder / "test_inner.py")], cwd=folder, env=environment, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def test_a_long_test_is_named_while_it_runs_and_a_clean_run_passes(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "import time\n\ndef test_slow():\n    time.sleep(1.6)\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"\[still running after \d+ s\] .*test_inner.py::test_slow", done.stdout)
    assert "left behind" not in done.stdout


def test_a_process_left_behind_fails_the_run_and_is_named(tmp_path: Path) -> None:
    source = "import subprocess\n\ndef test_leaks():\n    subprocess.Popen(['sleep', '300'])\n"
    done = run_pytest(tmp_path, source)
    leaked = [int(pid) for pid in re.findall(r"pid (\d+): sleep 300", done.stdout)]
    for pid in leaked:
        os.kill(pid, signal.SIGKILL)
    assert done.returncode == 1 and len(leaked) == 1, done.stdout + done.stderr
