#!/usr/bin/env bash
# Fetches the Delta Lake jars that pyspark (installed in .venv from PyPI) needs
# to read and write Delta tables in the integration tests: delta-spark and
# delta-storage from Maven Central, the versions the seed job uses
# (Spark 3.5 + delta-spark 3.2). Cached under .cache/spark-jars; prints the
# directory holding the jars. Idempotent.
set -euo pipefail

DELTA_VERSION="${SILT_DELTA_SPARK_VERSION:-3.2.1}"
SCALA_VERSION="2.12"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${repo_root}/.cache/spark-jars/delta-${DELTA_VERSION}"
stamp="${dest}/.complete"

if [ -f "${stamp}" ]; then
  echo "${dest}"
  exit 0
fi

need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "installing Spark test dependencies: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

rm -rf "${dest}"
mkdir -p "${dest}"
# Only the two Delta jars: everything else they need ships with pyspark.
for artifact in "io.delta:delta-spark_${SCALA_VERSION}:${DELTA_VERSION}" \
                "io.delta:delta-storage:${DELTA_VERSION}"; do
  mvn -q -B -Dmaven.repo.local="${repo_root}/.cache/m2" \
    dependency:copy -Dartifact="${artifact}" -DoutputDirectory="${dest}" >&2
done
ls "${dest}"/delta-spark_${SCALA_VERSION}-${DELTA_VERSION}.jar >/dev/null
date -u +%FT%TZ > "${stamp}"
echo "${dest}"
