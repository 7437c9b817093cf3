"""Cross-engine, both ways (issue #4): tables silt writes are read by
pyspark 3.5 + delta-spark 3.2 and by delta-rs exactly as silt reads them, and
tables Spark writes — with every kind of commit Spark makes — are read by
silt exactly as Spark reads them.

A. silt writes (a streaming job, 34 micro-batches: checkpoints, expired-log
   cleanup, partition values that need escaping, NULL partitions, mergeSchema
   adding a column and a struct field midway); Spark and delta-rs read it, and
   the partition directories are the ones Spark makes for the same values.
B. Spark writes (overwrite, append, replaceWhere, MERGE, DELETE and UPDATE
   with deletion vectors, column mapping with RENAME / DROP COLUMN); silt reads
   every version as Spark does.
C. silt appends to a partitioned table Spark created and checkpointed; Spark
   reads the union.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest

from helpers import (
    assert_same_rows,
    describe,
    json_file_job,
    log_dir,
    normalize_silt_rows,
    read_commit,
    read_with_deltalake,
    read_with_silt,
    read_with_spark,
    run_silt,
    snapshot,
    spark_to_arrow,
    to_json_rows,
    write_input_file,
    write_job,
)

DAY_S = 24 * 3600


def silt_rows(silt, table, *extra):
    return normalize_silt_rows(read_with_silt(silt, table, "--limit", "1000000", *extra))


def commit_versions(table):
    return sorted(int(p.name[:20]) for p in log_dir(table).glob("*.json")
                  if p.name[:20].isdigit() and len(p.name) == 25)


def data_dirs(table):
    """Relative directories (as on disk) holding the table's Parquet files."""
    out = set()
    for root, _dirs, files in os.walk(table):
        rel = os.path.relpath(root, table)
        if rel.startswith("_delta_log"):
            continue
        if any(f.endswith(".parquet") for f in files):
            out.add(rel)
    return out


def spark_rows_by_version(spark, table, versions):
    """{version: rows} as Spark reads the table at each version (None: the
    latest); versions with the same schema are collected in one Spark job."""
    from pyspark.sql import functions as F

    groups = {}  # schema -> union of the versions' frames, tagged with their index
    for i, version in enumerate(versions):
        reader = spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        frame = reader.load(str(table))
        key = frame.schema.json()
        frame = frame.withColumn("__xengine_v", F.lit(i))
        groups[key] = groups[key].unionByName(frame) if key in groups else frame
    out = {v: [] for v in versions}
    for union in groups.values():
        for row in to_json_rows(spark_to_arrow(union)):
            out[versions[row.pop("__xengine_v")]].append(row)
    return out


# --------------------------------------------------------------------------
# A. silt writes, Spark and delta-rs read

A_SCHEMA = "id BIGINT, s STRING, n INT, d DATE, ts TIMESTAMP, v DOUBLE, info STRUCT<a: INT>"
A_MERGED_SCHEMA = ("id BIGINT, s STRING, n INT, d DATE, ts TIMESTAMP, v DOUBLE, "
                   "info STRUCT<a: INT, b: STRING>, extra STRING")
A_PARTITION_BY = ["s", "n", "d", "ts"]
# Values Spark escapes in directory names, non-ASCII, the empty string (which
# Spark writes as NULL) and NULL.
A_STRINGS = ["plain", "a/b", "x=y", "50%", "with space", "h#sh", "é", "日本", "",
             None, "q?:*", "br{a}[c]^", "back\\slash", "tab\tquote'\""]
A_FIRST_BATCHES = 20
A_MERGE_BATCHES = 14
A_ROWS_PER_BATCH = 3


def a_record(i, merged=False):
    frac = "" if i % 4 != 1 else ".123"
    rec = {
        "id": i,
        "s": A_STRINGS[i % len(A_STRINGS)],
        "n": None if i % 5 == 4 else i % 3 - 1,
        "d": None if i % 7 == 6 else f"2026-06-{1 + i % 3:02d}",
        "ts": None if i % 9 == 8 else f"2026-06-22T08:{i % 2:02d}:00{frac}Z",
        "v": i * 0.5,
        "info": {"a": i},
    }
    if merged:
        rec["info"]["b"] = f"b{i}"
        rec["extra"] = f"e{i}"
    return {k: v for k, v in rec.items() if v is not None}


def a_expected(batches):
    rows = []
    for b in range(batches):
        for i in range(b * A_ROWS_PER_BATCH, (b + 1) * A_ROWS_PER_BATCH):
            row = json.loads(json.dumps(a_record(i, merged=b >= A_FIRST_BATCHES)))
            if row.get("s") == "":
                del row["s"]  # Spark (and Delta) store an empty partition string as NULL
            if "ts" in row and "." not in row["ts"]:
                row["ts"] = row["ts"].replace("Z", ".000Z")
            rows.append(row)
    return rows


def a_write_batches(input_dir, first, count, merged):
    for b in range(first, first + count):
        ids = range(b * A_ROWS_PER_BATCH, (b + 1) * A_ROWS_PER_BATCH)
        write_input_file(input_dir / f"b-{b:04d}.json",
                         [json.dumps(a_record(i, merged), ensure_ascii=False) for i in ids])


def age_log_files(table, up_to_version, days):
    base = time.time() - days * DAY_S
    for p in log_dir(table).iterdir():
        head = p.name[:20]
        if head.isdigit() and int(head) <= up_to_version:
            os.utime(p, (base + int(head), base + int(head)))


@pytest.fixture(scope="module")
def silt_table(silt_bin, tmp_path_factory):
    """20 micro-batches (checkpoint at 10), versions 0..14 aged past the
    1-day log retention, then 14 more micro-batches from a second query with
    mergeSchema (a new column and a new struct field): checkpoints at 20 and
    30, whose cleanup drops versions 0..9."""
    work = tmp_path_factory.mktemp("xengine-a")
    table = work / "table"
    in1, in2 = work / "in1", work / "in2"
    in1.mkdir()
    in2.mkdir()
    a_write_batches(in1, 0, A_FIRST_BATCHES, merged=False)
    job1 = json_file_job("a1", in1, table, work / "cp1", A_SCHEMA, max_files_per_trigger=1,
                         partition_by=A_PARTITION_BY)
    job1["sink"]["options"] = {"delta.logRetentionDuration": "interval 1 days",
                               "delta.checkpointInterval": "10"}
    proc = run_silt(silt_bin, "run", write_job(work / "a1.yaml", job1), timeout=600)
    assert proc.returncode == 0, describe(proc)
    assert commit_versions(table) == list(range(A_FIRST_BATCHES))

    age_log_files(table, 14, days=3)

    a_write_batches(in2, A_FIRST_BATCHES, A_MERGE_BATCHES, merged=True)
    job2 = json_file_job("a2", in2, table, work / "cp2", A_MERGED_SCHEMA,
                         max_files_per_trigger=1, partition_by=A_PARTITION_BY)
    job2["sink"]["options"] = {"mergeSchema": "true"}
    proc = run_silt(silt_bin, "run", write_job(work / "a2.yaml", job2), timeout=600)
    assert proc.returncode == 0, describe(proc)
    return table


A_TOTAL = A_FIRST_BATCHES + A_MERGE_BATCHES


def test_a_checkpoints_written_and_expired_log_removed(silt_table):
    log = log_dir(silt_table)
    for v in (10, 20, 30):
        assert (log / f"{v:020d}.checkpoint.parquet").is_file(), sorted(os.listdir(log))
    assert json.loads((log / "_last_checkpoint").read_text())["version"] == 30
    # 0..9 precede checkpoint 10, the newest one older than the cutoff.
    assert commit_versions(silt_table) == list(range(10, A_TOTAL))
    assert not any(log.glob(f"{0:020d}.*"))


def test_a_silt_reads_the_input(silt_table, silt):
    assert_same_rows(silt_rows(silt, silt_table), a_expected(A_TOTAL), "silt", "id")
    for version in (10, 19, 20, 30):
        assert_same_rows(silt_rows(silt, silt_table, "--version", str(version)),
                         a_expected(version + 1), f"silt v{version}", "id")


def test_a_spark_and_deltalake_read_the_input(silt_table, spark):
    # Spark: the latest version (checkpoint 30 + commits) and version 10, now
    # the first in the log (its checkpoint, no commit files before it).
    spark_versions = [None, 10]
    by_spark = spark_rows_by_version(spark, silt_table, spark_versions)
    for version in [None, 10, 19, 20, 30]:
        expected = a_expected(A_TOTAL if version is None else version + 1)
        if version in spark_versions:
            assert_same_rows(by_spark[version], expected, f"spark v{version}", "id")
        theirs = to_json_rows(read_with_deltalake(silt_table, version=version))
        assert_same_rows(theirs, expected, f"deltalake v{version}", "id")
    # The evolved schema, as Spark sees it.
    spark_schema = spark.read.format("delta").load(str(silt_table)).schema
    assert spark_schema.simpleString() == (
        "struct<id:bigint,s:string,n:int,d:date,ts:timestamp,v:double,"
        "info:struct<a:int,b:string>,extra:string>")


def test_a_partition_directories_are_the_ones_spark_makes(silt_table, spark, tmp_path):
    """Spark writes the same partition values; its directory names are the
    truth. Timestamps: delta-spark 3.2 renders them as session-time-zone text
    ('2026-06-22 08:00:00') where silt writes ISO-8601 UTC (both are valid
    Delta, silt's is unambiguous); so the timestamp column is compared by
    letting Spark escape silt's text as a string partition value."""
    from pyspark.sql.types import (DateType, IntegerType, LongType, StringType, StructField,
                                   StructType)

    snap = snapshot(silt_table)
    ts_text = {}  # instant -> silt's partition value text
    for add in snap.files.values():
        text = add["partitionValues"].get("ts")
        if text is not None:
            instant = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            ts_text[instant] = text
    rows = []
    for r in a_expected(A_TOTAL):
        ts = None
        if "ts" in r:
            ts = ts_text[dt.datetime.fromisoformat(r["ts"].replace("Z", "+00:00"))]
        d = dt.date.fromisoformat(r["d"]) if "d" in r else None
        raw = a_record(r["id"]).get("s")  # the input string, "" included
        rows.append((r["id"], raw, r.get("n"), d, ts))
    schema = StructType([StructField("id", LongType()), StructField("s", StringType()),
                         StructField("n", IntegerType()), StructField("d", DateType()),
                         StructField("tsv", StringType())])
    theirs = tmp_path / "spark-same-values"
    (spark.createDataFrame(rows, schema).write.format("delta")
     .partitionBy("s", "n", "d", "tsv").save(str(theirs)))
    spark_dirs = {p.replace("/tsv=", "/ts=") for p in data_dirs(theirs)}
    ours = data_dirs(silt_table)
    assert ours == spark_dirs, (f"only silt: {sorted(ours - spark_dirs)[:6]}\n"
                                f"only spark: {sorted(spark_dirs - ours)[:6]}")
    assert any(p.startswith("s=__HIVE_DEFAULT_PARTITION__/") for p in ours)
    assert any("/n=__HIVE_DEFAULT_PARTITION__/" in p for p in ours)
    assert any(p.endswith("/ts=__HIVE_DEFAULT_PARTITION__") for p in ours)
    # The log's paths decode to those directories, and nulls (and "") are
    # JSON null in partitionValues, as Spark logs them.
    for path, add in snap.files.items():  # (snapshot() keys are decoded)
        assert os.path.dirname(path) in ours, path
        assert add["partitionValues"].get("s") != ""
    spark_adds = [a["add"] for a in read_commit(theirs, 0) if "add" in a]
    assert {json.dumps(a["partitionValues"]["s"]) for a in spark_adds
            if a["partitionValues"]["s"] in (None, "")} == {"null"}
    # add.path is the URI form of the directory exactly as Spark logs it
    # ('%' of an escape as %25, space as %20, 'é' and '日本' unquoted).
    spark_uris = {os.path.dirname(a["path"]).replace("/tsv=", "/ts=") for a in spark_adds}
    our_uris = {os.path.dirname(a["path"]) for a in snap.files.values()}
    assert our_uris == spark_uris, (f"only silt: {sorted(our_uris - spark_uris)[:6]}\n"
                                    f"only spark: {sorted(spark_uris - our_uris)[:6]}")


# --------------------------------------------------------------------------
# B. Spark writes, silt reads


def spark_json_rows(spark, table, version=None):
    return to_json_rows(read_with_spark(spark, table, version=version))


def assert_silt_reads_like_spark(silt, spark, table, versions, key):
    by_spark = spark_rows_by_version(spark, table, versions)
    for version in versions:
        expected = by_spark[version]
        extra = () if version is None else ("--version", str(version))
        got = silt_rows(silt, table, *extra)
        assert_same_rows(got, expected, f"silt vs spark at version {version}", *key)


def log_actions(table, version):
    return read_commit(table, version)


def test_b_spark_dml_with_deletion_vectors_read_by_silt(spark, silt, tmp_path):
    table = str(tmp_path / "dml")
    t = f"delta.`{table}`"

    def frame(ids, scale):
        return spark.createDataFrame(
            [(i, "abcd"[i % 4], i * scale, None if i % 6 == 0 else f"n{i}") for i in ids],
            "id BIGINT, p STRING, v DOUBLE, name STRING")

    frame(range(0, 40), 1.0).createOrReplaceTempView("xengine_first")
    spark.sql(f"""CREATE TABLE {t} USING delta PARTITIONED BY (p)
                  TBLPROPERTIES ('delta.enableDeletionVectors' = 'true',
                                 'delta.checkpointInterval' = '5')
                  AS SELECT * FROM xengine_first""")  # v0
    frame(range(0, 60), 2.0).write.format("delta").mode("overwrite").save(table)  # v1
    frame(range(60, 80), 3.0).write.format("delta").mode("append").save(table)  # v2
    (frame(range(100, 110), 4.0).where("p = 'a'").write.format("delta").mode("overwrite")
     .option("replaceWhere", "p = 'a'").save(table))  # v3
    frame(range(50, 90), 5.0).createOrReplaceTempView("xengine_src")
    spark.sql(f"""MERGE INTO {t} AS t USING xengine_src AS s ON t.id = s.id
                  WHEN MATCHED AND s.id % 3 = 0 THEN DELETE
                  WHEN MATCHED THEN UPDATE SET v = s.v, name = 'merged'
                  WHEN NOT MATCHED THEN INSERT *""")  # v4
    spark.sql(f"DELETE FROM {t} WHERE id % 5 = 1")  # v5 (checkpoint)
    spark.sql(f"UPDATE {t} SET v = -v, name = concat(name, '!') WHERE p = 'b'")  # v6

    ops = []
    for v in range(7):
        ops += [a["commitInfo"]["operation"] for a in log_actions(table, v) if "commitInfo" in a]
    assert ops == ["CREATE TABLE AS SELECT", "WRITE", "WRITE", "WRITE", "MERGE", "DELETE",
                   "UPDATE"], ops
    dv_adds = [a["add"] for a in log_actions(table, 5)
               if "add" in a and a["add"].get("deletionVector")]
    assert dv_adds, "Spark wrote no deletion vectors: the test would not test them"
    assert (log_dir(table) / f"{5:020d}.checkpoint.parquet").is_file()

    # Latest, and the versions made by overwrite, replaceWhere, MERGE and
    # DELETE with deletion vectors (checkpointed).
    assert_silt_reads_like_spark(silt, spark, table, [None, 1, 3, 4, 5], ("id",))
    assert len(silt_rows(silt, table)) > 30


def test_b_spark_column_mapping_rename_and_drop_read_by_silt(spark, silt, tmp_path):
    table = str(tmp_path / "cm")
    t = f"delta.`{table}`"
    spark.sql(f"""CREATE TABLE {t} USING delta
                  TBLPROPERTIES ('delta.columnMapping.mode' = 'name',
                                 'delta.minReaderVersion' = '2',
                                 'delta.minWriterVersion' = '5')
                  AS SELECT * FROM VALUES (1L, 'one', 'x1', 10), (2L, 'two', NULL, 20)
                     AS v(id, name, dropme, score)""")  # v0
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN name TO full_name")  # v1
    spark.sql(f"INSERT INTO {t} VALUES (3, 'three', 'x3', 30)")  # v2
    spark.sql(f"ALTER TABLE {t} DROP COLUMN dropme")  # v3
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN score TO dropme")  # v4: reuses the dropped name
    spark.sql(f"INSERT INTO {t} VALUES (4, 'four', 40)")  # v5

    meta = [a["metaData"] for a in log_actions(table, 0) if "metaData" in a][0]
    fields = json.loads(meta["schemaString"])["fields"]
    assert all("delta.columnMapping.physicalName" in f["metadata"] for f in fields)
    by_spark = spark_rows_by_version(spark, table, [None])
    assert {"id": 4, "full_name": "four", "dropme": 40} in by_spark[None]
    assert {"id": 1, "full_name": "one", "dropme": 10} in by_spark[None]
    assert_silt_reads_like_spark(silt, spark, table, [None, 0, 2, 3], ("id",))


def test_b_spark_column_mapping_nested_struct_read_by_silt(spark, silt, tmp_path):
    table = str(tmp_path / "cm-nested")
    t = f"delta.`{table}`"
    spark.sql(f"""CREATE TABLE {t} USING delta
                  TBLPROPERTIES ('delta.columnMapping.mode' = 'name',
                                 'delta.minReaderVersion' = '2',
                                 'delta.minWriterVersion' = '5')
                  AS SELECT * FROM VALUES (1L, named_struct('x', 1, 'y', 'a')),
                                          (2L, CAST(NULL AS STRUCT<x: INT, y: STRING>))
                     AS v(id, st)""")  # v0
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN st.x TO x2")
    spark.sql(f"INSERT INTO {t} VALUES (3, named_struct('x2', 3, 'y', 'c'))")
    assert_silt_reads_like_spark(silt, spark, table, [None, 0], ("id",))


# --------------------------------------------------------------------------
# C. silt appends to a Spark-created, checkpointed table

C_SCHEMA = "id BIGINT, p STRING, d DATE, v DOUBLE"


def c_spark_rows(ids):
    return [(i, ["x", "y/z", "é"][i % 3], dt.date(2026, 6, 1 + i % 2), i * 1.5) for i in ids]


def test_c_silt_appends_to_spark_table_and_spark_reads_union(spark, silt, tmp_path):
    table = tmp_path / "spark-made"
    t = f"delta.`{table}`"
    spark.createDataFrame(c_spark_rows(range(0, 5)), C_SCHEMA).createOrReplaceTempView("xengine_c")
    spark.sql(f"""CREATE TABLE {t} USING delta PARTITIONED BY (p, d)
                  TBLPROPERTIES ('delta.checkpointInterval' = '3')
                  AS SELECT * FROM xengine_c""")  # v0
    for k in range(1, 4):  # v1..v3, checkpoint at 3
        (spark.createDataFrame(c_spark_rows(range(k * 5, k * 5 + 5)), C_SCHEMA)
         .write.format("delta").mode("append").save(str(table)))
    assert (log_dir(table) / f"{3:020d}.checkpoint.parquet").is_file()
    spark_versions = commit_versions(table)

    in_dir = tmp_path / "in"
    in_dir.mkdir()
    silt_ids = []
    for b in range(3):
        ids = list(range(100 + b * 4, 104 + b * 4))
        silt_ids += ids
        recs = [{"id": i, "p": ["x", "new#p", None][i % 3], "d": f"2026-06-{1 + i % 2:02d}",
                 "v": i * 1.5} for i in ids]
        write_input_file(in_dir / f"c-{b}.json",
                         [json.dumps({k: v for k, v in r.items() if v is not None},
                                     ensure_ascii=False) for r in recs])
    job = json_file_job("c", in_dir, table, tmp_path / "cp", C_SCHEMA, max_files_per_trigger=1,
                        partition_by=["p", "d"])
    proc = silt("run", write_job(tmp_path / "c.yaml", job))
    assert proc.returncode == 0, describe(proc)
    assert commit_versions(table) == spark_versions + [4, 5, 6]
    assert (log_dir(table) / f"{6:020d}.checkpoint.parquet").is_file()  # silt's, interval 3

    expected = []
    for i, p, d, v in c_spark_rows(range(20)):
        expected.append({"id": i, "p": p, "d": d.isoformat(), "v": v})
    for i in silt_ids:
        row = {"id": i, "p": ["x", "new#p", None][i % 3], "d": f"2026-06-{1 + i % 2:02d}",
               "v": i * 1.5}
        expected.append({k: v for k, v in row.items() if v is not None})
    assert_same_rows(spark_json_rows(spark, table), expected, "spark after silt appends", "id")
    assert_same_rows(silt_rows(silt, table), expected, "silt after its appends", "id")
    assert_same_rows(to_json_rows(read_with_deltalake(table)), expected, "deltalake", "id")
    # Spark keeps writing after silt: its next commit and checkpoint see silt's files.
    (spark.createDataFrame(c_spark_rows(range(20, 23)), C_SCHEMA)
     .write.format("delta").mode("append").save(str(table)))
    for i, p, d, v in c_spark_rows(range(20, 23)):
        expected.append({"id": i, "p": p, "d": d.isoformat(), "v": v})
    assert_same_rows(silt_rows(silt, table), expected, "silt after Spark's next append", "id")
