#!/usr/bin/env bash
# Creates the Python virtualenv the integration tests use (./.venv) with the
# reference readers pinned in tests/integration/requirements.txt. pip's cache
# lives under ./.cache/pip (git-ignored) so repeated runs are fast.
# Idempotent: does nothing when the venv already matches the requirements.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
REQ=tests/integration/requirements.txt
STAMP="$VENV/.requirements.sha256"

# Debian's python3 needs python3-venv for `python3 -m venv` with pip.
PY=/usr/bin/python3
if ! [ -x "$PY" ]; then PY=$(command -v python3); fi
if ! "$PY" -c 'import ensurepip' >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends python3-venv python3-pip >/dev/null
fi

want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  exit 0
fi

echo "setting up test virtualenv in $VENV"
"$PY" -m venv "$VENV"
export PIP_CACHE_DIR="$PWD/.cache/pip"
"$VENV/bin/pip" install -q --disable-pip-version-check --upgrade pip
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
echo "$want" > "$STAMP"
