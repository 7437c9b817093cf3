"""Reading a secured broker: the local Kafka with an extra SASL_SSL listener
(throwaway CA and broker certificate from openssl, cached in .cache/kafka-tls),
SASL PLAIN and SCRAM-SHA-256/512 users, all through the job's kafka.* options.

SCRAM runs against Kafka 3.9.1 (`SILT_KAFKA_VERSION=3.9.1
scripts/setup-kafka.sh`; skipped when absent): librdkafka before 2.6.1 — Debian
12 ships 2.0.2 — sends a SCRAM client-final nonce that Kafka 4.x rejects
(confluentinc/librdkafka#4895), so SCRAM against a 4.x broker needs a newer
librdkafka. PLAIN works against 4.1.0.
"""

import uuid

import pytest

import kafka_service
from helpers import describe, read_with_deltalake, write_job


SCRAM_KAFKA_VERSION = "3.9.1"


@pytest.fixture(scope="module")
def scram_kafka():
    if not kafka_service.available(SCRAM_KAFKA_VERSION):
        pytest.skip(f"Kafka {SCRAM_KAFKA_VERSION} not downloaded: run "
                    f"SILT_KAFKA_VERSION={SCRAM_KAFKA_VERSION} scripts/setup-kafka.sh")
    broker = kafka_service.start(sasl_ssl=True, version=SCRAM_KAFKA_VERSION)
    yield broker
    broker.stop()


def secure_job(work, broker, topic, mechanism, user, password, name):
    table = work / f"{name}-table"
    job = write_job(work / f"{name}.yaml", {
        "name": name,
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": broker.sasl_bootstrap,
            "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": mechanism,
            "kafka.sasl.username": user,
            "kafka.sasl.password": password,
            "kafka.ssl.ca.location": broker.ca_path,
            "kafka.group.id": f"{name}-group",
            "subscribe": topic,
            "startingOffsets": "earliest",
            "kafkaConsumer.pollTimeoutMs": "20000"}},
        "transform": [{"select": ["CAST(value AS STRING) AS v", "partition", "offset"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(work / f"{name}-checkpoint"),
        "trigger": {"availableNow": True},
    })
    return job, table


def read_through_sasl_ssl(silt, secure_kafka, work, mechanism, user, password):
    topic = f"s-{uuid.uuid4().hex[:8]}"
    secure_kafka.create_topic(topic, 2)
    # Published through the secured listener too (silt produce -X ...).
    proc = silt("produce", "--bootstrap-servers", secure_kafka.sasl_bootstrap, "--topic", topic,
                "--count", 500, "-X", "security.protocol=SASL_SSL",
                "-X", f"sasl.mechanism={mechanism}", "-X", f"sasl.username={user}",
                "-X", f"sasl.password={password}",
                "-X", f"ssl.ca.location={secure_kafka.ca_path}", timeout=300)
    assert proc.returncode == 0, describe(proc)
    name = mechanism.lower().replace("-", "")
    job, table = secure_job(work, secure_kafka, topic, mechanism, user, password, name)
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert read_with_deltalake(table).num_rows == 500
    assert sum(secure_kafka.end_offsets(topic).values()) == 500


def test_reads_through_sasl_plain_over_tls(silt, secure_kafka, work):
    read_through_sasl_ssl(silt, secure_kafka, work, "PLAIN", kafka_service.SASL_PLAIN_USER,
                          kafka_service.SASL_PLAIN_PASSWORD)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_reads_through_sasl_scram_over_tls(silt, scram_kafka, work, mechanism):
    read_through_sasl_ssl(silt, scram_kafka, work, mechanism, kafka_service.SASL_SCRAM_USER,
                          kafka_service.SASL_SCRAM_PASSWORD)


def test_wrong_password_fails_with_an_authentication_error(silt, secure_kafka, work):
    topic = f"s-{uuid.uuid4().hex[:8]}"
    secure_kafka.create_topic(topic, 1)
    job, table = secure_job(work, secure_kafka, topic, "PLAIN",
                            kafka_service.SASL_PLAIN_USER, "wrong", "bad")
    proc = silt("run", job, timeout=300)
    assert proc.returncode != 0, describe(proc)
    assert "authentication" in proc.stderr.lower(), describe(proc)
    assert not (table / "_delta_log").exists()


def test_produce_with_a_wrong_password_names_the_authentication_failure(silt, secure_kafka, work):
    # Without the producer's error callback this waited out the flush and
    # reported a timeout, hiding the cause.
    topic = f"s-{uuid.uuid4().hex[:8]}"
    secure_kafka.create_topic(topic, 1)
    proc = silt("produce", "--bootstrap-servers", secure_kafka.sasl_bootstrap, "--topic", topic,
                "--count", 10, "-X", "security.protocol=SASL_SSL",
                "-X", "sasl.mechanism=PLAIN", "-X", f"sasl.username={kafka_service.SASL_PLAIN_USER}",
                "-X", "sasl.password=wrong",
                "-X", f"ssl.ca.location={secure_kafka.ca_path}", timeout=300)
    assert proc.returncode != 0, describe(proc)
    # silt's own error line names the cause (librdkafka's log lines above it
    # do too, but a user reads the last line).
    error_lines = [line for line in proc.stderr.splitlines() if line.startswith("silt: error:")]
    assert error_lines and "authentication" in error_lines[-1].lower(), describe(proc)
    assert "wrong" not in proc.stderr, describe(proc)
    assert sum(secure_kafka.end_offsets(topic).values()) == 0
