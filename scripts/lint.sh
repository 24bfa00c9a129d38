#!/usr/bin/env bash
# Install the dev extra into .venv, then ruff (lint and format) and mypy --strict over the package, the
# benchmarks and the demo.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the dev extra"
ssm_install_editable dev
echo "==> ruff check, ruff format --check"
ruff check .
ruff format --check .
echo "==> mypy --strict (package, benchmarks, demo)"
mypy --strict strands_semantic_memory benchmarks demo main.py
