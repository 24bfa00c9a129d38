# Sourced by demo.sh and test.sh: create or reuse .venv and install the CPU build of PyTorch first, so no
# dependency pulls the multi-GB CUDA build.
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
echo "==> installing PyTorch (CPU build)"
pip install --quiet "torch==2.13.0"
