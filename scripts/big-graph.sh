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
#   SERVER_ARGS='--store-dir /tmp/graphs' ... # extra grundy-server flags (here: a durable store)
#
# The file is written under target/big-graph/ and deleted at the end (KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release}
N=${N:-10000000}
E=${E:-100000000}
Q=${Q:-1000000}
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

echo "with --server..."
RUST_LOG=info NO_COLOR=1 "$BIN/grundy-server" --listen 127.0.0.1:0 --cache-bytes 16GiB \
    ${SERVER_ARGS[@]+"${SERVER_ARGS[@]}"} 2> "$DIR/server.err" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
ADDRESS=
for _ in $(seq 1 100); do
    ADDRESS=$(sed -n 's/.*address=\([0-9.:]*\).*/\1/p' "$DIR/server.err" | head -1)
    [ -n "$ADDRESS" ] && break
    sleep 0.1
done
[ -n "$ADDRESS" ] || { echo "the server did not log its address" >&2; exit 1; }
"$TIME" -v "$BIN/grundy" judge chess "$DIR/big.in" --timings --progress never ${JUDGE_ARGS[@]+"${JUDGE_ARGS[@]}"} \
    --server "http://$ADDRESS" > "$DIR/server.out" 2> "$DIR/client.err"
# The server's peak (high-water mark of its resident set), read before it exits.
SERVER_PEAK=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SERVER/status")
kill -TERM "$SERVER"
wait "$SERVER" || true
trap - EXIT
grep '^grundy:' "$DIR/client.err" || true
echo "client: wall $(wall "$DIR/client.err"), peak RSS $(peak "$DIR/client.err") KiB"
echo "server: peak RSS $SERVER_PEAK KiB"
grep -o 'rpc="PutGraph".*duration_ms=[0-9.]*' "$DIR/server.err" | sed 's/.*duration_ms=/server: PutGraph took ms /' || true
cmp "$DIR/embedded.out" "$DIR/server.out" && echo "outputs equal ($(wc -l < "$DIR/server.out") lines)"
# The floor: the CSR (offsets u32 per vertex + 1, targets u32 per edge) plus the table
# (a u64 value per vertex for an acyclic graph).
echo "CSR + table: $(( (4 * (N + 1) + 4 * E + 8 * N) / 1024 )) KiB"
[ "${KEEP:-0}" = 1 ] || rm -f "$DIR/big.in"
