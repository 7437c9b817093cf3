#!/usr/bin/env python3
"""The seed's PySpark job (jobs/sensor_stream.py of the seed blog post) for the
end-to-end benchmark: the same SparkSession settings (local[2], 2 shuffle
partitions, driver pinned to loopback, in-memory catalog, Delta extensions,
512 MB driver as the seed's SPARK_DRIVER_MEMORY), the same Kafka source
options, the same from_json schema, select list, watermark, event_date
column and partitioned Delta append. Differences, all forced by the bench:
table and checkpoint on local disk instead of MinIO (no S3A settings), jars
from .cache (scripts/setup-bench.sh) instead of Ivy, and the trigger,
maxOffsetsPerTrigger, topic and group id from the command line.

  spark_job.py --bootstrap B --topic T --table DIR --checkpoint DIR \\
      --trigger availableNow|fastest|"1 second"|"60 seconds" --max-offsets N \\
      --jars a.jar,b.jar [--group G]

Prints "[sensor_stream] ..." lines like the seed; exits after the last batch
with availableNow, otherwise runs until killed.
"""

import argparse
import os
import tempfile

import pyspark
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, DoubleType, IntegerType, StringType, StructField,
                               StructType)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", default="sensor-events")
    ap.add_argument("--group", default="spark-sensor-consumer")
    ap.add_argument("--table", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--trigger", default="60 seconds")
    ap.add_argument("--max-offsets", type=int, default=1000)
    ap.add_argument("--jars", required=True)
    ap.add_argument("--local-dir", default=os.path.join(tempfile.gettempdir(), "spark-local"))
    args = ap.parse_args()

    builder = (
        pyspark.sql.SparkSession.builder
        .appName("sensor-stream")
        .master("local[2]")
        .config("spark.driver.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.local.dir", args.local_dir)
        .config("spark.driver.host", "localhost")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.jars", args.jars)
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    )
    spark = builder.getOrCreate()
    print(f"[sensor_stream] SparkSession ready — Spark {spark.version}", flush=True)
    spark.sparkContext.setLogLevel("WARN")

    event_schema = StructType([
        StructField("device_id", StringType(), False),
        StructField("device_type", StringType(), False),
        StructField("ingested_at", StringType(), False),
        StructField("payload", StringType(), True),
    ])

    raw = (
        spark.readStream
        .format("kafka")
        .option("kafka.bootstrap.servers", args.bootstrap)
        .option("subscribe", args.topic)
        .option("kafka.group.id", args.group)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", args.max_offsets)
        .load()
    )

    parsed = (
        raw
        .select(F.from_json(F.col("value").cast("string"), event_schema).alias("e"))
        .select(
            F.col("e.device_id"),
            F.col("e.device_type"),
            F.to_timestamp("e.ingested_at").alias("event_time"),
            F.get_json_object("e.payload", "$.linkquality").cast(IntegerType()).alias("linkquality"),
            F.get_json_object("e.payload", "$.contact").cast(BooleanType()).alias("contact"),
            F.get_json_object("e.payload", "$.battery").cast(IntegerType()).alias("battery"),
            F.get_json_object("e.payload", "$.power").cast(DoubleType()).alias("power"),
            F.get_json_object("e.payload", "$.voltage").cast(DoubleType()).alias("voltage"),
            F.get_json_object("e.payload", "$.current").cast(DoubleType()).alias("current"),
            F.get_json_object("e.payload", "$.energy").cast(DoubleType()).alias("energy"),
            F.get_json_object("e.payload", "$.state").alias("plug_state"),
            F.col("e.payload").alias("raw_payload"),
            F.current_timestamp().alias("processed_at"),
        )
        .withWatermark("event_time", "5 minutes")
        .withColumn("event_date", F.to_date("event_time"))
    )

    writer = (
        parsed.writeStream
        .format("delta")
        .outputMode("append")
        .option("checkpointLocation", args.checkpoint)
        .partitionBy("device_type", "event_date")
    )
    if args.trigger == "availableNow":
        writer = writer.trigger(availableNow=True)
    elif args.trigger != "fastest":
        writer = writer.trigger(processingTime=args.trigger)
    query = writer.start(args.table)
    print(f"[sensor_stream] Streaming query started — id={query.id}", flush=True)
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
