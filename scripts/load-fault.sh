#!/usr/bin/env bash
# Bounded load and fault run against a real grundy-server on loopback. Not a timed
# test: it prints a table of what held.
#
#   cargo build --release && bash scripts/load-fault.sh [STREAMS]     (default 50 streams)
#
# 1. STREAMS concurrent `grundy judge --server` streams over the golden files of tests/data
#    (expected outputs from the C++ baselines) and a large generated file (expected output
#    from the embedded server), every verdict compared; then one stream of 60,000
#    one-query messages (`--batch-size 1`);
# 2. a client that never reads its answers, while other clients are served and the server's
#    memory stays bounded;
# 3. SIGTERM with a stream in flight: the server drains and exits 0, the client's output is a
#    correct prefix (all of it if it finished within --drain-timeout);
# 4. kill -9 with a stream in flight: the client fails (exit 1) instead of hanging, with a
#    correct prefix of the output.
# Every wait is bounded by `timeout`; every process started here is stopped by its pid.
set -uo pipefail
cd "$(dirname "$0")/.."
STREAMS=${1:-50}
GRUNDY=${GRUNDY:-target/release/grundy}
SERVER_BIN=${SERVER_BIN:-target/release/grundy-server}
for bin in "$GRUNDY" "$SERVER_BIN"; do
  [ -x "$bin" ] || { echo "missing $bin: run cargo build --release first" >&2; exit 1; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/grundy-load-fault.XXXXXX")
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

RESULTS=()
record() { # record CHECK HELD|FAILED DETAIL
  RESULTS+=("$(printf '| %-44s | %-6s | %s |' "$1" "$2" "$3")")
}

# start_server NAME ARGS...: starts grundy-server on 127.0.0.1:0, sets SERVER_PID and URL.
start_server() {
  local name=$1; shift
  "$SERVER_BIN" --listen 127.0.0.1:0 "$@" 2> "$WORK/$name.log" &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  local address=""
  for _ in $(seq 100); do
    address=$(grep -o 'address=[0-9.]*:[0-9]*' "$WORK/$name.log" | head -1 | cut -d= -f2)
    [ -n "$address" ] && break
    sleep 0.1
  done
  [ -n "$address" ] || { echo "grundy-server did not start:" >&2; cat "$WORK/$name.log" >&2; exit 1; }
  URL="http://$address"
}

rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# wait_for_output FILE: until FILE is non-empty (at most 10 s).
wait_for_output() {
  for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done
  return 1
}

# is_prefix PART WHOLE: PART's complete lines are the first lines of WHOLE.
is_prefix() {
  local lines
  lines=$(wc -l < "$1")
  head -n "$lines" "$2" | cmp -s - <(head -n "$lines" "$1")
}

# --- inputs ---------------------------------------------------------------------------------
"$GRUNDY" gen chess --cases 4 --n 2000 --shape cyclic --queries 50000 --seed 11 > "$WORK/big.in"
"$GRUNDY" judge chess "$WORK/big.in" > "$WORK/big.expected"
"$GRUNDY" gen chess --cases 1 --n 1000 --queries 2000000 --seed 12 > "$WORK/long.in"
"$GRUNDY" judge chess "$WORK/long.in" > "$WORK/long.expected"
GOLDEN=()
for input in tests/data/chess_*.in tests/data/addsub_*.in; do
  GOLDEN+=("$input")
done

# --- 1. concurrent streams, every verdict checked --------------------------------------------
start_server load --max-concurrent-streams 1024
began=$(date +%s%N)
clients=()
for i in $(seq "$STREAMS"); do
  (
    if [ $((i % 5)) -eq 0 ]; then
      input=$WORK/big.in expected=$WORK/big.expected format=chess
    else
      input=${GOLDEN[$((i % ${#GOLDEN[@]}))]}
      expected=${input%.in}.out
      format=$(basename "$input" | cut -d_ -f1)
    fi
    timeout 120 "$GRUNDY" judge "$format" --server "$URL" --batch-size $((1 + i * 37 % 4096)) \
      "$input" > "$WORK/stream$i.out" 2> "$WORK/stream$i.err" &&
      cmp -s "$WORK/stream$i.out" "$expected"
  ) &
  clients+=($!)
done
failed=0
for pid in "${clients[@]}"; do wait "$pid" || failed=$((failed + 1)); done
elapsed_ms=$((($(date +%s%N) - began) / 1000000))
verdicts=$(cat "$WORK"/stream*.out | wc -l)
if [ "$failed" -eq 0 ]; then
  record "$STREAMS concurrent streams, every verdict compared" HELD "$verdicts lines identical to the reference, ${elapsed_ms} ms"
else
  record "$STREAMS concurrent streams, every verdict compared" FAILED "$failed of $STREAMS streams wrong or failed"
fi

# One query per message, as fast as the CLI reads them.
"$GRUNDY" gen chess --cases 1 --n 50 --shape dag --queries 60000 --seed 8 > "$WORK/small.in"
"$GRUNDY" judge chess "$WORK/small.in" > "$WORK/small.expected"
timeout 120 "$GRUNDY" judge chess --server "$URL" --batch-size 1 "$WORK/small.in" > "$WORK/small.out" 2> "$WORK/small.err"
code=$?
if [ "$code" -eq 0 ] && cmp -s "$WORK/small.out" "$WORK/small.expected"; then
  record "60,000 one-query messages on one stream" HELD "every verdict identical"
else
  record "60,000 one-query messages on one stream" FAILED "exit $code after $(wc -l < "$WORK/small.out") of 60000 lines: $(head -c 100 "$WORK/small.err")"
fi

# --- 2. a client that never reads -------------------------------------------------------------
rss_before=$(rss_kib "$SERVER_PID")
mkfifo "$WORK/never-read"
exec 9<> "$WORK/never-read" # opened, never read: the CLI blocks once the pipe is full
"$GRUNDY" judge chess --server "$URL" "$WORK/long.in" > "$WORK/never-read" 2> /dev/null &
stuck=$!
PIDS+=("$stuck")
sleep 2 # let it fill the pipe and the server's per-stream buffer
served=HELD
for i in 1 2 3; do
  timeout 30 "$GRUNDY" judge chess --server "$URL" tests/data/chess_random_dense.in > "$WORK/side$i.out" 2>&1 &&
    cmp -s "$WORK/side$i.out" tests/data/chess_random_dense.out || served=FAILED
done
rss_after=$(rss_kib "$SERVER_PID")
alive=$(kill -0 "$stuck" 2>/dev/null && echo "still blocked" || echo "exited")
record "client that never reads; others still served" "$served" "3 other streams exact; the stuck client $alive"
growth=$((rss_after - rss_before))
if [ "$growth" -lt 65536 ]; then
  record "server memory with a stuck client" HELD "RSS ${rss_before} -> ${rss_after} KiB"
else
  record "server memory with a stuck client" FAILED "RSS grew ${growth} KiB"
fi
kill "$stuck" 2>/dev/null; wait "$stuck" 2>/dev/null
exec 9<&-
kill -TERM "$SERVER_PID"; timeout 40 tail --pid="$SERVER_PID" -f /dev/null

# --- 3. SIGTERM mid-stream --------------------------------------------------------------------
start_server sigterm --drain-timeout 3s
"$GRUNDY" judge chess --server "$URL" --batch-size 64 "$WORK/long.in" > "$WORK/term.out" 2> "$WORK/term.err" &
client=$!
PIDS+=("$client")
wait_for_output "$WORK/term.out"
kill -TERM "$SERVER_PID"
timeout 20 tail --pid="$SERVER_PID" -f /dev/null
wait "$SERVER_PID"; server_code=$?
timeout 20 tail --pid="$client" -f /dev/null
wait "$client"; client_code=$?
lines=$(wc -l < "$WORK/term.out")
total=$(wc -l < "$WORK/long.expected")
refused=$(timeout 5 "$GRUNDY" judge chess --server "$URL" examples/chess.in > /dev/null 2>&1 && echo no || echo yes)
if [ "$server_code" -eq 0 ] && is_prefix "$WORK/term.out" "$WORK/long.expected" && [ "$refused" = yes ] &&
  { [ "$client_code" -eq 0 ] && [ "$lines" -eq "$total" ] || [ "$client_code" -eq 1 ]; }; then
  record "SIGTERM mid-stream (drain 3 s)" HELD "server exit 0; client exit $client_code after $lines of $total lines, all correct; new calls refused"
else
  record "SIGTERM mid-stream (drain 3 s)" FAILED "server exit $server_code, client exit $client_code, $lines of $total lines"
fi
[ "$client_code" -ne 0 ] && record "  client's message after SIGTERM" INFO "$(head -c 160 "$WORK/term.err" | tr '\n' ' ')"

# --- 4. kill -9 mid-stream --------------------------------------------------------------------
start_server kill
"$GRUNDY" judge chess --server "$URL" --batch-size 64 "$WORK/long.in" > "$WORK/kill.out" 2> "$WORK/kill.err" &
client=$!
PIDS+=("$client")
wait_for_output "$WORK/kill.out"
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
timeout 30 tail --pid="$client" -f /dev/null
if kill -0 "$client" 2>/dev/null; then
  record "kill -9 mid-stream" FAILED "the client still runs 30 s later"
else
  wait "$client"; client_code=$?
  lines=$(wc -l < "$WORK/kill.out")
  if [ "$client_code" -eq 1 ] && is_prefix "$WORK/kill.out" "$WORK/long.expected"; then
    record "kill -9 mid-stream" HELD "client exit 1 after $lines correct lines"
  else
    record "kill -9 mid-stream" FAILED "client exit $client_code, $lines lines"
  fi
  record "  client's message after kill -9" INFO "$(head -c 160 "$WORK/kill.err" | tr '\n' ' ')"
fi

echo "| check | result | detail |"
echo "|---|---|---|"
printf '%s\n' "${RESULTS[@]}"
! printf '%s\n' "${RESULTS[@]}" | grep -q FAILED
