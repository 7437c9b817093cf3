"""The Delta sink's outputMode complete, checked against pyspark 3.5 +
delta-spark 3.2 and delta-rs.

Complete mode replaces the table every batch: one commit removes every file
of the table and adds the batch's, the aggregation's whole result. Both
engines run the same complete-mode aggregation (count per device) over the
same input files; the reference for the log's shape is Spark's table
(DESCRIBE HISTORY and the remove actions are compared field by field), and
the rows of every silt version are checked against Spark's table at the same
version, read with Spark's `versionAsOf` and with delta-rs.
"""

import json

from helpers import (
    assert_same_rows,
    checkpoint_query_id,
    describe,
    json_file_job,
    log_versions,
    read_commit,
    read_with_deltalake,
    read_with_spark,
    to_json_rows,
    write_input_file,
    write_job,
)

SCHEMA = "id BIGINT, device STRING, temp DOUBLE"

# One file per batch; batch 2 has no rows (its commit rewrites the same
# groups).
BATCHES = [
    [{"id": 1, "device": "a", "temp": 1.5}, {"id": 2, "device": "b", "temp": 2.0},
     {"id": 3, "device": "a", "temp": 3.25}],
    [{"id": 4, "device": "c", "temp": -1.0}, {"id": 5, "device": "a", "temp": 0.5}],
    [],
    [{"id": 6, "device": "b", "temp": 7.0}],
]


def write_batches(input_dir):
    input_dir.mkdir()
    for i, batch in enumerate(BATCHES):
        write_input_file(input_dir / f"batch-{i}.json", [json.dumps(r) for r in batch])


def complete_job(work, input_dir, output_mode="complete"):
    job = json_file_job("complete", input_dir, work / "table", work / "checkpoint", SCHEMA,
                        max_files_per_trigger=1,
                        transform=[{"groupBy": {"keys": ["device"], "agg": ["count(*) AS n"]}}])
    job["sink"]["outputMode"] = output_mode
    return write_job(work / "job.yaml", job)


def spark_reference_table(spark, input_dir, work):
    """What delta-spark writes in complete mode (an aggregation, since Spark
    refuses complete mode without one) over the same files."""
    from pyspark.sql import functions as F

    table = work / "spark-table"
    df = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1)
          .json(str(input_dir)))
    query = (df.groupBy("device").agg(F.count("*").alias("n"))
             .writeStream.format("delta").outputMode("complete")
             .option("checkpointLocation", str(work / "spark-checkpoint"))
             .trigger(availableNow=True).start(str(table)))
    query.awaitTermination()
    return table


def history(spark, table):
    rows = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").collect()
    return {r["version"]: r.asDict() for r in rows}


def test_spark_and_delta_rs_read_every_version_of_a_complete_mode_table(silt, spark, work):
    input_dir = work / "in"
    write_batches(input_dir)
    job = complete_job(work, input_dir)
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    table = work / "table"
    assert log_versions(table) == [0, 1, 2, 3]
    reference = spark_reference_table(spark, input_dir, work)

    for version in range(len(BATCHES)):
        want = to_json_rows(read_with_spark(spark, reference, version=version))
        got_spark = to_json_rows(read_with_spark(spark, table, version=version))
        assert_same_rows(got_spark, want, f"Spark versionAsOf {version}", "device")
        got_rs = to_json_rows(read_with_deltalake(table, version=version))
        assert_same_rows(got_rs, want, f"delta-rs version {version}", "device")


def test_history_and_removes_look_like_delta_sparks_complete_mode(silt, spark, work):
    input_dir = work / "in"
    write_batches(input_dir)
    proc = silt("run", complete_job(work, input_dir))
    assert proc.returncode == 0, describe(proc)
    table = work / "table"
    query_id = checkpoint_query_id(work / "checkpoint")
    reference = spark_reference_table(spark, input_dir, work)

    ours, theirs = history(spark, table), history(spark, reference)
    assert sorted(ours) == sorted(theirs) == [0, 1, 2, 3]
    files_before = 0
    for version in range(4):
        mine, spark_row = ours[version], theirs[version]
        for key in ("operation", "isBlindAppend", "readVersion", "isolationLevel"):
            assert mine[key] == spark_row[key], (version, key, mine[key], spark_row[key])
        assert mine["operation"] == "STREAMING UPDATE"
        assert mine["isBlindAppend"] is False
        assert mine["operationParameters"] == {
            "outputMode": "Complete", "queryId": query_id, "epochId": str(version)}
        assert set(spark_row["operationParameters"]) == set(mine["operationParameters"])
        # delta-spark's STREAMING UPDATE metrics, all present (silt adds numFiles).
        assert set(spark_row["operationMetrics"]) <= set(mine["operationMetrics"]), version
        metrics = mine["operationMetrics"]
        assert metrics["numRemovedFiles"] == str(files_before), version
        assert metrics["numOutputRows"] == spark_row["operationMetrics"]["numOutputRows"], version
        files_before = int(metrics["numAddedFiles"])

        actions = read_commit(table, version)
        assert "commitInfo" in actions[0]
        txns = [a["txn"] for a in actions if "txn" in a]
        assert [(t["appId"], t["version"]) for t in txns] == [(query_id, version)]
        removes = [a["remove"] for a in actions if "remove" in a]
        spark_removes = [a["remove"] for a in read_commit(reference, version) if "remove" in a]
        assert len(removes) == int(metrics["numRemovedFiles"])
        for remove in removes:
            assert remove["dataChange"] is True and remove["extendedFileMetadata"] is True
            assert isinstance(remove["deletionTimestamp"], int) and remove["size"] > 0
        if removes and spark_removes:
            assert set(removes[0]) == set(spark_removes[0]), (removes[0], spark_removes[0])


def test_a_rerun_batch_is_skipped_not_rewritten(silt, spark, work):
    input_dir = work / "in"
    write_batches(input_dir)
    job = complete_job(work, input_dir)
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    table = work / "table"
    before = to_json_rows(read_with_spark(spark, table))
    # A crash after the sink's commit and before commits/3: batch 3 re-runs.
    (work / "checkpoint" / "commits" / "3").unlink()
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    assert log_versions(table) == [0, 1, 2, 3]
    assert (work / "checkpoint" / "commits" / "3").exists()
    assert_same_rows(to_json_rows(read_with_spark(spark, table)), before, "after the re-run",
                     "device")


def test_update_mode_upserts_the_groups_into_a_delta_sink(silt, spark, work):
    """Update mode merges the changed groups on their keys (one MERGE commit
    per batch; test_merge_sink_spark.py compares it batch by batch with
    Spark's foreachBatch MERGE): without a watermark nothing is evicted, so
    the final table equals delta-spark's complete-mode table."""
    input_dir = work / "in"
    write_batches(input_dir)
    proc = silt("run", complete_job(work, input_dir, output_mode="update"))
    assert proc.returncode == 0, describe(proc)
    expected = to_json_rows(read_with_spark(spark, spark_reference_table(spark, input_dir, work)))
    assert_same_rows(to_json_rows(read_with_spark(spark, work / "table")), expected,
                     "update mode", "device")
