#!/usr/bin/env bash
# Build the documentation site, serve site/ on a free localhost port and open every page with a diagram (the front
# page first of all) in headless Chromium, offline: fails unless each mermaid diagram became an SVG
# (scripts/docs_check.py says how it looks). Screenshots and the diagrams' SVGs go to build/docs-check/.
#   bash scripts/docs-check.sh               build (bash scripts/docs.sh), then check
#   bash scripts/docs-check.sh --no-build    check the site/ already built
# Needs Chromium at /usr/bin/chromium (Debian: apt-get install chromium), or at $CHROMIUM.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
build=1
if [ "${1:-}" = "--no-build" ]; then
  build=0
  shift
fi
if [ $# -gt 0 ]; then
  echo "usage: bash scripts/docs-check.sh [--no-build]" >&2
  exit 2
fi
if [ ! -x "$CHROMIUM" ]; then
  echo "error: no Chromium at $CHROMIUM: install it (Debian: apt-get install -y chromium) or set CHROMIUM" >&2
  exit 1
fi
if [ "$build" = 1 ]; then
  bash scripts/docs.sh
fi
if [ ! -f site/index.html ]; then
  echo "error: site/index.html is missing: build the site first (bash scripts/docs.sh)" >&2
  exit 1
fi

scratch="$(mktemp -d "${TMPDIR:-/tmp}/docs-check.XXXXXX")"
server=""
stop() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$PYTHON" -m http.server "$port" --bind 127.0.0.1 --directory site >"$scratch/server.log" 2>&1 &
server=$!
url="http://127.0.0.1:$port/"
for _ in $(seq 1 50); do
  if "$PYTHON" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' "$url" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "error: the local server did not start: $(tail -n 1 "$scratch/server.log")" >&2
    exit 1
  fi
  sleep 0.2
done
echo "==> checking the diagrams in headless Chromium ($url, offline)"
"$PYTHON" scripts/docs_check.py --url "$url" --site site --out build/docs-check --chromium "$CHROMIUM" \
  --profile "$scratch/chromium-profile"
