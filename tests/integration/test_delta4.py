"""Delta 4 table features against Spark 4 + delta-spark 4 (the `spark4`
fixture: one Spark 4 JVM for the module).

In-commit timestamps, row tracking and liquid clustering, both ways:
  * tables Spark 4 writes (with deletion vectors, UPDATE, DELETE, OPTIMIZE)
    read equal in silt at every version, `_metadata.row_id` and
    `_metadata.row_commit_version` included, and by timestamp;
  * tables silt's streaming sink creates with the features read equal in
    Spark 4 (DESCRIBE DETAIL, DESCRIBE HISTORY, row ids), through silt's
    checkpoints too;
  * Spark 4 appends to silt's tables and silt to Spark's, with both
    engines' invariants intact afterwards (in-commit timestamps strictly
    increasing, row ids unique, the high-water mark at or above every row id).
"""

import datetime as dt
import json

import pytest

from helpers import (
    assert_same_rows,
    commits,
    describe,
    json_file_job,
    log_dir,
    normalize_silt_rows,
    read_with_silt,
    row_id_high_water_mark,
    to_json_rows,
    write_input_file,
    write_job,
)

SCHEMA = "id BIGINT, name STRING, v DOUBLE"


def commit_info(actions):
    return next(a["commitInfo"] for a in actions if "commitInfo" in a)


def assert_ict_invariants(table):
    """Every commit from the enablement version on starts with a commitInfo
    holding an inCommitTimestamp, strictly increasing."""
    previous = None
    for version, actions in sorted(commits(table).items()):
        if "commitInfo" not in actions[0]:
            continue
        info = actions[0]["commitInfo"]
        if "inCommitTimestamp" not in info:
            assert previous is None, f"version {version} lacks inCommitTimestamp after enablement"
            continue
        if previous is not None:
            assert info["inCommitTimestamp"] > previous, f"version {version}: ICT not increasing"
        previous = info["inCommitTimestamp"]
    assert previous is not None, "no commit has an inCommitTimestamp"


def silt_row_tracking(silt, table, *extra):
    """(id, row_id, row_commit_version) as silt reads them."""
    proc = silt("read", str(table), "--format", "jsonl", "--select",
                "id, _metadata.row_id AS row_id, _metadata.row_commit_version AS rcv", *extra)
    assert proc.returncode == 0, describe(proc)
    return sorted((r["id"], r["row_id"], r["rcv"])
                  for r in (json.loads(line) for line in proc.stdout.splitlines() if line))


def spark_row_tracking(spark4, table, version=None):
    opts = {} if version is None else {"versionAsOf": str(version)}
    rows = spark4.eval(
        "spark.read.format('delta').options(**o).load(p)"
        ".selectExpr('id', '_metadata.row_id AS row_id', "
        "'_metadata.row_commit_version AS rcv').collect()", p=str(table), o=opts)
    return sorted((r["id"], r["row_id"], r["rcv"]) for r in rows)


def assert_row_tracking_invariants(spark4, silt, table):
    """Row ids unique and at or below the high-water mark; silt's row ids
    and commit versions equal Spark 4's."""
    ours = silt_row_tracking(silt, table)
    theirs = spark_row_tracking(spark4, table)
    assert ours == theirs
    row_ids = [r[1] for r in ours]
    assert len(set(row_ids)) == len(row_ids), "duplicate row ids"
    assert max(row_ids) <= row_id_high_water_mark(table)


def assert_same_at_every_version(spark4, silt, table):
    versions = sorted(commits(table))
    for version in versions:
        expected = to_json_rows(spark4.read_delta(table, version=version))
        actual = normalize_silt_rows(read_with_silt(silt, table, "--version", str(version)))
        assert_same_rows(actual, expected, f"version {version}", "id")
    return versions


# --------------------------------------------------------------------------
# Spark 4 writes, silt reads


@pytest.fixture(scope="module")
def spark_table(spark4, tmp_path_factory):
    """A Spark 4 table with in-commit timestamps, row tracking, deletion
    vectors and liquid clustering through inserts, DELETE (deletion vector),
    UPDATE, OPTIMIZE (clustering; materialized row ids) and a checkpoint."""
    table = tmp_path_factory.mktemp("spark4") / "t"
    t = f"delta.`{table}`"
    # One statement per request: each is a Spark job of its own.
    for statement in [
        f"CREATE TABLE {t} (id BIGINT, name STRING, v DOUBLE) USING delta CLUSTER BY (id) "
        "TBLPROPERTIES ('delta.enableInCommitTimestamps'='true', "
        "'delta.enableRowTracking'='true', 'delta.enableDeletionVectors'='true', "
        "'delta.checkpointInterval'='4')",
        *[f"INSERT INTO {t} SELECT id, concat('n', id), id * 0.5 FROM range({b * 10}, {b * 10 + 10})"
          for b in range(3)],
        f"DELETE FROM {t} WHERE id % 7 = 3",
        f"UPDATE {t} SET v = v + 100 WHERE id % 5 = 1",
        f"OPTIMIZE {t}",
        f"INSERT INTO {t} SELECT id, concat('n', id), id * 0.5 FROM range(30, 35)",
    ]:
        spark4.sql(statement)
    return table


def test_spark4_table_reads_equal_in_silt_at_every_version(spark4, silt, spark_table):
    versions = assert_same_at_every_version(spark4, silt, spark_table)
    assert len(versions) == 8
    # Spark's checkpoint at version 4 (classic or V2), which silt reads from.
    assert list(log_dir(spark_table).glob("00000000000000000004.checkpoint*"))


def test_spark4_row_ids_read_equal_in_silt(spark4, silt, spark_table):
    # OPTIMIZE and UPDATE left materialized row ids in the files: silt must
    # read those, not the new files' default ids.
    for version in (4, 5, 6, 7):
        ours = silt_row_tracking(silt, spark_table, "--version", str(version))
        assert ours == spark_row_tracking(spark4, spark_table, version), f"version {version}"
    assert_row_tracking_invariants(spark4, silt, spark_table)


def test_spark4_in_commit_timestamps_drive_silt_time_travel(spark4, silt, spark_table):
    history = spark4.sql(f"DESCRIBE HISTORY delta.`{spark_table}`")
    proc = silt("history", str(spark_table), "--format", "json")
    assert proc.returncode == 0, describe(proc)
    ours = {e["version"]: e["timestamp"] for e in
            (json.loads(line) for line in proc.stdout.splitlines() if line)}
    for entry in history:
        ict = commit_info(commits(spark_table)[entry["version"]])["inCommitTimestamp"]
        spark_ms = int(entry["timestamp"].replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
        assert spark_ms == ict
        assert ours[entry["version"]] == ict
    # Time travel to each commit's in-commit timestamp lands on that version.
    for version in (2, 5):
        ict = commit_info(commits(spark_table)[version])["inCommitTimestamp"]
        stamp = dt.datetime.fromtimestamp(ict / 1000, dt.timezone.utc)
        text = stamp.strftime("%Y-%m-%d %H:%M:%S.") + f"{stamp.microsecond:06d}"
        expected = to_json_rows(spark4.read_delta(spark_table, timestamp=text))
        actual = normalize_silt_rows(read_with_silt(silt, spark_table, "--timestamp", text))
        assert_same_rows(actual, expected, f"timestamp {text}", "id")
        assert len(actual) == len(to_json_rows(spark4.read_delta(spark_table, version=version)))


# --------------------------------------------------------------------------
# silt writes, Spark 4 reads; both append


def record(i):
    return {"id": i, "name": f"n{i}", "v": i * 0.5}


def run_job(silt, work, table, first, count, batches, properties):
    input_dir = work / "in"
    input_dir.mkdir(exist_ok=True)
    for b in range(batches):
        ids = range(first + b * count, first + (b + 1) * count)
        write_input_file(input_dir / f"b-{first:05d}-{b:03d}.json",
                         [json.dumps(record(i)) for i in ids])
    job = json_file_job("delta4", input_dir, table, work / "ckpt", SCHEMA, max_files_per_trigger=1)
    job["sink"]["options"] = properties
    proc = silt("run", str(write_job(work / "job.yaml", job)), timeout=300)
    assert proc.returncode == 0, describe(proc)


@pytest.fixture(scope="module")
def silt_table(tmp_path_factory, silt_bin):
    import helpers

    work = tmp_path_factory.mktemp("silt4")
    table = work / "t"

    def silt(*args, **kwargs):
        return helpers.run_silt(silt_bin, *args, **kwargs)

    run_job(silt, work, table, 0, 5, 5, {
        "delta.enableInCommitTimestamps": "true", "delta.enableRowTracking": "true",
        "delta.checkpointInterval": "3"})
    return work, table


def test_silt_table_has_the_features_spark4_expects(spark4, silt_table):
    _, table = silt_table
    detail = spark4.sql(f"DESCRIBE DETAIL delta.`{table}`")[0]
    assert {"inCommitTimestamp", "rowTracking", "domainMetadata"} <= set(detail["tableFeatures"])
    assert detail["properties"]["delta.enableRowTracking"] == "true"
    assert detail["properties"]["delta.rowTracking.materializedRowIdColumnName"].startswith(
        "_row-id-col-")
    assert (log_dir(table) / "00000000000000000003.checkpoint.parquet").exists()
    assert_ict_invariants(table)
    history = spark4.sql(f"DESCRIBE HISTORY delta.`{table}`")
    for entry in history:
        ict = commit_info(commits(table)[entry["version"]])["inCommitTimestamp"]
        assert int(entry["timestamp"].replace(tzinfo=dt.timezone.utc).timestamp() * 1000) == ict


def test_silt_table_reads_equal_in_spark4(spark4, silt, silt_table):
    _, table = silt_table
    assert_same_at_every_version(spark4, silt, table)
    assert_row_tracking_invariants(spark4, silt, table)
    assert row_id_high_water_mark(table) == 24
    # Each batch's rows carry the version that added them.
    for row_id, rcv in [(r[1], r[2]) for r in spark_row_tracking(spark4, table)]:
        assert rcv == row_id // 5


def test_spark4_and_silt_append_to_each_others_tables(spark4, silt, silt_table):
    work, table = silt_table
    spark4.sql(f"INSERT INTO delta.`{table}` SELECT id, concat('n', id), id * 0.5 "
               "FROM range(100, 103)")
    spark4.sql(f"UPDATE delta.`{table}` SET v = -v WHERE id = 2")
    run_job(silt, work, table, 200, 4, 2, {})
    assert_ict_invariants(table)
    assert_same_at_every_version(spark4, silt, table)
    assert_row_tracking_invariants(spark4, silt, table)
    # The updated row kept its stable row id through Spark's rewrite.
    ids = {r[0]: r[1] for r in spark_row_tracking(spark4, table)}
    assert ids[2] == 2

    # And silt appends to a table Spark 4 created.
    theirs = work / "theirs"
    spark4.run("""
spark.sql(f"CREATE TABLE delta.`{p}` (id BIGINT, name STRING, v DOUBLE) USING delta TBLPROPERTIES ("
          "'delta.enableInCommitTimestamps'='true', 'delta.enableRowTracking'='true')")
spark.sql(f"INSERT INTO delta.`{p}` VALUES (1, 'a', 1.0), (2, 'b', 2.0)")
""", p=str(theirs))
    (work / "x").mkdir()
    run_job(silt, work / "x", theirs, 300, 3, 2, {})
    assert_ict_invariants(theirs)
    assert_same_at_every_version(spark4, silt, theirs)
    assert_row_tracking_invariants(spark4, silt, theirs)
    spark4.sql(f"INSERT INTO delta.`{theirs}` VALUES (9, 'z', 9.0)")
    assert_row_tracking_invariants(spark4, silt, theirs)


# --------------------------------------------------------------------------
# Liquid clustering written by silt


def test_silt_clustered_table_optimizes_like_spark4(spark4, silt, tmp_path):
    work = tmp_path
    table = work / "clustered"
    input_dir = work / "in"
    input_dir.mkdir()
    for b in range(4):
        write_input_file(input_dir / f"b{b}.json",
                         [json.dumps(record(i)) for i in range(b, 40, 4)])
    job = json_file_job("clustered", input_dir, table, work / "ckpt", SCHEMA,
                        max_files_per_trigger=1)
    job["sink"]["clusterBy"] = ["id"]
    job["sink"]["options"] = {"delta.enableRowTracking": "true",
                              "delta.feature.vacuumProtocolCheck": "supported"}
    proc = silt("run", str(write_job(work / "job.yaml", job)), timeout=300)
    assert proc.returncode == 0, describe(proc)
    detail = spark4.sql(f"DESCRIBE DETAIL delta.`{table}`")[0]
    assert detail["clusteringColumns"] == ["id"]
    assert {"clustering", "domainMetadata", "rowTracking",
            "vacuumProtocolCheck"} <= set(detail["tableFeatures"])
    assert detail["minReaderVersion"] == 3
    assert not any(k.startswith("delta.feature.") for k in detail["properties"])
    # VACUUM passes the write protocol check in both engines.
    proc = silt("vacuum", str(table))
    assert proc.returncode == 0, describe(proc)
    spark4.sql(f"VACUUM delta.`{table}`")

    before = silt_row_tracking(silt, table)
    proc = silt("optimize", str(table))
    assert proc.returncode == 0, describe(proc)
    optimize = commit_info(commits(table)[max(commits(table))])
    assert optimize["operation"] == "OPTIMIZE"
    assert json.loads(optimize["operationParameters"]["clusterBy"]) == ["id"]
    adds = [a["add"] for a in commits(table)[max(commits(table))] if "add" in a]
    assert adds and all(a.get("clusteringProvider") == "liquid" for a in adds)
    # The rows are laid out by id: the file's rows come back in id order.
    ids = [r["id"] for r in read_with_silt(silt, table)]
    assert ids == sorted(ids)
    # Stable row ids and commit versions survive silt's rewrite, in both
    # engines' eyes.
    assert silt_row_tracking(silt, table) == before
    assert spark_row_tracking(spark4, table) == before
    assert_same_at_every_version(spark4, silt, table)

    # Spark 4 appends and clusters the table silt created; silt reads it.
    spark4.sql(f"INSERT INTO delta.`{table}` SELECT id, concat('n', id), id * 0.5 "
               "FROM range(40, 50)")
    spark4.sql(f"OPTIMIZE delta.`{table}`")
    assert_same_at_every_version(spark4, silt, table)
    assert_row_tracking_invariants(spark4, silt, table)


def test_cluster_by_with_partition_by_is_refused(silt, work):
    job = json_file_job("bad", work / "in", work / "t", work / "ckpt", SCHEMA,
                        partition_by=["name"])
    job["sink"]["clusterBy"] = ["id"]
    proc = silt("run", str(write_job(work / "job.yaml", job)))
    assert proc.returncode != 0
    assert "sink.clusterBy" in proc.stderr and "partitioned or clustered" in proc.stderr


def test_comparing_a_collated_column_is_refused_naming_the_collation(silt):
    from helpers import golden_dir, require_golden

    require_golden()
    table = golden_dir() / "collations-table"
    proc = silt("read", str(table), "--where", "utf8_lcase_col = 'a'")
    assert proc.returncode != 0
    assert "spark.UTF8_LCASE" in proc.stderr and "WHERE" in proc.stderr
    # Binary-collated columns compare as silt does; reading is exact.
    proc = silt("read", str(table), "--where", "utf8_binary_col = 'a'")
    assert proc.returncode == 0, describe(proc)
    proc = silt("read", str(table), "--select", "utf8_lcase_col, unicode_col")
    assert proc.returncode == 0, describe(proc)
