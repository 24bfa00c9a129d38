# Sourced by local-model.sh: build llama-cpp-python once per machine and keep the wheel where every later virtual
# environment finds it, instead of compiling again in each one.
#
# llama-cpp-python has no prebuilt wheel on PyPI, and pip's own wheel cache does not tell builds apart by their
# CMake flags (a native build cached earlier would be reused for a portable install, or the other way round).
# So the wheel is built with `pip wheel --no-cache-dir` into a folder of ours whose name carries the version and
# a hash of the build flags and the machine:
#
#   <cache>/wheels/llama-cpp-python-<version>-<key>/llama_cpp_python-<version>-*.whl
#   <cache>/wheels/llama-cpp-python-<version>-<key>/build-flags.txt   (what the key was made of)
#
# <cache> is platformdirs' user cache dir for strands-semantic-memory (~/.cache/strands-semantic-memory on Linux,
# or $XDG_CACHE_HOME/strands-semantic-memory; ~/Library/Caches/strands-semantic-memory on macOS). Delete the
# folder to force a rebuild; set other CMAKE_ARGS to build (and keep) another variant beside it.
#
# Environment variables:
#   CMAKE_ARGS       llama.cpp's CMake flags (default: SSM_LLAMA_DEFAULT_CMAKE_ARGS below)
#   SSM_WHEEL_CACHE  the folder that holds the wheel folders (default: <cache>/wheels)
#
# The functions expect the target environment's python and pip first on PATH (setup-env.sh activates .venv).

# Without -march=native: a native build on a CPU with AMX (Intel Sapphire Rapids and later) crashed with a
# segmentation fault in llama.cpp's AMX matrix multiplication on the first prompt longer than a few tokens.
SSM_LLAMA_DEFAULT_CMAKE_ARGS="-DGGML_NATIVE=OFF"

# The llama-cpp-python version the demo-llama extra pins in pyproject.toml (the one place it is written).
ssm_llama_version() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  sed -n 's/.*"llama-cpp-python==\([^"]*\)".*/\1/p' "$root/pyproject.toml" | head -n 1
}

# The version of llama-cpp-python installed in the active environment, or nothing.
ssm_installed_llama_version() {
  python - <<'EOF' 2>/dev/null || true
import importlib.metadata
try:
    print(importlib.metadata.version("llama-cpp-python"))
except importlib.metadata.PackageNotFoundError:
    pass
EOF
}

ssm_wheel_cache() {
  if [ -n "${SSM_WHEEL_CACHE:-}" ]; then
    echo "$SSM_WHEEL_CACHE"
  elif [ "$(uname -s)" = "Darwin" ]; then
    echo "$HOME/Library/Caches/strands-semantic-memory/wheels"
  else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/strands-semantic-memory/wheels"
  fi
}

# The CMake flags of the build: CMAKE_ARGS, or the default when it is unset or empty.
ssm_cmake_args() {
  echo "${CMAKE_ARGS:-$SSM_LLAMA_DEFAULT_CMAKE_ARGS}"
}

# What the build depends on besides the version: the CMake flags and the machine.
ssm_llama_build_flags() {
  printf 'CMAKE_ARGS=%s\nmachine=%s\n' "$(ssm_cmake_args)" "$(uname -sm)"
}

# The wheel folder for llama-cpp-python VERSION built with the current flags.
ssm_llama_wheel_dir() {
  local version="$1" key
  key="$(ssm_llama_build_flags | python -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:12])')"
  echo "$(ssm_wheel_cache)/llama-cpp-python-$version-$key"
}

# The kept wheel for VERSION with the current flags, or nothing.
ssm_llama_wheel() {
  local dir
  dir="$(ssm_llama_wheel_dir "$1")"
  [ -d "$dir" ] || return 0
  find "$dir" -maxdepth 1 -name "llama_cpp_python-$1-*.whl" | head -n 1
}

# Compile llama-cpp-python VERSION from source into its wheel folder. The wheel is moved in only once complete,
# so an interrupted build leaves nothing behind that a later run would take for a good one.
ssm_build_llama_wheel() {
  local version="$1" dir build
  dir="$(ssm_llama_wheel_dir "$version")"
  mkdir -p "$dir"
  build="$(mktemp -d "$dir/.build.XXXXXX")"
  echo "==> compiling llama-cpp-python $version (once per machine and build flags: about 9 CPU-minutes, 12 to 35"
  echo "    minutes of wall time on a busy 2-core machine; pip prints nothing meanwhile)"
  echo "    CMAKE_ARGS=$(ssm_cmake_args); the wheel is kept in $dir"
  if ! CMAKE_ARGS="$(ssm_cmake_args)" pip wheel --quiet --no-cache-dir --no-deps \
    --no-binary llama-cpp-python --wheel-dir "$build" "llama-cpp-python==$version"; then
    rm -rf "$build"
    return 1
  fi
  ssm_llama_build_flags >"$dir/build-flags.txt"
  mv "$build"/llama_cpp_python-*.whl "$dir/"
  rm -rf "$build"
}

# Install llama-cpp-python VERSION into the active environment from its kept wheel, building the wheel first if
# this machine has none for the current flags. Its dependencies are installed by `pip install -e ".[demo-llama]"`
# (local-model.sh), which finds the pinned version installed.
ssm_install_llama() {
  local version="$1" wheel
  wheel="$(ssm_llama_wheel "$version")"
  if [ -z "$wheel" ]; then
    ssm_build_llama_wheel "$version"
    wheel="$(ssm_llama_wheel "$version")"
  else
    echo "==> installing llama-cpp-python $version from the kept build (no compile): $wheel"
  fi
  pip install --quiet --no-index --no-deps --force-reinstall "$wheel"
}
