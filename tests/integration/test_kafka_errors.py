"""Connection and fetch mistakes fail promptly with an error naming the
broker, topic/partition/offset and the option to change (issue #23 point 13):
a TLS mistake (a CA that did not sign the broker's certificate, a TLS client
on a plaintext listener, a plaintext client on a TLS listener), an address
mistake (nothing listening, a host that does not resolve), and a record
larger than the client's receive.message.max.bytes. Before, each waited out
the request timeout and its retries (minutes) and ended with a bare
"timed out". Reuses the local broker's SASL_SSL listener (kafka_service)."""

import subprocess
import time
import uuid

import pytest

import kafka_service
from helpers import describe, read_with_deltalake, write_job

# Generous: the point is "seconds, not the minutes the retries took", on a
# shared two-core machine. The socket timeout is set far above it, so a test
# that passes did not wait for a timeout it should not have waited for.
PROMPT_SECONDS = 60


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory):
    """A CA that did not sign the broker's certificate."""
    out = tmp_path_factory.mktemp("other-ca")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=not-the-broker-ca", "-keyout", str(out / "ca.key"),
                    "-out", str(out / "ca.pem")], check=True, capture_output=True)
    return out / "ca.pem"


def kafka_job(work, name, bootstrap, **options):
    job = write_job(work / f"{name}.yaml", {
        "name": name,
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": bootstrap,
            "subscribe": "t",
            "startingOffsets": "earliest",
            **options}},
        "transform": [{"select": ["CAST(value AS STRING) AS v", "partition", "offset"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(work / f"{name}-table")},
        "checkpointLocation": str(work / f"{name}-checkpoint"),
        "trigger": {"availableNow": True},
    })
    return job


def run_failing(silt, job, timeout=300):
    start = time.monotonic()
    proc = silt("run", job, timeout=timeout)
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, describe(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("silt: error:")]
    assert len(errors) == 1, describe(proc)
    return errors[0], elapsed


def sasl_options(broker, **extra):
    return {
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "PLAIN",
        "kafka.sasl.username": kafka_service.SASL_PLAIN_USER,
        "kafka.sasl.password": kafka_service.SASL_PLAIN_PASSWORD,
        "kafka.ssl.ca.location": broker.ca_path,
        **extra,
    }


def test_a_ca_that_did_not_sign_the_broker_certificate_fails_at_once(
        silt, secure_kafka, work, other_ca):
    job = kafka_job(work, "wrongca", secure_kafka.sasl_bootstrap,
                    **sasl_options(secure_kafka, **{"kafka.ssl.ca.location": str(other_ca),
                                                    "kafka.socket.timeout.ms": "300000"}))
    error, elapsed = run_failing(silt, job)
    assert secure_kafka.sasl_bootstrap in error, error
    assert "certificate" in error.lower() and "kafka.ssl.ca.location" in error, error
    assert "_SSL" in error, error
    assert elapsed < PROMPT_SECONDS, (elapsed, error)
    assert kafka_service.SASL_PLAIN_PASSWORD not in error
    assert not (work / "wrongca-table" / "_delta_log").exists()


def test_a_tls_client_on_a_plaintext_listener_fails_at_once(silt, secure_kafka, work):
    job = kafka_job(work, "tlsonplain", secure_kafka.bootstrap,
                    **sasl_options(secure_kafka, **{"kafka.socket.timeout.ms": "300000"}))
    error, elapsed = run_failing(silt, job)
    assert secure_kafka.bootstrap in error, error
    assert "kafka.security.protocol" in error, error
    assert elapsed < PROMPT_SECONDS, (elapsed, error)


def test_a_plaintext_client_on_a_tls_listener_names_the_broker_within_the_timeout(
        silt, secure_kafka, work):
    # librdkafka sees the connection closed, which looks like an outage, so
    # this one waits the configured timeout (5 s here), not its retries.
    job = kafka_job(work, "plainontls", secure_kafka.sasl_bootstrap,
                    **{"kafka.socket.timeout.ms": "5000"})
    error, elapsed = run_failing(silt, job)
    assert secure_kafka.sasl_bootstrap in error, error
    assert "within 5000 ms" in error and "kafka.security.protocol" in error, error
    assert elapsed < PROMPT_SECONDS, (elapsed, error)


def test_nothing_listening_names_the_address_within_the_timeout(silt, work):
    port = kafka_service._free_port()
    job = kafka_job(work, "refused", f"127.0.0.1:{port}", **{"kafka.socket.timeout.ms": "3000"})
    error, elapsed = run_failing(silt, job)
    assert f"127.0.0.1:{port}" in error, error
    assert "refused" in error.lower() and "within 3000 ms" in error, error
    assert elapsed < PROMPT_SECONDS, (elapsed, error)
    assert not (work / "refused-checkpoint" / "offsets").exists() or \
        not any((work / "refused-checkpoint" / "offsets").iterdir())


def test_a_host_that_does_not_resolve_is_named(silt, work):
    job = kafka_job(work, "noname", "no-such-broker.invalid:9092",
                    **{"kafka.socket.timeout.ms": "3000"})
    error, elapsed = run_failing(silt, job)
    assert "no-such-broker.invalid:9092" in error, error
    assert "resolve" in error.lower(), error
    assert elapsed < PROMPT_SECONDS, (elapsed, error)


def test_a_record_larger_than_receive_message_max_bytes_says_so(silt, secure_kafka, work):
    topic = f"big-{uuid.uuid4().hex[:8]}"
    secure_kafka.create_topic(topic, 1)
    secure_kafka.console_produce(topic, ["small", "x" * 20000, "after"])
    job = kafka_job(work, "big", secure_kafka.bootstrap, **{
        "subscribe": topic,
        # librdkafka's rules: fetch.max.bytes >= message.max.bytes, and
        # receive.message.max.bytes >= fetch.max.bytes + 512.
        "kafka.message.max.bytes": "1000",
        "kafka.fetch.max.bytes": "1000",
        "kafka.receive.message.max.bytes": "1512",
        "kafkaConsumer.pollTimeoutMs": "300000"})
    error, elapsed = run_failing(silt, job)
    assert f"topic {topic} partition 0 offset" in error, error
    assert "kafka.receive.message.max.bytes" in error and "kafka.fetch.max.bytes" in error, error
    assert elapsed < PROMPT_SECONDS, (elapsed, error)
    # With librdkafka's default limits, the same batch reads every record.
    job = kafka_job(work, "big", secure_kafka.bootstrap, subscribe=topic)
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    values = read_with_deltalake(work / "big-table").column("v").to_pylist()
    assert sorted(values) == sorted(["small", "after", "x" * 20000])
