#!/usr/bin/env bash
# Install the test dependencies into .venv and run the test suite (extra arguments go to pytest).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the test extra"
ssm_install_editable test
echo "==> running the tests"
exec python -m pytest "$@"
