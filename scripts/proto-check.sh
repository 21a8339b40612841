#!/usr/bin/env bash
# Checks the grundy.v1 contract with buf (the version pinned in tools/buf/package-lock.json,
# installed with `npm ci` when missing):
#   1. `buf lint` with the STANDARD and COMMENTS rules (buf.yaml);
#   2. `buf breaking` of proto/ against proto/ of the previous commit (HEAD~1), FILE rules
#      (against HEAD when proto/ has uncommitted changes: a local run before committing).
#
# The breaking check compares a commit with its first parent, so on main it checks what each
# commit (or merge) changed. A deliberate break (the API is 0.x) is acknowledged by a line
#   Proto-Breaking: <why>
# in the message of a commit the change brings in (HEAD itself, or for a merge any commit
# of the merged branch, i.e. `git log HEAD~1..HEAD`): the findings are then printed and do not
# fail the check. Skipped, saying why, when there is no git history, HEAD~1 is not in the
# clone (a shallow clone) or HEAD~1 had no proto/ directory.
set -euo pipefail
cd "$(dirname "$0")/.."

buf=tools/buf/node_modules/.bin/buf
if [ ! -x "$buf" ]; then
  (cd tools/buf && npm ci --no-audit --no-fund)
fi
echo "buf $("$buf" --version)"

echo "== buf lint"
"$buf" lint

echo "== buf breaking against HEAD~1"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "not a git checkout: breaking-change check skipped"
  exit 0
fi
if ! base=$(git rev-parse --verify --quiet 'HEAD~1^{commit}'); then
  if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    echo "shallow clone without HEAD~1 (fetch with --depth 2 or more): breaking-change check skipped"
  else
    echo "HEAD has no parent commit: breaking-change check skipped"
  fi
  exit 0
fi
# Uncommitted changes to proto/ (a local run) are checked against HEAD, which they change.
if ! git diff --quiet HEAD -- proto || [ -n "$(git ls-files --others --exclude-standard proto)" ]; then
  echo "proto/ has uncommitted changes: checking them against HEAD instead"
  base=$(git rev-parse HEAD)
fi
if ! git cat-file -e "$base:proto" 2>/dev/null; then
  echo "HEAD~1 ($(git rev-parse --short "$base")) has no proto/ directory: nothing to compare with, skipped"
  exit 0
fi

against=$(mktemp -d)
trap 'rm -rf "$against"' EXIT
git archive "$base" proto | tar -x -C "$against"

if "$buf" breaking --against "$against/proto"; then
  echo "no breaking change against $(git rev-parse --short "$base")"
  exit 0
fi
reason=$(git log --format=%B "$base..HEAD" | sed -n 's/^Proto-Breaking:[[:space:]]*//p' | head -1)
if [ -n "$reason" ]; then
  echo "breaking changes above acknowledged (Proto-Breaking: $reason)"
  exit 0
fi
echo "buf breaking: the changes above break the contract of $(git rev-parse --short "$base")." >&2
echo "Keep field numbers, names and types; or, for a deliberate break, add a line" >&2
echo "'Proto-Breaking: <why>' to the commit message (see the top of this script)." >&2
exit 1
