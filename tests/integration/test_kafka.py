"""The Kafka source against a real Apache Kafka broker (KRaft, single node,
from scripts/setup-kafka.sh): the seed's job end to end, exactly once under
kill -9, Spark's offsets in the checkpoint, startingOffsets, maxOffsetsPerTrigger,
failOnDataLoss, and consumer-group commits seen by Kafka's own lag tool.
"""

import json
import random
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

import kafka_service
from helpers import checkpoint_batches, describe, kill, read_with_deltalake, start_silt, write_job

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def kafka():
    if not kafka_service.available():
        pytest.skip(f"Kafka not downloaded to {kafka_service.kafka_libs()}: "
                    "run scripts/setup-kafka.sh")
    broker = kafka_service.start()
    yield broker
    broker.stop()


@pytest.fixture
def topic(kafka):
    name = f"t-{uuid.uuid4().hex[:10]}"
    kafka.create_topic(name, 3)
    return name


def produce(silt, kafka, topic, count, start=0, devices=2):
    proc = silt("produce", "--bootstrap-servers", kafka.bootstrap, "--topic", topic,
                "--count", count, "--from", start, "--devices", devices, timeout=300)
    assert proc.returncode == 0, describe(proc)


def seed_job(work, kafka, topic, trigger="trigger: { availableNow: true }", extra_options=()):
    """examples/sensor-stream.yaml with local paths, this topic and `trigger`."""
    text = (REPO / "examples" / "sensor-stream.yaml").read_text()
    table, checkpoint = work / "table", work / "checkpoint"
    replacements = {
        "    subscribe: sensor-events\n":
            f"    subscribe: {topic}\n" + "".join(f"    {line}\n" for line in extra_options),
        "  path: s3://sensor-data/delta/sensor_events\n": f"  path: {table}\n",
        "checkpointLocation: s3://sensor-data/checkpoints/sensor_stream\n":
            f"checkpointLocation: {checkpoint}\n",
        "trigger: { processingTime: 60 seconds }\n": trigger + "\n",
    }
    for old, new in replacements.items():
        assert old in text, f"examples/sensor-stream.yaml no longer contains {old!r}"
        text = text.replace(old, new)
    path = work / "job.yaml"
    path.write_text(text)
    return path, table, checkpoint


def offsets_line(checkpoint, batch):
    lines = (Path(checkpoint) / "offsets" / str(batch)).read_text().splitlines()
    assert lines[0] == "v1"
    return json.loads(lines[2])


def assert_exactly_once(table, expected):
    rows = read_with_deltalake(table).select(["device_id", "event_time"]).to_pylist()
    counts = Counter((r["device_id"], r["event_time"]) for r in rows)
    duplicates = [k for k, n in counts.items() if n > 1]
    assert not duplicates, f"{len(duplicates)} events twice, e.g. {duplicates[:3]}"
    assert len(rows) == expected


def run_env(kafka):
    return {"KAFKA_BOOTSTRAP": kafka.bootstrap}


def test_seed_job_reads_every_event_once_with_sparks_offsets_and_group_lag(
        silt, kafka, topic, work):
    produce(silt, kafka, topic, 5000)
    group = f"g-{uuid.uuid4().hex[:8]}"
    job, table, checkpoint = seed_job(work, kafka, topic,
                                      extra_options=[f"kafka.group.id: {group}"])
    proc = silt("run", job, env=run_env(kafka), timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(table, 5000)

    end = kafka.end_offsets(topic)
    assert sum(end.values()) == 5000
    # The seed's 2 devices hash to at most 2 of the 3 partitions.
    assert sum(1 for n in end.values() if n > 0) <= 2
    batches = checkpoint_batches(checkpoint, "offsets")
    assert checkpoint_batches(checkpoint, "commits") == batches
    previous = {str(p): 0 for p in end}
    for batch in batches:
        offsets = offsets_line(checkpoint, batch)
        assert list(offsets) == [topic]
        current = offsets[topic]
        assert sum(current[p] - previous[p] for p in current) <= 1000  # maxOffsetsPerTrigger
        previous = current
    assert {int(p): o for p, o in previous.items()} == end
    initial = (Path(checkpoint) / "sources" / "0" / "0").read_bytes()
    assert initial.startswith(b"\x00v1\n")
    assert json.loads(initial[4:]) == {topic: {"0": 0, "1": 0, "2": 0}}

    lag = kafka.group_lag(group)
    assert {(t, p): v[2] for (t, p), v in lag.items() if v[1]} == {
        (topic, p): 0 for p, n in end.items() if n > 0}, lag

    # Nothing new: a second run plans no batch; new events continue the stream.
    produce(silt, kafka, topic, 700, start=5000)
    proc = silt("run", job, env=run_env(kafka), timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(table, 5700)


def test_kill_9_and_restart_never_loses_or_duplicates(silt_bin, silt, kafka, topic, work):
    total = 30000
    produce(silt, kafka, topic, total)
    job, table, checkpoint = seed_job(work, kafka, topic,
                                      trigger="trigger: { processingTime: 0 seconds }")
    rng = random.Random(7)
    kills = 0
    for _ in range(8):
        proc = start_silt(silt_bin, "run", job, env=run_env(kafka))
        time.sleep(rng.uniform(0.5, 3.0))
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"silt exited early ({proc.returncode}):\n{out}\n{err}")
        kill(proc)
        kills += 1
    drain, _, _ = seed_job(work, kafka, topic)
    proc = silt("run", drain, env=run_env(kafka), timeout=600)
    assert proc.returncode == 0, describe(proc)
    assert_exactly_once(table, total)
    last = checkpoint_batches(checkpoint, "offsets")[-1]
    assert {int(p): o for p, o in offsets_line(checkpoint, last)[topic].items()} == \
        kafka.end_offsets(topic)
    assert kills == 8


def raw_job(work, kafka, topic, **options):
    table, checkpoint = work / "raw", work / "raw-checkpoint"
    opts = {"kafka.bootstrap.servers": kafka.bootstrap, "subscribe": topic}
    opts.update({k: str(v) for k, v in options.items()})
    job = {
        "name": "raw",
        "source": {"format": "kafka", "options": opts},
        "transform": [{"select": ["CAST(value AS STRING) AS v", "partition", "offset"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(checkpoint),
        "trigger": {"availableNow": True},
    }
    return write_job(work / f"raw-{uuid.uuid4().hex[:6]}.yaml", job), table, checkpoint


def partition_offsets(table):
    rows = read_with_deltalake(table).select(["partition", "offset"]).to_pylist()
    return sorted((r["partition"], r["offset"]) for r in rows)


def test_starting_offsets_latest_skips_what_was_there(silt, kafka, topic, work):
    produce(silt, kafka, topic, 100)
    job, table, _ = raw_job(work, kafka, topic, startingOffsets="latest")
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert not (table / "_delta_log").exists() or partition_offsets(table) == []
    produce(silt, kafka, topic, 50, start=100)
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    before = kafka.end_offsets(topic)
    assert len(partition_offsets(table)) == 50
    assert all(o >= 0 for _, o in partition_offsets(table))
    assert sum(before.values()) == 150


def test_starting_offsets_json_with_earliest_and_latest_markers(silt, kafka, topic, work):
    produce(silt, kafka, topic, 300)
    end = kafka.end_offsets(topic)
    busy = [p for p, n in end.items() if n >= 10]
    start = {str(p): -1 for p in end}
    start[str(busy[0])] = 5
    if len(busy) > 1:
        start[str(busy[1])] = -2
    job, table, _ = raw_job(work, kafka, topic, startingOffsets=json.dumps({topic: start}))
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    expected = [(busy[0], o) for o in range(5, end[busy[0]])]
    if len(busy) > 1:
        expected += [(busy[1], o) for o in range(0, end[busy[1]])]
    assert partition_offsets(table) == sorted(expected)


def test_fail_on_data_loss_both_ways(silt, kafka, topic, work):
    produce(silt, kafka, topic, 300)
    end = kafka.end_offsets(topic)
    p = max(end, key=end.get)
    # The query plans from offset 0, then retention (here: delete-records)
    # removes the first records before the batch reads them.
    start = {topic: {str(q): (0 if q == p else -1) for q in end}}
    kafka.delete_records(topic, {p: 20})
    job, table, checkpoint = raw_job(work, kafka, topic, startingOffsets=json.dumps(start))
    proc = silt("run", job, timeout=300)
    assert proc.returncode != 0, describe(proc)
    assert f"{topic}-{p}: offsets 0 to 19" in proc.stderr, describe(proc)

    # The same checkpoint re-runs the planned batch, now skipping the lost range.
    job, table, checkpoint = raw_job(work, kafka, topic, startingOffsets=json.dumps(start),
                                     failOnDataLoss="false")
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert partition_offsets(table) == [(p, o) for o in range(20, end[p])]
