"""Differential tests of the Delta merge sink and of update mode on Delta
(issues #16 "Streaming sinks" and #15 "Output modes on the Delta sink"):
silt's declarative `mode: merge` sink against pyspark 3.5 + delta-spark
3.2 running the same MERGE in foreachBatch, batch by batch.

Each case writes its input batches as JSON-lines files, one per batch; both
engines read the directory with maxFilesPerTrigger 1 and trigger
availableNow, so batch N is file N in both. Spark's foreachBatch creates the
table from the batch's schema when it is missing (as silt's sink does),
deduplicates like `dedupBy` (row_number over the keys by orderBy desc), and
runs DeltaTable.merge with the case's clauses; it records the table version
each batch left. silt runs the job file. Then, for every batch, the rows of
Spark's table at that batch's version equal the rows of silt's table at the
version whose txn records the batch (read with delta-rs), and every batch is
exactly one silt commit carrying txn{query id, batch id}.

Update-mode cases run a stateful aggregation with outputMode update: Spark
through foreachBatch MERGE on the group keys (Spark refuses update mode on a
Delta sink, so that is what its users write), silt with a plain
`outputMode: update` Delta sink.

A re-run of a finished query commits nothing (each batch's txn is in the
table), and a batch with two rows for one matched key stops both engines
with DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE unless dedupBy is
set.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest

from helpers import (checkpoint_batches, checkpoint_query_id, describe, log_versions, read_commit,
                     run_silt, snapshot, write_input_file)

SCHEMA = "id BIGINT, k STRING, v BIGINT, op STRING, ts BIGINT, region STRING"
EVENT_SCHEMA = "id BIGINT, ts STRING, device STRING, temp DOUBLE"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def r(id_, k, v, ts, op="upsert", region="eu"):
    return {"id": id_, "k": k, "v": v, "op": op, "ts": ts, "region": region}


def ev(id_, sec, device="d1", temp=1.0):
    row = {"id": id_, "ts": (T0 + dt.timedelta(seconds=sec)).strftime("%Y-%m-%d %H:%M:%S"),
           "temp": float(temp)}
    if device is not None:
        row["device"] = device
    return row


# Keyed updates over 4 batches: repeated keys within a batch, deletes,
# re-inserts after a delete, two regions.
UPSERTS = [
    [r(1, "a", 10, 1), r(2, "b", 20, 2), r(3, "a", 11, 3), r(4, "c", 30, 4, region="us")],
    [r(5, "b", 21, 5), r(6, "d", 40, 6, region="us"), r(7, "a", 12, 7, op="delete"),
     r(8, "b", 22, 8)],
    [r(9, "a", 13, 9), r(10, "c", 31, 10, op="delete", region="us"), r(11, "e", 50, 11),
     r(12, "e", 49, 12)],
    [r(13, "d", 41, 13, op="delete", region="us"), r(14, "f", 60, 14), r(15, "b", 23, 15),
     r(16, "g", 5, 16, region="us")],
]

# Distinct keys per batch (no dedup needed): the merge's own semantics.
DISTINCT = [
    [r(1, "a", 10, 1), r(2, "b", 20, 2), r(3, "c", 30, 3)],
    [r(4, "a", 5, 4), r(5, "d", 40, 5), r(6, "b", 25, 1)],
    [r(7, "c", 1, 6), r(8, "e", 50, 7), r(9, "a", 100, 8)],
]

WINDOWED = [
    [ev(1, 5, "d1", 20.0), ev(2, 12, "d2", 21.5), ev(3, 30, "d1", 19.0)],
    [ev(4, 45, "d2", 22.0), ev(5, 62, "d1", 23.0), ev(6, 70, None, 18.5)],
    [ev(7, 75, "d1", 20.5), ev(8, 20, "d2", 1.0), ev(9, 130, "d1", 24.0)],
    [ev(10, 128, "d2", 25.5), ev(11, 190, "d2", 19.5), ev(12, 50, "d1", 2.0)],
]


@dataclass
class Clause:
    """One WHEN clause, given once and spelled for both engines."""
    kind: str  # matched, notMatched, notMatchedBySource
    action: str  # update, updateAll, delete, insert, insertAll
    condition: Optional[str] = None
    assign: dict = field(default_factory=dict)

    def yaml(self):
        out = {"action": self.action}
        if self.condition:
            out["condition"] = self.condition
        if self.assign:
            out["values" if self.action == "insert" else "set"] = self.assign
        return out

    def apply(self, builder):
        c = self.condition
        if self.kind == "matched":
            if self.action == "update":
                return builder.whenMatchedUpdate(condition=c, set=self.assign)
            if self.action == "updateAll":
                return builder.whenMatchedUpdateAll(condition=c)
            return builder.whenMatchedDelete(condition=c)
        if self.kind == "notMatched":
            if self.action == "insert":
                return builder.whenNotMatchedInsert(condition=c, values=self.assign)
            return builder.whenNotMatchedInsertAll(condition=c)
        if self.action == "update":
            return builder.whenNotMatchedBySourceUpdate(condition=c, set=self.assign)
        return builder.whenNotMatchedBySourceDelete(condition=c)


@dataclass
class Case:
    name: str
    batches: list
    on: str
    clauses: list
    dedup: Optional[tuple] = None  # (keys, orderBy)
    partition_by: tuple = ()
    # Update mode: (silt transform steps, the Spark job on the prepared
    # DataFrame, the merge keys).
    update: Optional[tuple] = None
    fails: Optional[str] = None  # both engines stop with this text


UPSERT_ALL = [Clause("matched", "updateAll"), Clause("notMatched", "insertAll")]
CDC = [
    Clause("matched", "delete", "s.op = 'delete'"),
    Clause("matched", "update", None, {"v": "s.v", "ts": "s.ts", "id": "s.id"}),
    Clause("notMatched", "insertAll", "s.op <> 'delete'"),
]


def F():
    from pyspark.sql import functions

    return functions


def windowed_counts(df):
    return (df.withWatermark("ts", "10 seconds")
            .groupBy(F().window("ts", "1 minute"), "device")
            .agg(F().count("*").alias("n"), F().sum("temp").alias("total")))


def device_counts(df):
    return df.groupBy("device").agg(F().count("*").alias("n"), F().max("temp").alias("hi"))


CASES = [
    Case("upsert_latest_per_key", UPSERTS, "t.k = s.k", UPSERT_ALL, dedup=(["k"], ["ts"])),
    Case("cdc_deletes", UPSERTS, "t.k = s.k", CDC, dedup=(["k"], ["ts"])),
    Case("cdc_partitioned", UPSERTS, "t.k = s.k AND t.region = s.region", CDC,
         dedup=(["k", "region"], ["ts"]), partition_by=("region",)),
    Case("conditional_update_and_insert_values", DISTINCT, "t.k = s.k", [
        Clause("matched", "update", "s.ts > t.ts", {"v": "t.v + s.v", "ts": "s.ts"}),
        Clause("notMatched", "insert", "s.v >= 20",
               {"k": "s.k", "v": "s.v * 2", "ts": "s.ts", "op": "'new'", "id": "s.id"}),
    ]),
    Case("not_matched_by_source", DISTINCT, "t.k = s.k", [
        Clause("matched", "updateAll"),
        Clause("notMatched", "insertAll"),
        Clause("notMatchedBySource", "delete", "t.v < 15"),
        Clause("notMatchedBySource", "update", None, {"op": "'stale'"}),
    ]),
    Case("delete_only_matched", DISTINCT, "t.k = s.k", [
        Clause("matched", "delete", "s.v < 10"),
        Clause("notMatched", "insertAll"),
    ]),
    Case("multiple_matches_fail", UPSERTS, "t.k = s.k", UPSERT_ALL,
         fails="DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"),
    Case("update_windowed_counts", WINDOWED, "", [], update=(
        [{"withWatermark": {"eventTime": "ts", "delayThreshold": "10 seconds"}},
         {"groupBy": {"keys": ["window(ts, '1 minute')", "device"],
                      "agg": ["count(*) AS n", "sum(temp) AS total"]}}],
        windowed_counts, ["window", "device"])),
    Case("update_device_counts_no_watermark", WINDOWED, "", [], update=(
        [{"groupBy": {"keys": ["device"], "agg": ["count(*) AS n", "max(temp) AS hi"]}}],
        device_counts, ["device"])),
]


# --------------------------------------------------------------------------
# The two engines


def write_inputs(case: Case, input_dir: Path):
    input_dir.mkdir()
    for i, batch in enumerate(case.batches):
        write_input_file(input_dir / f"batch-{i:02d}.json", [json.dumps(x) for x in batch])


def prep(df, case: Case):
    if case.update:
        return df.select(F().col("ts").cast("timestamp").alias("ts"), "id", "device", "temp")
    return df


def spark_merge_fn(spark, case: Case, table: Path, versions: dict):
    from delta.tables import DeltaTable
    from pyspark.sql import Window

    def fn(batch_df, batch_id):
        if not DeltaTable.isDeltaTable(spark, str(table)):
            writer = batch_df.limit(0).write.format("delta")
            if case.partition_by:
                writer = writer.partitionBy(*case.partition_by)
            writer.save(str(table))
        source = batch_df
        if case.dedup:
            keys, order = case.dedup
            w = Window.partitionBy(*keys).orderBy(*[F().col(o).desc() for o in order])
            source = (source.withColumn("__rn", F().row_number().over(w))
                      .where("__rn = 1").drop("__rn"))
        if case.update:
            on = " AND ".join(f"t.`{k}` <=> s.`{k}`" for k in case.update[2])
            clauses = UPSERT_ALL
        else:
            on, clauses = case.on, case.clauses
        builder = DeltaTable.forPath(spark, str(table)).alias("t").merge(source.alias("s"), on)
        for c in clauses:
            builder = c.apply(builder)
        builder.execute()
        versions[batch_id] = DeltaTable.forPath(spark, str(table)).history(1).collect()[0][
            "version"]

    return fn


def run_spark(spark, case: Case, input_dir: Path, work: Path):
    schema = EVENT_SCHEMA if case.update else SCHEMA
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(input_dir))
    df = prep(df, case)
    mode = "append"
    if case.update:
        df = case.update[1](df)
        mode = "update"
    versions = {}
    table = work / "spark-table"
    query = (df.writeStream.outputMode(mode).queryName(case.name)
             .option("checkpointLocation", str(work / "spark-checkpoint"))
             .foreachBatch(spark_merge_fn(spark, case, table, versions))
             .trigger(availableNow=True).start())
    try:
        query.awaitTermination()
    except Exception as e:  # noqa: BLE001 - the failure is the result
        return table, versions, str(e)
    return table, versions, None


def silt_job(case: Case, input_dir: Path, work: Path) -> Path:
    schema = EVENT_SCHEMA if case.update else SCHEMA
    job = {
        "name": "merge-" + case.name,
        "source": {"format": "json", "schema": schema,
                   "options": {"path": str(input_dir), "maxFilesPerTrigger": 1}},
        "checkpointLocation": str(work / "silt-checkpoint"),
        "trigger": {"availableNow": True},
    }
    sink = {"format": "delta", "path": str(work / "silt-table")}
    if case.update:
        job["transform"] = [{"select": ["CAST(ts AS TIMESTAMP) AS ts", "id", "device", "temp"]}]
        job["transform"] += case.update[0]
        sink["outputMode"] = "update"
    else:
        merge = {"on": case.on}
        for kind, key in (("matched", "whenMatched"), ("notMatched", "whenNotMatched"),
                          ("notMatchedBySource", "whenNotMatchedBySource")):
            clauses = [c.yaml() for c in case.clauses if c.kind == kind]
            if clauses:
                merge[key] = clauses
        sink.update({"mode": "merge", "merge": merge})
        if case.dedup:
            sink["dedupBy"] = {"keys": case.dedup[0], "orderBy": case.dedup[1]}
        if case.partition_by:
            sink["partitionBy"] = list(case.partition_by)
    job["sink"] = sink
    path = work / "job.yaml"
    path.write_text(json.dumps(job, indent=2) + "\n")
    return path


# --------------------------------------------------------------------------
# Comparing


def normalize(value):
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return float(f"{value:.12g}") + 0.0
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    return value


def table_rows(table: Path, version: int):
    from deltalake import DeltaTable

    rows = DeltaTable(str(table), version=version).to_pyarrow_table().to_pylist()
    return sorted((normalize(x) for x in rows), key=lambda x: json.dumps(x, sort_keys=True))


def silt_batch_versions(table: Path, query_id: str) -> dict:
    """batch id -> the version whose txn records it (each at most once)."""
    out = {}
    for version in log_versions(table):
        for action in read_commit(table, version):
            txn = action.get("txn")
            if txn and txn["appId"] == query_id:
                assert txn["version"] not in out, f"batch {txn['version']} committed twice"
                out[txn["version"]] = version
    return out


_RUNS: dict = {}
_LOCK = threading.Lock()


def runs(case: Case, spark, silt_bin, tmp_path_factory):
    with _LOCK:
        if case.name not in _RUNS:
            work = tmp_path_factory.mktemp(case.name)
            write_inputs(case, work / "in")
            spark_side = run_spark(spark, case, work / "in", work)
            job = silt_job(case, work / "in", work)
            proc = run_silt(silt_bin, "run", job, timeout=120)
            _RUNS[case.name] = (work, job, spark_side, proc)
        return _RUNS[case.name]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_table_after_every_batch_matches_spark(case, spark, silt_bin, tmp_path_factory):
    work, job, (spark_table, spark_versions, spark_error), proc = runs(
        case, spark, silt_bin, tmp_path_factory)
    silt_table = work / "silt-table"
    if case.fails:
        assert spark_error is not None and case.fails in spark_error, spark_error
        assert proc.returncode != 0, describe(proc)
        assert case.fails in proc.stderr, describe(proc)
        assert "dedupBy" in proc.stderr, describe(proc)
    else:
        assert spark_error is None, spark_error
        assert proc.returncode == 0, describe(proc)
    query_id = checkpoint_query_id(work / "silt-checkpoint")
    silt_versions = silt_batch_versions(silt_table, query_id)
    assert sorted(silt_versions) == sorted(spark_versions), (silt_versions, spark_versions)
    assert spark_versions, "no batch ran"
    for batch in sorted(spark_versions):
        expected = table_rows(spark_table, spark_versions[batch])
        actual = table_rows(silt_table, silt_versions[batch])
        assert actual == expected, f"batch {batch}:\nsilt  {actual}\nspark {expected}"
        commit = read_commit(silt_table, silt_versions[batch])
        info = next(a["commitInfo"] for a in commit if "commitInfo" in a)
        assert info["operation"] == "MERGE", info
    # The table's partitioning is the sink's.
    assert snapshot(silt_table).metadata["partitionColumns"] == list(case.partition_by)


@pytest.mark.parametrize("case", [c for c in CASES if not c.fails][:2] + [CASES[-2]],
                         ids=lambda c: c.name)
def test_rerun_commits_nothing(case, spark, silt_bin, tmp_path_factory):
    """A finished query started again finds no new input; and a checkpoint
    whose last commits/N is removed re-runs batch N, which the table already
    records: nothing is committed twice."""
    work, job, _, proc = runs(case, spark, silt_bin, tmp_path_factory)
    assert proc.returncode == 0, describe(proc)
    silt_table = work / "silt-table"
    before = log_versions(silt_table)
    last = checkpoint_batches(work / "silt-checkpoint", "commits")[-1]
    (work / "silt-checkpoint" / "commits" / str(last)).unlink()
    again = run_silt(silt_bin, "run", job, timeout=120)
    assert again.returncode == 0, describe(again)
    assert "skipping" in again.stderr, describe(again)
    assert log_versions(silt_table) == before
    assert (work / "silt-checkpoint" / "commits" / str(last)).exists()
