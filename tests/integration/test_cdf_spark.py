"""The change data feed, differential against pyspark 3.5 + delta-spark 3.2.

Spark writes four base tables with `delta.enableChangeDataFeed = true`:
unpartitioned, partitioned (with a NULL partition), and both again with
deletion vectors on (their bases already carry Spark deletion vectors). On
two copies of each, the same sequence of DELETE / UPDATE / MERGE statements
runs, once through Spark SQL and once through `silt sql`. Then:

 - silt printed the rows Spark's SQL returned, and the tables read equal;
 - Spark's readChangeFeed over silt's table (silt's `_change_data` files,
   `cdc` actions, deletion vectors) equals silt's `silt read --changes` of
   it, timestamps included, and equals Spark's change feed of its own table
   (timestamps aside: the commits differ);
 - silt's `--changes` of Spark's table equals Spark's readChangeFeed of it
   from version 0, timestamps included;
 - silt wrote change files exactly for the statements Spark did, and its
   operation metrics count rows (and, for the first statement, files) as
   Spark's do.

All Spark work happens in one module fixture; silt's statements run beside
Spark's (on their own copies).
"""

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dml_tables import plain_rows, schemas
from helpers import (
    assert_same_rows,
    describe,
    log_versions,
    read_commit,
    read_with_spark,
    run_silt,
    normalize_silt_rows,
    spark_to_arrow,
    to_json_rows,
)

KEYS = ("_commit_version", "_change_type", "id", "name", "v", "d", "p")

# Statements per base table, run in order; {T} the target, {S} a source.
SEQUENCES = {
    "plain": [
        "DELETE FROM {T} WHERE v > 50",
        "UPDATE {T} SET v = v + 1, name = upper(name) WHERE id % 3 = 0",
        "MERGE INTO {T} t USING {S} s ON t.id = s.id "
        "WHEN MATCHED AND s.v IS NULL THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT * "
        "WHEN NOT MATCHED BY SOURCE AND t.id > 35 THEN DELETE",
        "MERGE INTO {T} t USING {S} s ON t.id = s.id + 1000 WHEN NOT MATCHED THEN INSERT *",
        "DELETE FROM {T} WHERE name = 'nobody'",
        "DELETE FROM {T} WHERE id < 100000",
    ],
    "part": [
        "DELETE FROM {T} WHERE p = 'a'",
        "UPDATE {T} SET p = 'z' WHERE p = 'b' AND id < 25",
        "MERGE INTO {T} t USING {SP} s ON t.id = s.id "
        "WHEN MATCHED AND s.v > 50 THEN UPDATE SET p = s.p "
        "WHEN NOT MATCHED THEN INSERT * "
        "WHEN NOT MATCHED BY SOURCE AND t.p = 'c' THEN UPDATE SET v = NULL",
        "DELETE FROM {T} WHERE p = 'c' AND v < 30",
        "DELETE FROM {T} WHERE p IS NULL",
        "DELETE FROM {T}",
    ],
    "dv": [
        "DELETE FROM {T} WHERE id % 4 = 1",
        "UPDATE {T} SET v = 7 WHERE v < 20",
        "MERGE INTO {T} t USING {S} s ON t.id = s.id "
        "WHEN MATCHED AND s.v IS NULL THEN DELETE WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT * "
        "WHEN NOT MATCHED BY SOURCE AND t.id > 30 THEN DELETE",
        "MERGE INTO {T} t USING {S} s ON t.id = s.id WHEN MATCHED THEN DELETE",
        "DELETE FROM {T} WHERE id < 100000",
    ],
    "dvpart": [
        "DELETE FROM {T} WHERE p = 'a'",
        "DELETE FROM {T} WHERE p = 'b' AND v < 30",
        "UPDATE {T} SET p = 'z' WHERE p = 'b' AND id < 40",
        "MERGE INTO {T} t USING {SP} s ON t.id = s.id "
        "WHEN MATCHED AND s.v > 60 THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v, p = s.p "
        "WHEN NOT MATCHED THEN INSERT * "
        "WHEN NOT MATCHED BY SOURCE AND t.p IS NULL THEN DELETE",
        "MERGE INTO {T} t USING {SP} s ON t.id = s.id + 1 WHEN NOT MATCHED THEN INSERT *",
    ],
}

# Operation metrics that count rows changed: Spark's for every statement.
ROW_METRICS = ("numDeletedRows", "numUpdatedRows", "numTargetRowsInserted",
               "numTargetRowsUpdated", "numTargetRowsDeleted", "numTargetRowsMatchedUpdated",
               "numTargetRowsMatchedDeleted", "numTargetRowsNotMatchedBySourceUpdated",
               "numTargetRowsNotMatchedBySourceDeleted")
# Those that count rows copied and files touched: Spark's for the first
# statement (later ones run on files each engine wrote its own way).
FILE_METRICS = ("numCopiedRows", "numRemovedFiles", "numDeletionVectorsAdded",
                "numDeletionVectorsRemoved", "numDeletionVectorsUpdated", "numTargetRowsCopied",
                "numOutputRows", "numTargetFilesRemoved", "numTargetDeletionVectorsAdded",
                "numTargetDeletionVectorsRemoved", "numTargetDeletionVectorsUpdated")


@dataclass
class Run:
    spark_table: Path
    silt_table: Path
    base_version: int
    spark_results: list = field(default_factory=list)
    silt_procs: list = field(default_factory=list)


@pytest.fixture(scope="module")
def cdf_runs(spark, tmp_path_factory, silt_bin):
    work = tmp_path_factory.mktemp("cdf")
    plain_schema, part_schema = schemas()
    cdf = "'delta.enableChangeDataFeed' = 'true'"
    bases = {}

    plain = work / "base_plain"
    spark.sql(f"CREATE TABLE delta.`{plain}` (id BIGINT, name STRING, v INT, d DOUBLE) "
              f"USING delta TBLPROPERTIES ({cdf})")
    spark.createDataFrame(plain_rows(), plain_schema).repartition(3).write.format("delta") \
        .mode("append").save(str(plain))
    bases["plain"] = plain

    part = work / "base_part"
    part_rows = [(i, (i * 17) % 90, None if i % 10 == 0 else ["a", "b", "c"][i % 3])
                 for i in range(60)]
    spark.sql(f"CREATE TABLE delta.`{part}` (id BIGINT, v INT, p STRING) USING delta "
              f"PARTITIONED BY (p) TBLPROPERTIES ({cdf})")
    spark.createDataFrame(part_rows, part_schema).repartition(2).write.format("delta") \
        .mode("append").save(str(part))
    bases["part"] = part

    dv = work / "base_dv"
    spark.sql(f"CREATE TABLE delta.`{dv}` (id BIGINT, name STRING, v INT, d DOUBLE) USING delta "
              f"TBLPROPERTIES ({cdf}, 'delta.enableDeletionVectors' = 'true')")
    spark.createDataFrame(plain_rows(), plain_schema).repartition(3).write.format("delta") \
        .mode("append").save(str(dv))
    spark.sql(f"DELETE FROM delta.`{dv}` WHERE id % 5 = 0")
    bases["dv"] = dv

    dvpart = work / "base_dvpart"
    spark.sql(f"CREATE TABLE delta.`{dvpart}` (id BIGINT, v INT, p STRING) USING delta "
              f"PARTITIONED BY (p) TBLPROPERTIES ({cdf}, 'delta.enableDeletionVectors' = 'true')")
    spark.createDataFrame(part_rows, part_schema).repartition(2).write.format("delta") \
        .mode("append").save(str(dvpart))
    spark.sql(f"DELETE FROM delta.`{dvpart}` WHERE id % 6 = 1")
    bases["dvpart"] = dvpart

    src = work / "src"
    spark.createDataFrame(
        [(i, None if i % 6 == 0 else f"s{i}", None if i % 8 == 0 else (i * 7) % 100, i * 1.5)
         for i in list(range(0, 40, 3)) + list(range(100, 115, 2))],
        plain_schema).write.format("delta").save(str(src))
    src_part = work / "src_part"
    spark.createDataFrame([(i, (i * 11) % 100, ["a", "b", "c"][i % 3]) for i in range(0, 70, 4)],
                          part_schema).write.format("delta").save(str(src_part))

    def text(statement, target):
        return statement.format(T=f"delta.`{target}`", S=f"delta.`{src}`",
                                SP=f"delta.`{src_part}`")

    def run_silt_sequence(statements, table):
        return [run_silt(silt_bin, "sql", text(statement, table), "--format", "jsonl")
                for statement in statements]

    # Each sequence runs in silt (in order, on its own copy) beside Spark's
    # statements (a thread waiting on the processes): they share no table.
    runs = {}
    silt_sequences = {}
    with ThreadPoolExecutor(max_workers=2) as silt_pool:
        for name, statements in SEQUENCES.items():
            run = Run(work / name / "spark", work / name / "silt", log_versions(bases[name])[-1])
            shutil.copytree(bases[name], run.spark_table)
            shutil.copytree(bases[name], run.silt_table)
            silt_sequences[name] = silt_pool.submit(run_silt_sequence, statements, run.silt_table)
            for statement in statements:
                rows = spark.sql(text(statement, run.spark_table)).collect()
                run.spark_results.append(rows[0].asDict() if rows else {})
            runs[name] = run
    for name, run in runs.items():
        run.silt_procs = silt_sequences[name].result()
    return runs


def _spark_changes(spark, table, start):
    df = spark.read.format("delta").option("readChangeFeed", "true") \
        .option("startingVersion", start).load(str(table))
    return to_json_rows(spark_to_arrow(df))


def _silt_changes(silt, table, *args):
    proc = silt("read", str(table), "--changes", "--format", "jsonl", "--values", "spark", *args)
    assert proc.returncode == 0, describe(proc)
    return normalize_silt_rows([json.loads(line) for line in proc.stdout.splitlines()
                                if line.strip()])


def _without_timestamps(rows):
    return [{k: v for k, v in r.items() if k != "_commit_timestamp"} for r in rows]


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_statements_print_and_read_as_spark(name, cdf_runs, spark):
    run = cdf_runs[name]
    for statement, proc, expected in zip(SEQUENCES[name], run.silt_procs, run.spark_results):
        assert proc.returncode == 0, f"{statement}: {describe(proc)}"
        printed = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        assert printed == [expected], f"{statement}: silt printed {printed}, Spark {expected}"
    assert_same_rows(to_json_rows(read_with_spark(spark, run.silt_table)),
                     to_json_rows(read_with_spark(spark, run.spark_table)), name, *KEYS)


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_spark_reads_silts_change_feed(name, cdf_runs, spark, silt):
    run = cdf_runs[name]
    start = run.base_version + 1
    spark_on_silt = _spark_changes(spark, run.silt_table, start)
    silt_on_silt = _silt_changes(silt, run.silt_table, "--starting-version", str(start))
    assert spark_on_silt, "no changes"
    assert_same_rows(silt_on_silt, spark_on_silt, f"{name}: silt vs Spark on silt's table", *KEYS)
    spark_on_spark = _spark_changes(spark, run.spark_table, start)
    assert_same_rows(_without_timestamps(spark_on_silt), _without_timestamps(spark_on_spark),
                     f"{name}: silt's changes vs Spark's", *KEYS)


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_silt_reads_sparks_change_feed(name, cdf_runs, spark, silt):
    run = cdf_runs[name]
    expected = _spark_changes(spark, run.spark_table, 0)
    assert_same_rows(_silt_changes(silt, run.spark_table, "--starting-version", "0"), expected,
                     f"{name}: silt reading Spark's change feed", *KEYS)
    # A range in the middle.
    last = log_versions(run.spark_table)[-1]
    middle = [r for r in expected if 2 <= r["_commit_version"] <= last - 1]
    assert_same_rows(_silt_changes(silt, run.spark_table, "--starting-version", "2",
                                   "--ending-version", str(last - 1)), middle,
                     f"{name}: versions 2..{last - 1}", *KEYS)


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_change_files_where_spark_writes_them(name, cdf_runs):
    run = cdf_runs[name]
    spark_versions = log_versions(run.spark_table)
    silt_versions = log_versions(run.silt_table)
    assert len(spark_versions) == len(silt_versions)
    for version in spark_versions[run.base_version + 1:]:
        spark_actions = read_commit(run.spark_table, version)
        silt_actions = read_commit(run.silt_table, version)
        spark_cdc = [a["cdc"] for a in spark_actions if "cdc" in a]
        silt_cdc = [a["cdc"] for a in silt_actions if "cdc" in a]
        assert bool(silt_cdc) == bool(spark_cdc), f"version {version}: silt {silt_cdc}, " \
                                                  f"Spark {spark_cdc}"
        assert {json.dumps(c["partitionValues"], sort_keys=True) for c in silt_cdc} <= \
            {json.dumps(c["partitionValues"], sort_keys=True) for c in spark_cdc}
        for c in silt_cdc:
            assert c["path"].startswith("_change_data/") and c["dataChange"] is False
            assert (run.silt_table / c["path"]).is_file()
        info = next(a["commitInfo"] for a in silt_actions if "commitInfo" in a)
        metrics = info["operationMetrics"]
        key = "numTargetChangeFilesAdded" if info["operation"] == "MERGE" else \
            "numAddedChangeFiles"
        assert metrics[key] == str(len(silt_cdc))
        spark_metrics = next(a["commitInfo"] for a in spark_actions
                             if "commitInfo" in a)["operationMetrics"]
        first = version == run.base_version + 1
        for key in ROW_METRICS + (FILE_METRICS if first else ()):
            if key in spark_metrics:
                assert metrics.get(key) == spark_metrics[key], \
                    f"version {version} {key}: silt {metrics.get(key)}, Spark {spark_metrics[key]}"


def test_change_feed_errors(cdf_runs, silt, tmp_path, spark):
    run = cdf_runs["plain"]
    last = log_versions(run.silt_table)[-1]
    proc = silt("read", str(run.silt_table), "--changes", "--starting-version", str(last + 5))
    assert proc.returncode != 0
    assert "Start version cannot be greater than the latest version" in proc.stderr, \
        describe(proc)
    plain = tmp_path / "no_cdf"
    spark.sql(f"CREATE TABLE delta.`{plain}` (id BIGINT) USING delta")
    spark.sql(f"INSERT INTO delta.`{plain}` VALUES (1)")
    proc = silt("read", str(plain), "--changes", "--starting-version", "0")
    assert proc.returncode != 0
    assert "DELTA_MISSING_CHANGE_DATA" in proc.stderr, describe(proc)
