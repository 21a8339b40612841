#!/usr/bin/env bash
# Builds web/vendor/grundy-rpc.js, the page's gRPC-Web client, from proto/ and pinned npm
# packages (tools/web-bundle/package-lock.json; buf from tools/buf/package-lock.json), each
# installed with `npm ci` when missing:
#   1. `buf generate` with protoc-gen-es (tools/web-bundle/buf.gen.yaml): the grundy.v1
#      messages and service as JavaScript, into a temporary directory;
#   2. esbuild bundles tools/web-bundle/grundy-rpc.js (those, @bufbuild/protobuf,
#      @connectrpc/connect and connect-web's gRPC-Web transport) into one minified ES module.
# The output depends only on proto/ and the pinned versions, so the same tree always builds
# the same bytes.
#
#   scripts/web-bundle.sh          rebuild web/vendor/grundy-rpc.js
#   scripts/web-bundle.sh --check  fail if the checked-in bundle differs from a fresh build
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

tools=tools/web-bundle
buf=tools/buf/node_modules/.bin/buf
if [ ! -x "$buf" ]; then
  (cd tools/buf && npm ci --no-audit --no-fund)
fi
if [ ! -x "$tools/node_modules/.bin/esbuild" ] || [ ! -x "$tools/node_modules/.bin/protoc-gen-es" ]; then
  (cd "$tools" && npm ci --no-audit --no-fund)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$buf" generate --template "$tools/buf.gen.yaml" -o "$work" --path proto/grundy/v1/grundy.proto
cp "$tools/grundy-rpc.js" "$work/"

version() { node -p "require('./$tools/node_modules/$1/package.json').version"; }
license() { node -p "require('./$tools/node_modules/$1/package.json').license.replace(/^\\((.*)\\)$/, '\$1')"; }
banner="// web/vendor/grundy-rpc.js: built by scripts/web-bundle.sh from proto/grundy/v1/grundy.proto
// (protoc-gen-es $(version @bufbuild/protoc-gen-es)) and tools/web-bundle/grundy-rpc.js with esbuild $(version esbuild); do not edit.
// Bundled: @bufbuild/protobuf $(version @bufbuild/protobuf) (licence $(license @bufbuild/protobuf); Copyright 2021-2026 Buf
// Technologies, Inc.; its varint code Copyright 2008 Google Inc.), @connectrpc/connect $(version @connectrpc/connect)
// and @connectrpc/connect-web $(version @connectrpc/connect-web) (licence $(license @connectrpc/connect-web); Copyright 2021-2026 The Connect Authors)."

# The packages resolve from tools/web-bundle/node_modules (NODE_PATH), the entry and the
# generated code from the temporary directory.
NODE_PATH="$PWD/$tools/node_modules" "$tools/node_modules/.bin/esbuild" "$work/grundy-rpc.js" \
  --bundle --format=esm --target=es2020 --minify --legal-comments=none \
  --banner:js="$banner" --log-level=warning --outfile="$work/out.js"

target=web/vendor/grundy-rpc.js
if $check; then
  if ! cmp -s "$work/out.js" "$target"; then
    echo "$target is not what scripts/web-bundle.sh builds from proto/ and $tools/:" >&2
    echo "run scripts/web-bundle.sh and commit the result." >&2
    exit 1
  fi
  echo "$target is current ($(wc -c < "$target") bytes)"
else
  mkdir -p "$(dirname "$target")"
  cp "$work/out.js" "$target"
  echo "wrote $target ($(wc -c < "$target") bytes)"
fi
