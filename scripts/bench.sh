#!/usr/bin/env bash
# End-to-end benchmark: grundy (embedded server, and a separate grundy-server) against the C++
# reference solutions, on two generated judge files (a chess file and an addsub file).
#
#   scripts/bench.sh [RUNS]          (default 5 rounds; each round runs every command once, in
#                                     turn; medians, and ratios taken round by round)
#
# Needs: cargo, python3, and for the baselines g++ and ../shared/reference/baselines (skipped
# with a note when absent). Inputs are made by ../shared/tools/gen_judge.py when present, else
# by `grundy gen`. Everything goes to bench-out/ (git-ignored). Outputs of every program are
# compared byte for byte before anything is timed.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
OUT=bench-out
mkdir -p "$OUT"
SHARED=../shared
BASELINES=$SHARED/reference/baselines
GEN_JUDGE=$SHARED/tools/gen_judge.py

cargo build --release --quiet --bin grundy --bin grundy-server --example table_memory
GRUNDY=target/release/grundy
SERVER_BIN=target/release/grundy-server

echo "== machine"
echo "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo

# --- inputs -----------------------------------------------------------------------------
gen() { # gen FILE KIND ARGS...
  local file=$1 kind=$2; shift 2
  [ -s "$file" ] && return
  if [ -f "$GEN_JUDGE" ]; then
    python3 "$GEN_JUDGE" "$kind" "$@" > "$file"
  else
    echo "note: $GEN_JUDGE not found; generating $file with grundy gen (different data)" >&2
    case $kind in
      chess) "$GRUNDY" gen chess --cases 10 --n 1000 --edges 20000 --queries 100000 --seed 7 > "$file" ;;
      addsub) "$GRUNDY" gen addsub --cases 20 --n 100 --edges 600 --kmax 15 --rounds 2000 --seed 1 > "$file" ;;
    esac
  fi
}
gen "$OUT/chess.in" chess --cases 10 --n 1000 --deg 20 --queries 100000 --seed 7
gen "$OUT/addsub.in" addsub --cases 20 --n 100 --deg 6 --queries 2000

# --- baselines --------------------------------------------------------------------------
have_baselines=0
if [ -d "$BASELINES" ] && command -v g++ >/dev/null; then
  for b in poj2425_a poj2425_b la4411; do
    [ "$OUT/$b" -nt "$BASELINES/$b.cpp" ] || g++ -O2 -o "$OUT/$b" "$BASELINES/$b.cpp" 2>/dev/null
  done
  have_baselines=1
else
  echo "note: no C++ baselines ($BASELINES or g++ missing): timing grundy alone" >&2
fi

# --- the peer: a competent hand-written C++ program for the chess judge files ---------------
have_peer=0
if command -v g++ >/dev/null; then
  [ "$OUT/chess-peer" -nt benches/peer/chess.cpp ] || g++ -O2 -o "$OUT/chess-peer" benches/peer/chess.cpp
  have_peer=1
fi

# --- a separate server ------------------------------------------------------------------
"$SERVER_BIN" --listen 127.0.0.1:0 2> "$OUT/server.log" &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  ADDR=$(sed -n 's/.*address=\([0-9.:]*\).*/\1/p' "$OUT/server.log" | head -1)
  [ -n "$ADDR" ] && break
  sleep 0.05
done
[ -n "$ADDR" ] || { echo "grundy-server did not start" >&2; cat "$OUT/server.log" >&2; exit 1; }
URL=http://$ADDR

# --- correctness first ------------------------------------------------------------------
check() { # check NAME EXPECTED_FILE CMD...
  local name=$1 expected=$2; shift 2
  "$@" > "$OUT/$name.out"
  if ! cmp -s "$OUT/$name.out" "$expected"; then
    echo "MISMATCH: $name differs from $expected" >&2
    exit 1
  fi
}
if [ $have_baselines = 1 ]; then
  "$OUT/poj2425_a" < "$OUT/chess.in" > "$OUT/chess.expected"
  "$OUT/poj2425_b" < "$OUT/chess.in" > "$OUT/chess.b.out"
  cmp -s "$OUT/chess.expected" "$OUT/chess.b.out" || { echo "baselines disagree" >&2; exit 1; }
  "$OUT/la4411" < "$OUT/addsub.in" > "$OUT/addsub.expected"
else
  "$GRUNDY" judge chess "$OUT/chess.in" > "$OUT/chess.expected"
  "$GRUNDY" judge addsub "$OUT/addsub.in" > "$OUT/addsub.expected"
fi
if [ $have_peer = 1 ]; then
  "$OUT/chess-peer" < "$OUT/chess.in" > "$OUT/chess-peer.out"
  cmp -s "$OUT/chess-peer.out" "$OUT/chess.expected" || { echo "MISMATCH: chess-peer" >&2; exit 1; }
fi
check grundy_chess "$OUT/chess.expected" "$GRUNDY" judge chess "$OUT/chess.in"
check grundy_chess_server "$OUT/chess.expected" "$GRUNDY" judge chess --server "$URL" "$OUT/chess.in"
check grundy_addsub "$OUT/addsub.expected" "$GRUNDY" judge addsub "$OUT/addsub.in"
check grundy_addsub_server "$OUT/addsub.expected" "$GRUNDY" judge addsub --server "$URL" "$OUT/addsub.in"
echo "outputs identical: grundy (embedded and --server) and the baselines"
echo

# --- timing -----------------------------------------------------------------------------
# The commands are timed in rounds, each round running every command once in turn (A B C ...
# A B C ...), so that a machine whose speed drifts during the run slows all of them alike; the
# ratios to the peer and the baselines are taken round by round, then their median. Each time
# is taken around the child process alone (Python's monotonic clock), its input a file on
# standard input, its output discarded.
: > "$OUT/commands.tsv"
command_line() { # command_line NAME INPUT CMD...: one command to time, tab-separated
  local IFS=$'\t'
  printf '%s\n' "$*" >> "$OUT/commands.tsv"
}
if [ $have_baselines = 1 ]; then
  command_line poj2425_a "$OUT/chess.in" "$OUT/poj2425_a"
  command_line poj2425_b "$OUT/chess.in" "$OUT/poj2425_b"
  command_line la4411 "$OUT/addsub.in" "$OUT/la4411"
fi
[ $have_peer = 1 ] && command_line chess-peer "$OUT/chess.in" "$OUT/chess-peer"
command_line "grundy chess" "$OUT/chess.in" "$GRUNDY" judge chess
command_line "grundy chess --server" "$OUT/chess.in" "$GRUNDY" judge chess --server "$URL"
command_line "grundy addsub" "$OUT/addsub.in" "$GRUNDY" judge addsub
command_line "grundy addsub --server" "$OUT/addsub.in" "$GRUNDY" judge addsub --server "$URL"
python3 - "$OUT/commands.tsv" "$RUNS" > "$OUT/times.tsv" <<'PY'
import subprocess, sys, time
commands = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
for round_ in range(1, int(sys.argv[2]) + 1):
    for name, input_path, *command in commands:
        with open(input_path, "rb") as stdin:
            start = time.perf_counter()
            subprocess.run(command, stdin=stdin, stdout=subprocess.DEVNULL, check=True)
            elapsed = time.perf_counter() - start
        print(f"{round_}\t{name}\t{elapsed:.6f}")
PY
echo "load average after the rounds: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$OUT/times.tsv" "$RUNS" <<'PY'
import statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    round_, name, t = line.rstrip("\n").split("\t")
    rounds.setdefault(name, {})[round_] = float(t)
def median_ratio(name, bases):
    """The median over rounds of name's time over the fastest of `bases` in the same round."""
    ratios = []
    for round_, t in rounds[name].items():
        base = [rounds[b][round_] for b in bases if b in rounds and round_ in rounds[b]]
        if base:
            ratios.append(t / min(base))
    return f"{statistics.median(ratios):.2f}x" if ratios else "-"
print(f"| command | median of {sys.argv[2]} (s) | min (s) | vs the baselines, median of rounds | vs the C++ peer, median of rounds |")
print("|---|---|---|---|---|")
for name, times in rounds.items():
    values = list(times.values())
    addsub = "addsub" in name or name == "la4411"
    baselines = ["la4411"] if addsub else ["poj2425_a", "poj2425_b"]
    to_peer = "-" if addsub else median_ratio(name, ["chess-peer"])
    print(f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | "
          f"{median_ratio(name, baselines)} | {to_peer} |")
PY
echo

# 10^7 queries generated on the fly and piped through one client into the separate server;
# the server's resident memory is sampled while the stream runs.
echo "== 10^7-query stream through grundy-server (memory sampled every 0.2 s)"
(
  "$GRUNDY" gen chess --cases 1 --n 1000 --edges 20000 --queries 10000000 --seed 3 |
    "$GRUNDY" judge chess --server "$URL" --progress never > /dev/null
) &
STREAM_PID=$!
: > "$OUT/server_rss.txt"
while kill -0 $STREAM_PID 2>/dev/null; do
  awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status" >> "$OUT/server_rss.txt"
  sleep 0.2
done
wait $STREAM_PID
python3 - "$OUT/server_rss.txt" <<'PY'
import sys
rss = [int(x) for x in open(sys.argv[1]) if x.strip()]
if rss:
    q = len(rss) // 4 or 1
    print(f"samples {len(rss)}; server RSS first quarter max {max(rss[:q])/1024:.1f} MiB, "
          f"last quarter max {max(rss[-q:])/1024:.1f} MiB, overall max {max(rss)/1024:.1f} MiB")
PY
echo

echo "== acyclic table memory (10^6 vertices, 10^7 edges)"
target/release/examples/table_memory 1000000 10000000
