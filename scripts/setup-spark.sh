#!/usr/bin/env bash
# Fetches the jars that pyspark (installed in .venv from PyPI) needs in the
# integration tests, from Maven Central: delta-spark and delta-storage, the
# versions the seed job uses (Spark 3.5 + delta-spark 3.2), and Spark's
# Kafka connector (spark-sql-kafka-0-10 with its kafka-clients, token
# provider and commons-pool2) for the checkpoint takeover tests. Cached
# under .cache/spark-jars; prints the directory holding the Delta jars.
# Idempotent.
set -euo pipefail

DELTA_VERSION="${SILT_DELTA_SPARK_VERSION:-3.2.1}"
SPARK_VERSION="3.5.3"  # pyspark's, from tests/integration/requirements.txt
SCALA_VERSION="2.12"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${repo_root}/.cache/spark-jars/delta-${DELTA_VERSION}"
kafka_dest="${repo_root}/.cache/spark-jars/kafka-connector-${SPARK_VERSION}"

if [ -f "${dest}/.complete" ] && [ -f "${kafka_dest}/.complete" ]; then
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

# fetch DIR ARTIFACT...: copies each artifact alone (no transitive
# dependencies: the rest ships with pyspark) into DIR, then stamps it.
fetch() {
  local dir="$1"
  shift
  rm -rf "${dir}"
  mkdir -p "${dir}"
  for artifact in "$@"; do
    mvn -q -B -Dmaven.repo.local="${repo_root}/.cache/m2" \
      dependency:copy -Dartifact="${artifact}" -DoutputDirectory="${dir}" >&2
  done
  date -u +%FT%TZ > "${dir}/.complete"
}

if [ ! -f "${dest}/.complete" ]; then
  fetch "${dest}" "io.delta:delta-spark_${SCALA_VERSION}:${DELTA_VERSION}" \
    "io.delta:delta-storage:${DELTA_VERSION}"
fi
if [ ! -f "${kafka_dest}/.complete" ]; then
  fetch "${kafka_dest}" \
    "org.apache.spark:spark-sql-kafka-0-10_${SCALA_VERSION}:${SPARK_VERSION}" \
    "org.apache.spark:spark-token-provider-kafka-0-10_${SCALA_VERSION}:${SPARK_VERSION}" \
    "org.apache.kafka:kafka-clients:3.4.1" "org.apache.commons:commons-pool2:2.11.1"
fi
echo "${dest}"
