#!/usr/bin/env bash
# Install the demo's dependencies into .venv and run main.py offline (extra arguments go to main.py).
# The local model's install (and why llama-cpp-python compiles, and with which flags): scripts/local-model.sh.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
bash scripts/local-model.sh
echo "==> running the demo"
exec python main.py "$@"
