"""Typed use: ``mypy --strict`` on a user's own code finds the package and reads its types.

The package is installed the way the install guide says (``pip install -e . --config-settings
editable_mode=compat``) into a fresh virtual environment, and mypy checks two small user files against it, from a
folder outside the repository: one well-typed (it must pass), one with a type error in a call to the package (it
must be reported, which proves mypy read the package's annotations rather than treating it as ``Any``).
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]

WELL_TYPED = """\
from strands_semantic_memory import SearchHit, SemanticMemory


def best_hit(memory: SemanticMemory, query: str) -> SearchHit | None:
    hits = memory.search(query, top_k=3)
    return hits[0] if hits else None
"""

BADLY_TYPED = """\
from strands_semantic_memory import SemanticMemory


def search_by_number(memory: SemanticMemory) -> int:
    return len(memory.search(42))
"""


def _mypy(python: Path, folder: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable", str(python), name],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.subprocess
@pytest.mark.slow
def test_mypy_strict_finds_the_package_in_a_compat_editable_install(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the dev extra: pip install -e '.[dev]'")
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=False)
    python = environment / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "-e", str(REPOSITORY)]
        + ["--config-settings", "editable_mode=compat"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr
    user = tmp_path / "user"
    user.mkdir()
    (user / "well_typed.py").write_text(WELL_TYPED, encoding="utf-8")
    (user / "badly_typed.py").write_text(BADLY_TYPED, encoding="utf-8")

    good = _mypy(python, user, "well_typed.py")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Success: no issues found" in good.stdout

    bad = _mypy(python, user, "badly_typed.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert 'Argument 1 to "search" of "SemanticMemory" has incompatible type "int"; expected "str"' in bad.stdout
    assert "Cannot find implementation or library stub" not in bad.stdout
