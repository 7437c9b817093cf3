"""The watermark's mark in the table schema (issue #23 point 5): Spark's
withWatermark puts `spark.watermarkDelayMs` (the delay in ms) in the
event-time column's metadata, the mark follows the column through selects
and aliases, and delta-spark writes it into the table's schemaString. The
same pipeline run by pyspark + delta-spark and by silt must give the same
schema, metadata included."""

import json

from helpers import describe, json_file_job, write_input_file, write_job

LINES = [
    '{"id": 1, "ts": "2026-01-01T00:00:01Z", "v": 1.5}',
    '{"id": 2, "ts": "2026-01-01T00:10:00Z", "v": 2.5}',
]
SCHEMA = "id BIGINT, ts STRING, v DOUBLE"


def schema_of(table):
    for line in (table / "_delta_log" / "00000000000000000000.json").read_text().splitlines():
        action = json.loads(line)
        if "metaData" in action:
            return json.loads(action["metaData"]["schemaString"])
    raise AssertionError(f"no metaData in the first commit of {table}")


def spark_table(spark, work, name, build):
    from pyspark.sql import functions as F  # noqa: F401 - used by `build`

    df = spark.readStream.schema(SCHEMA).json(str(work / "in"))
    query = (build(df).writeStream.format("delta")
             .option("checkpointLocation", str(work / f"{name}-spark-cp"))
             .trigger(availableNow=True).start(str(work / f"{name}-spark")))
    query.awaitTermination()
    return work / f"{name}-spark"


def silt_table(silt, work, name, transform):
    job = json_file_job(name, work / "in", work / f"{name}-silt", work / f"{name}-silt-cp",
                        schema=SCHEMA, transform=transform)
    proc = silt("run", write_job(work / f"{name}.yaml", job))
    assert proc.returncode == 0, describe(proc)
    return work / f"{name}-silt"


def test_event_time_column_carries_the_watermark_delay_as_in_spark(silt, spark, work):
    from pyspark.sql import functions as F

    (work / "in").mkdir()
    write_input_file(work / "in" / "a.json", LINES)

    def build(df):
        df = df.select("id", F.to_timestamp("ts").alias("event_time"), "v")
        df = df.withWatermark("event_time", "5 minutes")
        return (df.select("id", "event_time", F.col("event_time").alias("t2"), "v")
                .withColumn("d", F.to_date("event_time")))

    theirs = schema_of(spark_table(spark, work, "wm", build))
    ours = schema_of(silt_table(silt, work, "wm", [
        {"select": ["id", "to_timestamp(ts) AS event_time", "v"]},
        {"withWatermark": {"eventTime": "event_time", "delayThreshold": "5 minutes"}},
        {"select": ["id", "event_time", "event_time AS t2", "v"]},
        {"withColumn": {"d": "to_date(event_time)"}},
    ]))
    assert ours == theirs
    marked = {f["name"]: f["metadata"] for f in ours["fields"] if f["metadata"]}
    assert marked == {"event_time": {"spark.watermarkDelayMs": 300000},
                      "t2": {"spark.watermarkDelayMs": 300000}}, ours

