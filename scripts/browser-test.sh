#!/usr/bin/env bash
# Real-browser tests of the playground (every tests/browser/*.test.js, one after the other;
# `bash scripts/browser-test.sh NAME` runs tests/browser/NAME.test.js alone): installs Debian's
# Chromium and the pinned npm packages when missing, builds and starts a real grundy-server
# with --web and a bearer token on 127.0.0.1 (scripts/lib/start-server.sh: waits until it
# listens), runs the test, and stops the server. Screenshots: target/browser-test/*.png.
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

# The binaries cargo just built (CARGO_TARGET_DIR, when set, moves them).
bin_dir=${CARGO_TARGET_DIR:-$PWD/target}/debug
source scripts/lib/start-server.sh
work=$(mktemp -d)
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT

run_tests() {
  local files=(tests/browser/*.test.js)
  if [ $# -gt 0 ]; then files=("${@/#/tests/browser/}"); files=("${files[@]/%/.test.js}"); fi
  for file in "${files[@]}"; do
    echo "== $file"
    timeout 300 node "$file"
  done
}

head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/token"
start_server "$bin_dir/grundy-server" "$work/server.log" \
  --web --auth-token-file "$work/token" --log-format json

GRUNDY_URL="http://$server_address/" \
GRUNDY_CLI="$bin_dir/grundy" \
GRUNDY_TOKEN_FILE="$work/token" \
GRUNDY_SAMPLE="$PWD/tests/data/chess_sample.in" \
GRUNDY_CYCLIC="$PWD/tests/data/chess_cyclic_small.in" \
SCREENSHOT_DIR="$PWD/target/browser-test" \
  run_tests "$@"
