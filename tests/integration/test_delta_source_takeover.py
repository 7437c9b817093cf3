"""Checkpoint takeover between Spark and silt on a Delta -> Delta query
(issue #17): Spark runs some batches of a stream from a Delta table, stops;
silt continues on Spark's checkpoint with the same job; then Spark continues
on silt's. Both engines' offsets/ and commits/ entries form one sequence, the
offsets chain (each batch starts where the previous one ended), and the
target holds every source row exactly once, under one query id."""

import json
from collections import Counter
from pathlib import Path

from helpers import checkpoint_batches, checkpoint_query_id, describe, read_commit, \
    log_versions, read_with_deltalake, write_job

SCHEMA = "id BIGINT, name STRING"


def append(spark, table, first, count):
    rows = [(i, f"n{i}") for i in range(first, first + count)]
    spark.createDataFrame(rows, SCHEMA).repartition(2).write.format("delta").mode(
        "append").save(str(table))


def spark_run(spark, source, target, checkpoint):
    query = (spark.readStream.format("delta").option("maxFilesPerTrigger", 3).load(str(source))
             .selectExpr("id", "name", "id * 2 AS doubled")
             .writeStream.format("delta").option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start(str(target)))
    query.awaitTermination()


def silt_job(path, source, target, checkpoint):
    return write_job(path, {
        "name": "takeover",
        "source": {"format": "delta", "options": {"path": str(source), "maxFilesPerTrigger": 3}},
        "transform": [{"select": ["id", "name", "id * 2 AS doubled"]}],
        "sink": {"format": "delta", "path": str(target)},
        "checkpointLocation": str(checkpoint),
        "trigger": {"availableNow": True},
    })


def source_offset(checkpoint, batch):
    return json.loads((Path(checkpoint) / "offsets" / str(batch)).read_text().split("\n")[2])


def test_spark_silt_spark_continue_one_delta_to_delta_query(spark, silt, tmp_path):
    source, target, checkpoint = tmp_path / "source", tmp_path / "target", tmp_path / "checkpoint"
    append(spark, source, 0, 20)
    append(spark, source, 20, 20)
    spark_run(spark, source, target, checkpoint)  # the initial snapshot: 4 files
    spark_batches = checkpoint_batches(checkpoint, "commits")
    assert spark_batches == [0, 1], spark_batches

    for i in range(3):
        append(spark, source, 40 + 20 * i, 20)
    job = silt_job(tmp_path / "job.yaml", source, target, checkpoint)
    proc = silt("run", job, "--progress-json")
    assert proc.returncode == 0, describe(proc)
    silt_batches = checkpoint_batches(checkpoint, "commits")
    assert silt_batches == [0, 1, 2, 3], silt_batches

    for i in range(2):
        append(spark, source, 100 + 20 * i, 20)
    spark_run(spark, source, target, checkpoint)

    batches = checkpoint_batches(checkpoint, "commits")
    assert batches == checkpoint_batches(checkpoint, "offsets") == list(range(len(batches)))
    assert len(batches) > 4
    # The offsets chain: versions and indexes never go back, and every batch
    # planned by one engine is picked up by the other where it ended.
    offsets = [source_offset(checkpoint, b) for b in batches]
    assert len({o["reservoirId"] for o in offsets}) == 1
    keys = [(o["reservoirVersion"], o["index"]) for o in offsets]
    assert keys == sorted(keys) and len(set(keys)) == len(keys), keys
    assert offsets[-1] == {"sourceVersion": 1, "reservoirId": offsets[0]["reservoirId"],
                           "reservoirVersion": 7, "index": -1, "isStartingVersion": False}

    ids = read_with_deltalake(target).column("id").to_pylist()
    assert sorted(ids) == list(range(140)), Counter(ids).most_common(3)
    query_id = checkpoint_query_id(checkpoint)
    txns = [a["txn"] for v in log_versions(target) for a in read_commit(target, v) if "txn" in a]
    assert {t["appId"] for t in txns} == {query_id}
    assert sorted(t["version"] for t in txns) == batches


def test_silt_refuses_a_checkpoint_of_another_table(spark, silt, tmp_path):
    first, other = tmp_path / "first", tmp_path / "other"
    append(spark, first, 0, 10)
    append(spark, other, 0, 10)
    target, checkpoint = tmp_path / "target", tmp_path / "checkpoint"
    spark_run(spark, first, target, checkpoint)
    proc = silt("run", silt_job(tmp_path / "job.yaml", other, target, checkpoint))
    assert proc.returncode != 0, describe(proc)
    assert "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE" in proc.stderr, describe(proc)


def test_silt_refuses_the_state_of_a_spark_stateful_query(spark, silt, tmp_path):
    """A stateful Spark query's checkpoint holds Spark's state store files
    (state/0/0/1.delta, ...), which silt cannot read: silt refuses the
    checkpoint at start, naming the state directory, whether its job is the
    same aggregation or stateless, and writes nothing (no offsets/, no
    table version)."""
    source = tmp_path / "source"
    append(spark, source, 0, 10)
    target, checkpoint = tmp_path / "target", tmp_path / "checkpoint"
    query = (spark.readStream.format("delta").load(str(source))
             .groupBy((spark_col("id") % 3).alias("k")).count()
             .writeStream.format("delta").outputMode("complete")
             .option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start(str(target)))
    query.awaitTermination()
    state_files = sorted(p.relative_to(checkpoint).as_posix()
                         for p in (checkpoint / "state").rglob("*") if p.is_file())
    assert any(f.startswith("state/0/0/") for f in state_files), state_files
    append(spark, source, 10, 5)
    offsets_before = sorted((checkpoint / "offsets").iterdir())
    versions_before = log_versions(target)
    for name, transform, mode in (
            ("same aggregation", [{"groupBy": {"keys": ["id % 3 AS k"], "agg": ["count(*) AS count"]}}],
             "complete"),
            ("stateless", [{"select": ["id", "name"]}], "append")):
        job = write_job(tmp_path / f"{mode}.yaml", {
            "name": "takeover-state",
            "source": {"format": "delta", "options": {"path": str(source)}},
            "transform": transform,
            "sink": {"format": "delta", "path": str(target), "outputMode": mode},
            "checkpointLocation": str(checkpoint),
            "trigger": {"availableNow": True},
        })
        proc = silt("run", job)
        assert proc.returncode == 2, f"{name}: {describe(proc)}"
        assert f"{checkpoint}/state/0 holds state that silt did not write" in proc.stderr, \
            f"{name}: {describe(proc)}"
        assert "new checkpointLocation" in proc.stderr, describe(proc)
    assert sorted((checkpoint / "offsets").iterdir()) == offsets_before
    assert log_versions(target) == versions_before


def spark_col(name):
    from pyspark.sql import functions as F
    return F.col(name)
