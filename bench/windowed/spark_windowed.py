#!/usr/bin/env python3
"""The windowed aggregation of bench/windowed in PySpark, Spark `local[1]`:
the seed's Kafka source, from_json and select list (bench/e2e/spark_job.py),
withWatermark("event_time", "5 minutes"), then
groupBy(window(event_time, "1 minute"), device_id) with count(*),
avg(power) and max(power), appended to a Delta table (append mode: a window
is written once, when the watermark passes its end).

SparkSession settings are the seed's (512 MB driver, 2 shuffle partitions,
loopback driver, in-memory catalog, Delta extensions) except the master,
local[1] (one core, as silt's one query thread), and the default HDFS
state store (Spark 3.5's default; silt's store is RocksDB, whose memory is
bounded by its own settings).

  spark_windowed.py --bootstrap B --topic T --table DIR --checkpoint DIR \\
      --max-offsets N --jars a.jar,b.jar --local-dir DIR
"""

import argparse

import pyspark
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, DoubleType, IntegerType, StringType, StructField,
                               StructType)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--max-offsets", type=int, default=100_000)
    ap.add_argument("--jars", required=True)
    ap.add_argument("--local-dir", required=True)
    args = ap.parse_args()

    spark = (
        pyspark.sql.SparkSession.builder
        .appName("windowed-agg")
        .master("local[1]")
        .config("spark.driver.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "1")
        .config("spark.local.dir", args.local_dir)
        .config("spark.driver.host", "localhost")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.jars", args.jars)
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")

    event_schema = StructType([
        StructField("device_id", StringType(), False),
        StructField("device_type", StringType(), False),
        StructField("ingested_at", StringType(), False),
        StructField("payload", StringType(), True),
    ])
    raw = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", args.bootstrap)
        .option("subscribe", args.topic)
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
    )
    windowed = (
        parsed
        .groupBy(F.window("event_time", "1 minute"), F.col("device_id"))
        .agg(F.count(F.lit(1)).alias("n"), F.avg("power").alias("avg_power"),
             F.max("power").alias("max_power"))
    )
    query = (
        windowed.writeStream.format("delta")
        .outputMode("append")
        .option("checkpointLocation", args.checkpoint)
        .trigger(availableNow=True)
        .start(args.table)
    )
    print(f"[windowed] query started — Spark {spark.version}, id={query.id}", flush=True)
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
