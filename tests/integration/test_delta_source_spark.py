"""The Delta streaming source, differential against pyspark 3.5 + delta-spark
3.2 (issue #17).

Two source tables (one plain, one partitioned; both with deletion vectors)
go through stages of changes made by Spark: appends; then an append,
a metadata-only commit, a MERGE, a DELETE that writes deletion vectors, a
DELETE that drops whole files, an OPTIMIZE and an append (with a log
checkpoint); then the old commits are expired and cleaned up by Spark's log
cleanup at the next checkpoint, and more appends follow. After each stage,
every configuration runs once in Spark (Trigger.AvailableNow, foreachBatch
collecting each batch's rows) and once in silt (trigger availableNow, a
Delta sink). Compared per configuration: each batch's offsets/N source line
(byte for byte: the same DeltaSourceOffset JSON), each batch's rows, the
progress records' sources[] offsets and row counts, the final table, and —
for the configurations Spark stops — the error class and version."""

import datetime as dt
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers import describe, read_with_deltalake, run_silt

STAGES = 4


@dataclass
class Case:
    name: str
    table: str  # "plain" or "parted"
    options: dict
    stages: tuple = (1, 2, 3)  # the stages after which the query runs
    trigger: str = "availableNow"  # or "once"
    # The error class silt stops with, if any (then Spark must stop too,
    # with `spark_error` when its message differs).
    error: str = ""
    spark_error: str = ""


CASES = [
    Case("default", "plain", {}, error="DELTA_SOURCE_TABLE_IGNORE_CHANGES"),
    Case("ignore-deletes", "plain", {"ignoreDeletes": "true"},
         error="DELTA_SOURCE_TABLE_IGNORE_CHANGES"),
    Case("ignore-changes", "plain", {"ignoreChanges": "true"}),
    Case("skip-change-commits", "plain", {"skipChangeCommits": "true"}),
    Case("max-files-1", "plain", {"maxFilesPerTrigger": "1", "skipChangeCommits": "true"}),
    Case("max-files-2", "plain", {"maxFilesPerTrigger": "2", "ignoreChanges": "true"}),
    Case("max-bytes", "plain", {"maxBytesPerTrigger": "2500", "skipChangeCommits": "true"}),
    Case("max-bytes-and-files", "plain",
         {"maxBytesPerTrigger": "4k", "maxFilesPerTrigger": "2", "ignoreChanges": "true"}),
    Case("starting-version", "plain", {"startingVersion": "2", "ignoreChanges": "true"}),
    Case("starting-latest", "plain", {"startingVersion": "latest", "skipChangeCommits": "true"}),
    Case("starting-timestamp", "plain", {"startingTimestamp": "@v2", "skipChangeCommits": "true"}),
    Case("exclude-regex", "plain", {"excludeRegex": "part-00001", "ignoreChanges": "true"}),
    Case("ignore-deletes-after-merge", "plain",
         {"startingVersion": "8", "ignoreDeletes": "true"}, stages=(2,)),
    Case("default-on-delete", "plain", {"startingVersion": "8"}, stages=(2,),
         error="DELTA_SOURCE_IGNORE_DELETE"),
    Case("partitioned", "parted", {"ignoreChanges": "true"}),
    Case("partitioned-max-files", "parted", {"maxFilesPerTrigger": "2",
                                              "skipChangeCommits": "true"}),
    Case("partitioned-default", "parted", {}, error="DELTA_SOURCE_TABLE_IGNORE_CHANGES"),
    Case("deletion-vector-snapshot", "plain", {"maxFilesPerTrigger": "3"}, stages=(3,)),
    Case("trigger-once", "plain", {"maxFilesPerTrigger": "1", "skipChangeCommits": "true"},
         trigger="once"),
    # Stopped after version 1 while log cleanup deleted versions 0..2.
    # Spark re-plans its last batch on restart (a V1 source) and fails on
    # its start version; silt fails on the first commit it needs.
    Case("lagging-behind-log-cleanup", "plain", {"startingVersion": "1"},
         stages=(0, 3), error="DELTA_MISSING_FILES_UNEXPECTED_VERSION",
         spark_error="Cannot time travel Delta table to version 1"),
]

SCHEMA = "id BIGINT, value STRING, part STRING, amount DOUBLE"


def rows(first, count):
    return [(i, f"v{i}", f"p{i % 3}", i * 1.5) for i in range(first, first + count)]


def append(spark, table, first, count, files):
    df = spark.createDataFrame(rows(first, count), SCHEMA).repartition(files)
    df.write.format("delta").mode("append").save(str(table))


def create(spark, table, partitioned):
    parted = "PARTITIONED BY (part)" if partitioned else ""
    spark.sql(f"CREATE TABLE delta.`{table}` ({SCHEMA}) USING delta {parted} "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
              "'delta.checkpointInterval' = '3')")


def stage_0(spark, table, partitioned):
    create(spark, table, partitioned)                      # v0
    append(spark, table, 0, 30, 3)                         # v1


def stage_1(spark, table, partitioned):
    append(spark, table, 30, 20, 2)                        # v2
    append(spark, table, 50, 10, 1)                        # v3


def stage_2(spark, table, partitioned):
    append(spark, table, 60, 10, 2)                        # v4
    spark.sql(f"ALTER TABLE delta.`{table}` SET TBLPROPERTIES "
              "('delta.logRetentionDuration' = 'interval 1 days')")  # v5
    spark.sql(f"""MERGE INTO delta.`{table}` t
                  USING (SELECT id, concat('m', value) AS value, part, amount
                         FROM VALUES (1L, 'a', 'p1', 1.0D), (2L, 'b', 'p2', 2.0D),
                                     (1000L, 'c', 'p1', 3.0D) AS s(id, value, part, amount)) s
                  ON t.id = s.id
                  WHEN MATCHED THEN UPDATE SET *
                  WHEN NOT MATCHED THEN INSERT *""")  # v6
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id IN (10, 11, 61)")  # v7: DVs
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id >= 30 AND id < 50")  # v8: whole files
    spark.sql(f"OPTIMIZE delta.`{table}`")                 # v9: dataChange=false (+ checkpoint)
    append(spark, table, 70, 10, 2)                        # v10


def stage_3(spark, table, partitioned):
    # Expire versions 0..3 (commits and the checkpoint at 3): the next
    # checkpoints (12, 15) let Spark's log cleanup delete the commits before
    # it. Every stream already read them, and none needs them to re-plan its
    # last batch (Spark re-plans it on restart).
    old = time.time() - 3 * 86400
    log = Path(table) / "_delta_log"
    for path in log.iterdir():
        if path.name[:20].isdigit() and int(path.name[:20]) <= 3:
            os.utime(path, (old, old))
    for i in range(5):
        append(spark, table, 100 + 10 * i, 10, 1)          # v11..v15 (+ checkpoints, cleanup)
    assert not (log / f"{2:020d}.json").exists(), sorted(p.name for p in log.iterdir())
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id = 105")  # v16: a deletion vector


STAGE_STEPS = [stage_0, stage_1, stage_2, stage_3]


def commit_timestamp_ms(table, version):
    with open(Path(table) / "_delta_log" / f"{version:020d}.json") as f:
        for line in f:
            action = json.loads(line)
            if "commitInfo" in action:
                return action["commitInfo"]["timestamp"]
    raise AssertionError(f"no commitInfo in version {version} of {table}")


def resolved_options(case, tables, stamps):
    out = dict(case.options)
    if out.get("startingTimestamp", "").startswith("@v"):
        out["startingTimestamp"] = stamps[(case.table, int(out["startingTimestamp"][2:]))]
    return out


# --------------------------------------------------------------------------
# Running both engines


@dataclass
class Run:
    batches: dict = field(default_factory=dict)  # batch id -> sorted rows
    error: str = ""
    progress: list = field(default_factory=list)


def spark_start(spark, case, work, options, run):
    reader = spark.readStream.format("delta")
    for key, value in options.items():
        reader = reader.option(key, value)
    df = reader.load(str(work.tables[case.table]))

    def collect(batch_df, batch_id):
        run.batches[batch_id] = sorted(tuple(r) for r in batch_df.collect())

    writer = (df.writeStream.foreachBatch(collect).queryName(case.name)
              .option("checkpointLocation", str(work.root / case.name / "spark-checkpoint")))
    writer = writer.trigger(once=True) if case.trigger == "once" else writer.trigger(
        availableNow=True)
    return writer.start()


def spark_finish(query, run):
    try:
        query.awaitTermination()
    except Exception as e:  # the query's failure is the case's outcome
        run.error = str(e)
        return
    for p in query.recentProgress:
        if "addBatch" in p.get("durationMs", {}):
            run.progress.append(p)


def silt_job(case, work, options):
    root = work.root / case.name
    job = {
        "name": "delta-source-" + case.name,
        "source": {"format": "delta",
                   "options": {"path": str(work.tables[case.table]), **options}},
        "sink": {"format": "delta", "path": str(root / "silt-table")},
        "checkpointLocation": str(root / "silt-checkpoint"),
        "trigger": {"once": True} if case.trigger == "once" else {"availableNow": True},
    }
    path = root / "job.yaml"
    path.write_text(json.dumps(job, indent=2) + "\n")
    return path


def silt_run(silt_bin, case, work, options, run):
    proc = run_silt(silt_bin, "run", silt_job(case, work, options), "--progress-json",
                    timeout=180)
    if proc.returncode != 0:
        run.error = proc.stderr
        return
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            run.progress.append(json.loads(line))


def silt_batches(table):
    """batch id -> sorted rows added by the commit with that txn version."""
    out = {}
    log = Path(table) / "_delta_log"
    if not log.is_dir():
        return out
    for path in sorted(log.glob("*.json")):
        adds, batch = [], None
        for line in path.read_text().splitlines():
            action = json.loads(line)
            if "txn" in action:
                batch = action["txn"]["version"]
            if "add" in action:
                adds.append(action["add"]["path"])
        assert batch is not None, path
        got = []
        for add in adds:
            for r in pq.read_table(Path(table) / add).to_pylist():
                got.append((r["id"], r["value"], r["part"], r["amount"]))
        out[batch] = sorted(got)
    return out


def checkpoint_offsets(checkpoint):
    d = Path(checkpoint) / "offsets"
    if not d.is_dir():
        return {}
    return {int(p.name): p.read_text().split("\n")[2] for p in d.iterdir() if p.name.isdigit()}


class Work:
    def __init__(self, root):
        self.root = root
        self.tables = {"plain": root / "source-plain", "parted": root / "source-parted"}


@pytest.fixture(scope="module")
def outcomes(spark, silt_bin, tmp_path_factory):
    work = Work(tmp_path_factory.mktemp("delta-source"))
    for case in CASES:
        (work.root / case.name).mkdir()
    spark_runs = {c.name: Run() for c in CASES}
    silt_runs = {c.name: Run() for c in CASES}
    stamps = {}
    started = time.monotonic()
    for stage in range(STAGES):
        for name, table in work.tables.items():
            STAGE_STEPS[stage](spark, table, name == "parted")
            if stage == 1:
                for version in range(4):
                    ms = commit_timestamp_ms(table, version)
                    stamps[(name, version)] = dt.datetime.fromtimestamp(
                        ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        active = [c for c in CASES if stage in c.stages and not spark_runs[c.name].error]
        queries = []
        for case in active:
            options = resolved_options(case, work.tables, stamps)
            queries.append((case, spark_start(spark, case, work, options,
                                              spark_runs[case.name])))
        for case, query in queries:
            spark_finish(query, spark_runs[case.name])
        for case in active:
            if not silt_runs[case.name].error:
                silt_run(silt_bin, case, work, resolved_options(case, work.tables, stamps),
                         silt_runs[case.name])
    print(f"\n[delta-source] {len(CASES)} configurations, {STAGES} stages in "
          f"{time.monotonic() - started:.1f} s")
    return work, spark_runs, silt_runs


def test_enough_distinct_configurations():
    assert len({c.name for c in CASES}) == len(CASES) >= 15
    assert len({json.dumps([c.table, c.options, c.stages, c.trigger]) for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_batches_match_spark(case, outcomes):
    work, spark_runs, silt_runs = outcomes
    ours, theirs = silt_runs[case.name], spark_runs[case.name]
    root = work.root / case.name
    if case.error:
        assert (case.spark_error or case.error) in theirs.error, theirs.error[:2000]
        assert f"[{case.error}]" in ours.error, ours.error[-3000:]
    else:
        assert not theirs.error, theirs.error[:2000]
        assert not ours.error, ours.error[-3000:]
    # The same batches, planned at the same offsets.
    spark_offsets = checkpoint_offsets(root / "spark-checkpoint")
    silt_offsets = checkpoint_offsets(root / "silt-checkpoint")
    assert silt_offsets == spark_offsets
    assert spark_offsets or case.error or case.name == "starting-latest", "no batch ran"
    # Each batch delivers the same rows.
    got = silt_batches(root / "silt-table")
    assert sorted(got) == sorted(theirs.batches)
    for batch_id in sorted(theirs.batches):
        assert got[batch_id] == theirs.batches[batch_id], f"batch {batch_id}"
    # And the final table holds them all.
    if got:
        final = sorted((r["id"], r["value"], r["part"], r["amount"])
                       for r in read_with_deltalake(root / "silt-table").to_pylist())
        assert final == sorted(r for b in theirs.batches.values() for r in b)


@pytest.mark.parametrize("case", [c for c in CASES if not c.error],
                         ids=[c.name for c in CASES if not c.error])
def test_progress_sources_match_spark(case, outcomes):
    _, spark_runs, silt_runs = outcomes

    def sources(run):
        return [(p["batchId"], [(s["description"], s["startOffset"], s["endOffset"],
                                 s.get("latestOffset"), s["numInputRows"]) for s in p["sources"]])
                for p in run.progress]

    assert sources(silt_runs[case.name]) == sources(spark_runs[case.name])


def test_readchangefeed_is_refused_naming_the_option(silt, tmp_path, outcomes):
    work, _, _ = outcomes
    job = tmp_path / "job.yaml"
    job.write_text(json.dumps({
        "source": {"format": "delta", "options": {"path": str(work.tables["plain"]),
                                                  "readChangeFeed": "true"}},
        "sink": {"format": "delta", "path": str(tmp_path / "t")},
        "checkpointLocation": str(tmp_path / "c")}))
    proc = silt("run", job)
    assert proc.returncode == 2, describe(proc)
    assert "source.options.readChangeFeed" in proc.stderr, describe(proc)
    assert not (tmp_path / "c").exists()
