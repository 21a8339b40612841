#!/usr/bin/env bash
# Validates deploy/kubernetes/ offline, against the Kubernetes API schemas that the PyPI
# package kubernetes-validate ships (no cluster needed):
#   - every manifest, strictly (unknown fields are errors), for each Kubernetes version in
#     K8S_VERSIONS (default: the oldest supported here, 1.30, where the preStop sleep action
#     is on by default, and the newest the validator knows);
#   - kustomization.yaml lists exactly the manifests in the directory.
#
#   scripts/validate-manifests.sh
#
# The validator is installed from scripts/manifests-requirements.txt (exact pins) into a
# virtualenv under target/, re-created whenever that file changes.
set -euo pipefail
cd "$(dirname "$0")/.."

MANIFESTS=deploy/kubernetes
REQUIREMENTS=scripts/manifests-requirements.txt
K8S_VERSIONS=${K8S_VERSIONS:-"1.30.0 1.37.0"}
VENV=${MANIFEST_VENV:-target/manifest-venv}
STAMP=$VENV/requirements.sha256

want=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [[ ! -x $VENV/bin/kubernetes-validate || "$(cat "$STAMP" 2>/dev/null)" != "$want" ]]; then
  echo "== installing the manifest validator into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$REQUIREMENTS"
  echo "$want" >"$STAMP"
fi

mapfile -t files < <(find "$MANIFESTS" -name '*.yaml' ! -name kustomization.yaml | sort)
if ((${#files[@]} == 0)); then
  echo "no manifests found in $MANIFESTS" >&2
  exit 1
fi

echo "== kustomization.yaml lists every manifest"
listed=$(sed -n 's/^  - \([^ ]*\.yaml\)$/\1/p' "$MANIFESTS/kustomization.yaml" | sort)
present=$(for f in "${files[@]}"; do basename "$f"; done | sort)
if [[ $listed != "$present" ]]; then
  echo "kustomization.yaml resources differ from the files in $MANIFESTS:" >&2
  diff <(echo "$listed") <(echo "$present") >&2 || true
  exit 1
fi

for version in $K8S_VERSIONS; do
  echo "== kubernetes-validate --strict, Kubernetes $version: ${#files[@]} files"
  "$VENV/bin/kubernetes-validate" --strict --kubernetes-version "$version" "${files[@]}"
done
echo "manifests valid"
