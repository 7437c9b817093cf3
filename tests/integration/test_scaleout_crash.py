"""Scale-out workers on one Kafka consumer group (issue #20's acceptance):
4 `silt run` workers of one `scaleOut:` job share a 12-partition topic and
write one Delta table while 300,000 records are produced; workers are
killed (kill -9) and restarted at random at least 100 times, a fifth worker
joins for good and one worker is killed for good, all while the stream
runs; about one time in ten a worker is stalled instead (SIGSTOP for longer
than its session, then SIGCONT), so that it wakes up holding a batch of
partitions that have moved on. Afterwards the table holds every record
exactly once (each Kafka partition/offset once, read back with delta-rs),
the txn actions record each partition's end offset, and the group's
committed offsets equal the topic's end offsets.

The broker runs with a short minimum session timeout so that the
partitions of a killed worker move on after about two seconds rather than
Kafka's default 45.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
import uuid
from collections import Counter

import pytest

import kafka_service
import torture
from helpers import describe, kill, read_with_deltalake, run_silt, start_silt, write_job

PARTITIONS = 12
RECORDS = torture.scaled(300_000)
PRODUCE_RATE = 5_000  # records per second: production takes about a minute
WORKERS = 4
MIN_KILLS = torture.scaled(100)
DRAIN_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def group_kafka():
    """A broker whose groups let a member's session last as little as
    1.5 s (Kafka's default minimum is 6 s)."""
    if not kafka_service.available():
        pytest.skip(f"Kafka not downloaded to {kafka_service.kafka_libs()}: "
                    "run scripts/setup-kafka.sh")
    broker = kafka_service.start(extra_properties=("group.min.session.timeout.ms=1500",))
    yield broker
    broker.stop()


def worker_job(work, broker, topic, table, checkpoint, trigger="250 milliseconds", extra=None):
    job = {
        "name": "scaleout-accept",
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": broker.bootstrap,
            "subscribe": topic,
            "startingOffsets": "earliest",
            "maxOffsetsPerTrigger": 4000,
            "kafka.session.timeout.ms": "2000",
            "kafka.heartbeat.interval.ms": "300",
        }},
        "transform": [{"select": [
            "partition AS kafka_partition",
            "offset AS kafka_offset",
            "get_json_object(CAST(value AS STRING), '$.device_id') AS device_id",
        ]}],
        "sink": {"format": "delta", "path": str(table)},
        "checkpointLocation": str(checkpoint),
        "trigger": {"processingTime": trigger},
        "scaleOut": {"mode": "consumerGroup", "workerId": "${WORKER_ID}"},
    }
    job.update(extra or {})
    return write_job(work / "job.yaml", job)


def table_offsets(silt, table):
    """{partition: next offset} from the table's txn actions (silt describe)."""
    proc = silt("describe", table, "--format", "json")
    if proc.returncode != 0:
        return {}
    out = {}
    for entry in json.loads(proc.stdout).get("streamingOffsets", []):
        if entry.get("scaleOutAppId") == "scaleout-accept":
            out[entry["partition"]] = entry["nextOffset"]
    return out


class Fleet:
    """The worker processes, by slot; each slot's worker id is stable
    across restarts (its record file), its group membership is not."""

    def __init__(self, silt_bin, job, logs):
        self.silt_bin, self.job, self.logs = silt_bin, job, logs
        self.procs = {}
        self.starts = Counter()

    def start(self, slot):
        self.starts[slot] += 1
        log = open(self.logs / f"w{slot}-{self.starts[slot]}.log", "w")
        self.procs[slot] = start_silt(self.silt_bin, "run", self.job,
                                      env={"WORKER_ID": f"w{slot}"},
                                      stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def kill(self, slot):
        kill(self.procs.pop(slot))

    def failed(self):
        """Slots whose worker exited by itself (an error)."""
        return [s for s, p in self.procs.items() if p.poll() is not None]

    def stop_all(self):
        for proc in self.procs.values():
            proc.send_signal(signal.SIGTERM)
        for slot, proc in list(self.procs.items()):
            try:
                assert proc.wait(timeout=60) == 0, f"worker {slot} exited {proc.returncode}"
            finally:
                if proc.poll() is None:
                    kill(proc)
        self.procs.clear()

    def log_tail(self, slot):
        path = self.logs / f"w{slot}-{self.starts[slot]}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


def test_workers_killed_and_restarted_write_every_record_once(group_kafka, silt, silt_bin, work):
    broker = group_kafka
    topic = f"scaleout-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, PARTITIONS)
    table, checkpoint, logs = work / "table", work / "workers", work / "logs"
    logs.mkdir()
    job = worker_job(work, broker, topic, table, checkpoint)
    fleet = Fleet(silt_bin, job, logs)
    for slot in range(WORKERS):
        fleet.start(slot)

    producer = start_silt(silt_bin, "produce", "-b", broker.bootstrap, "-t", topic,
                          "--count", RECORDS, "--rate", PRODUCE_RATE, "--devices", 480,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rng = random.Random(2020)
    kills = Counter()
    added = removed = False
    live = set(range(WORKERS))
    try:
        start = time.monotonic()
        # Kills at random while the records arrive (and a little after), so
        # that every phase of a batch gets hit: reading, writing files,
        # committing, rebalancing.
        while kills["total"] < MIN_KILLS or producer.poll() is None:
            assert not fleet.failed(), "".join(
                f"worker {s} failed:\n{fleet.log_tail(s)}" for s in fleet.failed())
            elapsed = time.monotonic() - start
            if not added and kills["total"] >= MIN_KILLS // 3:
                fleet.start(WORKERS)  # a fifth worker joins for good
                live.add(WORKERS)
                added = True
            if not removed and kills["total"] >= 2 * MIN_KILLS // 3:
                gone = rng.choice(sorted(live))
                fleet.kill(gone)  # and one goes for good
                live.discard(gone)
                kills["total"] += 1
                kills["for_good"] += 1
                removed = True
                continue
            slot = rng.choice(sorted(live))
            if rng.random() < 0.1:
                # A stalled worker (SIGSTOP for longer than its session):
                # the group gives its partitions away, and when it wakes it
                # may be in the middle of a batch or a commit for them; the
                # table's compare-and-set txns must turn that batch away.
                fleet.procs[slot].send_signal(signal.SIGSTOP)
                time.sleep(rng.uniform(2.5, 4.0))
                fleet.procs[slot].send_signal(signal.SIGCONT)
                kills["paused"] += 1
                continue
            fleet.kill(slot)
            kills["total"] += 1
            kills["restarted"] += 1
            time.sleep(rng.uniform(0.0, 0.6))
            fleet.start(slot)
            time.sleep(rng.uniform(0.1, 0.7))
            assert elapsed < 600, "kill loop ran too long"
        out, err = producer.communicate(timeout=120)
        assert producer.returncode == 0, f"produce failed: {err}"

        ends = broker.end_offsets(topic)
        assert sum(ends.values()) == RECORDS
        drained = False
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while time.monotonic() < deadline:
            assert not fleet.failed(), "".join(
                f"worker {s} failed:\n{fleet.log_tail(s)}" for s in fleet.failed())
            if table_offsets(silt, table) == ends:
                drained = True
                break
            time.sleep(1)
        assert drained, (f"not drained: table {table_offsets(silt, table)} vs topic {ends}\n"
                         + "".join(fleet.log_tail(s) for s in sorted(live)))

        # The group's offsets follow the table's (committed after each
        # table commit, and again by a partition's next owner).
        group = "silt-scaleout-accept"
        group_ok = False
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lag = broker.group_lag(group)
            committed = {p: cur for (t, p), (cur, _end, _lag) in lag.items() if t == topic}
            if committed == ends:
                group_ok = True
                break
            time.sleep(2)

        # What the operator sees: every partition held by a live worker,
        # and the table's offsets.
        view = silt("checkpoint", checkpoint, "--format", "json")
        assert view.returncode == 0, describe(view)
        info = json.loads(view.stdout)
        held = {(p["topic"], p["partition"]): p["owner"] for p in info["partitions"]}
        text = silt("checkpoint", checkpoint)
        assert text.returncode == 0, describe(text)
        described = silt("describe", table)
        assert "kafka offsets of scale-out appId scaleout-accept" in described.stdout, \
            describe(described)
    finally:
        if producer.poll() is None:
            kill(producer)
        fleet.stop_all()

    rows = read_with_deltalake(table).to_pylist()
    got = [(r["kafka_partition"], r["kafka_offset"]) for r in rows]
    expected = [(p, o) for p, end in ends.items() for o in range(end)]
    lost, doubled = torture.lost_and_doubled(expected, got)
    # How often each guard fired (each run's log): batches discarded because
    # a partition was revoked while they ran, and because another worker
    # had advanced a partition when they committed.
    log_text = "".join(p.read_text(errors="replace") for p in logs.glob("*.log"))
    revoked = log_text.count("discarded: partitions it read were revoked")
    overtaken = log_text.count("another writer advanced the same input partition")
    torture.record("test_scaleout_crash.py", kills, len(expected), lost, doubled,
                   discarded_revoked=revoked, discarded_overtaken=overtaken)
    print(f"kills {dict(kills)}; batches discarded: {revoked} revoked, {overtaken} overtaken")
    assert kills["total"] >= MIN_KILLS
    assert (lost, doubled) == (0, 0), f"{lost} records lost, {doubled} doubled"
    assert all(r["device_id"] for r in rows[:1000])
    assert group_ok, f"group offsets {committed} != topic ends {ends}"
    assert set(held) == {(topic, p) for p in range(PARTITIONS)}
    assert all(owner is not None for owner in held.values()), info["partitions"]
    assert f"{topic}-0" in text.stdout and "live" in text.stdout, describe(text)
