"""kill -9 a Kafka -> `sinks:` query (issue #16's acceptance): keyed events
(updates to the same keys, three event types) routed into two Delta tables
by type, beside a merge table of the latest value per key, killed at least
MIN_KILLS times and restarted until it drains the topic.

Half the kills are aimed between the tables' commits: the test polls the
first table's log and kills as soon as a new version appears (the other two
tables commit the batch after it); the others land at random moments. Kills
that landed between tables are counted from the tables' txns (the first
table records a batch the last one does not). Afterwards every routed table
holds each of its source rows exactly once, every batch is at most one
commit per table, and the merge table holds exactly the latest value per key
(computed from the produced events).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections import Counter

import pytest

from helpers import (checkpoint_query_id, describe, kill_after_commit_or_at_random,
                     landed_between_commits, run_silt, start_silt, txn_batches, write_job)
import torture

NUM_EVENTS = torture.scaled(6000)
KEYS = 60
PER_TRIGGER = 20
MIN_KILLS = torture.scaled(30)
MAX_KILLS = torture.scaled(45)
# Broker crashes (SIGKILL, then a restart) while the query runs: none under
# `make test` (test_metrics.py covers an outage), a series under torture.
RESTARTS_AT = torture.restart_points(MIN_KILLS, torture.service_restarts())
RUN_TIMEOUT_S = 60

# Broker crashes need a broker of its own, not the shared one (conftest.py).
KAFKA_OWN_BROKER = bool(RESTARTS_AT)


def make_events():
    rng = random.Random(1616)
    return [{"id": i, "key": f"k{rng.randrange(KEYS)}", "type": rng.choice("abc"),
             "v": rng.randrange(1000), "seq": i} for i in range(NUM_EVENTS)]


def test_kill_9_routed_and_merged_tables_stay_exact(kafka, silt_bin, work):
    events = make_events()
    topic = f"sinks-crash-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 1)
    kafka.console_produce(topic, [json.dumps(e) for e in events])
    tables = {name: work / name for name in ("type_a", "other", "latest")}
    job = write_job(work / "job.yaml", {
        "name": "sinks-crash",
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "subscribe": topic,
            "startingOffsets": "earliest", "maxOffsetsPerTrigger": PER_TRIGGER}},
        "transform": [
            {"select": ["from_json(CAST(value AS STRING), "
                        "'id BIGINT, key STRING, type STRING, v BIGINT, seq BIGINT') AS e"]},
            {"select": ["e.*"]},
        ],
        "sinks": [
            {"name": "type_a", "where": "type = 'a'", "path": str(tables["type_a"])},
            {"name": "other", "where": "type <> 'a'", "select": ["id", "type", "v"],
             "path": str(tables["other"])},
            {"name": "latest", "path": str(tables["latest"]), "mode": "merge",
             "merge": {"on": "t.key = s.key",
                       "whenMatched": [{"condition": "s.seq > t.seq", "action": "updateAll"}],
                       "whenNotMatched": [{"action": "insertAll"}]},
             "dedupBy": {"keys": ["key"], "orderBy": ["seq"]}},
        ],
        "checkpointLocation": str(work / "checkpoint"),
        "trigger": {"availableNow": True},
    })
    rng = random.Random(7)
    kills = Counter()
    between = 0
    restarts = 0
    finished = False
    with open(work / "silt.log", "w") as log:
        while sum(kills.values()) < MAX_KILLS:
            proc = start_silt(silt_bin, "run", job, stdout=log, stderr=log)
            if restarts < len(RESTARTS_AT) and sum(kills.values()) >= RESTARTS_AT[restarts]:
                time.sleep(rng.uniform(0.05, 0.5))
                kafka.halt()
                time.sleep(1.0)
                kafka.restart()
                restarts += 1
            killed_as = kill_after_commit_or_at_random(proc, rng, tables["type_a"], RUN_TIMEOUT_S,
                                                       work / "silt.log")
            if killed_as is None:
                if sum(kills.values()) >= MIN_KILLS:
                    finished = True
                    break
                # Drained before enough kills: nothing left to kill.
                pytest.fail(f"the topic drained after only {sum(kills.values())} kills")
            kills[killed_as] += 1
            if landed_between_commits(work / "checkpoint", tables["type_a"], tables["latest"]):
                between += 1
    if not finished:
        proc = run_silt(silt_bin, "run", job, timeout=300)
        assert proc.returncode == 0, describe(proc)
    print(f"\n[sinks-crash] kills {dict(kills)}, {between} between the tables' commits")
    assert sum(kills.values()) >= MIN_KILLS
    assert between >= 1, "no kill landed between the tables' commits"

    from deltalake import DeltaTable

    def rows(name):
        return DeltaTable(str(tables[name])).to_pyarrow_table().to_pylist()

    got_a = [r["id"] for r in rows("type_a")]
    got_other = [r["id"] for r in rows("other")]
    torture.record("kafka -> two routed delta tables + merge table", kills, len(events),
                   *torture.lost_and_doubled([e["id"] for e in events], got_a + got_other),
                   restarts=restarts, between_tables=between)
    type_a = Counter(r["id"] for r in rows("type_a"))
    assert type_a == Counter(e["id"] for e in events if e["type"] == "a")
    other = Counter((r["id"], r["type"], r["v"]) for r in rows("other"))
    assert other == Counter((e["id"], e["type"], e["v"]) for e in events if e["type"] != "a")
    latest = {}
    for e in events:
        latest[e["key"]] = e
    got = {r["key"]: r for r in rows("latest")}
    assert len(rows("latest")) == len(got) == len(latest)
    assert {k: (r["seq"], r["v"]) for k, r in got.items()} == {
        k: (e["seq"], e["v"]) for k, e in latest.items()}
    query_id = checkpoint_query_id(work / "checkpoint")
    batches = [set(txn_batches(t, query_id)) for t in tables.values()]
    assert batches[0] == batches[1] == batches[2]
