"""Every Python example of the README runs unchanged when pasted into a file: each fence is written to a file and
run in a fresh ``python`` process, in an empty folder, with nothing the test suite provides."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
EXAMPLES = FENCE.findall((REPO_ROOT / "README.md").read_text(encoding="utf-8"))


def _heading_before(code: str) -> str:
    """The README heading an example sits under (the test's id)."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+)$", text[: text.index(code)], re.MULTILINE)
    return headings[-1] if headings else "top"


def test_the_readme_has_its_examples():
    assert len(EXAMPLES) >= 4, "the quick start's examples"


@pytest.mark.subprocess
@pytest.mark.parametrize("code", EXAMPLES, ids=[_heading_before(code) for code in EXAMPLES])
def test_a_readme_example_runs_pasted_into_a_file(code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},  # this clone's package, as installed
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"the example failed:\n{code}\n--- stderr:\n{result.stderr[-4000:]}"
