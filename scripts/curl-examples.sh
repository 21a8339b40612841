#!/usr/bin/env bash
# The curl examples of README.md and docs/api.md ("JSON over HTTP"), run as written against a
# real grundy-server and compared with the answers printed beside them:
#   - every ```sh block that starts with `curl` and is followed by a block of its answer
#     (```json, or a plain ``` block) is one example; `127.0.0.1:50051` becomes the address of
#     a server started on 127.0.0.1:0 (scripts/lib/start-server.sh);
#   - the examples of one document run in the order they are written, on a server of their
#     own (the later ones use the graph the first one registers), each bounded by curl's
#     --max-time;
#   - the answer must be the printed one byte for byte (but for the newlines at its end); for
#     `curl -i`, the status line and the body (the other headers, such as the date, vary).
# Needs curl and python3. Builds grundy-server unless SERVER_BIN names one.
#
#   scripts/curl-examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/start-server.sh

server_bin=${SERVER_BIN:-}
if [[ -z $server_bin ]]; then
  cargo build --quiet --bin grundy-server
  server_bin=target/debug/grundy-server
fi
command -v curl > /dev/null || { echo "curl is needed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/grundy-curl.XXXXXX")
trap 'stop_server; rm -rf "$work"' EXIT

# One file per example: NAME.sh (the command) and NAME.expected (its answer).
python3 - "$work" README.md docs/api.md <<'EOF'
import pathlib, re, sys

work = pathlib.Path(sys.argv[1])
count = 0
for doc in sys.argv[2:]:
    text = pathlib.Path(doc).read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    for (lang, body), (answer_lang, answer) in zip(blocks, blocks[1:]):
        if lang != "sh" or not body.startswith("curl ") or answer_lang not in ("json", ""):
            continue
        count += 1
        name = f"{count:02d}"
        (work / f"{name}.sh").write_text(body)
        (work / f"{name}.expected").write_text(answer)
        (work / f"{name}.source").write_text(doc)
if count == 0:
    sys.exit("no curl examples found")
EOF

failed=0
served=""
for command in "$work"/*.sh; do
  name=${command%.sh}
  source_doc=$(cat "$name.source")
  if [[ $source_doc != "$served" ]]; then
    stop_server
    start_server "$server_bin" "$work/server.log"
    served=$source_doc
  fi
  script=$(sed "s/127\.0\.0\.1:50051/$server_address/g; s/^curl /curl --max-time 30 /" "$command")
  if ! bash -c "$script" > "$name.got" 2> "$name.err"; then
    echo "FAILED ($source_doc): $(head -c 200 "$command")" >&2
    cat "$name.err" >&2
    failed=$((failed + 1))
    continue
  fi
  if grep -q -- ' -i ' "$command"; then
    # The status line, a blank line, the body: as the doc prints them, other headers left out.
    python3 - "$name.got" "$name.expected" <<'EOF' || failed=$((failed + 1))
import sys
got = open(sys.argv[1], "rb").read().decode().replace("\r\n", "\n")
want = open(sys.argv[2]).read()
head, _, body = got.partition("\n\n")
status = head.split("\n")[0]
want_status = want.split("\n")[0]
want_body = want.partition("\n\n")[2]
if status != want_status or body.strip() != want_body.strip():
    print(f"FAILED: status {status!r}, body {body.strip()[:300]!r}\n  want {want_status!r}, {want_body.strip()[:300]!r}", file=sys.stderr)
    sys.exit(1)
EOF
  elif ! diff <(printf '%s\n' "$(cat "$name.got")") <(printf '%s\n' "$(cat "$name.expected")") \
    > "$name.diff"; then
    echo "FAILED ($source_doc): $(head -c 200 "$command")" >&2
    head -c 2000 "$name.diff" >&2
    failed=$((failed + 1))
  fi
done
total=$(ls "$work"/*.sh | wc -l)
echo "$((total - failed)) of $total curl examples answered as printed"
[[ $failed -eq 0 ]]
