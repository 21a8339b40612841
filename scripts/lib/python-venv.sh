# Sourced by the scripts that run Python against grundy (bash; not executable on its own):
#
#   source scripts/lib/python-venv.sh
#   python_venv
#   "$PYTHON_VENV/bin/python" ...
#
# python_venv makes the virtualenv PYTHON_VENV (target/python-venv by default) hold exactly the
# pinned packages of clients/python/requirements-dev.txt (exact versions with hashes,
# installed with --require-hashes --no-deps from PyPI), re-creating it when that file
# changes; python3-venv comes from Debian when python3 lacks the venv module. The grundy
# package itself is not installed here: each script installs it as it needs it.

PYTHON_VENV=${PYTHON_VENV:-target/python-venv}
PYTHON_REQUIREMENTS=clients/python/requirements-dev.txt

python_venv() {
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    apt-get update
    apt-get install -y python3-venv
  fi
  local want stamp=$PYTHON_VENV/requirements.sha256
  want=$(sha256sum "$PYTHON_REQUIREMENTS" | cut -d' ' -f1)
  if [[ ! -x $PYTHON_VENV/bin/python || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    echo "== installing the pinned Python packages ($PYTHON_REQUIREMENTS) into $PYTHON_VENV"
    rm -rf "$PYTHON_VENV"
    python3 -m venv "$PYTHON_VENV"
    "$PYTHON_VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps \
      --require-hashes -r "$PYTHON_REQUIREMENTS"
    echo "$want" >"$stamp"
  fi
}
