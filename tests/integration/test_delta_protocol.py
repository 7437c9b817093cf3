"""Delta protocol, written by silt and read by other engines: checkpoints every
delta.checkpointInterval commits, expired log cleanup, mergeSchema on the
sink, history, and four processes appending to one table at once.

Tables are read back by silt, by delta-rs (deltalake) and by pyspark +
delta-spark (the `spark` fixture), at the latest version and earlier ones.
"""

import datetime as dt
import json
import os
import time
from collections import Counter

import pytest

from helpers import (
    assert_same_rows,
    describe,
    json_file_job,
    log_dir,
    normalize_silt_rows,
    read_with_deltalake,
    read_with_silt,
    read_with_spark,
    start_silt,
    to_json_rows,
    write_input_file,
    write_job,
)

SCHEMA = "id BIGINT, s STRING, n INT, d DATE, ts TIMESTAMP, v DOUBLE"
PARTITION_BY = ["s", "n", "d", "ts"]
# Partition values that need escaping, and NULLs, as Spark writes them.
STRINGS = ["plain", "a/b", "x=y", "50%", "with space", "ünï", "", None]
FIRST_BATCHES = 30
MERGE_BATCHES = 5
ROWS_PER_BATCH = 4
DAY_S = 24 * 3600


def record(i, extra=False):
    rec = {
        "id": i,
        "s": STRINGS[i % len(STRINGS)],
        "n": None if i % 5 == 4 else i % 3,
        "d": None if i % 7 == 6 else f"2026-06-{1 + i % 3:02d}",
        "ts": None if i % 9 == 8 else f"2026-06-22T08:{i % 2:02d}:00Z",
        "v": i * 0.5,
    }
    rec = {k: v for k, v in rec.items() if v is not None}
    if extra:
        rec["extra"] = f"e{i}"
    return rec


def write_batches(input_dir, first_batch, count, extra=False):
    for b in range(first_batch, first_batch + count):
        ids = range(b * ROWS_PER_BATCH, (b + 1) * ROWS_PER_BATCH)
        write_input_file(input_dir / f"b-{b:04d}.json",
                         [json.dumps(record(i, extra)) for i in ids])


def commit_versions(table):
    return sorted(int(p.name[:20]) for p in log_dir(table).glob("*.json")
                  if p.name[:20].isdigit() and len(p.name) == 25)


def age_log_files(table, up_to_version, days):
    """Makes commit and checkpoint files up to `up_to_version` look `days`
    old (monotonic, one second apart), as if written long ago."""
    base = time.time() - days * DAY_S
    for p in log_dir(table).iterdir():
        head = p.name[:20]
        if head.isdigit() and int(head) <= up_to_version:
            t = base + int(head)
            os.utime(p, (t, t))


def silt_rows(silt, table, *extra):
    return normalize_silt_rows(read_with_silt(silt, table, *extra))


@pytest.fixture(scope="module")
def evolved_table(silt_bin, tmp_path_factory):
    """30 appends (checkpoints at 10, 20), old log files aged past the
    retention, then 5 appends with a new column via mergeSchema from a second
    query (checkpoint at 30 and log cleanup)."""
    from helpers import run_silt

    work = tmp_path_factory.mktemp("delta-protocol")
    table = work / "table"
    in1, in2 = work / "in1", work / "in2"
    in1.mkdir()
    in2.mkdir()
    write_batches(in1, 0, FIRST_BATCHES)
    job1 = json_file_job("first", in1, table, work / "cp1", SCHEMA, max_files_per_trigger=1,
                         partition_by=PARTITION_BY)
    job1["sink"]["options"] = {"delta.logRetentionDuration": "interval 2 days"}
    proc = run_silt(silt_bin, "run", write_job(work / "job1.yaml", job1), timeout=600)
    assert proc.returncode == 0, describe(proc)
    assert commit_versions(table) == list(range(FIRST_BATCHES))

    # Versions 0..14 are "old": a checkpoint after that cutoff may drop 0..9.
    age_log_files(table, 14, days=10)

    write_batches(in2, FIRST_BATCHES, MERGE_BATCHES, extra=True)
    job2 = json_file_job("second", in2, table, work / "cp2", SCHEMA + ", extra STRING",
                         max_files_per_trigger=1, partition_by=PARTITION_BY)
    job2["sink"]["options"] = {"mergeSchema": "true"}
    proc = run_silt(silt_bin, "run", write_job(work / "job2.yaml", job2), timeout=600)
    assert proc.returncode == 0, describe(proc)
    return table


def expected_rows(last_batch_exclusive):
    rows = []
    for b in range(last_batch_exclusive):
        for i in range(b * ROWS_PER_BATCH, (b + 1) * ROWS_PER_BATCH):
            rec = record(i, extra=b >= FIRST_BATCHES)
            row = dict(rec)
            if row.get("s") == "":
                del row["s"]  # Spark reads an empty partition string as NULL
            if "ts" in row:
                row["ts"] = row["ts"].replace("Z", ".000Z")
            rows.append(row)
    return rows


def test_checkpoints_and_last_checkpoint_are_written(evolved_table):
    log = log_dir(evolved_table)
    for v in (10, 20, 30):
        assert (log / f"{v:020d}.checkpoint.parquet").is_file(), sorted(os.listdir(log))
    assert not (log / f"{15:020d}.checkpoint.parquet").exists()
    last = json.loads((log / "_last_checkpoint").read_text())
    assert last["version"] == 30
    assert last["numOfAddFiles"] > 0 and last["size"] > last["numOfAddFiles"]
    import pyarrow.parquet as pq

    schema = pq.read_schema(log / f"{30:020d}.checkpoint.parquet")
    assert schema.names[:5] == ["txn", "add", "remove", "metaData", "protocol"]
    assert str(schema.field("add").type.field("partitionValues").type).startswith("map<string, string")


def test_log_cleanup_removed_only_what_precedes_the_expired_checkpoint(evolved_table, silt):
    versions = commit_versions(evolved_table)
    # 0..9 were older than the cutoff and precede checkpoint 10; 10..14 are
    # old too but the checkpoint at 20 is recent, so 10 is the new start.
    assert versions == list(range(10, FIRST_BATCHES + MERGE_BATCHES)), versions
    assert (log_dir(evolved_table) / f"{10:020d}.checkpoint.parquet").is_file()
    gone = silt("read", evolved_table, "--version", "3")
    assert gone.returncode == 1, describe(gone)
    assert "version 3 of Delta table" in gone.stderr
    assert "is no longer available: the log now starts at checkpoint 10" in gone.stderr


def test_latest_rows_agree_in_silt_and_deltalake(evolved_table, silt):
    expected = expected_rows(FIRST_BATCHES + MERGE_BATCHES)
    assert_same_rows(silt_rows(silt, evolved_table), expected, "silt latest", "id")
    assert_same_rows(to_json_rows(read_with_deltalake(evolved_table)), expected,
                     "deltalake latest", "id")


@pytest.mark.parametrize("version", [10, 14, 20, 25, 29, 30, 33])
def test_earlier_versions_agree_in_silt_and_deltalake(evolved_table, silt, version):
    expected = expected_rows(version + 1)
    got = silt_rows(silt, evolved_table, "--version", str(version))
    assert_same_rows(got, expected, f"silt v{version}", "id")
    theirs = to_json_rows(read_with_deltalake(evolved_table, version=version))
    assert_same_rows(theirs, expected, f"deltalake v{version}", "id")


def test_spark_reads_silts_checkpointed_table(evolved_table, spark):
    expected = expected_rows(FIRST_BATCHES + MERGE_BATCHES)
    assert_same_rows(to_json_rows(read_with_spark(spark, evolved_table)), expected,
                     "spark latest", "id")
    for version in (10, 20, 29, 31):
        rows = to_json_rows(read_with_spark(spark, evolved_table, version=version))
        assert_same_rows(rows, expected_rows(version + 1), f"spark v{version}", "id")


def test_spark_history_and_silt_history_agree(evolved_table, silt, spark):
    proc = silt("history", evolved_table, "--format", "json")
    assert proc.returncode == 0, describe(proc)
    ours = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["version"] for e in ours] == list(range(FIRST_BATCHES + MERGE_BATCHES - 1, 9, -1))
    assert all(e["commitInfo"]["operation"] == "STREAMING UPDATE" for e in ours)
    theirs = spark.sql(f"DESCRIBE HISTORY delta.`{evolved_table}`").collect()
    assert [r["version"] for r in theirs] == [e["version"] for e in ours]
    for row, entry in zip(theirs, ours):
        ts = row["timestamp"].replace(tzinfo=dt.timezone.utc)
        assert int(ts.timestamp() * 1000) == entry["timestamp"], (row["version"], ts, entry)
    limited = silt("history", evolved_table, "--limit", "3")
    assert limited.returncode == 0, describe(limited)
    lines = limited.stdout.splitlines()
    assert len(lines) == 4 and lines[1].split()[0] == str(FIRST_BATCHES + MERGE_BATCHES - 1)


def test_spark_time_travel_by_timestamp_matches_versions(evolved_table, spark):
    # Commit file times of the aged versions are one second apart.
    mtime = os.path.getmtime(log_dir(evolved_table) / f"{12:020d}.json")
    ts = dt.datetime.fromtimestamp(mtime, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    ts = ts[:-3]  # Spark (and silt) see file times in milliseconds
    rows = to_json_rows(read_with_spark(spark, evolved_table, timestamp=ts))
    assert_same_rows(rows, expected_rows(13), "spark timestampAsOf v12", "id")


def test_unknown_table_property_is_refused_before_writing(silt, work):
    in_dir = work / "in"
    in_dir.mkdir()
    write_batches(in_dir, 0, 1)
    job = json_file_job("typo", in_dir, work / "t", work / "cp", SCHEMA)
    job["sink"]["options"] = {"delta.checkpointIntervall": "5"}
    proc = silt("run", write_job(work / "job.yaml", job))
    assert proc.returncode != 0
    assert "did you mean delta.checkpointInterval" in proc.stderr, describe(proc)
    assert not (work / "t" / "_delta_log").exists()


def test_new_column_without_merge_schema_fails_naming_it(silt, work):
    in_dir = work / "in"
    in_dir.mkdir()
    write_batches(in_dir, 0, 1)
    table = work / "t"
    job = json_file_job("a", in_dir, table, work / "cp", SCHEMA)
    assert silt("run", write_job(work / "a.yaml", job)).returncode == 0
    in2 = work / "in2"
    in2.mkdir()
    write_batches(in2, 1, 1, extra=True)
    job2 = json_file_job("b", in2, table, work / "cp2", SCHEMA + ", extra STRING")
    proc = silt("run", write_job(work / "b.yaml", job2))
    assert proc.returncode == 2, describe(proc)  # InvalidArgument: fix the job
    assert "column 'extra' (STRING) is not in the table schema; set mergeSchema" in proc.stderr
    assert commit_versions(table) == [0]


# --------------------------------------------------------------------------
# Four processes appending to one table at once

WRITERS = 4
COMMITS_PER_WRITER = 200
ROWS_PER_COMMIT = 3


def generator_job(name, table, checkpoint, writer):
    return {
        "name": name,
        "source": {"format": "generator", "options": {
            "numPartitions": 1,
            "maxOffsetsPerTrigger": ROWS_PER_COMMIT,
            "totalRows": COMMITS_PER_WRITER * ROWS_PER_COMMIT,
            "seed": writer,
        }},
        "transform": [{"select": [f"{writer} AS writer", "offset"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(checkpoint),
        "trigger": {"availableNow": True},
    }


def test_four_processes_append_concurrently(silt_bin, silt, work):
    table = work / "table"
    jobs = [write_job(work / f"w{w}.yaml", generator_job(f"w{w}", table, work / f"cp{w}", w))
            for w in range(WRITERS)]
    # Delta forbids two concurrent table creations; writer 0 creates it.
    first = silt("run", jobs[0], "--max-batches", "1", timeout=120)
    assert first.returncode == 0, describe(first)
    procs = [start_silt(silt_bin, "run", job) for job in jobs]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=1200)
        outs.append((proc.returncode, out, err))
    for rc, out, err in outs:
        assert rc == 0, f"exit {rc}\n{out[-2000:]}\n{err[-4000:]}"

    total = WRITERS * COMMITS_PER_WRITER
    versions = commit_versions(table)
    # Log cleanup keeps everything here (retention 30 days).
    assert versions == list(range(total)), f"{len(versions)} versions"
    txns = Counter()
    for v in versions:
        lines = (log_dir(table) / f"{v:020d}.json").read_text().splitlines()
        actions = [json.loads(line) for line in lines]  # every version parses
        info = [a["commitInfo"] for a in actions if "commitInfo" in a]
        assert len(info) == 1, v
        for a in actions:
            if "txn" in a:
                txns[(a["txn"]["appId"], a["txn"]["version"])] += 1
    assert len(txns) == total and set(txns.values()) == {1}

    rows = read_with_deltalake(table)
    pairs = Counter(zip(rows.column("writer").to_pylist(), rows.column("offset").to_pylist()))
    dups = [p for p, n in pairs.items() if n > 1]
    assert not dups, f"duplicated rows: {dups[:5]}"
    expected = {(w, o) for w in range(WRITERS) for o in range(COMMITS_PER_WRITER * ROWS_PER_COMMIT)}
    assert set(pairs) == expected, f"missing {len(expected - set(pairs))} rows"
    assert len(silt_rows(silt, table)) == len(expected)
    checkpoints = sorted(p.name for p in log_dir(table).glob("*.checkpoint.parquet"))
    due = [f"{v:020d}.checkpoint.parquet" for v in range(10, total, 10)]
    # Checkpoints are written off the commit path (decisions 152, 162): a
    # due one that a newer due one overtakes while the writer's previous
    # checkpoint is being written is not written; the newest due one is.
    assert checkpoints and set(checkpoints) <= set(due), checkpoints
    assert checkpoints[-1] == due[-1], checkpoints[-3:]
