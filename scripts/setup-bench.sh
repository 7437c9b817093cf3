#!/usr/bin/env bash
# Installs what the end-to-end benchmark (bench/e2e/run.py, `make bench`)
# needs, from the package registries only, cached under ./.cache:
#   - the test virtualenv (pyarrow, deltalake, pyspark 3.5, delta-spark) and
#     the Kafka 4.1.0 broker (scripts/setup-test-env.sh, setup-kafka.sh),
#   - the Delta jars for Spark (scripts/setup-spark.sh),
#   - Spark's Kafka connector spark-sql-kafka-0-10 for the pyspark version in
#     the venv, with the jars it needs that pyspark does not ship
#     (kafka-clients, commons-pool2, spark-token-provider-kafka-0-10), from
#     Maven Central into .cache/spark-jars/kafka-<spark version>,
#   - bench/e2e/requirements.txt (confluent-kafka for the delta-rs loop,
#     psutil, matplotlib) into the venv.
# Idempotent. Prints the connector jar directory on success.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"
VENV=${VENV:-.venv}

scripts/setup-test-env.sh >&2
SILT_KAFKA_VERSION=4.1.0 scripts/setup-kafka.sh >/dev/null
scripts/setup-spark.sh >/dev/null

SPARK_VERSION=$("${VENV}/bin/python" -c 'import pyspark; print(pyspark.__version__)')
SCALA_VERSION="2.12"
# kafka-clients and commons-pool2 versions as in Spark 3.5's pom.
KAFKA_CLIENTS_VERSION="${SILT_BENCH_KAFKA_CLIENTS_VERSION:-3.4.1}"
POOL2_VERSION="2.11.1"
dest="${repo_root}/.cache/spark-jars/kafka-${SPARK_VERSION}"
stamp="${dest}/.complete"
if [ ! -f "${stamp}" ]; then
  rm -rf "${dest}"
  mkdir -p "${dest}"
  for artifact in "org.apache.spark:spark-sql-kafka-0-10_${SCALA_VERSION}:${SPARK_VERSION}" \
                  "org.apache.spark:spark-token-provider-kafka-0-10_${SCALA_VERSION}:${SPARK_VERSION}" \
                  "org.apache.kafka:kafka-clients:${KAFKA_CLIENTS_VERSION}" \
                  "org.apache.commons:commons-pool2:${POOL2_VERSION}"; do
    mvn -q -B -Dmaven.repo.local="${repo_root}/.cache/m2" \
      dependency:copy -Dartifact="${artifact}" -DoutputDirectory="${dest}" >&2
  done
  date -u +%FT%TZ > "${stamp}"
fi

req=bench/e2e/requirements.txt
bstamp="${VENV}/.bench-requirements.sha256"
want=$(sha256sum "${req}" | cut -d' ' -f1)
if ! [ -f "${bstamp}" ] || [ "$(cat "${bstamp}")" != "${want}" ]; then
  PIP_CACHE_DIR="${repo_root}/.cache/pip" "${VENV}/bin/pip" install -q \
    --disable-pip-version-check -r "${req}" >&2
  echo "${want}" > "${bstamp}"
fi
echo "${dest}"
