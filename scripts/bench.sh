#!/usr/bin/env bash
# Install the benchmark dependencies into .venv and regenerate docs/benchmarks.md and its plots.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the bench extra"
pip install --quiet -e ".[bench]"
echo "==> running the benchmark suite (about 10 minutes at full size on 2 cores)"
exec python -m benchmarks.run "$@"
