#!/usr/bin/env bash
# The Python package (clients/python/, imported as grundy) against real grundy-servers, then
# the Python example that uses it: the one command CI runs for Python.
#   - installs the pinned packages of clients/python/requirements-dev.txt (exact versions
#     with hashes) into a virtualenv under target/ (scripts/lib/python-venv.sh);
#   - checks that the committed stubs are what proto/ generates (scripts/python-stubs.sh
#     --check);
#   - builds the wheel (with the pinned setuptools, no build isolation) and checks that it
#     holds the stubs and the type information; installs ./clients/python and checks that
#     the pinned packages satisfy its dependencies (pip check);
#   - type-checks the package and its tests (mypy --strict);
#   - builds grundy-server and starts it on 127.0.0.1:0 four times (scripts/lib/start-server.sh):
#     plain with --max-vertices 1000, with --auth-token-file, with --max-concurrent-streams 1,
#     and with TLS (a certificate made with openssl; without openssl those tests are skipped,
#     and said so); runs the package's pytest tests against them; stops the servers;
#   - runs scripts/python-client-test.sh (the example, its output and README's snippets).
#
#   scripts/python-package-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGE=clients/python
source scripts/lib/python-venv.sh
python_venv
pip=("$PYTHON_VENV/bin/pip" --disable-pip-version-check --quiet)

bash scripts/python-stubs.sh --check

work=$(mktemp -d)
pids=()
source scripts/lib/start-server.sh
cleanup() {
  stop_server
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== the wheel of $PACKAGE"
# setuptools builds in the source tree: a stale build/ could carry files no longer there.
rm -rf "$PACKAGE/build" "$PACKAGE"/src/*.egg-info
"${pip[@]}" wheel --no-deps --no-build-isolation --wheel-dir "$work/dist" "./$PACKAGE"
"$PYTHON_VENV/bin/python" - "$work"/dist/grundy-*.whl <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
wanted = {"grundy/__init__.py", "grundy/py.typed", "grundy/v1/grundy_pb2.py",
          "grundy/v1/grundy_pb2.pyi", "grundy/v1/grundy_pb2_grpc.py", "grundy/v1/errors_pb2.py"}
missing = sorted(wanted - names)
if missing:
    sys.exit(f"{sys.argv[1]} lacks {', '.join(missing)}")
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: {len(names)} files, stubs and py.typed included")
PY

echo "== pip install ./$PACKAGE"
"${pip[@]}" install --no-deps --no-build-isolation --force-reinstall "./$PACKAGE"
"$PYTHON_VENV/bin/pip" check

echo "== mypy --strict: $PACKAGE/src/grundy and its tests"
(cd "$PACKAGE" && "../../$PYTHON_VENV/bin/mypy")

cargo build --bin grundy-server
# The binaries cargo just built (CARGO_TARGET_DIR, when set, moves them).
server=${CARGO_TARGET_DIR:-$PWD/target}/debug/grundy-server

# serve VARIABLE ARGS...: starts a server with ARGS and exports its address as VARIABLE.
serve() {
  local variable=$1
  shift
  start_server "$server" "$work/$variable.log" "$@"
  export "$variable=$server_address"
  pids+=("$server_pid")
  server_pid=""
}

serve GRUNDY_TEST_SERVER --max-vertices 1000
printf 'python-package-test-token' >"$work/token"
export GRUNDY_TEST_AUTH_TOKEN=python-package-test-token
serve GRUNDY_TEST_AUTH_SERVER --auth-token-file "$work/token"
serve GRUNDY_TEST_LIMITED_SERVER --max-concurrent-streams 1
if command -v openssl >/dev/null; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$work/tls.key" -out "$work/tls.pem" 2>/dev/null
  serve GRUNDY_TEST_TLS_SERVER --tls-cert "$work/tls.pem" --tls-key "$work/tls.key"
  export GRUNDY_TEST_TLS_CA=$work/tls.pem
else
  echo "== no openssl: the package's TLS tests are skipped"
fi

echo "== pytest: $PACKAGE/tests against the servers"
# gRPC's own log stays off the test output; failures are the tests' to report.
(cd "$PACKAGE" && GRPC_VERBOSITY=NONE timeout 600 "../../$PYTHON_VENV/bin/python" -m pytest -q)
cleanup
trap - EXIT

bash scripts/python-client-test.sh
