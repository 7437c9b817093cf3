"""V2 checkpoints with sidecars (delta.checkpointPolicy = v2) as silt writes
them, read by delta-spark 3.2, by delta-spark 4.4 on Spark 4 and by DuckDB's
delta extension (delta-kernel-rs); and silt writing them into a table
delta-spark created with the policy.
delta-rs (deltalake 1.6.6) refuses any table with the v2Checkpoint reader
feature, whoever wrote it: the tests check that it says so.

silt names the sidecars of its previous checkpoint again when their actions
are unchanged (decision 101): the tests check that consecutive checkpoints
share sidecar files, and then that the readers see exactly the table's rows
from the checkpoint alone (the commits before it are deleted, so a reader
can only learn of those files through the sidecars).
"""

import json

import pytest

from helpers import duckdb_delta_scan, json_file_job, write_input_file, write_job

SCHEMA = "id BIGINT, device STRING"


def rows(first, count):
    return [json.dumps({"id": i, "device": f"d{i % 3}"}) for i in range(first, first + count)]


def v2_checkpoints(log):
    """{version: parsed top-level actions} of the UUID-named V2 checkpoints."""
    out = {}
    for path in sorted(log.glob("*.checkpoint.*.json")):
        version = int(path.name[:20])
        out[version] = [json.loads(line) for line in path.read_text().splitlines() if line]
    return out


def sidecars(actions):
    return [a["sidecar"]["path"] for a in actions if "sidecar" in a]


def drop_commits_before(log, version):
    for path in log.glob("*.json"):
        if path.name[:20].isdigit() and len(path.name) == 25 and int(path.name[:20]) < version:
            path.unlink()


def spark_ids(spark, table):
    return sorted(r["id"] for r in spark.read.format("delta").load(str(table)).collect())


def duckdb_ids(table):
    return sorted(r[0] for r in duckdb_delta_scan(table, "SELECT id FROM {t}"))


def assert_delta_rs_refuses_v2(table):
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaProtocolError
    with pytest.raises(DeltaProtocolError, match="v2Checkpoint"):
        DeltaTable(str(table)).to_pyarrow_table()


def silt_ids(silt, table):
    out = silt("read", table, "--format", "jsonl", timeout=120)
    assert out.returncode == 0, out.stderr
    return sorted(json.loads(line)["id"] for line in out.stdout.splitlines() if line)


def run_batches(silt, work, table, first_file, files, per_file, options):
    inbox = work / "in"
    inbox.mkdir(exist_ok=True)
    for n in range(first_file, first_file + files):
        write_input_file(inbox / f"part-{n:04d}.json", rows(n * per_file, per_file))
    job = json_file_job("v2", inbox, table, work / "checkpoint", SCHEMA, max_files_per_trigger=1,
                        partition_by=["device"])
    job["sink"]["options"] = options
    result = silt("run", write_job(work / "job.yaml", job), timeout=600)
    assert result.returncode == 0, result.stderr


def test_silt_v2_checkpoints_reuse_sidecars_and_read_in_spark_and_duckdb(silt, spark, work):
    table = work / "table"
    log = table / "_delta_log"
    options = {"delta.checkpointPolicy": "v2", "delta.checkpointInterval": 4}
    run_batches(silt, work, table, 0, 18, 5, options)  # versions 0..17, checkpoints 4..16
    protocol = json.loads((log / f"{0:020d}.json").read_text().splitlines()[1])
    assert protocol == {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                                     "readerFeatures": ["v2Checkpoint"],
                                     "writerFeatures": ["v2Checkpoint"]}}, protocol
    assert not list(log.glob("*.checkpoint.parquet"))
    checkpoints = v2_checkpoints(log)
    assert sorted(checkpoints) == [4, 8, 12, 16]
    # Each batch adds 3 files (one per device). Checkpoint 8 keeps 4's
    # sidecar of 15 files and adds one of 12; at 12 the 12 new files absorb
    # the sidecar of 12, then that of 15 (no larger than 24): one sidecar of
    # 39, which checkpoint 16 keeps beside a new one of 12.
    assert [len(sidecars(checkpoints[v])) for v in (4, 8, 12, 16)] == [1, 2, 1, 2]
    for earlier, later in ((4, 8), (12, 16)):
        assert set(sidecars(checkpoints[earlier])) & set(sidecars(checkpoints[later])), \
            (earlier, later, checkpoints)
    last = json.loads((log / "_last_checkpoint").read_text())
    assert last["version"] == 16
    assert sorted(s["path"] for s in last["v2Checkpoint"]["sidecarFiles"]) == \
        sorted(sidecars(checkpoints[16]))
    meta = checkpoints[16][0]["checkpointMetadata"]
    assert meta["version"] == 16

    # A restarted writer (its first checkpoint writes the whole state), then
    # readers that can only use the checkpoint.
    run_batches(silt, work, table, 18, 4, 5, options)  # versions 18..21, checkpoint 20
    drop_commits_before(log, 20)
    expected = list(range(22 * 5))
    assert silt_ids(silt, table) == expected
    assert duckdb_ids(table) == expected
    assert spark_ids(spark, table) == expected
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]
    out = silt("describe", table, "--format", "json", timeout=60)
    assert out.returncode == 0, out.stderr
    described = json.loads(out.stdout)
    assert str(detail["numFiles"]) in json.dumps(described), (detail["numFiles"], described)
    assert_delta_rs_refuses_v2(table)


def test_silt_writes_v2_checkpoints_into_a_spark_v2_table(silt, spark, work):
    table = work / "table"
    log = table / "_delta_log"
    spark.sql(f"CREATE TABLE delta.`{table}` (id BIGINT, device STRING) USING delta "
              "PARTITIONED BY (device) TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', "
              "'delta.checkpointInterval' = '5')")
    spark.createDataFrame([(1_000_000, "d0")], "id BIGINT, device STRING") \
        .write.format("delta").mode("append").save(str(table))
    spark_protocol = [json.loads(line) for line in (log / f"{0:020d}.json").read_text()
                      .splitlines() if '"protocol"' in line][0]["protocol"]
    assert "v2Checkpoint" in spark_protocol["readerFeatures"]
    # silt appends versions 2..18 (3 files each): checkpoints 5, 10 and 15
    # are silt's. At 10 the 15 new files absorb 5's sidecar of 13; 15 keeps
    # 10's sidecar of 28 beside a new one.
    run_batches(silt, work, table, 0, 17, 3, {})
    checkpoints = v2_checkpoints(log)
    assert {5, 10, 15} <= set(checkpoints), sorted(p.name for p in log.iterdir())
    assert set(sidecars(checkpoints[10])) <= set(sidecars(checkpoints[15]))
    assert len(sidecars(checkpoints[15])) == 2
    drop_commits_before(log, 15)
    expected = sorted(list(range(51)) + [1_000_000])
    assert spark_ids(spark, table) == expected
    assert duckdb_ids(table) == expected
    assert silt_ids(silt, table) == expected
    # Spark goes on appending from silt's checkpoint and writes its own V2
    # checkpoint at 20, which silt and DuckDB read.
    for _ in range(2):
        spark.createDataFrame([(2_000_000, "d1")], "id BIGINT, device STRING") \
            .write.format("delta").mode("append").save(str(table))
    assert spark.sql(f"DESCRIBE HISTORY delta.`{table}`").collect()[0]["version"] == 20
    assert 20 in v2_checkpoints(log) or (log / f"{20:020d}.checkpoint.parquet").exists()
    drop_commits_before(log, 20)
    expected = sorted(expected + [2_000_000, 2_000_000])
    assert silt_ids(silt, table) == expected
    assert duckdb_ids(table) == expected
    assert_delta_rs_refuses_v2(table)


def test_silt_v2_checkpoints_read_and_continued_by_spark4(silt, spark4, work):
    """Delta 4 (delta-spark 4.4 on Spark 4.2) reads silt's V2 checkpoint from
    the checkpoint alone, appends on top of it and writes its own, which silt
    reads."""
    table = work / "table"
    log = table / "_delta_log"
    options = {"delta.checkpointPolicy": "v2", "delta.checkpointInterval": 4}
    run_batches(silt, work, table, 0, 9, 5, options)  # versions 0..8, checkpoints 4 and 8
    assert sorted(v2_checkpoints(log)) == [4, 8]
    drop_commits_before(log, 8)
    expected = list(range(45))
    assert sorted(spark4.read_delta(table)["id"].to_pylist()) == expected
    for _ in range(4):  # versions 9..12; Spark 4 checkpoints 12
        spark4.run("spark.createDataFrame([(3000000, 'd2')], 'id BIGINT, device STRING')"
                   ".write.format('delta').mode('append').save(path)", path=str(table))
    assert 12 in v2_checkpoints(log) or (log / f"{12:020d}.checkpoint.parquet").exists(), \
        sorted(p.name for p in log.iterdir())
    drop_commits_before(log, 12)
    expected += [3_000_000] * 4
    assert silt_ids(silt, table) == sorted(expected)
    assert duckdb_ids(table) == sorted(expected)
