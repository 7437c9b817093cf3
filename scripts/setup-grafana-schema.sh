#!/usr/bin/env bash
# Installs Grafana's published dashboard schema (@grafana/schema: the
# TypeScript types Grafana generates from its CUE dashboard kind) and the
# TypeScript compiler from the npm registry into .cache/grafana-schema, for
# test_grafana_dashboard.py, which type-checks examples/grafana/silt.json
# against that schema. Needs node and npm. Idempotent; prints the directory.
set -euo pipefail
SCHEMA_VERSION=13.2.3
TS_VERSION=5.9.3
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${repo_root}/.cache/grafana-schema"
stamp="${dest}/.complete-${SCHEMA_VERSION}-${TS_VERSION}"
if [ -f "${stamp}" ]; then
  echo "${dest}"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "setup-grafana-schema.sh: npm is not on PATH (Node.js is needed for the dashboard check)" >&2
  exit 1
fi
rm -rf "${dest}"
mkdir -p "${dest}"
echo '{"private": true}' > "${dest}/package.json"
(cd "${dest}" && npm install --no-audit --no-fund --silent --cache "${repo_root}/.cache/npm" \
  "typescript@${TS_VERSION}" "@grafana/schema@${SCHEMA_VERSION}" >&2)
touch "${stamp}"
echo "${dest}"
