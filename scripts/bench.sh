#!/usr/bin/env bash
# Install the benchmark dependencies into .venv and regenerate docs/benchmarks.md and its plots (extra arguments
# go to python -m benchmarks.run).
#
# Environment variables:
#   SSM_BENCH_LOCAL_MODEL=0  do not install the local SmolLM2 model (scripts/local-model.sh: llama-cpp-python
#                            compiles once, about 9 CPU-minutes). Without it (or if it cannot be installed here),
#                            the rows with real summaries are not run and the report says why. --quick runs skip
#                            the install: they do not run those rows.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the bench and onnx extras (onnx: the default embedder backend)"
ssm_install_editable bench
case " $* " in
  *" --quick "*) ;;
  *)
    if [ "${SSM_BENCH_LOCAL_MODEL:-1}" != "0" ]; then
      bash scripts/local-model.sh || echo "==> the local model could not be installed: the rows with real summaries are not run"
    fi
    ;;
esac
echo "==> running the benchmark suite (about 8 minutes at full size on 2 quiet cores; on 2 cores pass --torch-threads 1 for the PyTorch comparison rows)"
exec python -m benchmarks.run "$@"
