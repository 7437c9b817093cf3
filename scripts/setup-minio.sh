#!/usr/bin/env bash
# Builds the MinIO server the S3 integration tests run on loopback, from the Go
# module proxy, into ./.cache/minio/bin (git-ignored). Go's module and build
# caches live under ./.cache/go so repeated runs are fast; the script does
# nothing when the pinned version is already built.
# Needs `go` (1.24 or newer) on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

# MinIO publishes no semver tags for the server module; pin a pseudo-version.
MINIO_VERSION=${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}
ROOT="$PWD/.cache/minio"
BIN="$ROOT/bin/minio"
STAMP="$ROOT/bin/.version"

if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$MINIO_VERSION" ]; then
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "setup-minio.sh: 'go' is not on PATH; install Go to build the MinIO test server" >&2
  exit 1
fi

echo "building MinIO $MINIO_VERSION into $ROOT/bin (first time only)"
mkdir -p "$ROOT/bin" "$PWD/.cache/go"
export GOBIN="$ROOT/bin"
export GOPATH="$PWD/.cache/go"
export GOMODCACHE="$PWD/.cache/go/mod"
export GOCACHE="$PWD/.cache/go/build"
export GOFLAGS="-modcacherw"
export CGO_ENABLED=0
go install -trimpath "github.com/minio/minio@$MINIO_VERSION"
echo "$MINIO_VERSION" > "$STAMP"
