# Sourced by scripts/load-fault.sh (bash; not executable on its own): its servers, its table
# of checks, and the facts of the hostile client's attacks. Expects WORK (a scratch directory),
# SERVER_BIN and HOSTILE (binaries), and the PIDS array of processes to kill on exit (a process
# waited for is taken out of it: see forget).

source scripts/lib/start-server.sh

RESULTS=()
record() { # record CHECK HELD|FAILED|INFO DETAIL
  RESULTS+=("$(printf '| %-50s | %-6s | %s |' "$1" "$2" "$3")")
}

# serve NAME [ARGS...]: a grundy-server of ARGS on 127.0.0.1:0 with its metrics endpoint, its
# log in WORK/NAME.log (scripts/lib/start-server.sh waits until it listens). Sets SERVER_PID,
# SERVER_LOG, ADDRESS, URL and METRICS.
serve() {
  SERVER_LOG=$WORK/$1.log
  shift
  start_server "$SERVER_BIN" "$SERVER_LOG" --metrics-listen 127.0.0.1:0 "$@"
  SERVER_PID=$server_pid ADDRESS=$server_address METRICS=$metrics_address
  URL=http://$ADDRESS
  PIDS+=("$SERVER_PID")
}

# forget PID: PID was waited for, so the exit trap no longer kills it (the number may be
# another process's by then).
forget() {
  local kept=() pid
  for pid in "${PIDS[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
  PIDS=("${kept[@]}")
}

# stop: SIGTERM to the server started last, kill -9 if it has not exited within 20 s.
stop() {
  kill -TERM "$SERVER_PID" 2>/dev/null
  timeout 20 tail --pid="$SERVER_PID" -f /dev/null || kill -9 "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  forget "$SERVER_PID"
}

rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# attack NAME: the hostile client's attack NAME on the server started last (at most 120 s);
# its line of KEY=VALUE facts in LINE.
attack() {
  LINE=$(timeout 120 "$HOSTILE" "$1" "$ADDRESS" "$SERVER_PID" "$METRICS" 2> "$WORK/$1.err" | tail -1)
  [ -n "$LINE" ] || LINE="error=no output ($(head -c 200 "$WORK/$1.err" | tr '\n' ' '))"
}

# fact KEY: the value of KEY in LINE (empty if absent).
fact() { grep -o -E "(^| )$1=[^ ]*" <<< "$LINE" | head -1 | cut -d= -f2-; }

# at_most VALUE BOUND, at_least VALUE BOUND: numeric comparisons, false for a value that is
# missing or not a number.
at_most() { [[ $1 =~ ^[0-9.]+$ ]] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
at_least() { [[ $1 =~ ^[0-9.]+$ ]] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

# judge CHECK OK DETAIL: records CHECK as HELD when OK is "yes" and the server still
# runs, else FAILED with DETAIL (the attack's own line when it could not run, the end of the
# server's log when the server died). Stops the server.
judge() {
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    record "$1" FAILED "the server died: $(tail -c 200 "$SERVER_LOG" | tr '\n' ' ')"
  elif [[ $LINE == error=* ]]; then
    record "$1" FAILED "$LINE"
  elif [ "$2" = yes ]; then
    record "$1" HELD "$3"
  else
    record "$1" FAILED "$3 [$LINE]"
  fi
  stop
}
