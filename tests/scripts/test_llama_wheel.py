"""scripts/llama-wheel.sh: llama-cpp-python is compiled once per machine and build flags, then installed from the kept
wheel in every new virtual environment.

No compiler runs here: the package pip builds is a stand-in sdist named ``llama-cpp-python`` (version 0.0.1) with an
in-tree build backend that records the ``CMAKE_ARGS`` it was built with, served from a local folder with pip's
index switched off. The functions under test are the ones ``local-model.sh`` runs, with real pip and real virtual
environments.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELPER = ROOT / "scripts" / "llama-wheel.sh"
VERSION = "0.0.1"

BACKEND = """
import base64, hashlib, os, zipfile

NAME, VERSION = "llama_cpp_python", "0.0.1"
DIST = f"{NAME}-{VERSION}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if os.environ.get("FAKE_BUILD_FAILS"):
        raise RuntimeError("the compiler failed")
    files = {
        "llama_cpp/__init__.py": f"CMAKE_ARGS = {os.environ.get('CMAKE_ARGS')!r}\\n",
        f"{DIST}/METADATA": f"Metadata-Version: 2.1\\nName: llama-cpp-python\\nVersion: {VERSION}\\n",
        f"{DIST}/WHEEL": "Wheel-Version: 1.0\\nGenerator: fake\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{DIST}/RECORD,,")
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
        wheel.writestr(f"{DIST}/RECORD", "\\n".join(record) + "\\n")
    return name
"""

PYPROJECT = """
[build-system]
requires = []
build-backend = "fake_backend"
backend-path = ["."]
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    """A folder holding the stand-in sdist, as pip's only source of packages."""
    folder = tmp_path_factory.mktemp("index")
    source = tmp_path_factory.mktemp("source") / f"llama_cpp_python-{VERSION}"
    source.mkdir()
    (source / "fake_backend.py").write_text(textwrap.dedent(BACKEND))
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: llama-cpp-python\nVersion: {VERSION}\n")
    with tarfile.open(folder / f"llama_cpp_python-{VERSION}.tar.gz", "w:gz") as archive:
        archive.add(source, arcname=source.name)
    return folder


def new_env(path: Path) -> Path:
    venv.create(path, with_pip=True)
    return path / "bin"


def helper(command: str, bin_dir: Path, cache: Path, links: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", "/tmp"),
        "SSM_WHEEL_CACHE": str(cache),
        "PIP_CONFIG_FILE": os.devnull,  # this machine's pip settings (indexes, constraints) stay out of the test
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(links),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **extra,
    }
    script = f'set -euo pipefail; . "{HELPER}"; {command}'
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=600)


def built_flags(bin_dir: Path) -> str:
    out = subprocess.run(
        [str(bin_dir / "python"), "-c", "import llama_cpp; print(llama_cpp.CMAKE_ARGS)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="the scripts are bash"),
]


@pytest.mark.subprocess
def test_the_pinned_version_is_read_from_the_demo_extra():
    result = subprocess.run(
        ["bash", "-c", f'. "{HELPER}"; ssm_llama_version'], capture_output=True, text=True, check=True
    )
    version = result.stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert f'demo-llama = ["llama-cpp-python=={version}"]' in (ROOT / "pyproject.toml").read_text()


@pytest.mark.subprocess
def test_the_wheel_folder_is_keyed_by_version_and_build_flags(tmp_path):
    python = Path(sys.executable).parent

    def folder(version: str, **extra: str) -> str:
        result = helper(f"ssm_llama_wheel_dir {version}", python, tmp_path, tmp_path, **extra)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    default = folder("0.3.36")
    assert default.startswith(f"{tmp_path}/llama-cpp-python-0.3.36-")
    assert folder("0.3.36", CMAKE_ARGS="") == default == folder("0.3.36", CMAKE_ARGS="-DGGML_NATIVE=OFF")
    assert folder("0.3.36", CMAKE_ARGS="-DGGML_NATIVE=ON") != default
    assert folder("0.3.37") != default and folder("0.3.37").startswith(f"{tmp_path}/llama-cpp-python-0.3.37-")


@pytest.mark.subprocess
def test_compiled_once_then_installed_from_the_kept_wheel_in_a_new_environment(tmp_path, index):
    cache = tmp_path / "wheels"
    first = new_env(tmp_path / "first")
    result = helper(f"ssm_install_llama {VERSION}", first, cache, index)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "compiling llama-cpp-python 0.0.1" in result.stdout
    assert built_flags(first) == "-DGGML_NATIVE=OFF"  # the script's flags reached the build
    (kept,) = cache.glob(f"llama-cpp-python-{VERSION}-*/llama_cpp_python-{VERSION}-*.whl")
    assert "CMAKE_ARGS=-DGGML_NATIVE=OFF" in (kept.parent / "build-flags.txt").read_text()
    assert not list(kept.parent.glob(".build.*"))

    # A second environment, with nothing to build from: only the kept wheel can satisfy the install.
    second = new_env(tmp_path / "second")
    empty = tmp_path / "empty-index"
    empty.mkdir()
    result = helper(f"ssm_install_llama {VERSION}", second, cache, empty)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "from the kept build (no compile)" in result.stdout and "compiling" not in result.stdout
    assert built_flags(second) == "-DGGML_NATIVE=OFF"

    # Other flags are another build, kept beside the first.
    result = helper(f"ssm_install_llama {VERSION}", second, cache, index, CMAKE_ARGS="-DGGML_NATIVE=ON")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "compiling" in result.stdout and built_flags(second) == "-DGGML_NATIVE=ON"
    assert len(list(cache.glob(f"llama-cpp-python-{VERSION}-*/*.whl"))) == 2


@pytest.mark.subprocess
def test_a_failed_build_keeps_nothing(tmp_path, index):
    cache = tmp_path / "wheels"
    env = new_env(tmp_path / "env")
    result = helper(f"ssm_install_llama {VERSION}", env, cache, index, FAKE_BUILD_FAILS="1")
    assert result.returncode != 0
    assert not list(cache.glob("*/*.whl")) and not list(cache.glob("*/.build.*"))
    result = helper(f"ssm_llama_wheel {VERSION}", env, cache, index)
    assert result.returncode == 0 and result.stdout.strip() == ""
