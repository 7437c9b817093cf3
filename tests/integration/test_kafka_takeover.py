"""Checkpoint takeover between Spark and silt on the seed's Kafka -> Delta
query (issue #17): the seed's PySpark job (Spark's own Kafka connector) runs
some batches and stops; silt runs examples/sensor_stream.yaml on the same
checkpoint and table and continues; then Spark continues on silt's
checkpoint. offsets/ and commits/ form one sequence whose ranges chain, the
table holds every Kafka record exactly once, and every batch is committed
under the one query id the checkpoint holds."""

import json
import uuid
from pathlib import Path

import pytest

from helpers import checkpoint_batches, checkpoint_query_id, describe, log_versions, read_commit
from test_kafka import assert_exactly_once, produce, run_env, seed_job

SENSOR_SCHEMA = ("device_id STRING NOT NULL, device_type STRING NOT NULL, "
                 "ingested_at STRING NOT NULL, payload STRING")


def spark_seed_job(spark, kafka, topic, table, checkpoint):
    """jobs/sensor_stream.py of the seed, with availableNow instead of 60 s."""
    raw = (spark.readStream.format("kafka")
           .option("kafka.bootstrap.servers", kafka.bootstrap)
           .option("subscribe", topic)
           .option("startingOffsets", "earliest")
           .option("maxOffsetsPerTrigger", 1000)
           .load())
    parsed = (raw.selectExpr(f"from_json(CAST(value AS STRING), '{SENSOR_SCHEMA}') AS e")
              .selectExpr(
                  "e.device_id", "e.device_type", "to_timestamp(e.ingested_at) AS event_time",
                  "CAST(get_json_object(e.payload, '$.linkquality') AS INT) AS linkquality",
                  "CAST(get_json_object(e.payload, '$.contact') AS BOOLEAN) AS contact",
                  "CAST(get_json_object(e.payload, '$.battery') AS INT) AS battery",
                  "CAST(get_json_object(e.payload, '$.power') AS DOUBLE) AS power",
                  "CAST(get_json_object(e.payload, '$.voltage') AS DOUBLE) AS voltage",
                  "CAST(get_json_object(e.payload, '$.current') AS DOUBLE) AS current",
                  "CAST(get_json_object(e.payload, '$.energy') AS DOUBLE) AS energy",
                  "get_json_object(e.payload, '$.state') AS plug_state",
                  "e.payload AS raw_payload", "current_timestamp() AS processed_at")
              .withWatermark("event_time", "5 minutes")
              .selectExpr("*", "to_date(event_time) AS event_date"))
    query = (parsed.writeStream.format("delta").outputMode("append")
             .partitionBy("device_type", "event_date")
             .option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start(str(table)))
    query.awaitTermination()


def source_offsets(checkpoint, batch):
    return json.loads((Path(checkpoint) / "offsets" / str(batch)).read_text().splitlines()[2])


def test_spark_silt_spark_continue_the_seed_query(spark, silt, kafka, tmp_path):
    topic = f"t-{uuid.uuid4().hex[:10]}"
    kafka.create_topic(topic, 3)
    job, table, checkpoint = seed_job(tmp_path, kafka, topic)

    produce(silt, kafka, topic, 2500)
    spark_seed_job(spark, kafka, topic, table, checkpoint)
    spark_batches = checkpoint_batches(checkpoint, "commits")
    assert spark_batches == [0, 1, 2]
    query_id = checkpoint_query_id(checkpoint)

    produce(silt, kafka, topic, 1800, start=2500)
    proc = silt("run", job, env=run_env(kafka), timeout=300)
    assert proc.returncode == 0, describe(proc)
    silt_batches = checkpoint_batches(checkpoint, "commits")
    assert silt_batches[:3] == spark_batches and len(silt_batches) > 3, silt_batches
    assert_exactly_once(table, 4300)

    produce(silt, kafka, topic, 1200, start=4300)
    spark_seed_job(spark, kafka, topic, table, checkpoint)
    batches = checkpoint_batches(checkpoint, "commits")
    assert batches[:len(silt_batches)] == silt_batches and len(batches) > len(silt_batches)
    assert checkpoint_batches(checkpoint, "offsets") == batches == list(range(len(batches)))
    assert checkpoint_query_id(checkpoint) == query_id
    assert_exactly_once(table, 5500)

    # The ranges chain: each batch's end offsets only grow, by at most
    # maxOffsetsPerTrigger, and the last one is the topic's end.
    previous = {"0": 0, "1": 0, "2": 0}
    for batch in batches:
        current = source_offsets(checkpoint, batch)[topic]
        assert all(current[p] >= previous[p] for p in previous), (batch, previous, current)
        assert 0 < sum(current[p] - previous[p] for p in previous) <= 1000, batch
        previous = current
    assert {int(p): o for p, o in previous.items()} == kafka.end_offsets(topic)

    # One table commit per batch, each carrying the checkpoint's query id.
    txns = []
    for version in log_versions(table):
        for action in read_commit(table, version):
            if "txn" in action:
                txns.append((action["txn"]["appId"], action["txn"]["version"]))
    assert txns == [(query_id, b) for b in batches]
