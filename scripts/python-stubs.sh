#!/usr/bin/env bash
# The Python package's gRPC stubs (clients/python/src/grundy/v1/), generated from
# proto/grundy/v1/*.proto with the pinned grpcio-tools of clients/python/requirements-dev.txt
# (in the virtualenv of scripts/lib/python-venv.sh): the messages (*_pb2.py), their types
# (*_pb2.pyi) and the service stubs (*_pb2_grpc.py). They are committed, so that the package
# installs without grpcio-tools; CI runs --check, which generates them into a temporary
# directory and fails when they differ from the committed ones.
#
#   scripts/python-stubs.sh           # regenerate clients/python/src/grundy/v1/
#   scripts/python-stubs.sh --check   # compare, change nothing
set -euo pipefail
cd "$(dirname "$0")/.."

STUBS=clients/python/src/grundy/v1
check=false
[[ ${1:-} == --check ]] && check=true

source scripts/lib/python-venv.sh
python_venv

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# protoc writes grundy/v1/*.py under its output directory: the proto package grundy.v1 is the
# Python package grundy.v1, so the stubs' own imports (from grundy.v1 import ...) resolve
# inside the grundy package. google/api/annotations.proto is imported from
# googleapis-common-protos at run time, as google.api.annotations_pb2.
"$PYTHON_VENV/bin/python" -m grpc_tools.protoc -Iproto \
  --python_out="$work" --pyi_out="$work" --grpc_python_out="$work" proto/grundy/v1/*.proto
cat >"$work/grundy/v1/__init__.py" <<'PY'
"""The grundy.v1 messages and service stubs, generated from proto/grundy/v1/ by
scripts/python-stubs.sh: do not edit."""
PY

if $check; then
  if ! diff -ru --exclude=__pycache__ "$STUBS" "$work/grundy/v1"; then
    echo "$STUBS differs from what proto/ generates (above): run scripts/python-stubs.sh" >&2
    exit 1
  fi
  echo "$STUBS matches proto/"
else
  rm -rf "$STUBS"
  mkdir -p "$(dirname "$STUBS")"
  cp -r "$work/grundy/v1" "$STUBS"
  echo "wrote $STUBS"
fi
