"""Table tools on a table a streaming run filled with hundreds of small files:
`silt optimize`, `silt vacuum`, `silt describe`, `silt restore`, the
`type: maintenance` job and the Delta sink's autoCompact — checked against
deltalake (delta-rs) and Spark (delta-spark) readers and file by file on
disk."""

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from generator_stream import KEY, assert_each_key_once, stream_job
from helpers import (
    assert_same_rows,
    describe,
    log_versions,
    read_commit,
    read_with_deltalake,
    read_with_spark,
    snapshot,
    start_silt,
    to_json_rows,
    wait_for,
    write_job,
)

ROWS_PER_BATCH = 8
BATCHES = 400


def data_files_on_disk(table):
    """Relative paths of the Parquet data files under the table (not hidden)."""
    out = set()
    for p in Path(table).rglob("*.parquet"):
        rel = p.relative_to(table)
        if any(part.startswith(("_", ".")) for part in rel.parts):
            continue
        out.add(str(rel))
    return out


def live_files(table, version=None):
    return set(snapshot(table, version).files)


def rows(arrow_table):
    return to_json_rows(arrow_table)


def last_commit_info(table):
    version = log_versions(table)[-1]
    for action in read_commit(table, version):
        if "commitInfo" in action:
            return version, action["commitInfo"]
    raise AssertionError(f"version {version} has no commitInfo")


@pytest.fixture(scope="module")
def small_files_table(silt_bin, tmp_path_factory):
    """A table with >= 500 small files written by `silt run` (one commit per
    micro-batch of 8 records), built once and copied per test."""
    base = tmp_path_factory.mktemp("small-files")
    table, checkpoint = base / "table", base / "checkpoint"
    job = write_job(base / "job.yaml", stream_job(
        "small-files", table, checkpoint, ROWS_PER_BATCH * BATCHES, ROWS_PER_BATCH))
    from helpers import run_silt
    proc = run_silt(silt_bin, "run", job, timeout=900)
    assert proc.returncode == 0, describe(proc)
    files = live_files(table)
    assert len(files) >= 500, f"only {len(files)} files"
    return table


@pytest.fixture
def table(small_files_table, work):
    copy = work / "table"
    shutil.copytree(small_files_table, copy)
    return copy


def optimize(silt, table, *extra):
    proc = silt("optimize", table, *extra, timeout=300)
    assert proc.returncode == 0, describe(proc)
    return proc


# --------------------------------------------------------------------------
# OPTIMIZE


def test_optimize_compacts_to_one_file_per_partition_and_readers_agree(silt, table):
    before_version = log_versions(table)[-1]
    before = read_with_deltalake(table)
    files_before = live_files(table)
    partitions = {f.split("/")[0] for f in files_before}

    out = optimize(silt, table)
    assert "OPTIMIZE" in out.stdout

    version, info = last_commit_info(table)
    assert version == before_version + 1
    assert info["operation"] == "OPTIMIZE"
    assert info["operationParameters"]["predicate"] == "[]"
    assert info["operationParameters"]["zOrderBy"] == "[]"
    assert info["isBlindAppend"] is False
    metrics = info["operationMetrics"]
    assert int(metrics["numRemovedFiles"]) == len(files_before)
    assert int(metrics["numAddedFiles"]) == len(partitions)
    actions = read_commit(table, version)
    adds = [a["add"] for a in actions if "add" in a]
    removes = [a["remove"] for a in actions if "remove" in a]
    assert not any("txn" in a for a in actions)
    assert len(removes) == len(files_before)
    assert len(adds) == len(partitions)
    assert all(a["dataChange"] is False for a in adds + removes)
    for add in adds:
        stats = json.loads(add["stats"])
        assert stats["numRecords"] > 0 and "kafka_offset" in stats["minValues"]

    files_after = live_files(table)
    assert len(files_after) == len(partitions)
    after = read_with_deltalake(table)
    assert_each_key_once(after, ROWS_PER_BATCH * BATCHES)
    assert_same_rows(rows(after), rows(before), "deltalake after OPTIMIZE", *KEY)
    # Time travel to the version before still reads the same rows.
    assert_same_rows(rows(read_with_deltalake(table, before_version)), rows(before),
                     "deltalake at the pre-OPTIMIZE version", *KEY)

    # A second OPTIMIZE finds nothing to do and commits nothing.
    again = optimize(silt, table)
    assert "nothing to compact" in again.stdout
    assert log_versions(table)[-1] == version


def test_spark_reads_the_optimized_table(silt, table, spark):
    before = read_with_deltalake(table)
    optimize(silt, table)
    after = read_with_spark(spark, table)
    assert_same_rows(rows(after), rows(before), "Spark after OPTIMIZE", *KEY)
    history = spark.sql(f"DESCRIBE HISTORY delta.`{table}` LIMIT 1").collect()[0]
    assert history["operation"] == "OPTIMIZE"
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]
    assert detail["numFiles"] == len(live_files(table))


def test_optimize_where_and_zorder(silt, table):
    files_before = live_files(table)
    plug_files = {f for f in files_before if f.startswith("device_type=smart_plug/")}
    optimize(silt, table, "--where", "device_type = 'smart_plug'")
    files_after = live_files(table)
    # Only the smart_plug partition was compacted.
    assert {f for f in files_after if not f.startswith("device_type=smart_plug/")} == \
        files_before - plug_files
    assert len({f for f in files_after if f.startswith("device_type=smart_plug/")}) == 1
    _, info = last_commit_info(table)
    assert json.loads(info["operationParameters"]["predicate"]) == ["device_type = 'smart_plug'"]

    bad = silt("optimize", table, "--where", "kafka_offset > 3")
    assert bad.returncode == 2, describe(bad)
    assert "non-partition column 'kafka_offset'" in bad.stderr
    assert "device_type" in bad.stderr

    before = read_with_deltalake(table)
    optimize(silt, table, "--zorder-by", "kafka_partition,event_time")
    _, info = last_commit_info(table)
    assert json.loads(info["operationParameters"]["zOrderBy"]) == ["kafka_partition", "event_time"]
    assert_same_rows(rows(read_with_deltalake(table)), rows(before), "after Z-order", *KEY)


def test_optimize_target_size_and_min_input_files(silt, table):
    files_before = live_files(table)
    # Files below 2 KB... every small file is far below 1 MB: 40 KB bins give
    # several output files per partition.
    optimize(silt, table, "--target-size", "40KB")
    after = live_files(table)
    assert len(partitions_of(after)) < len(after) < len(files_before)
    # A partition needs at least N small files: nothing qualifies now.
    out = optimize(silt, table, "--min-input-files", "100000")
    assert "nothing to compact" in out.stdout


def partitions_of(files):
    return {f.split("/")[0] for f in files}


# --------------------------------------------------------------------------
# VACUUM


def test_vacuum_zero_retention_leaves_only_live_files(silt, table, spark):
    pre_optimize_version = log_versions(table)[-1]
    before = read_with_deltalake(table)
    optimize(silt, table)

    refused = silt("vacuum", table, "--retain", "0h")
    assert refused.returncode == 2, describe(refused)
    assert "0 hours" in refused.stderr and "168 hours" in refused.stderr
    assert "--unsafe-ignore-retention-check" in refused.stderr

    dry = silt("vacuum", table, "--retain", "0h", "--unsafe-ignore-retention-check", "--dry-run")
    assert dry.returncode == 0, describe(dry)
    removed = data_files_on_disk(table) - live_files(table)
    assert len([line for line in dry.stdout.splitlines() if line.endswith(".parquet")]) == \
        len(removed)

    proc = silt("vacuum", table, "--retain", "0h", "--unsafe-ignore-retention-check")
    assert proc.returncode == 0, describe(proc)
    assert data_files_on_disk(table) == live_files(table)
    assert "deleted" in proc.stderr  # each deletion is logged
    # VACUUM START / END were recorded, as delta-spark does on local storage.
    ops = []
    for v in log_versions(table)[-2:]:
        for action in read_commit(table, v):
            if "commitInfo" in action:
                ops.append(action["commitInfo"]["operation"])
    assert ops == ["VACUUM START", "VACUUM END"]

    assert_same_rows(rows(read_with_deltalake(table)), rows(before), "after VACUUM", *KEY)
    assert_same_rows(rows(read_with_spark(spark, table)), rows(before), "Spark after VACUUM",
                     *KEY)
    # Time travel to before OPTIMIZE fails clearly: its files are gone.
    old = silt("read", table, "--version", str(pre_optimize_version), "--format", "jsonl")
    assert old.returncode != 0, describe(old)
    assert ".parquet" in old.stderr and str(pre_optimize_version) in old.stderr, old.stderr
    with pytest.raises(Exception):
        read_with_spark(spark, table, version=pre_optimize_version)


def test_vacuum_default_retention_deletes_nothing_referenced_within_a_week(silt, table):
    optimize(silt, table)
    # Age every data file by 30 days: only the log's timestamps keep them.
    month_ago = time.time() - 30 * 86400
    for rel in data_files_on_disk(table):
        os.utime(Path(table) / rel, (month_ago, month_ago))
    some_live = sorted(live_files(table))[0]
    partition_dir = Path(table) / some_live.split("/")[0]
    # An old file no version references: the only thing VACUUM may delete.
    orphan = partition_dir / "part-99998-00000000-0000-0000-0000-000000000000.c000.snappy.parquet"
    shutil.copy(Path(table) / some_live, orphan)
    os.utime(orphan, (month_ago, month_ago))
    # A file an uncommitted writer is writing right now (fresh mtime).
    in_flight = partition_dir / "part-99999-11111111-1111-1111-1111-111111111111.c000.snappy.parquet"
    shutil.copy(Path(table) / some_live, in_flight)
    # Hidden files and directories are never touched, whatever their age.
    hidden = [partition_dir / ".part-0.crc", Path(table) / "_checkpoints" / "offsets" / "0"]
    for h in hidden:
        h.parent.mkdir(parents=True, exist_ok=True)
        h.write_text("x")
        os.utime(h, (month_ago, month_ago))
    on_disk = data_files_on_disk(table)

    proc = silt("vacuum", table)
    assert proc.returncode == 0, describe(proc)
    after = data_files_on_disk(table)
    assert on_disk - after == {str(orphan.relative_to(table))}
    # File by file: every file a version of the last 7 days references survived.
    for version in log_versions(table):
        for path in live_files(table, version):
            assert (Path(table) / path).exists(), f"{path} of version {version} was deleted"
    assert in_flight.exists()
    assert all(h.exists() for h in hidden)
    assert all(p.exists() for p in (Path(table) / "_delta_log").iterdir())


def test_vacuum_lite_uses_the_log(silt, table):
    optimize(silt, table)
    orphan = Path(table) / "device_type=smart_plug" / "part-77777-orphan.c000.snappy.parquet"
    orphan.write_bytes(b"not referenced by the log")
    proc = silt("vacuum", table, "--lite", "--retain", "0h", "--unsafe-ignore-retention-check")
    assert proc.returncode == 0, describe(proc)
    # Lite mode deletes what the log removed, not files the log never knew.
    assert data_files_on_disk(table) == live_files(table) | {str(orphan.relative_to(table))}


# --------------------------------------------------------------------------
# Beside a running stream


def test_optimize_while_a_stream_appends(silt_bin, silt, work):
    table, checkpoint = work / "live-table", work / "live-checkpoint"
    total = 3000
    # availableNow: batches back to back until the generator is drained.
    job = write_job(work / "job.yaml", stream_job("live", table, checkpoint, total, 6))
    stream = start_silt(silt_bin, "run", job)
    try:
        assert wait_for(lambda: (table / "_delta_log").is_dir() and len(log_versions(table)) > 40,
                        timeout=300), "the stream did not commit"
        optimized = 0
        while stream.poll() is None and optimized < 3:
            proc = silt("optimize", table, timeout=300)
            assert proc.returncode == 0, describe(proc)
            optimized += "version" in proc.stdout
        out, err = stream.communicate(timeout=300)
    finally:
        if stream.poll() is None:
            stream.kill()
            stream.wait()
    assert stream.returncode == 0, f"stream failed:\n{out}\n{err}"
    assert optimized >= 1, "no OPTIMIZE ran while the stream was running"
    ops = [a["commitInfo"]["operation"] for v in log_versions(table)
           for a in read_commit(table, v) if "commitInfo" in a]
    assert "OPTIMIZE" in ops and ops[-1] == "STREAMING UPDATE", ops[-5:]
    assert_each_key_once(read_with_deltalake(table), total)


# --------------------------------------------------------------------------
# DESCRIBE and RESTORE


def test_describe(silt, table):
    proc = silt("describe", table)
    assert proc.returncode == 0, describe(proc)
    assert "partition columns: device_type" in proc.stdout
    assert " |-- kafka_offset: long (nullable = true)" in proc.stdout
    assert f"files:             {len(live_files(table))}" in proc.stdout
    js = silt("describe", table, "--format", "json")
    assert js.returncode == 0, describe(js)
    info = json.loads(js.stdout)
    snap = snapshot(table)
    assert info["numFiles"] == len(snap.files)
    assert info["sizeInBytes"] == sum(a["size"] for a in snap.files.values())
    assert info["partitionColumns"] == ["device_type"]
    assert info["minReaderVersion"] == snap.protocol["minReaderVersion"]
    assert info["version"] == snap.version
    assert [f["name"] for f in info["schema"]["fields"]][:2] == ["kafka_partition", "kafka_offset"]


def test_restore_and_restore_after_vacuum(silt, table, spark):
    v_early = 50
    early_rows = rows(read_with_deltalake(table, v_early))
    optimize(silt, table)
    proc = silt("restore", table, "--version", str(v_early))
    assert proc.returncode == 0, describe(proc)
    version, info = last_commit_info(table)
    assert info["operation"] == "RESTORE"
    assert info["operationParameters"]["version"] == str(v_early)
    assert live_files(table) == live_files(table, v_early)
    actions = read_commit(table, version)
    assert all(a[k]["dataChange"] for a in actions for k in ("add", "remove") if k in a)
    assert_same_rows(rows(read_with_deltalake(table)), early_rows, "deltalake after RESTORE", *KEY)
    assert_same_rows(rows(read_with_spark(spark, table)), early_rows, "Spark after RESTORE", *KEY)

    # After VACUUM removed their files, older versions cannot be restored.
    vac = silt("vacuum", table, "--retain", "0h", "--unsafe-ignore-retention-check")
    assert vac.returncode == 0, describe(vac)
    gone = silt("restore", table, "--version", str(v_early + 100))
    assert gone.returncode == 1, describe(gone)
    assert "no longer exist" in gone.stderr and "VACUUM" in gone.stderr


def test_restore_by_timestamp_picks_the_version_spark_picks(silt, table, spark):
    # Pin the commit files' times (what delta-spark's timestampAsOf uses):
    # version v committed at base + 10 v seconds.
    import datetime as dt

    versions = log_versions(table)
    base = int(time.time()) - 3600
    for v in versions:
        os.utime(Path(table) / "_delta_log" / f"{v:020d}.json", (base + 10 * v, base + 10 * v))
    target = 20
    ts = dt.datetime.fromtimestamp(base + 10 * target + 5, dt.timezone.utc)
    ts_text = ts.strftime("%Y-%m-%d %H:%M:%S")
    expected = rows(read_with_deltalake(table, target))
    assert_same_rows(rows(read_with_spark(spark, table, timestamp=ts_text)), expected,
                     f"Spark timestampAsOf {ts_text}", *KEY)

    proc = silt("restore", table, "--timestamp", ts_text)
    assert proc.returncode == 0, describe(proc)
    _, info = last_commit_info(table)
    assert info["operation"] == "RESTORE"
    assert live_files(table) == live_files(table, target)
    assert_same_rows(rows(read_with_deltalake(table)), expected, "deltalake after RESTORE", *KEY)

    before = silt("restore", table, "--timestamp", "2000-01-01 00:00:00")
    assert before.returncode != 0, describe(before)
    assert "before the earliest available version" in before.stderr, before.stderr


# --------------------------------------------------------------------------
# Maintenance job and autoCompact


def test_maintenance_job_runs_optimize_then_vacuum(silt, table, work):
    job = write_job(work / "maintenance.yaml", {
        "name": "nightly",
        "type": "maintenance",
        "tables": [str(table)],
        "optimize": {"targetSize": "128MB"},
        "vacuum": {"retain": "0 hours", "retentionDurationCheck": False},
        "schedule": {"interval": "200 milliseconds", "maxRuns": 2},
    })
    before = read_with_deltalake(table)
    proc = silt("run", job, timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert f"[silt] OPTIMIZE {table}: version" in proc.stdout
    assert f"[silt] OPTIMIZE {table}: nothing to compact" in proc.stdout  # second run
    assert "2 run(s), 0 failed" in proc.stdout
    assert data_files_on_disk(table) == live_files(table)
    assert len(live_files(table)) == 2
    assert_same_rows(rows(read_with_deltalake(table)), rows(before), "after maintenance", *KEY)

    bad = write_job(work / "bad.yaml", {"type": "maintenance", "tables": [str(table)],
                                        "vacuum": {"retain": "1 hour"}})
    refused = silt("run", bad)
    assert refused.returncode == 2, describe(refused)
    assert "168 hours" in refused.stderr


def test_auto_compact_in_the_background(silt, work):
    table, checkpoint = work / "auto", work / "auto-checkpoint"
    total = 1200
    job = write_job(work / "job.yaml", stream_job(
        "auto", table, checkpoint, total, 8, sink_options={
            "autoCompact": "true",
            "autoCompact.everyNCommits": "20",
            "autoCompact.minNumFiles": "10",
        }))
    proc = silt("run", job, timeout=600)
    assert proc.returncode == 0, describe(proc)
    compactions = [a["commitInfo"] for v in log_versions(table) for a in read_commit(table, v)
                   if "commitInfo" in a and a["commitInfo"]["operation"] == "OPTIMIZE"]
    assert compactions, "autoCompact never ran"
    assert all(c["operationParameters"]["auto"] is True for c in compactions)
    assert_each_key_once(read_with_deltalake(table), total)
    assert len(live_files(table)) < total // 8
    # Decision 146: a compaction's output is not rewritten by the next
    # compaction of its partition (fewer than minNumFiles outputs per
    # partition here), so each streamed file is read once.
    compacted = set()
    for v in log_versions(table):
        actions = read_commit(table, v)
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        if info["operation"] != "OPTIMIZE":
            continue
        removed = {a["remove"]["path"] for a in actions if "remove" in a}
        assert not removed & compacted, f"version {v} rewrote an earlier compaction's output"
        compacted |= {a["add"]["path"] for a in actions if "add" in a}


def test_optimize_and_vacuum_parameters_have_spark_json_types(silt, table, spark, work):
    """OPTIMIZE and VACUUM START/END record their operationParameters with
    the JSON types delta-spark gives them (booleans and numbers where Spark
    writes them), on a copy of the same table run by Spark."""
    theirs = work / "spark-copy"
    shutil.copytree(table, theirs)
    optimize(silt, table)
    proc = silt("vacuum", table, "--retain", "0h", "--unsafe-ignore-retention-check")
    assert proc.returncode == 0, describe(proc)
    spark.sql(f"OPTIMIZE delta.`{theirs}`")
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        spark.sql(f"VACUUM delta.`{theirs}` RETAIN 0 HOURS")
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")

    def parameters(path, operations):
        out = {}
        for version in log_versions(path):
            info = next((a["commitInfo"] for a in read_commit(path, version)
                         if "commitInfo" in a), {})
            if info.get("operation") in operations:
                out[info["operation"]] = info["operationParameters"]
        return out

    operations = {"OPTIMIZE", "VACUUM START", "VACUUM END"}
    mine, spark_params = parameters(table, operations), parameters(theirs, operations)
    assert set(mine) == set(spark_params) == operations, (mine, spark_params)
    for operation in operations:
        assert set(mine[operation]) == set(spark_params[operation]), operation
        for key, value in spark_params[operation].items():
            assert type(mine[operation][key]) is type(value), (operation, key, mine, spark_params)
            assert mine[operation][key] == value, (operation, key)


def leftover(directory: Path, name: str, age_seconds: float) -> Path:
    """A temp file as silt's local writes leave one when the process dies
    before publishing (`.<name>.<pid>-<nonce>-<n>.tmp`), `age_seconds` old."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f".{name}.4242-5f3a9c-7.tmp"
    path.write_bytes(b"half a file")
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))
    return path


def test_vacuum_removes_crash_leftovers_older_than_the_retention(silt, table):
    day = 24 * 3600
    old = [leftover(table, "part-00000-x.snappy.parquet", 9 * day),
           leftover(table / "device_type=smart_plug", "part-00001-y.snappy.parquet", 8 * day),
           leftover(table / "_delta_log", "00000000000000000900.json", 30 * day)]
    young = leftover(table / "device_type=smart_plug", "part-00002-z.snappy.parquet", 3600)
    live_before = live_files(table)
    dry = silt("vacuum", table, "--dry-run")
    assert dry.returncode == 0, describe(dry)
    assert "would delete 3 crash leftover temp file(s)" in dry.stdout, describe(dry)
    assert all(p.exists() for p in old)
    proc = silt("vacuum", table)
    assert proc.returncode == 0, describe(proc)
    assert "deleted 3 crash leftover temp file(s)" in proc.stdout, describe(proc)
    assert not any(p.exists() for p in old)
    assert young.exists(), "a temp younger than the retention may be a live write"
    assert live_files(table) == live_before
    # The leftovers are not counted as data files, as delta-spark knows none.
    _, end = last_commit_info(table)
    assert end["operation"] == "VACUUM END" and end["operationMetrics"]["numDeletedFiles"] == "0"


def test_a_restart_removes_the_checkpoint_temps_of_a_killed_run(silt, work):
    table, checkpoint = work / "t", work / "cp"
    job = write_job(work / "job.yaml", stream_job("leftovers", table, checkpoint, 32, 8))
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    temps = [leftover(checkpoint / "offsets", "4", 5), leftover(checkpoint / "commits", "4", 5),
             leftover(checkpoint, "metadata", 5)]
    data_temp = leftover(table, "part-00009-q.snappy.parquet", 5)
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    assert not any(p.exists() for p in temps), describe(proc)
    assert "removed 3 temp file(s) left by an interrupted run" in proc.stdout + proc.stderr
    # The table's own are VACUUM's (a concurrent writer may own one).
    assert data_temp.exists()
