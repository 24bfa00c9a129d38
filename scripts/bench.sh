#!/usr/bin/env bash
# Install the benchmark dependencies into .venv and regenerate docs/benchmarks.md and its plots.
#
# Environment variables:
#   SSM_BENCH_LOCAL_MODEL=0  do not install the local SmolLM2 model (scripts/local-model.sh: llama-cpp-python
#                            compiles once, about 9 CPU-minutes); the rows with real summaries are then not run.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the bench and onnx extras (onnx: the default embedder backend)"
pip install --quiet -e ".[bench]"
if [ "${SSM_BENCH_LOCAL_MODEL:-1}" != "0" ]; then
  . "$(dirname "${BASH_SOURCE[0]}")/local-model.sh"
fi
echo "==> running the benchmark suite (about 8 minutes at full size on 2 quiet cores; on 2 cores pass --torch-threads 1 for the PyTorch comparison rows)"
exec python -m benchmarks.run "$@"
