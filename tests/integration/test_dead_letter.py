"""The dead-letter table (issue #18): a Kafka stream of JSON events where
some records are malformed (not JSON, or a field of the wrong JSON type),
some carry a value ANSI cannot cast, some are far older than the watermark
at a dropDuplicates step, and some lack a column the target table declares
NOT NULL. silt runs with `deadLetter:` and from_json mode DEADLETTER under
ANSI, and is killed with SIGKILL at least MIN_KILLS times (half of the
kills aimed between the dead-letter table's commit and the main table's).
Afterwards every input record (identified by its Kafka offset) is in
exactly one of the two tables, exactly once; each dead letter has the
expected reason, an error naming what failed, the raw bytes and its
topic/partition/offset; both tables commit each batch at most once.

A second test compares the classification with pyspark 3.5 on the same
records: the records Spark's from_json PERMISSIVE marks corrupt (the
columnNameOfCorruptRecord field set) are exactly the malformed_json dead
letters, the records whose cast fails under ANSI (try_cast NULL) are the
ansi_cast ones, and the good rows' values equal Spark's. It then runs the
replay recipe of docs/dead-letters.md: a job reading the dead-letter table
as a Delta source re-feeds the fixed ansi_cast rows into the main table.
"""

from __future__ import annotations

import json
import random
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest

from helpers import (checkpoint_query_id, describe, kill_after_commit_or_at_random,
                     landed_between_commits, run_silt, start_silt, txn_batches, write_job)

NUM_EVENTS = 8000
PER_TRIGGER = 20
MIN_KILLS = 20
MAX_KILLS = 34
RUN_TIMEOUT_S = 60
BASE = datetime(2026, 12, 3, 10, 0, 0, tzinfo=timezone.utc)
SCHEMA = "id BIGINT, dev STRING, ts TIMESTAMP, n STRING"


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_records(count, seed=1818):
    """(line, kind) per offset; kind is the expected outcome."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        ts = BASE + timedelta(seconds=i)
        good = {"id": i, "dev": f"d{i % 7}", "ts": iso(ts), "n": str(rng.randrange(-500, 500))}
        r = rng.random()
        if r < 0.04:
            line = f'{{"id": {i}, "dev": "d1", "ts": '  # truncated: not JSON
            kind = "malformed_json"
        elif r < 0.06:
            line = json.dumps({**good, "id": f"x{i}"})  # a string where BIGINT is due
            kind = "malformed_json"
        elif r < 0.10:
            line = json.dumps({**good, "n": f"{i}x"})  # not an INT: ANSI cast error
            kind = "ansi_cast"
        elif r < 0.13 and i >= 200:
            line = json.dumps({**good, "ts": "2000-01-01T00:00:00Z"})  # far too late
            kind = "late_row"
        elif r < 0.16:
            line = json.dumps({k: v for k, v in good.items() if k != "dev"})  # NOT NULL dev
            kind = "sink_refused"
        else:
            line = json.dumps(good)
            kind = "good"
        out.append((line, kind))
    return out


def create_main_table(path):
    """The target, created by delta-rs with `dev` NOT NULL (as a Spark DDL
    table would declare it)."""
    from deltalake import write_deltalake
    schema = pa.schema([
        pa.field("id", pa.int64()),
        pa.field("dev", pa.string(), nullable=False),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("n", pa.int32()),
        pa.field("offset", pa.int64()),
    ])
    write_deltalake(str(path), schema.empty_table())


def dead_letter_job(work, kafka, topic, main, dead, per_trigger=PER_TRIGGER):
    return write_job(work / "job.yaml", {
        "name": "dead-letters",
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "subscribe": topic,
            "startingOffsets": "earliest", "maxOffsetsPerTrigger": per_trigger}},
        "ansi": True,
        "transform": [
            {"select": [f"from_json(CAST(value AS STRING), '{SCHEMA}', "
                        "map('mode', 'DEADLETTER')) AS e", "offset"]},
            {"select": ["e.id AS id", "e.dev AS dev", "e.ts AS ts", "CAST(e.n AS INT) AS n",
                        "offset"]},
            {"withWatermark": {"eventTime": "ts", "delayThreshold": "10 minutes"}},
            {"dropDuplicates": ["id", "ts"]},
        ],
        "sink": {"format": "delta", "path": str(main)},
        "deadLetter": {"path": str(dead)},
        "checkpointLocation": str(work / "checkpoint"),
        "trigger": {"availableNow": True},
    })


def rows_of(path):
    from deltalake import DeltaTable
    return DeltaTable(str(path)).to_pyarrow_table().to_pylist()


def check_tables(records, topic, main, dead):
    """Every offset in exactly one table, exactly once, with the expected
    outcome; returns the dead letters by offset."""
    main_rows = rows_of(main)
    dead_rows = rows_of(dead)
    main_offsets = Counter(r["offset"] for r in main_rows)
    dead_offsets = Counter(r["offset"] for r in dead_rows)
    assert all(c == 1 for c in main_offsets.values()), "a good row is in the table twice"
    assert all(c == 1 for c in dead_offsets.values()), "a dead letter is in the table twice"
    assert not set(main_offsets) & set(dead_offsets), "a record is in both tables"
    assert set(main_offsets) | set(dead_offsets) == set(range(len(records)))
    expected_good = {i for i, (_, kind) in enumerate(records) if kind == "good"}
    assert set(main_offsets) == expected_good
    by_offset = {r["offset"]: r for r in dead_rows}
    for offset, letter in by_offset.items():
        line, kind = records[offset]
        assert letter["reason"] == kind, (offset, line, letter)
        assert letter["value"] == line.encode(), offset
        assert letter["topic"] == topic and letter["partition"] == 0
        assert letter["source"] == f"Kafka topic {topic} partition 0 offset {offset}"
        assert letter["error"], offset
        assert letter["batch_id"] is not None and letter["query_id"]
        assert letter["timestamp"] is not None and letter["dead_lettered_at"] is not None
    errors = {kind: [r["error"] for r in dead_rows if r["reason"] == kind]
              for kind in ("malformed_json", "ansi_cast", "late_row", "sink_refused")}
    assert all("from_json" in e for e in errors["malformed_json"])
    assert all("Cannot cast" in e and "CAST(e.n AS INT)" in e for e in errors["ansi_cast"])
    assert all("watermark" in e for e in errors["late_row"])
    assert all("NOT NULL" in e and "dev" in e for e in errors["sink_refused"])
    assert all(errors.values()), {k: len(v) for k, v in errors.items()}
    for row in main_rows:
        line, _ = records[row["offset"]]
        event = json.loads(line)
        assert (row["id"], row["dev"], row["n"]) == (event["id"], event["dev"], int(event["n"]))
    return by_offset


def test_kill_9_every_record_lands_once_in_the_table_or_the_dead_letters(kafka, silt_bin, work):
    records = make_records(NUM_EVENTS)
    topic = f"dead-letters-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 1)
    kafka.console_produce(topic, [line for line, _ in records])
    main, dead = work / "events", work / "dead_letters"
    create_main_table(main)
    job = dead_letter_job(work, kafka, topic, main, dead)
    rng = random.Random(18)
    kills = Counter()
    between = 0
    finished = False
    with open(work / "silt.log", "w") as log:
        while sum(kills.values()) < MAX_KILLS:
            proc = start_silt(silt_bin, "run", job, stdout=log, stderr=log)
            killed_as = kill_after_commit_or_at_random(proc, rng, dead, RUN_TIMEOUT_S,
                                                       work / "silt.log")
            if killed_as is None:
                if sum(kills.values()) >= MIN_KILLS:
                    finished = True
                    break
                pytest.fail(f"the topic drained after only {sum(kills.values())} kills")
            kills[killed_as] += 1
            if landed_between_commits(work / "checkpoint", dead, main):
                between += 1
    if not finished:
        proc = run_silt(silt_bin, "run", job, timeout=300)
        assert proc.returncode == 0, describe(proc)
    print(f"\n[dead-letters] kills {dict(kills)}, {between} between the two tables' commits")
    assert sum(kills.values()) >= MIN_KILLS
    assert between >= 1, "no kill landed between the dead-letter and the main commit"

    letters = check_tables(records, topic, main, dead)
    print(f"[dead-letters] {Counter(r['reason'] for r in letters.values())}")
    query_id = checkpoint_query_id(work / "checkpoint")
    dead_batches = txn_batches(dead, query_id)
    main_batches = txn_batches(main, query_id)
    # Each dead letter was committed by its own batch's commit.
    for letter in letters.values():
        assert letter["batch_id"] in dead_batches
    assert set(dead_batches) <= set(main_batches) | {max(main_batches, default=-1) + 1}


def test_matches_spark_and_the_replay_recipe_refeeds_fixed_rows(kafka, silt_bin, spark, work):
    records = make_records(600, seed=99)
    topic = f"dead-letters-spark-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 1)
    kafka.console_produce(topic, [line for line, _ in records])
    main, dead = work / "events", work / "dead_letters"
    create_main_table(main)
    job = dead_letter_job(work, kafka, topic, main, dead, per_trigger=100)
    proc = run_silt(silt_bin, "run", job, "--progress-json", timeout=300)
    assert proc.returncode == 0, describe(proc)
    letters = check_tables(records, topic, main, dead)

    # The progress records count the dead letters by reason.
    progress = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    counted = Counter()
    for p in progress:
        assert p["deadLetters"]["description"].startswith("DeltaSink[")
        counted.update(p["deadLetters"]["byReason"])
        assert p["deadLetters"]["numRows"] == sum(p["deadLetters"]["byReason"].values())
    assert counted == Counter(r["reason"] for r in letters.values())

    # Spark 3.5 on the same records: PERMISSIVE's corrupt records are the
    # malformed_json dead letters; try_cast's NULLs the ansi_cast ones.
    from pyspark.sql import functions as F
    df = spark.createDataFrame([(i, line) for i, (line, _) in enumerate(records)],
                               "offset BIGINT, value STRING")
    parsed = df.select("offset", F.from_json(
        "value", f"{SCHEMA}, _corrupt STRING",
        {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt"}).alias("e"))
    spark_rows = parsed.select(
        "offset", "e.id", "e.dev", "e.ts", "e.n", "e._corrupt",
        F.expr("unix_micros(e.ts)").alias("ts_us"),
        F.expr("try_cast(e.n AS INT)").alias("n_int")).collect()
    spark_corrupt = {r["offset"] for r in spark_rows if r["_corrupt"] is not None}
    assert spark_corrupt == {o for o, r in letters.items() if r["reason"] == "malformed_json"}
    spark_cast_fail = {r["offset"] for r in spark_rows
                       if r["_corrupt"] is None and r["n"] is not None and r["n_int"] is None}
    assert spark_cast_fail == {o for o, r in letters.items() if r["reason"] == "ansi_cast"}
    by_offset = {r["offset"]: r for r in spark_rows}
    for row in rows_of(main):
        s = by_offset[row["offset"]]
        ts_us = (row["ts"] - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)
        assert (row["id"], row["dev"], ts_us, row["n"]) == (s["id"], s["dev"], s["ts_us"],
                                                            s["n_int"])

    # `silt read` shows what happened.
    shown = run_silt(silt_bin, "read", dead, "--format", "jsonl")
    assert shown.returncode == 0, describe(shown)
    shown_rows = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
    assert len(shown_rows) == len(letters)
    assert {r["reason"] for r in shown_rows} == set(Counter(r["reason"] for r in letters.values()))

    # The replay recipe (docs/dead-letters.md): the ansi_cast rows, fixed
    # (the stray non-digits dropped), back into the main table.
    replay = write_job(work / "replay.yaml", {
        "name": "replay-dead-letters",
        "source": {"format": "delta", "options": {"path": str(dead)}},
        "ansi": True,
        "transform": [
            {"where": "reason = 'ansi_cast'"},
            {"select": [f"from_json(CAST(value AS STRING), '{SCHEMA}') AS e", "offset"]},
            {"select": ["e.id AS id", "e.dev AS dev", "e.ts AS ts",
                        "CAST(regexp_replace(e.n, '[^0-9-]', '') AS INT) AS n", "offset"]},
        ],
        "sink": {"format": "delta", "path": str(main)},
        "checkpointLocation": str(work / "replay-checkpoint"),
        "trigger": {"availableNow": True},
    })
    before = Counter(r["offset"] for r in rows_of(main))
    proc = run_silt(silt_bin, "run", replay, timeout=120)
    assert proc.returncode == 0, describe(proc)
    # Run again: the replay's own checkpoint makes it exactly once too.
    proc = run_silt(silt_bin, "run", replay, timeout=120)
    assert proc.returncode == 0, describe(proc)
    after = rows_of(main)
    replayed = Counter(r["offset"] for r in after) - before
    ansi = {o for o, r in letters.items() if r["reason"] == "ansi_cast"}
    assert set(replayed) == ansi and all(c == 1 for c in replayed.values())
    for row in after:
        if row["offset"] in ansi:
            event = json.loads(records[row["offset"]][0])
            assert row["n"] == int(event["n"].rstrip("x"))
