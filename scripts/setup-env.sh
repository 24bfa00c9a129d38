# Sourced by demo.sh, test.sh, lint.sh, bench.sh, docs.sh and package-check.sh: create or reuse .venv and install
# the CPU build of PyTorch first, so no dependency pulls the multi-GB CUDA build.
#
# Environment variables:
#   PYTHON            interpreter that creates .venv (default: python3; 3.10 or newer)
#   SSM_TORCH_SPEC    the PyTorch requirement (default: torch==2.13.0)
#   TORCH_INDEX_URL   install PyTorch from this index only, e.g. https://download.pytorch.org/whl/cpu
#                     (PyTorch's CPU wheels). Unset: the script asks pip which build it would install and, when
#                     that build depends on NVIDIA CUDA packages (plain PyPI on Linux), uses PyTorch's CPU index.
#   SSM_TORCH_AUTO_CPU=0  keep whatever build pip picks (skip that check).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
TORCH_SPEC="${SSM_TORCH_SPEC:-torch==2.13.0}"
TORCH_CPU_INDEX="https://download.pytorch.org/whl/cpu"
# What installing it took here from a local copy of the wheel, on a quiet and on a busy 2-core machine.
SSM_TORCH_TIME="20 to 40 s for a 190 MB wheel, plus its download"

# Prints "cuda" when the build pip would pick for $TORCH_SPEC depends on NVIDIA packages, "cpu" otherwise.
# Resolves metadata only (pip --dry-run --report): nothing is downloaded but the package's metadata.
ssm_torch_flavour() {
  local report
  report="$(mktemp)"
  if ! pip install --quiet --dry-run --no-deps --ignore-installed --report "$report" "$TORCH_SPEC" >/dev/null 2>&1; then
    rm -f "$report"
    echo "unknown"
    return
  fi
  python - "$report" <<'EOF'
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    report = json.load(handle)
requires = [r for item in report.get("install", []) for r in item.get("metadata", {}).get("requires_dist", []) or []]
print("cuda" if any(r.lower().startswith("nvidia-") for r in requires) else "cpu")
EOF
  rm -f "$report"
}

# Installs PyTorch into the active virtual environment: the CPU build where pip's default would pull CUDA.
# package-check.sh calls it again for the fresh environment it installs the wheel into.
ssm_install_torch() {
  local installed
  # Asked of the package metadata, not by importing torch: before numpy is installed (a new .venv), importing torch
  # prints "Failed to initialize NumPy".
  installed="$(python -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true)"
  if [ -n "$installed" ] && [ -z "${TORCH_INDEX_URL:-}" ]; then
    echo "==> PyTorch already installed in $VIRTUAL_ENV ($installed)"
  elif [ -n "${TORCH_INDEX_URL:-}" ]; then
    echo "==> installing PyTorch from $TORCH_INDEX_URL ($TORCH_SPEC; $SSM_TORCH_TIME)"
    pip install --quiet "$TORCH_SPEC" --index-url "$TORCH_INDEX_URL"
  else
    local flavour="cpu"
    if [ "${SSM_TORCH_AUTO_CPU:-1}" != "0" ]; then
      flavour="$(ssm_torch_flavour)"
    fi
    if [ "$flavour" = "cuda" ]; then
      echo "==> pip's default PyTorch build needs CUDA packages (several GB); installing the CPU build from"
      echo "    $TORCH_CPU_INDEX (set TORCH_INDEX_URL to choose another index, SSM_TORCH_AUTO_CPU=0 to keep pip's;"
      echo "    $SSM_TORCH_TIME)"
      pip install --quiet "$TORCH_SPEC" --index-url "$TORCH_CPU_INDEX"
    else
      echo "==> installing PyTorch ($TORCH_SPEC, the build pip resolves: $flavour; $SSM_TORCH_TIME)"
      pip install --quiet "$TORCH_SPEC"
    fi
  fi
}

# Sourced again in one run (a script that runs another in a child shell), it only activates .venv the second
# time: PyTorch was just installed, or found, for this environment.
if [ "${SSM_TORCH_READY:-}" != "$VIRTUAL_ENV" ]; then
  ssm_install_torch
  export SSM_TORCH_READY="$VIRTUAL_ENV"
fi

# Installs the package from this clone, editable, with the extra named by $1 (and its dependencies), into the active
# environment. The package itself goes in in compat mode: a path entry that type checkers follow (setuptools'
# default for this layout is an import hook, which mypy and pyright cannot see into). The dependencies are
# installed first, without that setting, because pip hands a command line's --config-settings to every package it
# builds from source, dependencies included.
ssm_install_editable() {
  pip install --quiet -e ".[$1]"
  pip install --quiet --no-deps -e . --config-settings editable_mode=compat
}
