#!/usr/bin/env bash
# Install the docs extra into .venv, then build the documentation site (mkdocs.yml, docs/) into site/ with
# --strict, so a broken link, reference or nav entry fails the build. The diagrams render with a pinned copy of
# mermaid served with the site (scripts/vendor_mermaid.py fetches it into the git-ignored docs/assets/vendor/ and
# checks its integrity; it fails with one line when it cannot):
#   bash scripts/docs.sh                 build into site/ (extra arguments go to mkdocs build)
#   bash scripts/docs.sh serve           serve it with live reload on http://127.0.0.1:8000 (arguments to mkdocs serve)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup-env.sh"
echo "==> installing strands-semantic-memory with the docs extra"
ssm_install_editable docs
export NO_MKDOCS_2_WARNING=1  # Material's notice about its successor, printed on every build
mode="${1:-build}"
[ $# -gt 0 ] && shift
case "$mode" in
  build)
    python scripts/vendor_mermaid.py
    echo "==> mkdocs build --strict (into site/)"
    exec mkdocs build --strict --site-dir site "$@"
    ;;
  serve)
    python scripts/vendor_mermaid.py
    exec mkdocs serve --strict "$@"
    ;;
  *)
    echo "usage: bash scripts/docs.sh [build|serve] [mkdocs options]" >&2
    exit 2
    ;;
esac
