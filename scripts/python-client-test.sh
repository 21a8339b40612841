#!/usr/bin/env bash
# The Python client example (examples/python/grundy_client.py, on the grundy package of
# clients/python) against a real grundy-server:
#   - installs the pinned packages of clients/python/requirements-dev.txt (exact versions
#     with hashes) into a virtualenv under target/ (scripts/lib/python-venv.sh), and the
#     package, ./clients/python;
#   - checks that the README's Python snippets are, verbatim, parts of the program;
#   - builds grundy-server, starts it on 127.0.0.1:0 and waits until it logs its address
#     (scripts/lib/start-server.sh);
#   - runs the program and compares its output with examples/python/expected-output.txt,
#     given HOST:PORT and http://HOST:PORT, and https://HOST:PORT of a TLS server (a
#     certificate made with openssl; skipped, said so, without it); stops the servers;
#   - checks that a server that is not there, and a server of another form, are each one
#     line on stderr with a non-zero exit status, no traceback, within seconds.
# scripts/python-package-test.sh (what CI runs) runs this after the package's own tests.
#
#   scripts/python-client-test.sh            # check
#   scripts/python-client-test.sh --update   # rewrite expected-output.txt from this run
set -euo pipefail
cd "$(dirname "$0")/.."

EXAMPLE=examples/python
EXPECTED=$EXAMPLE/expected-output.txt
update=false
[[ ${1:-} == --update ]] && update=true

echo "== README's Python snippets are parts of $EXAMPLE/grundy_client.py"
python3 - README.md "$EXAMPLE/grundy_client.py" <<'EOF'
import re, sys
readme, program = (open(path, encoding="utf-8").read() for path in sys.argv[1:])
blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
if not blocks:
    sys.exit("README.md has no ```python block")
for number, block in enumerate(blocks, start=1):
    if block not in program:
        sys.exit(f"README.md's ```python block {number} is not, verbatim, part of {sys.argv[2]}")
print(f"{len(blocks)} snippets ({sum(len(b.splitlines()) for b in blocks)} lines) found verbatim")
EOF

source scripts/lib/python-venv.sh
python_venv
VENV=$PYTHON_VENV
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  ./clients/python

cargo build --bin grundy-server

# The binaries cargo just built (CARGO_TARGET_DIR, when set, moves them).
bin_dir=${CARGO_TARGET_DIR:-$PWD/target}/debug
source scripts/lib/start-server.sh
work=$(mktemp -d)
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT

start_server "$bin_dir/grundy-server" "$work/server.log" --log-format json
address=$server_address

# client OUTPUT SERVER [ARGS...]: runs the client against SERVER, its stdout in OUTPUT.
client() {
  local output=$1
  shift
  echo "== $EXAMPLE/grundy_client.py $*"
  if ! timeout 120 "$VENV/bin/python" "$EXAMPLE/grundy_client.py" "$@" >"$output"; then
    cat "$output"
    echo "the Python client failed" >&2
    exit 1
  fi
}

client "$work/output.txt" "$address"
if $update; then
  cp "$work/output.txt" "$EXPECTED"
  echo "wrote $EXPECTED"
elif ! diff -u "$EXPECTED" "$work/output.txt"; then
  echo "the Python client's output differs from $EXPECTED (above); after a deliberate change" >&2
  echo "run scripts/python-client-test.sh --update and review the diff" >&2
  exit 1
fi
# The other forms of the server's address give the same output.
client "$work/http.txt" "http://$address"
diff -u "$work/output.txt" "$work/http.txt"
stop_server
if command -v openssl >/dev/null; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$work/tls.key" -out "$work/tls.pem" 2>/dev/null
  start_server "$bin_dir/grundy-server" "$work/tls-server.log" \
    --tls-cert "$work/tls.pem" --tls-key "$work/tls.key"
  client "$work/https.txt" "https://$server_address" --tls-ca "$work/tls.pem"
  diff -u "$work/output.txt" "$work/https.txt"
  stop_server
else
  echo "== no openssl: https:// not checked"
fi

# refused STATUS SERVER: the client given SERVER exits with STATUS within 30 s, its stderr one
# line starting "error: ", without a traceback.
refused() {
  local want=$1 server=$2 status=0
  echo "== $EXAMPLE/grundy_client.py $server: one line, exit status $want"
  timeout 30 "$VENV/bin/python" "$EXAMPLE/grundy_client.py" "$server" \
    >/dev/null 2>"$work/stderr.txt" || status=$?
  if [[ $status != "$want" || $(wc -l <"$work/stderr.txt") != 1 ]] \
    || ! grep -q '^error: ' "$work/stderr.txt"; then
    cat "$work/stderr.txt" >&2
    echo "$server: exit status $status, $(wc -l <"$work/stderr.txt") lines on stderr" >&2
    exit 1
  fi
  cat "$work/stderr.txt"
}
# Nothing listens on port 1 of a test machine: the connection is refused at once.
refused 1 "127.0.0.1:1"
refused 1 "http://127.0.0.1:1"
refused 2 "ftp://127.0.0.1:1"
refused 2 "127.0.0.1"
echo "Python client OK"
