"""Scale-out workers (docs/scale-out.md), what the kill test does not cover:
two workers split a topic; each one's /metrics carries the Kafka lag of the
partitions it holds (together: every partition, lag 0 once drained); `silt
checkpoint` and `silt describe` name the holder of each partition and its
offset; the table (with its per-partition txn actions) reads in
delta-spark and delta-rs with every record once; a stopped worker's
partitions move to the other at once; the job file refuses what workers
cannot do exactly once, and a single query's checkpoint.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
import urllib.request
import uuid

import pytest

from helpers import describe, kill, read_with_deltalake, start_silt, wait_for, write_job

RECORDS = 6000
PARTITIONS = 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return resp.read().decode()


def lag_series(text: str) -> dict:
    """{partition: lag} of silt_kafka_lag_records in an exposition."""
    out = {}
    for line in text.splitlines():
        m = re.match(r'silt_kafka_lag_records\{(.*)\} (\S+)$', line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            out[int(labels["partition"])] = float(m.group(2))
    return out


def job_dict(kafka, topic, table, checkpoint, port=None, **extra):
    job = {
        "name": "scaleout-small",
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "subscribe": topic,
            "startingOffsets": "earliest"}},
        "transform": [{"select": ["partition AS p", "offset AS o",
                                  "CAST(value AS STRING) AS v"]}],
        "sink": {"format": "delta", "path": str(table)},
        "checkpointLocation": str(checkpoint),
        "trigger": {"processingTime": "300 milliseconds"},
        "scaleOut": {"mode": "consumerGroup", "workerId": "${WORKER_ID}"},
    }
    if port is not None:
        job["metrics"] = {"port": port, "lagInterval": "1 second"}
    job.update(extra)
    return job


def test_two_workers_share_report_and_hand_over(kafka, silt, silt_bin, spark, work):
    topic = f"scaleout-small-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, PARTITIONS)
    kafka.console_produce(topic, [f"k{i}\tv{i}" for i in range(RECORDS)], "parse.key=true")
    table, checkpoint = work / "table", work / "workers"
    ports = [free_port(), free_port()]
    procs = []
    for i, port in enumerate(ports):
        job = write_job(work / f"job{i}.yaml", job_dict(kafka, topic, table, checkpoint, port))
        procs.append(start_silt(silt_bin, "run", job, env={"WORKER_ID": f"w{i}"},
                                stdout=open(work / f"w{i}.log", "w"), stderr=subprocess.STDOUT))
    try:
        # Both workers hold partitions, and between them all of them, each
        # reporting the lag of its own; drained, the lag is 0 everywhere.
        def lag_of_both():
            try:
                return [lag_series(scrape(p)) for p in ports]
            except OSError:
                return None

        def drained():
            both = lag_of_both()
            return (both is not None and all(both)
                    and sorted(list(both[0]) + list(both[1])) == list(range(PARTITIONS))
                    and all(v == 0 for lag in both for v in lag.values()))

        assert wait_for(drained, timeout=90, interval=0.5), (
            lag_of_both(), (work / "w0.log").read_text()[-3000:],
            (work / "w1.log").read_text()[-3000:])

        view = silt("checkpoint", checkpoint, "--format", "json")
        assert view.returncode == 0, describe(view)
        info = json.loads(view.stdout)
        assert info["groupId"] == "silt-scaleout-small" and info["appId"] == "scaleout-small"
        owners = {p["partition"]: p["owner"] for p in info["partitions"]}
        assert set(owners.values()) == {"w0", "w1"}, info
        assert sum(p["nextOffset"] for p in info["partitions"]) == RECORDS
        live = {w["workerId"]: w for w in info["workers"]}
        assert all(w["live"] and w["state"] == "running" for w in live.values())
        for w in live.values():
            assert {p["partition"] for p in w["partitions"]} == {
                p for p, o in owners.items() if o == w["workerId"]}
        text = silt("checkpoint", checkpoint)
        assert "workers (2 live of 2 recorded)" in text.stdout, describe(text)

        described = silt("describe", table, "--format", "json")
        assert described.returncode == 0, describe(described)
        offsets = {e["partition"]: e for e in json.loads(described.stdout)["streamingOffsets"]}
        assert sorted(offsets) == list(range(PARTITIONS))
        # The last writer of a partition is the worker that held it when its
        # last records came (it may have moved since, with nothing new).
        assert all(e["lastWrittenBy"] in ("w0", "w1") for e in offsets.values()), offsets
        assert sum(e["nextOffset"] for e in offsets.values()) == RECORDS

        # w0 stops (SIGTERM: it leaves the group); its partitions go to w1,
        # which carries on from the table's offsets as records arrive.
        procs[0].send_signal(signal.SIGTERM)
        assert procs[0].wait(timeout=60) == 0
        kafka.console_produce(topic, [f"k{i}\tv{i}" for i in range(RECORDS, RECORDS + 400)],
                              "parse.key=true")
        assert wait_for(lambda: sorted(lag_series(scrape(ports[1]))) == list(range(PARTITIONS))
                        and all(v == 0 for v in lag_series(scrape(ports[1])).values()),
                        timeout=60, interval=0.5), (work / "w1.log").read_text()[-3000:]
        after = json.loads(silt("checkpoint", checkpoint, "--format", "json").stdout)
        assert {p["owner"] for p in after["partitions"]} == {"w1"}
        assert {w["workerId"]: w["state"] for w in after["workers"]}["w0"] == "stopped"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    kill(proc)

    total = RECORDS + 400
    rows = read_with_deltalake(table).to_pylist()
    assert sorted((r["p"], r["o"]) for r in rows) == sorted(
        (p, o) for p in range(PARTITIONS)
        for o in range(max((r["o"] for r in rows if r["p"] == p), default=-1) + 1))
    assert len(rows) == total
    # delta-spark reads the log (txn actions of every partition included)
    # and finds the same rows.
    df = spark.read.format("delta").load(str(table))
    assert df.count() == total
    assert df.select("p", "o").distinct().count() == total


@pytest.mark.parametrize("extra, message", [
    ({"transform": [{"groupBy": {"keys": ["partition"], "agg": ["count(*) AS n"]}}]},
     "is stateful"),
    ({"deadLetter": {"path": "/tmp/never"}}, "deadLetter is not supported"),
    ({"trigger": {"availableNow": True}}, "trigger once and availableNow are not supported"),
    ({"transform": [{"sql": "SELECT partition, count(*) AS n FROM input GROUP BY partition"}]},
     "scaleOut"),
])
def test_job_file_refuses_what_workers_cannot_do(silt, work, extra, message):
    class NoKafka:
        bootstrap = "127.0.0.1:9"

    job = write_job(work / "job.yaml", job_dict(NoKafka, "t", work / "table", work / "c",
                                                **extra))
    proc = silt("run", job, env={"WORKER_ID": "w"})
    assert proc.returncode == 2, describe(proc)
    assert message in proc.stderr, describe(proc)
    assert not (work / "table").exists() and not (work / "c").exists()


def test_a_single_querys_checkpoint_is_refused(kafka, silt, work):
    (work / "c" / "offsets").mkdir(parents=True)
    (work / "c" / "offsets" / "0").write_text("v1\n{}\n{}\n")
    topic = f"scaleout-refuse-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 1)
    job = write_job(work / "job.yaml", job_dict(kafka, topic, work / "table", work / "c"))
    proc = silt("run", job, env={"WORKER_ID": "w"}, timeout=60)
    assert proc.returncode == 2, describe(proc)
    assert "is the checkpoint of a single query" in proc.stderr, describe(proc)
