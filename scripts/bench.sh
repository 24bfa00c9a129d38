#!/usr/bin/env bash
# Install the benchmark dependencies into .venv and regenerate docs/benchmarks.md and its plots (extra arguments
# go to python -m benchmarks.run).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the bench and onnx extras (onnx: the default embedder backend)"
ssm_install_editable bench
echo "==> running the benchmark suite (about 8 minutes at full size on 2 quiet cores; on 2 cores pass --torch-threads 1 for the PyTorch comparison rows)"
exec python -m benchmarks.run "$@"
