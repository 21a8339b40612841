# Sourced by the scripts that need a real grundy-server (bash; not executable on its own):
#
#   source scripts/lib/start-server.sh
#   start_server target/debug/grundy-server "$work/server.log" --web ...
#   ... "$server_address" ...
#   stop_server
#
# start_server BINARY LOG [ARGS...] starts BINARY on 127.0.0.1:0 (loopback only: the port
# is the OS's choice, so runs never collide) with ARGS and its stderr in LOG, and waits until
# it logs the address it listens on (the listener is bound before that line), in JSON or
# text. It polls every START_SERVER_POLL_INTERVAL seconds (0.1 by default; a script that
# times the server's start takes less), at most START_SERVER_POLLS times and for at most
# START_SERVER_TIMEOUT seconds (30 by default), and exits the script, printing LOG, if the
# server exits or stays silent. It sets server_pid and server_address (IP:PORT), and
# metrics_address (IP:PORT) when ARGS include --metrics-listen (empty otherwise).
#
# stop_server stops the server started last (SIGTERM, then waits for it); it is safe to call
# twice and from an EXIT trap.

server_pid=""
server_address=""
metrics_address=""

start_server() {
  local binary=$1 log=$2
  shift 2
  local timeout=${START_SERVER_TIMEOUT:-30}
  local interval=${START_SERVER_POLL_INTERVAL:-0.1}
  local polls=${START_SERVER_POLLS:-$(awk -v t="$timeout" -v i="$interval" 'BEGIN { printf "%d", t / i + 1 }')}
  # Emptied here, not by the redirection alone: that happens in the child, maybe after the
  # first poll, which would then read the address of a server logged there before.
  : >"$log"
  "$binary" --listen 127.0.0.1:0 "$@" 2>"$log" &
  server_pid=$!
  server_address=""
  metrics_address=""
  local deadline=$((SECONDS + timeout)) poll
  for ((poll = 0; poll < polls && SECONDS <= deadline; poll++)); do
    # JSON logs: "address":"127.0.0.1:PORT"; text logs: address=127.0.0.1:PORT. The line
    # that says the server listens; the metrics endpoint's line comes before it.
    server_address=$(_logged_address 'grundy-server listening' "$log")
    if [[ -n $server_address ]]; then
      metrics_address=$(_logged_address 'metrics at' "$log")
      return 0
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      cat "$log" >&2
      echo "$binary exited before it listened" >&2
      server_pid=""
      exit 1
    fi
    sleep "$interval"
  done
  cat "$log" >&2
  echo "$binary did not log its address within $timeout s ($poll polls)" >&2
  stop_server
  exit 1
}

# _logged_address TEXT LOG: the loopback address logged on the first line of LOG with TEXT.
_logged_address() {
  grep -m1 -F "$1" "$2" 2>/dev/null | grep -o -m1 -E '"address":"127\.0\.0\.1:[0-9]+"|address=127\.0\.0\.1:[0-9]+' \
    | head -1 | grep -o -E '127\.0\.0\.1:[0-9]+' || true
}

stop_server() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
