"""scripts/setup-env.sh: PyTorch is installed once per run, and its check never imports it.

A run sources the script more than once (demo.sh or bench.sh, then local-model.sh in a child shell); the second time
must not report "PyTorch already installed" right after installing it. Importing torch before numpy is installed
prints "Failed to initialize NumPy", so the script asks the package metadata instead. The PyTorch installed here is a
stand-in wheel named ``torch`` whose import prints that warning when numpy is missing, as the real one does; pip
runs with its index switched off, in a real virtual environment the script creates.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_TORCH = """
import sys
try:
    import numpy  # noqa: F401
except ImportError:
    sys.stderr.write("UserWarning: Failed to initialize NumPy: No module named 'numpy'\\n")
__version__ = "0.0.1"
"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.subprocess,
    pytest.mark.skipif(sys.platform == "win32", reason="the scripts are bash"),
]


def fake_torch_wheel(folder: Path) -> Path:
    dist = "torch-0.0.1.dist-info"
    files = {
        "torch/__init__.py": FAKE_TORCH,
        f"{dist}/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 0.0.1\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: fake\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    wheel = folder / "torch-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return wheel


def sourced(root: Path, script: str, wheel: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHON": sys.executable,
        "SSM_TORCH_SPEC": str(wheel),
        "SSM_TORCH_AUTO_CPU": "0",
        "PIP_CONFIG_FILE": os.devnull,  # this machine's pip settings (indexes, constraints) stay out of the test
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail; {script}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_torch_is_installed_once_per_run_and_checked_without_importing_it(tmp_path):
    root = tmp_path / "clone"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup-env.sh", root / "scripts" / "setup-env.sh")
    wheel = fake_torch_wheel(tmp_path)

    # demo.sh-like: sourced, then sourced again in a child shell (as local-model.sh is) and in the same shell.
    run = sourced(root, ". scripts/setup-env.sh; bash -c '. scripts/setup-env.sh'; . scripts/setup-env.sh", wheel)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("==> installing PyTorch") == 1, run.stdout
    assert "already installed" not in run.stdout
    assert "Failed to initialize NumPy" not in run.stderr
    assert (root / ".venv" / "bin" / "python").exists()

    # A later run in a new shell finds it, by its metadata: numpy is still absent and nothing warns.
    later = sourced(root, ". scripts/setup-env.sh", wheel)
    assert later.returncode == 0, later.stdout + later.stderr
    assert f"==> PyTorch already installed in {root}/.venv (0.0.1)" in later.stdout
    assert "installing PyTorch" not in later.stdout and "Failed to initialize NumPy" not in later.stderr
    # The stand-in does warn when imported without numpy: the check above would have caught an import.
    imported = subprocess.run(
        [str(root / ".venv" / "bin" / "python"), "-c", "import torch"], capture_output=True, text=True, check=True
    )
    assert "Failed to initialize NumPy" in imported.stderr
