"""Pipelines that start at a Delta table (issue #17): Delta -> Delta through
a stateful step, equal to Spark's query on the same table over the same
batches; and Delta -> Kafka, every row once in the topic."""

import json
import re
import uuid

import pytest

from helpers import describe, kill, read_with_deltalake, start_silt, wait_for, write_job

SCHEMA = "id BIGINT, device STRING, temp DOUBLE"


def append(spark, table, first, count, files=2):
    rows = [(i, f"d{i % 4}", float(i % 17) - 3.5) for i in range(first, first + count)]
    spark.createDataFrame(rows, SCHEMA).repartition(files).write.format("delta").mode(
        "append").save(str(table))


def spark_aggregate(spark, source, target, checkpoint):
    from pyspark.sql import functions as F

    query = (spark.readStream.format("delta").option("maxFilesPerTrigger", 2).load(str(source))
             .where("temp > -3")
             .groupBy("device").agg(F.count("*").alias("n"), F.sum("temp").alias("total"),
                                    F.max("id").alias("last_id"))
             .writeStream.format("delta").outputMode("complete")
             .option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start(str(target)))
    query.awaitTermination()


def silt_aggregate_job(path, source, target, checkpoint):
    return write_job(path, {
        "name": "delta-aggregate",
        "source": {"format": "delta", "options": {"path": str(source), "maxFilesPerTrigger": 2}},
        "transform": [{"where": "temp > -3"},
                      {"groupBy": {"keys": ["device"],
                                   "agg": ["count(*) AS n", "sum(temp) AS total",
                                           "max(id) AS last_id"]}}],
        "sink": {"format": "delta", "path": str(target), "outputMode": "complete"},
        "checkpointLocation": str(checkpoint),
        "trigger": {"availableNow": True},
    })


def table_rows(table):
    return sorted((r["device"], r["n"], round(r["total"], 9), r["last_id"])
                  for r in read_with_deltalake(table).to_pylist())


def test_delta_to_delta_through_an_aggregation_matches_spark(spark, silt, tmp_path):
    source = tmp_path / "source"
    append(spark, source, 0, 40, files=3)
    job = silt_aggregate_job(tmp_path / "job.yaml", source, tmp_path / "silt-table",
                             tmp_path / "silt-checkpoint")
    for round_idx in range(3):
        if round_idx:
            append(spark, source, 40 * round_idx, 40)
        spark_aggregate(spark, source, tmp_path / "spark-table", tmp_path / "spark-checkpoint")
        proc = silt("run", job)
        assert proc.returncode == 0, describe(proc)
        assert table_rows(tmp_path / "silt-table") == table_rows(tmp_path / "spark-table")
    # The same batches: complete mode rewrites the table each batch.
    spark_offsets = sorted((tmp_path / "spark-checkpoint" / "offsets").glob("[0-9]*"))
    silt_offsets = sorted((tmp_path / "silt-checkpoint" / "offsets").glob("[0-9]*"))
    assert [p.read_text().split("\n")[2] for p in silt_offsets] == \
        [p.read_text().split("\n")[2] for p in spark_offsets]


def test_delta_to_kafka_writes_every_row_once(spark, silt, kafka, tmp_path):
    source = tmp_path / "source"
    append(spark, source, 0, 30, files=3)
    append(spark, source, 30, 30)
    topic = f"delta-{uuid.uuid4().hex[:10]}"
    kafka.create_topic(topic, 2)
    job = write_job(tmp_path / "job.yaml", {
        "name": "delta-to-kafka",
        "source": {"format": "delta", "options": {"path": str(source), "maxFilesPerTrigger": 2}},
        "transform": [{"select": ["CAST(id AS STRING) AS key",
                                  "to_json(named_struct('id', id, 'device', device, "
                                  "'temp', temp)) AS value"]}],
        "sink": {"format": "kafka", "options": {"kafka.bootstrap.servers": kafka.bootstrap,
                                                "topic": topic}},
        "checkpointLocation": str(tmp_path / "checkpoint"),
        "trigger": {"availableNow": True},
    })
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    append(spark, source, 60, 20)
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    records = kafka.console_consume(topic, 80)
    got = sorted(json.loads(r["value"])["id"] for r in records)
    assert got == list(range(80))
    assert all(r["key"] == str(json.loads(r["value"])["id"]) for r in records)
    expected = {r["id"]: r for r in read_with_deltalake(source).to_pylist()}
    for r in records:
        value = json.loads(r["value"])
        assert value == {"id": value["id"], "device": expected[value["id"]]["device"],
                         "temp": expected[value["id"]]["temp"]}


def test_a_schema_change_stops_both_engines_and_a_restart_reads_the_new_schema(
        spark, silt, silt_bin, tmp_path):
    # A query reads with the schema the table had when it started, so the
    # change must land while each engine's query is running.
    source = tmp_path / "source"
    append(spark, source, 0, 10)

    def change_schema():
        spark.sql(f"ALTER TABLE delta.`{source}` ADD COLUMNS (site STRING)")
        spark.sql(f"INSERT INTO delta.`{source}` VALUES (100, 'd0', 1.0, 'north')")

    def spark_query(trigger):
        return (spark.readStream.format("delta").load(str(source)).writeStream
                .format("delta").option("mergeSchema", "true")
                .option("checkpointLocation", str(tmp_path / "spark-checkpoint"))
                .trigger(**trigger).start(str(tmp_path / "spark-table")))

    def silt_job(trigger):
        return write_job(tmp_path / "job.yaml", {
            "source": {"format": "delta", "options": {"path": str(source)}},
            "sink": {"format": "delta", "path": str(tmp_path / "silt-table"),
                     "options": {"mergeSchema": "true"}},
            "checkpointLocation": str(tmp_path / "silt-checkpoint"),
            "trigger": trigger,
        })

    # Both engines run, and each has committed its first batch, before the
    # ALTER; then both must stop on the change.
    query = spark_query({"processingTime": "500 milliseconds"})
    query.processAllAvailable()
    proc = start_silt(silt_bin, "run", silt_job({"processingTime": "500 milliseconds"}))
    try:
        assert wait_for(lambda: (tmp_path / "silt-checkpoint" / "commits" / "0").exists(),
                        timeout=60), "silt committed no first batch"
        change_schema()
        try:
            query.awaitTermination(120)
            spark_error = ""
        except Exception as e:
            spark_error = str(e)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if query.isActive:
            query.stop()
        if proc.poll() is None:
            kill(proc)
    spark_version = re.search(r"Detected schema change in version (\d+)", spark_error)
    assert "DELTA_SCHEMA_CHANGED" in spark_error and spark_version, spark_error[:2000]
    assert proc.returncode != 0, stderr
    assert "[DELTA_SCHEMA_CHANGED_WITH_VERSION] Detected schema change in version " \
        f"{spark_version.group(1)}:" in stderr, stderr
    assert "|-- site: string (nullable = true)" in stderr, stderr
    # A restart reads with the table's new schema, in both engines.
    spark_query({"availableNow": True}).awaitTermination()
    proc = silt("run", silt_job({"availableNow": True}))
    assert proc.returncode == 0, describe(proc)

    def rows(table):
        return sorted((r["id"], r.get("site")) for r in read_with_deltalake(table).to_pylist())

    assert rows(tmp_path / "silt-table") == rows(tmp_path / "spark-table")
    assert (100, "north") in rows(tmp_path / "silt-table")
