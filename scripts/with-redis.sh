#!/usr/bin/env bash
# Runs a command with a throwaway Redis server on loopback:
#
#   scripts/with-redis.sh COMMAND [ARGS...]
#
# Installs Debian's redis-server when it is missing (apt-get), starts it on 127.0.0.1 on a
# free port with no persistence and no eviction, waits until it answers PING, exports
# GRUNDY_TEST_REDIS_URL=redis://127.0.0.1:PORT/0 for the command, and stops the server
# afterwards, whatever the command's outcome (its exit code is this script's).
set -euo pipefail

if (($# == 0)); then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "== installing redis-server (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends redis-server redis-tools >&2
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

workdir=$(mktemp -d "${TMPDIR:-/tmp}/grundy-redis.XXXXXX")
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
    # Bounded wait for the server to exit.
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf "$workdir"
}
trap cleanup EXIT

# A port can be taken between choosing and binding it: try a few.
for attempt in 1 2 3 4 5; do
  port=$(free_port)
  redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
    --dir "$workdir" --maxmemory-policy noeviction --protected-mode yes \
    --logfile "$workdir/redis.log" --daemonize no &
  pid=$!
  # Readiness: PING answered, at most 10 s.
  for _ in $(seq 100); do
    if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
      break 2
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
  echo "redis-server did not start on port $port (attempt $attempt):" >&2
  tail -5 "$workdir/redis.log" >&2 || true
done
if [[ -z $pid ]]; then
  echo "could not start redis-server" >&2
  exit 1
fi

export GRUNDY_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
echo "== redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on 127.0.0.1:$port (pid $pid)" >&2
set +e
"$@"
status=$?
set -e
exit "$status"
