#!/usr/bin/env bash
# Builds web/vendor/grundy-rpc.js, the page's gRPC-Web client, from proto/ and pinned npm
# packages (tools/web-bundle/package-lock.json; buf from tools/buf/package-lock.json), each
# installed with `npm ci` when missing:
#   1. `buf generate` with protoc-gen-es (tools/web-bundle/buf.gen.yaml): the grundy.v1
#      messages and service as JavaScript, into a temporary directory;
#   2. esbuild bundles tools/web-bundle/grundy-rpc.js (those, @bufbuild/protobuf,
#      @connectrpc/connect and connect-web's gRPC-Web transport) into one minified ES module.
# The output depends only on proto/ and the pinned versions, so the same tree always builds
# the same bytes. @bufbuild/protobuf and protoc-gen-es are pinned at 2.13.0, the last release
# that supports Node.js 20 (Debian's; 2.14 asks for 22).
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
# Installed when missing, and again when an installed version is not the pinned one.
pinned() {
  node -e '
    const dir = process.argv[1], pins = require(`./${dir}/package.json`).devDependencies;
    for (const [name, version] of Object.entries(pins)) {
      try { if (require(`./${dir}/node_modules/${name}/package.json`).version === version) continue; } catch {}
      process.exit(1);
    }' "$tools"
}
if ! pinned; then
  (cd "$tools" && npm ci --no-audit --no-fund)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$buf" generate --template "$tools/buf.gen.yaml" -o "$work" --path proto/grundy/v1/grundy.proto
cp "$tools/grundy-rpc.js" "$work/"

version() { node -p "require('./$tools/node_modules/$1/package.json').version"; }
license() { node -p "require('./$tools/node_modules/$1/package.json').license.replace(/^\\((.*)\\)$/, '\$1')"; }
# The first line of a source file of a package: its copyright notice.
copyright() { sed -n '1{s|^// ||;s|  *All rights reserved\.||;p}' "$tools/node_modules/$1"; }
banner="// web/vendor/grundy-rpc.js: built by scripts/web-bundle.sh from proto/grundy/v1/grundy.proto
// (protoc-gen-es $(version @bufbuild/protoc-gen-es)) and tools/web-bundle/grundy-rpc.js with esbuild $(version esbuild); do not edit.
// Bundled: @bufbuild/protobuf $(version @bufbuild/protobuf) (licence $(license @bufbuild/protobuf);
// $(copyright @bufbuild/protobuf/dist/esm/index.js); its varint code $(copyright @bufbuild/protobuf/dist/esm/wire/varint.js)),
// @connectrpc/connect $(version @connectrpc/connect) and @connectrpc/connect-web $(version @connectrpc/connect-web)
// (licence $(license @connectrpc/connect-web); $(copyright @connectrpc/connect-web/dist/esm/index.js))."

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
