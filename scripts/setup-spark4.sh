#!/usr/bin/env bash
# The Spark 4 + Delta 4 reference engine of the Delta 4 table-feature tests:
# a second virtualenv, .venv-spark4, with pyspark 4.x and delta-spark 4.x
# pinned in tests/integration/requirements-spark4.txt (pytest itself runs in
# .venv with pyspark 3.5 and starts a worker in .venv-spark4, see
# tests/integration/spark4.py), and the Delta jars from Maven Central with
# their runtime dependencies that pyspark does not already ship, cached under
# .cache/spark4-jars/delta-<version>. Prints the jar directory. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
repo_root="$PWD"

DELTA_VERSION="4.4.0"   # requirements-spark4.txt's delta-spark
SCALA_VERSION="2.13"
VENV=${SPARK4_VENV:-.venv-spark4}
REQ=tests/integration/requirements-spark4.txt
STAMP="$VENV/.requirements.sha256"
dest="${repo_root}/.cache/spark4-jars/delta-${DELTA_VERSION}"

need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
PY=/usr/bin/python3
if ! [ -x "$PY" ]; then PY=$(command -v python3); fi
"$PY" -c 'import ensurepip' >/dev/null 2>&1 || need+=(python3-venv python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "installing Spark 4 test dependencies: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

want=$(sha256sum "$REQ" | cut -d' ' -f1)
if ! { [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; }; then
  echo "setting up the Spark 4 virtualenv in $VENV" >&2
  "$PY" -m venv "$VENV"
  export PIP_CACHE_DIR="$PWD/.cache/pip"
  "$VENV/bin/pip" install -q --disable-pip-version-check --upgrade pip >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ" >&2
  echo "$want" > "$STAMP"
  rm -f "${dest}/.complete"  # the jar set depends on what pyspark ships
fi

if [ ! -f "${dest}/.complete" ]; then
  # delta-spark with its runtime dependencies (Delta Kernel, Unity Catalog's
  # client, ...), resolved by Maven from a throwaway POM.
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cat > "$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>silt.test</groupId><artifactId>spark4-delta-jars</artifactId><version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.delta</groupId><artifactId>delta-spark_${SCALA_VERSION}</artifactId>
      <version>${DELTA_VERSION}</version>
    </dependency>
  </dependencies>
</project>
POM
  rm -rf "${dest}"
  mkdir -p "${dest}"
  mvn -q -B -f "$work/pom.xml" -Dmaven.repo.local="${repo_root}/.cache/m2" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="${dest}" >&2
  # Drop every jar whose artifact pyspark already ships (Hadoop, Parquet,
  # Jackson, Scala, logging, ...): two versions of one library on the class
  # path break Spark. Artifact name = file name without "-<version>.jar".
  pyspark_jars=$("$VENV/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
  shipped=$(ls "$pyspark_jars" | sed -E 's/-[0-9][^-]*(-[A-Za-z0-9.]+)*\.jar$//' | sort -u)
  for jar in "${dest}"/*.jar; do
    name=$(basename "$jar" | sed -E 's/-[0-9][^-]*(-[A-Za-z0-9.]+)*\.jar$//')
    if grep -qxF "$name" <<<"$shipped"; then rm -f "$jar"; fi
  done
  date -u +%FT%TZ > "${dest}/.complete"
fi
echo "${dest}"
