#!/usr/bin/env bash
# Real-browser test of the playground (tests/browser/playground.test.js): installs Debian's
# Chromium and the pinned npm packages when missing, builds and starts a real grundy-server
# with --web and a bearer token on 127.0.0.1, waits until it listens, runs the test, and
# stops the server. Screenshots: target/browser-test/*.png.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null; then
  apt-get update
  apt-get install -y chromium
fi
if [ ! -d tests/browser/node_modules/playwright-core ] || [ ! -d tests/browser/node_modules/axe-core ]; then
  (cd tests/browser && npm ci --no-audit --no-fund)
fi
cargo build --bin grundy --bin grundy-server

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token"
"${CARGO_TARGET_DIR:-target}/debug/grundy-server" --listen 127.0.0.1:0 --web --auth-token-file "$work/token" \
  --log-format json 2> "$work/server.log" &
server_pid=$!

# Ready when the server logs its address (the listener is bound before that line).
address=""
for _ in $(seq 1 300); do
  address=$(grep -o '"address":"127\.0\.0\.1:[0-9]*"' "$work/server.log" | head -1 | cut -d'"' -f4 || true)
  [ -n "$address" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; echo "server exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$address" ] || { cat "$work/server.log"; echo "server not ready after 30 s" >&2; exit 1; }

GRUNDY_URL="http://$address/" \
GRUNDY_CLI="$(realpath "${CARGO_TARGET_DIR:-target}")/debug/grundy" \
GRUNDY_TOKEN_FILE="$work/token" \
GRUNDY_SAMPLE="$PWD/tests/data/chess_sample.in" \
GRUNDY_CYCLIC="$PWD/tests/data/chess_cyclic_small.in" \
SCREENSHOT_DIR="$PWD/target/browser-test" \
  timeout 300 node tests/browser/playground.test.js
