#!/usr/bin/env bash
# Downloads Apache Kafka (KRaft mode broker, plus its admin tools) from Maven
# Central into <repo>/.cache/kafka/<version>/libs for the integration tests.
# Idempotent: a finished download is marked with a stamp file and reused.
# Needs a Java runtime and Maven; installs them with apt-get when missing.
# Prints the libs directory on success.
#
# Without SILT_KAFKA_VERSION it also fetches Kafka 3.9.1 for the SASL/SCRAM
# test: librdkafka before 2.6.1 (Debian 12 has 2.0.2) cannot do SCRAM with
# Kafka 4.x brokers (confluentinc/librdkafka#4895).
set -euo pipefail

if [ -z "${SILT_KAFKA_VERSION:-}" ]; then
  SILT_KAFKA_VERSION=3.9.1 "$0" >/dev/null || echo "warning: Kafka 3.9.1 (SCRAM test) not fetched" >&2
fi

KAFKA_VERSION="${SILT_KAFKA_VERSION:-4.1.0}"
SCALA_VERSION="2.13"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${repo_root}/.cache/kafka/${KAFKA_VERSION}"
stamp="${dest}/.complete"

# The dependency list below; a change in it invalidates the download.
pom="$(cat <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>silt.test</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_${SCALA_VERSION}</artifactId>
      <version>${KAFKA_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka-tools</artifactId>
      <version>${KAFKA_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>2.24.3</version>
    </dependency>
  </dependencies>
</project>
POM
)"

if [ -f "${stamp}" ] && [ "$(cat "${stamp}")" = "${pom}" ]; then
  echo "${dest}/libs"
  exit 0
fi

need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "installing Kafka test dependencies: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

work="${dest}/.download"
rm -rf "${work}" "${dest}/libs"
mkdir -p "${work}"
# A throwaway project whose only purpose is to resolve Kafka's runtime
# dependencies; Maven keeps its own cache in .cache/m2, so a re-download after
# a removed libs folder stays local.
printf '%s\n' "${pom}" > "${work}/pom.xml"
mvn -q -B -f "${work}/pom.xml" -Dmaven.repo.local="${repo_root}/.cache/m2" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="${dest}/libs" >&2
ls "${dest}/libs"/kafka_${SCALA_VERSION}-${KAFKA_VERSION}.jar >/dev/null
rm -rf "${work}"
printf '%s' "${pom}" > "${stamp}"
echo "${dest}/libs"
