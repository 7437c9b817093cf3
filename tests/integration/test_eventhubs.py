"""The Event Hubs source (format: eventhubs) against a stand-in namespace: the
local Kafka broker with a SASL_SSL listener (own test CA, openssl) whose PLAIN
user is "$ConnectionString" and whose password is an Event Hubs connection
string, which is how Event Hubs' Kafka endpoint logs clients in. The
connection string's Endpoint is sb://localhost:<port>/ (a real one names
NS.servicebus.windows.net and silt uses port 9093).

The job is the second seed's: readStream.format("eventhubs") then
select(from_json(col("body").cast("string"), schema).alias("data")).select("data.*")
into Delta, written as a job file. Events are published with Kafka's own
ConsoleProducer and read back with its ConsoleConsumer, so the expected rows
do not come from the code under test.
"""

import datetime
import json

import pytest

import kafka_service
from helpers import describe, read_with_deltalake, write_job

HUB = "temperature"
KEY = "c2lsdC10ZXN0LWtleS0xMjM0NTY3ODkw="  # SharedAccessKey of the stand-in namespace
PARTITIONS = 3
START_OF_STREAM = json.dumps({"offset": "-1", "seqNo": -1, "enqueuedTime": None,
                              "isInclusive": True})
SCHEMA = "deviceId STRING, temperature DOUBLE, timestamp TIMESTAMP"


@pytest.fixture(scope="module")
def namespace():
    if not kafka_service.available():
        pytest.skip(f"Kafka not downloaded to {kafka_service.kafka_libs()}: "
                    "run scripts/setup-kafka.sh")
    broker = kafka_service.start(eventhubs_hub=HUB, eventhubs_key=KEY)
    broker.create_topic(HUB, PARTITIONS)
    yield broker
    broker.stop()


def publish(broker, first, count):
    """Events first..first+count-1: JSON bodies, a key (the partition key) and
    two headers (the properties)."""
    lines = []
    for i in range(first, first + count):
        body = json.dumps({"deviceId": f"dev-{i % 7}", "temperature": 20 + i / 10,
                           "timestamp": f"2024-05-01T12:{i // 60 % 60:02d}:{i % 60:02d}Z"})
        lines.append(f"source:sim,seq:{i}\tdev-{i % 7}\t{body}")
    broker.console_produce(HUB, lines, "parse.key=true", "parse.headers=true")


def eventhubs_source(broker, connection_string, **extra):
    return {"format": "eventhubs", "options": {
        "eventhubs.connectionString": connection_string,
        "eventhubs.consumerGroup": "$Default",
        "eventhubs.startingPosition": START_OF_STREAM,
        "kafka.ssl.ca.location": broker.ca_path,
        **extra}}


def seed_job(work, broker, name, connection_string=None, **extra):
    table = work / f"{name}-table"
    checkpoint = work / f"{name}-checkpoint"
    job = write_job(work / f"{name}.yaml", {
        "name": name,
        "source": eventhubs_source(broker, connection_string or broker.eventhubs_connection_string,
                                   **extra),
        "transform": [
            {"select": [f"from_json(CAST(body AS STRING), '{SCHEMA}') AS data"]},
            {"select": ["data.*"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(checkpoint),
        "trigger": {"availableNow": True},
    })
    return job, table, checkpoint


def expected_events(broker, count):
    records = broker.console_consume(HUB, count)
    assert len(records) == count
    return records


def test_seed_job_reads_every_event_once_and_restarts_without_gap(silt, namespace, work):
    publish(namespace, 0, 300)
    job, table, checkpoint = seed_job(work, namespace, "seed", maxEventsPerTrigger="120")
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert KEY not in proc.stderr and KEY not in proc.stdout, "the key leaked into the output"
    assert read_with_deltalake(table).num_rows == 300
    # maxEventsPerTrigger split the backlog into batches.
    assert len(list((checkpoint / "offsets").glob("[0-9]*"))) == 3

    # A restart continues where the checkpoint stopped.
    publish(namespace, 300, 200)
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)

    records = expected_events(namespace, 500)
    expected = sorted((r["value"] for r in records))
    got = read_with_deltalake(table).to_pylist()
    assert len(got) == 500
    want = []
    for value in expected:
        event = json.loads(value)
        ts = datetime.datetime.strptime(event["timestamp"], "%Y-%m-%dT%H:%M:%SZ")
        want.append((event["deviceId"], event["temperature"],
                     ts.replace(tzinfo=datetime.timezone.utc)))
    def norm(row):
        ts = row["timestamp"]
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=datetime.timezone.utc)
        return (row["deviceId"], row["temperature"], ts)
    assert sorted(map(norm, got)) == sorted(want)

    # Offsets as the connector writes them: {"<event hub>":{"<partition>":<seqNo>}},
    # the next sequence number per partition; the initial positions in
    # sources/0/0 as a NUL byte, "v1" and that JSON.
    newest = max((checkpoint / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    source_offset = json.loads(newest.read_text().splitlines()[-1])
    end = namespace.end_offsets(HUB)
    assert source_offset == {HUB: {str(p): end[p] for p in range(PARTITIONS)}}
    initial = (checkpoint / "sources" / "0" / "0").read_bytes()
    assert initial.startswith(b"\x00v1\n")
    assert json.loads(initial[4:]) == {HUB: {str(p): 0 for p in range(PARTITIONS)}}


def test_columns_are_the_connectors(silt, namespace, work):
    # Runs after the seed test (module order): the hub holds 500 events.
    records = expected_events(namespace, 500)
    table = work / "raw-table"
    job = write_job(work / "raw.yaml", {
        "name": "raw",
        "source": eventhubs_source(namespace, namespace.eventhubs_connection_string),
        "transform": [{"select": ["*"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(work / "raw-checkpoint"),
        "trigger": {"availableNow": True},
    })
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    from deltalake import DeltaTable
    schema = json.loads(DeltaTable(str(table)).schema().to_json())
    types = {f["name"]: f["type"] for f in schema["fields"]}
    string_map = {"type": "map", "keyType": "string", "valueType": "string",
                  "valueContainsNull": True}
    assert types == {"body": "binary", "partition": "string", "offset": "string",
                     "sequenceNumber": "long", "enqueuedTime": "timestamp",
                     "publisher": "string", "partitionKey": "string",
                     "properties": string_map, "systemProperties": string_map}
    rows = read_with_deltalake(table).to_pylist()
    got = {(int(r["partition"]), r["sequenceNumber"]): r for r in rows}
    assert len(got) == len(rows) == 500
    for rec in records:
        row = got[(rec["partition"], rec["offset"])]
        assert row["body"].decode() == rec["value"]
        assert row["offset"] == str(rec["offset"])
        assert row["partitionKey"] == rec["key"]
        assert row["publisher"] is None
        assert dict(row["properties"]) == rec["headers"]
        key_bytes = json.dumps(list(rec["key"].encode())).replace(" ", "")
        assert dict(row["systemProperties"]) == {"x-opt-kafka-key": key_bytes}
        assert row["enqueuedTime"] is not None


def test_wrong_key_fails_naming_the_source(silt, namespace, work):
    wrong = kafka_service.eventhubs_connection_string(
        int(namespace.sasl_bootstrap.rsplit(":", 1)[1]), HUB, "d3Jvbmcta2V5")
    job, table, _ = seed_job(work, namespace, "wrong", connection_string=wrong)
    proc = silt("run", job, timeout=300)
    assert proc.returncode != 0, describe(proc)
    error_lines = [line for line in proc.stderr.splitlines() if line.startswith("silt: error:")]
    assert error_lines, describe(proc)
    last = error_lines[-1]
    assert "Event Hubs source" in last and "eventhubs.connectionString" in last, describe(proc)
    assert "SharedAccessKey" in last, describe(proc)
    # The Kafka client's log names the refused login.
    assert "authentication" in proc.stderr.lower(), describe(proc)
    assert "d3Jvbmcta2V5" not in proc.stderr and KEY not in proc.stderr, describe(proc)
    assert not (table / "_delta_log").exists()
