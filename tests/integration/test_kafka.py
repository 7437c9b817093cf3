"""The Kafka source against a real Apache Kafka broker (KRaft, single node,
from scripts/setup-kafka.sh): the seed's job end to end, exactly once under
kill -9, Spark's offsets in the checkpoint, startingOffsets, maxOffsetsPerTrigger,
failOnDataLoss, and consumer-group commits seen by Kafka's own lag tool.
"""

import json
import os
import random
import signal
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from helpers import (
    TEST_PARALLELISM,
    checkpoint_batches,
    describe,
    kill,
    read_with_deltalake,
    start_silt,
    wait_for,
    write_job,
)

REPO = Path(__file__).resolve().parents[2]


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
    """examples/sensor_stream.yaml with local paths, this topic and `trigger`."""
    text = (REPO / "examples" / "sensor_stream.yaml").read_text()
    table, checkpoint = work / "table", work / "checkpoint"
    replacements = {
        "    subscribe: sensor-events\n":
            f"    subscribe: {topic}\n" + "".join(f"    {line}\n" for line in extra_options),
        "  path: ${SENSOR_TABLE:-data/delta/sensor_events}\n": f"  path: {table}\n",
        "checkpointLocation: ${SENSOR_CHECKPOINT:-data/checkpoints/sensor_stream}\n":
            f"checkpointLocation: {checkpoint}\n",
        "trigger: { processingTime: 60 seconds }\n": trigger + "\n",
    }
    for old, new in replacements.items():
        assert old in text, f"examples/sensor_stream.yaml no longer contains {old!r}"
        text = text.replace(old, new)
    if TEST_PARALLELISM:
        text += f"\nparallelism: {TEST_PARALLELISM}\n"
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


# --- startingOffsets variants, timestamps and retention ---------------------


def test_starting_offsets_earliest_reads_from_the_low_watermark(silt, kafka, topic, work):
    produce(silt, kafka, topic, 200)
    end = kafka.end_offsets(topic)
    p = max(end, key=end.get)
    kafka.delete_records(topic, {p: 30})
    job, table, _ = raw_job(work, kafka, topic, startingOffsets="earliest")
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    expected = sorted([(q, o) for q, n in end.items() for o in range(30 if q == p else 0, n)])
    assert partition_offsets(table) == expected


def test_starting_timestamp_and_offsets_by_timestamp(silt, kafka, topic, work):
    # Two waves of records stamped by the producer with the wall clock
    # (Kafka's console producer); a timestamp between them starts each
    # partition at the second wave.
    # Keyed, so that both waves reach every partition.
    kafka.console_produce(topic, [f"k{i}\tearly-{i}" for i in range(60)], "parse.key=true")
    time.sleep(1.5)
    boundary_ms = int(time.time() * 1000)
    time.sleep(1.5)
    first_wave = kafka.end_offsets(topic)
    kafka.console_produce(topic, [f"k{i}\tlate-{i}" for i in range(60)], "parse.key=true")
    end = kafka.end_offsets(topic)

    job, table, _ = raw_job(work, kafka, topic, startingTimestamp=boundary_ms)
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert partition_offsets(table) == sorted(
        (p, o) for p in end for o in range(first_wave[p], end[p]))
    values = read_with_deltalake(table).column("v").to_pylist()
    assert sorted(values) == sorted(f"late-{i}" for i in range(60))

    # Per partition: the busiest partition from the boundary, the others from 0.
    busy = max(first_wave, key=first_wave.get)
    per_partition = {topic: {str(p): (boundary_ms if p == busy else 0) for p in end}}
    (work / "by-ts").mkdir()
    job, table, _ = raw_job(work / "by-ts", kafka, topic,
                            startingOffsetsByTimestamp=json.dumps(per_partition))
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert partition_offsets(table) == sorted(
        (p, o) for p in end for o in range(first_wave[p] if p == busy else 0, end[p]))

    # A timestamp after every record: Spark's default strategy is an error...
    (work / "future").mkdir()
    future = int(time.time() * 1000) + 3_600_000
    job, _, _ = raw_job(work / "future", kafka, topic, startingTimestamp=future)
    proc = silt("run", job, timeout=300)
    assert proc.returncode != 0, describe(proc)
    assert "startingOffsetsByTimestampStrategy" in proc.stderr, describe(proc)
    # ...and with strategy latest the query starts at the end.
    (work / "future-latest").mkdir()
    job, table, _ = raw_job(work / "future-latest", kafka, topic, startingTimestamp=future,
                            startingOffsetsByTimestampStrategy="latest")
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert not (table / "_delta_log").exists() or partition_offsets(table) == []


def wait_for_low_watermark(kafka, topic, partition, minimum, timeout=90):
    """Waits until retention has deleted segments below `minimum` (Kafka's
    log cleaner runs every log.retention.check.interval.ms)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = kafka._tool("org.apache.kafka.tools.GetOffsetShell", "--topic", topic,
                          "--time", "-2")
        for line in out.splitlines():
            parts = line.strip().split(":")
            if len(parts) == 3 and int(parts[1]) == partition and int(parts[2]) >= minimum:
                return int(parts[2])
        time.sleep(1)
    raise TimeoutError(f"retention did not delete {topic}-{partition} below {minimum}")


def test_fail_on_data_loss_after_retention_deleted_segments(silt, kafka, work):
    # The broker's own retention deletes the oldest records (no delete-records
    # call): the seed events carry months-old event times as record
    # timestamps, so with retention.ms 60 s and segment.ms 0.5 s their
    # segments expire at once; records stamped now survive the test.
    name = f"r-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(name, 1, retention_ms=60000, segment_ms=500)
    produce(silt, kafka, name, 100)
    low = wait_for_low_watermark(kafka, name, 0, 1)
    kafka.console_produce(name, [f"fresh-{i}" for i in range(20)])
    end = kafka.end_offsets(name)[0]
    assert 0 < low < end
    # startingOffsets pins offset 0, which retention has deleted.
    pinned = json.dumps({name: {"0": 0}})
    job, table, checkpoint = raw_job(work, kafka, name, startingOffsets=pinned)
    proc = silt("run", job, timeout=300)
    assert proc.returncode != 0, describe(proc)
    assert f"{name}-0: offsets 0 to" in proc.stderr, describe(proc)
    assert "failOnDataLoss" in proc.stderr

    # The same checkpoint re-runs the planned batch, skipping what was lost.
    job, table, checkpoint = raw_job(work, kafka, name, startingOffsets=pinned,
                                     failOnDataLoss="false")
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    rows = partition_offsets(table)
    assert rows and rows[0][1] >= low
    assert rows == [(0, o) for o in range(rows[0][1], end)]
    assert {f"fresh-{i}" for i in range(20)} <= set(read_with_deltalake(table).column("v")
                                                    .to_pylist())
    assert "records) were deleted before they were read" in proc.stderr, describe(proc)


# --- Kafka sink ---------------------------------------------------------------


def test_kafka_sink_round_trip_keeps_keys_headers_and_every_record_once(silt, kafka, work):
    a, b = f"a-{uuid.uuid4().hex[:8]}", f"b-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(a, 3)
    kafka.create_topic(b, 3)
    total = 3000
    lines = [f"trace:t{i},src:a\tkey-{i % 37}\tvalue-{i}" for i in range(total)]
    kafka.console_produce(a, lines, "parse.key=true", "parse.headers=true")
    job = write_job(work / "move.yaml", {
        "name": "move",
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "subscribe": a,
            "startingOffsets": "earliest", "includeHeaders": "true",
            "maxOffsetsPerTrigger": "700"}},
        "transform": [{"select": ["key", "value", "headers"]}],
        "sink": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "topic": b}},
        "checkpointLocation": str(work / "move-checkpoint"),
        "trigger": {"availableNow": True},
    })
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    # A second run has nothing new and sends nothing.
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)

    source = {r["value"]: r for r in kafka.console_consume(a, total)}
    assert len(source) == total
    records = kafka.console_consume(b, total)
    values = Counter(r["value"] for r in records)
    assert len(records) == total, f"{len(records)} records in {b}"
    assert values == Counter(f"value-{i}" for i in range(total))
    for r in records:
        i = int(r["value"].split("-")[1])
        assert r["key"] == f"key-{i % 37}"
        assert r["headers"] == {"trace": f"t{i}", "src": "a"}
        # Java's murmur2 on both sides: a key lands on the same partition.
        assert r["partition"] == source[r["value"]]["partition"]
    assert sum(kafka.end_offsets(b).values()) == total


# --- bad records --------------------------------------------------------------


def write_raw_lines(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        for line in lines:
            f.write(line + b"\n")


def fill_topic_with_raw_values(silt, kafka, work, topic, lines):
    """Publishes each byte line as one record value through silt's own Kafka
    sink (a text file source; no transcoding on the way)."""
    write_raw_lines(work / "raw-in" / "values.txt", lines)
    job = write_job(work / "fill.yaml", {
        "name": "fill",
        "source": {"format": "text", "options": {"path": str(work / "raw-in")}},
        "transform": [{"select": ["CAST(value AS BINARY) AS value"]}],
        "sink": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "topic": topic,
            "kafka.message.max.bytes": str(8 << 20)}},
        "checkpointLocation": str(work / "fill-checkpoint"),
        "trigger": {"availableNow": True},
    })
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)


BAD_SCHEMA = "device_id STRING, n INT, _corrupt_record STRING"
BIG = 3 << 20


def bad_record_lines():
    return [
        b'{"device_id": "ok-1", "n": 1}',
        b'{"device_id": "broken", "n": ',                    # invalid JSON
        # Not UTF-8: Spark's from_json decodes the string's bytes with
        # replacement characters and parses the result (pyspark 3.5.3 gives
        # 'latin1-\ufffd\ufffd', 2).
        b'{"device_id": "latin1-\xe9\xff", "n": 2}',
        b'{"device_id": "ok-2", "n": 3}',
        b'{"device_id": "big", "n": 4, "pad": "' + b"x" * BIG + b'"}',  # 3 MB value
        b'{"device_id": "big-broken", "pad": "' + b"y" * BIG,  # 3 MB, truncated
    ]


def test_bad_kafka_values_follow_the_from_json_mode_and_none_vanish(silt, kafka, work):
    name = f"bad-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(name, 1, max_message_bytes=8 << 20)
    lines = bad_record_lines()
    fill_topic_with_raw_values(silt, kafka, work, name, lines)

    # PERMISSIVE (Spark's default): every record becomes a row; malformed
    # ones have NULL fields, and the raw bytes stay in a BINARY column. A
    # small fetch size still delivers the 3 MB records (Kafka returns at
    # least one record per fetch).
    table = work / "permissive"
    job = write_job(work / "permissive.yaml", {
        "name": "permissive",
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "subscribe": name,
            "startingOffsets": "earliest", "kafka.fetch.max.bytes": "1000000",
            "kafka.max.partition.fetch.bytes": "65536"}},
        "transform": [
            {"select": [f"from_json(CAST(value AS STRING), '{BAD_SCHEMA}') AS e", "offset",
                        "value AS raw"]},
            {"select": ["e.device_id", "e.n", "offset", "raw",
                        "e._corrupt_record IS NOT NULL AS malformed"]},
        ],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(work / "permissive-checkpoint"),
        "trigger": {"availableNow": True},
    })
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    rows = sorted(read_with_deltalake(table).to_pylist(), key=lambda r: r["offset"])
    assert [r["offset"] for r in rows] == list(range(len(lines)))
    assert [r["raw"] for r in rows] == lines
    assert [(r["device_id"], r["n"], r["malformed"]) for r in rows] == [
        ("ok-1", 1, False),
        (None, None, True),
        ("latin1-\ufffd\ufffd", 2, False),
        ("ok-2", 3, False),
        ("big", 4, False),
        (None, None, True),
    ]

    # FAILFAST: the batch stops at the first malformed record and stays
    # uncommitted, so a restart fails the same way instead of skipping it.
    table = work / "failfast"
    failfast = {
        "name": "failfast",
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "subscribe": name,
            "startingOffsets": "earliest"}},
        "transform": [{"select": [
            f"from_json(CAST(value AS STRING), 'device_id STRING, n INT', "
            f"map('mode', 'FAILFAST')) AS e"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(work / "failfast-checkpoint"),
        "trigger": {"availableNow": True},
    }
    job = write_job(work / "failfast.yaml", failfast)
    for _ in range(2):
        proc = silt("run", job, timeout=300)
        assert proc.returncode != 0, describe(proc)
        assert "Malformed JSON in from_json with mode FAILFAST" in proc.stderr, describe(proc)
        # The error names the Kafka record, not a row of an internal batch.
        assert f"first failing record: Kafka topic {name} partition 0 offset 1" in proc.stderr, \
            describe(proc)
    assert checkpoint_batches(work / "failfast-checkpoint", "commits") == []
    assert not (table / "_delta_log").exists() or read_with_deltalake(table).num_rows == 0


def test_kafka_sink_fails_the_batch_on_an_oversized_record(silt, kafka, work):
    name = f"small-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(name, 1, max_message_bytes=1 << 20)
    write_raw_lines(work / "raw-in" / "values.txt", [b"small", b"z" * (2 << 20), b"after"])
    job = write_job(work / "fill.yaml", {
        "name": "fill",
        "source": {"format": "text", "options": {"path": str(work / "raw-in")}},
        "transform": [{"select": ["value"]}],
        "sink": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "topic": name,
            "kafka.message.max.bytes": str(8 << 20)}},
        "checkpointLocation": str(work / "fill-checkpoint"),
        "trigger": {"availableNow": True},
    })
    proc = silt("run", job, timeout=300)
    assert proc.returncode != 0, describe(proc)
    assert name in proc.stderr and "too large" in proc.stderr.lower(), describe(proc)
    assert checkpoint_batches(work / "fill-checkpoint", "commits") == []


# --- the crash test ------------------------------------------------------

CRASH_EVENTS = 100_000
CRASH_KILLS = 24


def committed_offsets(silt, checkpoint):
    """The newest committed batch's offsets as `silt checkpoint` shows them."""
    proc = silt("checkpoint", checkpoint, "--format", "json", timeout=60)
    assert proc.returncode == 0, describe(proc)
    info = json.loads(proc.stdout)
    committed = [b for b in info["batches"] if b["committed"] and b.get("offsets")]
    return committed[-1]["offsets"][0] if committed else None


def stop_once_caught_up(proc, silt, checkpoint, topic, end, timeout, interval):
    """Waits until the running query `proc` has committed offsets `end`
    ({partition: offset} of `topic`), then stops it with SIGTERM, which
    must end it cleanly; fails when it never caught up. Returns the
    offsets as `committed_offsets` shows them."""
    expected = {topic: {str(p): o for p, o in end.items()}}
    caught_up = wait_for(lambda: proc.poll() is None and
                         committed_offsets(silt, checkpoint) == expected,
                         timeout=timeout, interval=interval)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    assert caught_up, f"never caught up to {expected}"
    return expected


def test_seed_job_100k_events_kill_9_at_24_moments_exactly_once_and_lag_0(
        silt_bin, silt, kafka, work):
    """The issue's acceptance: 100,000 seed events over a 3-partition topic
    with traffic on 2 partitions, processingTime trigger, kill -9 at >= 20
    random moments with restarts (half of the events arrive while the query
    is being killed); then every event is in the table exactly once, `silt
    checkpoint` shows the broker's end offsets, and Kafka's consumer-group
    tool reports lag 0."""
    name = f"crash-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(name, 3)
    group = f"g-{uuid.uuid4().hex[:8]}"
    half = CRASH_EVENTS // 2
    produce(silt, kafka, name, half)
    job, table, checkpoint = seed_job(
        work, kafka, name, trigger="trigger: { processingTime: 500 milliseconds }",
        extra_options=[f"kafka.group.id: {group}"])
    # With SILT_TEST_PARALLELISM, batches large enough to be split over the
    # two partitions with traffic (KafkaSource::kMinRecordsPerPart each).
    per_trigger = 20000 if TEST_PARALLELISM > 1 else 2500
    text = job.read_text().replace("maxOffsetsPerTrigger: 1000",
                                   f"maxOffsetsPerTrigger: {per_trigger}")
    job.write_text(text)
    # The other half is published while the query is killed and restarted.
    producer = start_silt(silt_bin, "produce", "--bootstrap-servers", kafka.bootstrap,
                          "--topic", name, "--count", half, "--from", half, "--devices", 2,
                          "--rate", 2500, stdout=subprocess.DEVNULL)
    rng = random.Random(20261129)
    offsets_dir = checkpoint / "offsets"
    log_dir = table / "_delta_log"
    kills = Counter()
    err_log = open(work / "silt-stderr.log", "w")
    try:
        while sum(kills.values()) < CRASH_KILLS:
            proc = start_silt(silt_bin, "run", job, env=run_env(kafka),
                              stdout=subprocess.DEVNULL, stderr=err_log)
            mode = rng.choice(["random", "after offsets", "after log version"])
            if mode == "random":
                time.sleep(rng.uniform(0.2, 2.5))
            else:
                probe_dir = offsets_dir if mode == "after offsets" else log_dir
                def count():
                    try:
                        return len(os.listdir(probe_dir))
                    except FileNotFoundError:
                        return 0
                start_count = count()
                wait_for(lambda: count() != start_count or proc.poll() is not None,
                         timeout=15, interval=0.002)
                time.sleep(rng.uniform(0, 0.05))
            if proc.poll() is not None:
                pytest.fail(f"silt exited early ({proc.returncode}); see "
                            f"{work / 'silt-stderr.log'}")
            kill(proc)
            kills[mode] += 1
        assert producer.wait(timeout=300) == 0

        # A last run with the same trigger catches up; stop it cleanly when
        # the committed offsets reach the broker's end.
        end = kafka.end_offsets(name)
        assert sum(end.values()) == CRASH_EVENTS
        proc = start_silt(silt_bin, "run", job, env=run_env(kafka),
                          stdout=subprocess.DEVNULL, stderr=err_log)
        expected = stop_once_caught_up(proc, silt, checkpoint, name, end, timeout=300,
                                       interval=1.0)
    finally:
        err_log.close()
        if producer.poll() is None:
            producer.kill()

    assert_exactly_once(table, CRASH_EVENTS)
    assert sum(1 for n in end.values() if n > 0) == 2  # traffic on 2 of 3 partitions
    proc = silt("checkpoint", checkpoint, timeout=60)
    assert proc.returncode == 0, describe(proc)
    assert committed_offsets(silt, checkpoint) == expected
    lag = kafka.group_lag(group)
    assert {(t, p): v[2] for (t, p), v in lag.items() if v[1]} == {
        (name, p): 0 for p, n in end.items() if n > 0}, lag
    print(f"kills: {dict(kills)}")


def client_threads(pid):
    """How many librdkafka clients the process runs (one rdk:main thread each)."""
    count = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if (task / "comm").read_text().strip() == "rdk:main":
                count += 1
        except FileNotFoundError:
            pass
    return count


def test_split_batches_then_small_ones_close_the_extra_consumer_and_read_every_event_once(
        silt_bin, silt, kafka, topic, work):
    """Issue #22: a batch of >= 2 * kMinRecordsPerPart records over two
    partitions is read by two consumers (parallelism 2); the extra one used
    to stay assigned and prefetch the topic for the rest of the run. Now the
    small batches after it unassign it and, after 2 s unused, close it; a
    later large batch makes a new one. Every event is read exactly once and
    the checkpoint ends at the broker's end offsets."""
    produce(silt, kafka, topic, 20000)
    job, table, checkpoint = seed_job(
        work, kafka, topic, trigger="trigger: { processingTime: 300 milliseconds }")
    text = job.read_text().replace("maxOffsetsPerTrigger: 1000", "maxOffsetsPerTrigger: 40000")
    if "\nparallelism:" not in text:
        text += "\nparallelism: 2\n"
    job.write_text(text.replace(f"parallelism: {TEST_PARALLELISM}", "parallelism: 2"))
    err_log = open(work / "silt-stderr.log", "w")
    proc = start_silt(silt_bin, "run", job, env=run_env(kafka), stdout=subprocess.DEVNULL,
                      stderr=err_log)
    try:
        # The first batch (20,000 records on 2 partitions) is split.
        assert wait_for(lambda: proc.poll() is None and client_threads(proc.pid) == 2,
                        timeout=60, interval=0.01), "no second consumer was made"
        # Small batches, more than 2 s of them: the extra client is closed.
        total = 20000
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and client_threads(proc.pid) > 1:
            produce(silt, kafka, topic, 50, start=total)
            total += 50
            time.sleep(0.5)
        assert proc.poll() is None, f"silt exited; see {work / 'silt-stderr.log'}"
        assert client_threads(proc.pid) == 1, "the extra consumer was never closed"
        # A large batch again, then small ones.
        produce(silt, kafka, topic, 20000, start=total)
        total += 20000
        produce(silt, kafka, topic, 70, start=total)
        total += 70
        end = kafka.end_offsets(topic)
        assert sum(end.values()) == total
        stop_once_caught_up(proc, silt, checkpoint, topic, end, timeout=120, interval=0.5)
    finally:
        err_log.close()
        if proc.poll() is None:
            kill(proc)
    assert_exactly_once(table, total)


@pytest.mark.parametrize("partitions", [1, 2])
def test_transaction_markers_at_range_ends_leave_no_record_out_or_twice(
        silt, kafka, work, partitions):
    """A transactional producer leaves an offset gap (the commit marker)
    after each transaction, so a batch whose range ends at a marker sees the
    next batch's first record before its range is read: the consumer holds
    that record for the next batch (or drops it when the partition is not
    kept). Small and large batches over one and two partitions read exactly
    the committed records, each once, as Kafka's read_committed consumer
    reads them."""
    from confluent_kafka import Consumer as KafkaConsumer
    from confluent_kafka import Producer as KafkaProducer
    from confluent_kafka import TopicPartition as KafkaPartition

    topic = f"t-{uuid.uuid4().hex[:10]}"
    kafka.create_topic(topic, partitions)
    producer = KafkaProducer({"bootstrap.servers": kafka.bootstrap,
                              "transactional.id": f"tx-{topic}"})
    producer.init_transactions(60)
    for txn in range(120):
        producer.begin_transaction()
        for idx in range(3 + txn % 7):
            producer.produce(topic, value=f"{txn}-{idx}".encode(),
                             partition=(txn + idx) % partitions)
        producer.commit_transaction(60)
    end = kafka.end_offsets(topic)

    reference = KafkaConsumer({"bootstrap.servers": kafka.bootstrap,
                               "group.id": f"ref-{topic}", "isolation.level": "read_committed",
                               "enable.auto.commit": False})
    reference.assign([KafkaPartition(topic, p, 0) for p in end])
    expected = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        message = reference.poll(0.5)
        if message is not None and message.error() is None:
            expected.append((message.partition(), message.offset(), message.value().decode()))
        positions = reference.position([KafkaPartition(topic, p) for p in end])
        if all(tp.offset >= end[tp.partition] for tp in positions):
            break
    reference.close()
    expected.sort()
    assert len(expected) == sum(3 + txn % 7 for txn in range(120))

    for max_offsets in (4, 50, 100000):
        (work / f"max{max_offsets}").mkdir()
        job, table, _ = raw_job(work / f"max{max_offsets}", kafka, topic,
                                startingOffsets="earliest", maxOffsetsPerTrigger=max_offsets)
        proc = silt("run", job, timeout=300)
        assert proc.returncode == 0, describe(proc)
        rows = read_with_deltalake(table).select(["partition", "offset", "v"]).to_pylist()
        assert sorted((r["partition"], r["offset"], r["v"]) for r in rows) == expected, \
            f"maxOffsetsPerTrigger {max_offsets}"
