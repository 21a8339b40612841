#!/usr/bin/env bash
# A judge file whose graph has 10^8 edges, end to end through `grundy judge
# chess`, embedded and with --server: wall time split by --timings into parse, upload
# (PutGraph chunks, with the server's analysis), open and queries, and the peak memory
# of client (/usr/bin/time -v) and server (VmHWM). A measurement, not a test: heavy (a ~1 GB file,
# several GB of memory), run it on an otherwise idle machine.
#
#   scripts/big-graph.sh                      # release binaries (cargo build --release)
#   BIN=target/debug scripts/big-graph.sh     # e.g. the optimised test-profile build
#   N=1000000 E=10000000 scripts/big-graph.sh # a smaller graph
#   JUDGE_ARGS='--max-message-bytes 16777216' ...  # extra judge flags (here: PutGraph
#                                             # chunks for a graph that would fit one message)
#   SERVER_ARGS="--store-dir ${TMPDIR:-/tmp}/graphs" ...  # extra grundy-server flags
#                                             # (here: a durable store)
#   ROUNDS=5 scripts/big-graph.sh             # rounds against the C++ peer (3 by default, 0: none)
#
# Then, with g++, ROUNDS rounds against the program a user would write instead
# (benches/peer/chess.cpp, built with g++ -O2): the peer, embedded, --server (a fresh server
# each run, timed from its start to the client's exit) and the peer again, each grundy run
# timed against the mean of the two peer runs beside it, every output compared with the
# first peer run's; the medians of the rounds' ratios at the end.
#
# The file is written under target/big-graph/ and deleted at the end (KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release}
N=${N:-10000000}
E=${E:-100000000}
Q=${Q:-1000000}
ROUNDS=${ROUNDS:-3}
[[ $ROUNDS =~ ^[0-9]+$ ]] || { echo "ROUNDS must be a count, not '$ROUNDS'" >&2; exit 1; }
read -r -a JUDGE_ARGS <<< "${JUDGE_ARGS:-}"
read -r -a SERVER_ARGS <<< "${SERVER_ARGS:-}"
DIR=${DIR:-target/big-graph}
mkdir -p "$DIR"
[ -x "$BIN/grundy" ] && [ -x "$BIN/grundy-server" ] || {
    echo "no $BIN/grundy or $BIN/grundy-server: cargo build --release first" >&2
    exit 1
}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }

peak() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }
wall() { sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1"; }

if [ ! -s "$DIR/big.in" ]; then
    echo "generating $N vertices, $E edges, $Q queries..."
    "$TIME" -v "$BIN/grundy" gen chess --n "$N" --edges "$E" --queries "$Q" --seed 14 \
        > "$DIR/big.in" 2> "$DIR/gen.time"
    echo "generated $(stat -c %s "$DIR/big.in") bytes in $(wall "$DIR/gen.time")"
fi

echo "embedded..."
"$TIME" -v "$BIN/grundy" judge chess "$DIR/big.in" --timings --progress never ${JUDGE_ARGS[@]+"${JUDGE_ARGS[@]}"} \
    > "$DIR/embedded.out" 2> "$DIR/embedded.err"
grep '^grundy:' "$DIR/embedded.err" || true
echo "embedded: wall $(wall "$DIR/embedded.err"), peak RSS $(peak "$DIR/embedded.err") KiB"

# The servers below start on a loopback port with their log in $DIR/server.err, polled every
# 10 ms for the address they listen on (the rounds time a server from its start).
source scripts/lib/start-server.sh
serve() {
    RUST_LOG=info NO_COLOR=1 START_SERVER_POLL_INTERVAL=0.01 \
        start_server "$BIN/grundy-server" "$DIR/server.err" --cache-bytes 16GiB \
        ${SERVER_ARGS[@]+"${SERVER_ARGS[@]}"}
}
trap stop_server EXIT

echo "with --server..."
serve
"$TIME" -v "$BIN/grundy" judge chess "$DIR/big.in" --timings --progress never ${JUDGE_ARGS[@]+"${JUDGE_ARGS[@]}"} \
    --server "http://$server_address" > "$DIR/server.out" 2> "$DIR/client.err"
# The server's peak (high-water mark of its resident set), read before it exits.
SERVER_PEAK=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$server_pid/status")
stop_server
grep '^grundy:' "$DIR/client.err" || true
echo "client: wall $(wall "$DIR/client.err"), peak RSS $(peak "$DIR/client.err") KiB"
echo "server: peak RSS $SERVER_PEAK KiB"
grep -o 'rpc="PutGraph".*duration_ms=[0-9.]*' "$DIR/server.err" | sed 's/.*duration_ms=/server: PutGraph took ms /' || true
cmp "$DIR/embedded.out" "$DIR/server.out" || { echo "the embedded and --server outputs differ" >&2; exit 1; }
echo "outputs equal ($(wc -l < "$DIR/server.out") lines)"
# The floor: the CSR (offsets u32 per vertex + 1, targets u32 per edge) plus the table
# (a u64 value per vertex for an acyclic graph).
FLOOR=$(( (4 * (N + 1) + 4 * E + 8 * N) / 1024 ))
echo "CSR + table: $FLOOR KiB; the server's peak is $(awk -v p="$SERVER_PEAK" -v f="$FLOOR" 'BEGIN { printf "%.2fx", p / f }') of it"

# --- rounds against the C++ peer ----------------------------------------------------------
now() { date +%s%N; }
# same OUT WHAT: stops the script unless OUT is the first peer run's output.
same() { cmp -s "$1" "$DIR/peer.out" || { echo "$2 output differs from the peer's" >&2; exit 1; }; }
if [ "$ROUNDS" -eq 0 ]; then
    :
elif ! command -v g++ > /dev/null; then
    echo "no g++: no rounds against the peer"
else
    PEER=$DIR/chess-peer
    [ "$PEER" -nt benches/peer/chess.cpp ] || g++ -O2 -o "$PEER" benches/peer/chess.cpp
    echo "against the peer ($ROUNDS rounds: peer, embedded, --server from its start, peer):"
    ratios=$DIR/ratios
    : > "$ratios"
    for round in $(seq 1 "$ROUNDS"); do
        started=$(now)
        "$PEER" < "$DIR/big.in" > "$DIR/peer.out"
        before=$(( $(now) - started ))
        started=$(now)
        "$BIN/grundy" judge chess "$DIR/big.in" --progress never ${JUDGE_ARGS[@]+"${JUDGE_ARGS[@]}"} \
            > "$DIR/round.out"
        embedded=$(( $(now) - started ))
        same "$DIR/round.out" embedded
        started=$(now)
        serve
        "$BIN/grundy" judge chess "$DIR/big.in" --progress never ${JUDGE_ARGS[@]+"${JUDGE_ARGS[@]}"} \
            --server "http://$server_address" > "$DIR/round.out"
        served=$(( $(now) - started ))
        stop_server
        same "$DIR/round.out" --server
        started=$(now)
        "$PEER" < "$DIR/big.in" > "$DIR/round.out"
        after=$(( $(now) - started ))
        same "$DIR/round.out" "the second peer run's"
        awk -v r="$round" -v p1="$before" -v e="$embedded" -v s="$served" -v p2="$after" \
            -v ratios="$ratios" 'BEGIN {
            peer = (p1 + p2) / 2
            printf "round %d: peer %.2f s and %.2f s, embedded %.2f s (%.3fx), --server %.2f s (%.3fx)\n",
                r, p1 / 1e9, p2 / 1e9, e / 1e9, e / peer, s / 1e9, s / peer
            printf "%.4f %.4f\n", e / peer, s / peer >> ratios
        }'
    done
    median() { cut -d' ' -f"$1" "$ratios" | sort -g | awk '{ v[NR] = $1 } END {
        printf "%.3fx", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    echo "against the peer, medians of $ROUNDS rounds: embedded $(median 1), --server $(median 2) (outputs identical)"
fi
[ "${KEEP:-0}" = 1 ] || rm -f "$DIR/big.in"
