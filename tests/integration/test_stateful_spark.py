"""Differential tests of stateful streaming (issue #15): silt against
pyspark 3.5 + delta-spark 3.2, batch by batch.

Each case is one row of CASES: a name, the input batches, the pyspark job (a
function from the prepared streaming DataFrame to the result), the silt
transform steps (job-file YAML, the same job written in silt's syntax), and
the output mode. For every case:

1. The batches are written as JSON-lines files into one input directory, one
   file per batch, with increasing modification times (helpers.write_input_file).
   Both engines read that directory with `maxFilesPerTrigger: 1` and trigger
   `availableNow`, so batch N is file N in both (plus the no-data batch Spark
   runs at the end when the watermark moved, which silt must run too).
   Both start with the same select, PREP: `CAST(ts AS TIMESTAMP) AS ts, id,
   device, site, temp` over SCHEMA.
2. Spark runs the job into a Delta table (always: it proves the reference
   works, and a case's optional `check` asserts that the input exercises what
   the case is named for, e.g. that rows were dropped by the watermark).
3. silt runs the same job through the binary (`silt run --progress-json`)
   into its own table; any silt failure is a real failure.
4. test_tables_match_spark: both tables have the same versions (each batch is
   one commit in both, so version N is batch N), and the rows at every
   version (time travel, read with delta-rs from both tables) are equal as
   multisets, as are the final tables and their schemas (column names as
   Spark names them: `window`, `session_window`, aggregate aliases; types;
   nullability is ignored). Values are normalised: doubles to 12 significant
   digits, timestamps to UTC ISO text, every array sorted (the only arrays
   are collect_set results, whose order is unspecified).
5. test_progress_matches_spark: per batch, Spark's `query.recentProgress`
   stateOperators (numRowsTotal, numRowsUpdated, numRowsDroppedByWatermark,
   for every operator in Spark's order: operator 0, the last stateful step,
   first) equal silt's progress JSON.

Cases with two or three stateful steps run Spark 3.5's chained stateful
operators (spark.sql.streaming.statefulOperator.allowMultiple, its default):
each operator's late rows, state and emitted rows are compared through the
same two tests. test_refused_like_spark runs the combinations Spark refuses
(REFUSED) in both: Spark's message must appear in silt's error, and silt
must leave no table or checkpoint behind.

Both tests of a case share one run of each engine. The module fixture
`spark_runs` runs the Spark side of every selected case up front, in the
session-wide `spark` session (conftest.py: one JVM for the file), several
streaming queries at a time (SILT_STATEFUL_SPARK_WAVE, default 6: a batch's
time is mostly latency, so concurrent queries share the two cores well); silt
runs once per case, when its first test needs it. Inputs are small (<= 50
rows, 3-5 batches) because every Spark batch costs seconds.

Adding a case: append a Case to CASES; keep the Spark and silt sides written
independently (the Spark side in the DataFrame API, the silt side in YAML),
so that the comparison checks that the two spellings mean the same job.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest

from helpers import describe, log_versions, run_silt, snapshot, write_input_file

SCHEMA = "id BIGINT, ts STRING, device STRING, site STRING, temp DOUBLE"
PREP_SILT = {"select": ["CAST(ts AS TIMESTAMP) AS ts", "id", "device", "site", "temp"]}
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
STATE_FIELDS = ("numRowsTotal", "numRowsUpdated", "numRowsDroppedByWatermark")


def ev(id_, sec, device="d1", temp=None, site="s1"):
    """An input row `sec` seconds after T0 (device/temp/site None = null)."""
    row = {"id": id_, "ts": (T0 + dt.timedelta(seconds=sec)).strftime("%Y-%m-%d %H:%M:%S")}
    if device is not None:
        row["device"] = device
    if site is not None:
        row["site"] = site
    if temp is not None:
        row["temp"] = float(temp)
    return row


def prep(df):
    from pyspark.sql import functions as F

    return df.select(F.col("ts").cast("timestamp").alias("ts"), "id", "device", "site", "temp")


@dataclass
class SparkRun:
    table: Path
    batches: int  # input files
    progress: list  # one entry per executed batch, by batchId
    seconds: float

    def dropped(self):
        return sum(op["numRowsDroppedByWatermark"] for p in self.progress
                   for op in p.get("stateOperators", []))


@dataclass
class SiltRun:
    table: Path
    proc: object
    progress: list

    def assert_ran(self):
        assert self.proc.returncode == 0, describe(self.proc)


@dataclass
class Case:
    name: str
    batches: list
    spark: Callable
    silt: str
    mode: str = "append"
    check: Optional[Callable[[SparkRun], None]] = None


# --------------------------------------------------------------------------
# Inputs (seconds after T0; watermark delay 10 s unless a case says otherwise)

# Tumbling 1-minute windows over ~3 minutes, two devices.
TUMBLE = [
    [ev(1, 5, "d1", 20.0), ev(2, 12, "d2", 21.5), ev(3, 30, "d1", 19.0), ev(4, 45, "d2", 22.0)],
    [ev(5, 62, "d1", 23.0), ev(6, 70, "d2", 18.5), ev(7, 75, "d1", 20.5)],
    [ev(8, 130, "d1", 24.0), ev(9, 128, "d2", 25.5), ev(10, 140, "d2", 17.0)],
    [ev(11, 185, "d1", 21.0), ev(12, 190, "d2", 19.5)],
]

# Rows behind the watermark. Spark drops a row when its window (or, for
# deduplication, its event time) ends at or before the watermark of the
# batch before (eventTimeWatermarkForLateEvents); the current batch's
# watermark only evicts state. Watermark = max event time so far - 10 s.
LATE = [
    [ev(1, 5, "d1", 1.0), ev(2, 50, "d2", 2.0), ev(3, 70, "d1", 3.0)],  # wm -> 60
    [ev(4, 80, "d2", 4.0), ev(5, 85, "d1", 5.0)],  # [0, 60) evicted; wm -> 75
    [ev(6, 30, "d1", 6.0), ev(7, 55, "d2", 7.0),  # [0, 60) ends <= 60: dropped
     ev(8, 100, "d1", 8.0), ev(9, 150, "d2", 9.0)],  # wm -> 140
    [ev(10, 65, "d1", 10.0), ev(11, 10, "d2", 11.0), ev(12, 155, "d1", 12.0)],  # 10 dropped
]

# A row older than the newest one but within the delay: still counted.
WITHIN_DELAY = [
    [ev(1, 50, "d1", 1.0), ev(2, 20, "d2", 2.0)],  # wm -> 40
    [ev(3, 45, "d1", 3.0), ev(4, 58, "d2", 4.0)],  # 45 >= 40: accepted; wm -> 48
    [ev(5, 125, "d1", 5.0)],  # wm -> 115: [0, 60) closes
    [ev(6, 190, "d2", 6.0)],
]

# Session windows with a 30 s gap; sessions grow across batches.
SESSIONS = [
    [ev(1, 0, "d1", 1.0), ev(2, 10, "d1", 2.0), ev(3, 5, "d2", 3.0), ev(4, 50, "d1", 4.0)],
    [ev(5, 75, "d1", 5.0), ev(6, 20, "d2", 6.0), ev(7, 100, "d2", 7.0)],
    [ev(8, 160, "d1", 8.0), ev(9, 170, "d2", 9.0)],
    [ev(10, 250, "d1", 10.0)],
]

# Duplicated ids, some exact duplicate rows, some repeats much later.
DUPES = [
    [ev(1, 5, "d1", 1.0), ev(2, 10, "d2", 2.0), ev(1, 5, "d1", 1.0), ev(3, 20, "d1", 3.0)],
    [ev(2, 10, "d2", 2.0), ev(4, 40, "d2", 4.0), ev(5, 45, "d1", 5.0), ev(1, 12, "d1", 9.0)],
    [ev(1, 5, "d1", 1.0), ev(6, 110, "d2", 6.0), ev(6, 111, "d2", 6.5), ev(4, 104, "d2", 4.0)],
    [ev(7, 200, "d1", 7.0), ev(3, 205, "d1", 3.0), ev(6, 110, "d2", 6.0)],
]

# Late rows, some of them duplicated (the deduplication before the
# watermark passes one of each on; the aggregation drops it as late).
LATE_AND_DUPES = [
    [ev(1, 5, "d1", 1.0), ev(2, 50, "d2", 2.0), ev(3, 70, "d1", 3.0), ev(1, 5, "d1", 1.0)],
    [ev(4, 80, "d2", 4.0), ev(5, 85, "d1", 5.0), ev(2, 50, "d2", 2.0)],  # wm -> 75
    [ev(6, 30, "d1", 6.0), ev(7, 55, "d2", 7.0), ev(6, 30, "d1", 6.0),
     ev(8, 100, "d1", 8.0), ev(9, 150, "d2", 9.0)],  # 6, 7 late at the aggregation
    [ev(10, 65, "d1", 10.0), ev(11, 10, "d2", 11.0), ev(3, 70, "d1", 3.0),
     ev(12, 155, "d1", 12.0)],
]

# Plain columns, two sites, across batches (for complete mode).
SITES = [
    [ev(1, 1, "d1", 1.0, "s1"), ev(2, 2, "d2", 2.0, "s1"), ev(3, 3, "d1", 3.0, "s2")],
    [ev(4, 4, "d3", 4.0, "s2"), ev(5, 5, "d1", 5.0, "s1")],
    [ev(6, 6, "d2", 6.0, "s2"), ev(7, 7, "d2", 7.0, "s1"), ev(8, 8, "d3", 8.0, "s2")],
]

# Nulls in the keys (device, site) and the values (temp).
NULLS = [
    [ev(1, 5, None, 1.0), ev(2, 10, "d1", None), ev(3, 15, "d1", 3.0, None)],
    [ev(4, 70, None, None), ev(5, 80, "d2", 5.0), ev(6, 85, None, 6.0, None)],
    [ev(7, 130, "d1", None), ev(8, 135, None, 8.0)],
    [ev(9, 200, "d2", None)],
]

# Repeated values per device, for first/last/stddev/collect_set.
VALUES = [
    [ev(1, 1, "d1", 1.0), ev(2, 2, "d1", 2.0), ev(3, 3, "d2", 5.0)],
    [ev(4, 4, "d1", 2.0), ev(5, 5, "d2", 5.0), ev(6, 6, "d2", -1.5)],
    [ev(7, 7, "d1", 4.0), ev(8, 8, "d3", 0.0)],
    [ev(9, 9, "d2", 10.25), ev(10, 10, "d1", 1.0)],
]


# --------------------------------------------------------------------------
# Spark jobs (pyspark API) and the checks that the input means what the case says


def F():
    from pyspark.sql import functions

    return functions


def wm(df, delay="10 seconds"):
    return df.withWatermark("ts", delay)


def some_rows_dropped(run: SparkRun):
    assert run.dropped() > 0, f"no row was dropped by the watermark: {run.progress}"


def no_rows_dropped(run: SparkRun):
    assert run.dropped() == 0, f"rows were dropped by the watermark: {run.progress}"


def dropped_by_operator_0_only(run: SparkRun):
    """Rows were dropped as late, all by operator 0 (the last stateful step)."""
    dropped = [sum(p["stateOperators"][i]["numRowsDroppedByWatermark"] for p in run.progress)
               for i in range(len(run.progress[0]["stateOperators"]))]
    assert dropped[0] > 0 and sum(dropped[1:]) == 0, dropped


def chained_windows(df):
    """Spark's chained time windows: 30-second counts per device, then per
    minute over window_time(window)."""
    counts = df.groupBy(F().window("ts", "30 seconds"), "device").agg(F().count("*").alias("n"))
    return counts.groupBy(F().window(F().window_time(counts.window), "1 minute")).agg(
        F().sum("n").alias("n"), F().count("*").alias("windows"))


def ends_with_a_no_data_batch(run: SparkRun):
    assert len(run.progress) == run.batches + 1, [p["numInputRows"] for p in run.progress]
    assert run.progress[-1]["numInputRows"] == 0


WATERMARK = "- withWatermark: { eventTime: ts, delayThreshold: 10 seconds }\n"


def agg_yaml(keys, aggs, watermark=True):
    """The silt steps for [withWatermark] + groupBy (keys/aggs as Spark SQL)."""
    text = WATERMARK if watermark else ""
    text += "- groupBy:\n"
    text += "    keys: [ " + ", ".join(json.dumps(k) for k in keys) + " ]\n"
    text += "    agg: [ " + ", ".join(json.dumps(a) for a in aggs) + " ]\n"
    return text


CASES = [
    # ---- tumbling windows, append (rows appear when the watermark closes a window)
    Case("tumble_count_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().count("*").alias("n")),
         agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n"])),
    Case("tumble_sum_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().sum("temp").alias("total")),
         agg_yaml(["window(ts, '1 minute')", "device"], ["sum(temp) AS total"])),
    Case("tumble_avg_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().avg("temp").alias("avg_temp")),
         agg_yaml(["window(ts, '1 minute')", "device"], ["avg(temp) AS avg_temp"])),
    Case("tumble_min_max_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().min("temp").alias("lo"), F().max("temp").alias("hi")),
         agg_yaml(["window(ts, '1 minute')", "device"], ["min(temp) AS lo", "max(temp) AS hi"])),
    Case("tumble_window_only_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"))
         .agg(F().count("*").alias("n"), F().sum("id").alias("ids")),
         agg_yaml(["window(ts, '1 minute')"], ["count(*) AS n", "sum(id) AS ids"])),
    Case("tumble_30s_two_keys_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "30 seconds"), "device", "site")
         .agg(F().count("*").alias("n")),
         agg_yaml(["window(ts, '30 seconds')", "device", "site"], ["count(*) AS n"])),
    # ---- tumbling windows, complete
    Case("tumble_all_aggs_complete", TUMBLE,
         lambda df: df.groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().count("*").alias("n"), F().sum("temp").alias("total"),
              F().avg("temp").alias("avg_temp"), F().min("temp").alias("lo"),
              F().max("temp").alias("hi")),
         agg_yaml(["window(ts, '1 minute')", "device"],
                  ["count(*) AS n", "sum(temp) AS total", "avg(temp) AS avg_temp",
                   "min(temp) AS lo", "max(temp) AS hi"], watermark=False),
         mode="complete"),
    Case("tumble_count_complete_with_watermark", LATE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().count("*").alias("n")),
         agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n"]),
         mode="complete"),
    # ---- sliding windows
    Case("sliding_count_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute", "30 seconds"), "device")
         .agg(F().count("*").alias("n")),
         agg_yaml(["window(ts, '1 minute', '30 seconds')", "device"], ["count(*) AS n"])),
    Case("sliding_avg_complete", TUMBLE,
         lambda df: df.groupBy(F().window("ts", "1 minute", "30 seconds"), "device")
         .agg(F().avg("temp").alias("avg_temp")),
         agg_yaml(["window(ts, '1 minute', '30 seconds')", "device"], ["avg(temp) AS avg_temp"],
                  watermark=False),
         mode="complete"),
    Case("sliding_sum_append_late_rows", LATE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute", "30 seconds"), "device")
         .agg(F().sum("temp").alias("total")),
         agg_yaml(["window(ts, '1 minute', '30 seconds')", "device"], ["sum(temp) AS total"]),
         check=some_rows_dropped),
    # ---- session windows
    Case("session_count_append", SESSIONS,
         lambda df: wm(df).groupBy(F().session_window("ts", "30 seconds"), "device")
         .agg(F().count("*").alias("n")),
         agg_yaml(["session_window(ts, '30 seconds')", "device"], ["count(*) AS n"])),
    Case("session_complete", SESSIONS,
         lambda df: df.groupBy(F().session_window("ts", "30 seconds"), "device")
         .agg(F().count("*").alias("n"), F().max("temp").alias("hi")),
         agg_yaml(["session_window(ts, '30 seconds')", "device"],
                  ["count(*) AS n", "max(temp) AS hi"], watermark=False),
         mode="complete"),
    Case("session_sum_append_merging", SESSIONS,
         lambda df: wm(df).groupBy(F().session_window("ts", "30 seconds"), "device")
         .agg(F().sum("temp").alias("total"), F().min("id").alias("first_id")),
         agg_yaml(["session_window(ts, '30 seconds')", "device"],
                  ["sum(temp) AS total", "min(id) AS first_id"])),
    Case("session_dynamic_gap_append", SESSIONS,
         lambda df: wm(df).groupBy(
             F().session_window("ts", F().when(F().col("device") == "d1", "10 seconds")
                                .otherwise("40 seconds")), "device")
         .agg(F().count("*").alias("n"), F().sum("temp").alias("total")),
         agg_yaml(["session_window(ts, CASE WHEN device = 'd1' THEN '10 seconds' "
                   "ELSE '40 seconds' END)", "device"], ["count(*) AS n", "sum(temp) AS total"])),
    # An interval-typed dynamic gap (CalendarIntervalType, as Spark takes it).
    Case("session_interval_gap_append", SESSIONS,
         lambda df: wm(df).groupBy(
             F().session_window("ts", F().expr(
                 "CASE WHEN device = 'd1' THEN CAST('10 seconds' AS INTERVAL) "
                 "ELSE CAST(concat(CAST(40 AS STRING), ' seconds') AS INTERVAL) END")), "device")
         .agg(F().count("*").alias("n"), F().sum("temp").alias("total")),
         agg_yaml(["session_window(ts, CASE WHEN device = 'd1' THEN CAST('10 seconds' AS INTERVAL) "
                   "ELSE CAST(concat(CAST(40 AS STRING), ' seconds') AS INTERVAL) END)", "device"],
                  ["count(*) AS n", "sum(temp) AS total"])),
    Case("session_bridged_across_batches_append", [
        [ev(1, 0, "d1", 1.0), ev(2, 50, "d1", 2.0), ev(3, 5, "d2", 4.0)],  # wm -> 40
        [ev(4, 25, "d1", 8.0)],  # [25, 55) bridges [0, 30) and [50, 80)
        [ev(5, 120, "d1", 16.0), ev(6, 118, "d2", 32.0)],  # wm -> 110: [0, 80) closes
        [ev(7, 300, "d2", 64.0)],
    ], lambda df: wm(df).groupBy(F().session_window("ts", "30 seconds"), "device")
        .agg(F().count("*").alias("n"), F().sum("temp").alias("total"),
             F().max("id").alias("last_id")),
        agg_yaml(["session_window(ts, '30 seconds')", "device"],
                 ["count(*) AS n", "sum(temp) AS total", "max(id) AS last_id"])),
    Case("session_complete_with_watermark", LATE,
         lambda df: wm(df).groupBy(F().session_window("ts", "30 seconds"), "device")
         .agg(F().count("*").alias("n")),
         agg_yaml(["session_window(ts, '30 seconds')", "device"], ["count(*) AS n"]),
         mode="complete", check=some_rows_dropped),  # late sessions drop in complete mode too
    # ---- watermark behaviour
    Case("late_rows_dropped_append", LATE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().count("*").alias("n"), F().sum("temp").alias("total")),
         agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n", "sum(temp) AS total"]),
         check=some_rows_dropped),
    Case("late_row_within_delay_accepted", WITHIN_DELAY,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().count("*").alias("n")),
         agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n"]),
         check=no_rows_dropped),
    Case("late_rows_session_append", LATE,
         lambda df: wm(df).groupBy(F().session_window("ts", "30 seconds"), "device")
         .agg(F().count("*").alias("n")),
         agg_yaml(["session_window(ts, '30 seconds')", "device"], ["count(*) AS n"]),
         check=some_rows_dropped),
    Case("no_data_batch_closes_last_window", WITHIN_DELAY,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"))
         .agg(F().count("*").alias("n")),
         agg_yaml(["window(ts, '1 minute')"], ["count(*) AS n"]),
         check=ends_with_a_no_data_batch),
    Case("one_batch_closes_several_windows", [
        [ev(1, 5, "d1", 1.0), ev(2, 65, "d1", 2.0), ev(3, 125, "d2", 3.0)],
        [ev(4, 130, "d1", 4.0)],
        [ev(5, 400, "d2", 5.0)],  # wm -> 390: closes [120, 180)
    ], lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
        .agg(F().count("*").alias("n")),
        agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n"])),
    Case("long_delay_keeps_windows_open", LATE,
         lambda df: wm(df, "2 minutes").groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().count("*").alias("n")),
         "- withWatermark: { eventTime: ts, delayThreshold: 2 minutes }\n"
         + agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n"], watermark=False),
         check=no_rows_dropped),
    # ---- deduplication
    Case("dedupe_without_watermark", DUPES,
         lambda df: df.dropDuplicates(["id"]),
         "- dropDuplicates: [ id ]\n"),
    Case("dedupe_two_columns_without_watermark", DUPES,
         lambda df: df.dropDuplicates(["id", "device"]),
         "- dropDuplicates: [ id, device ]\n"),
    Case("dedupe_with_event_time", DUPES,
         lambda df: wm(df).dropDuplicates(["id", "ts"]),
         WATERMARK + "- dropDuplicates: [ id, ts ]\n",
         check=some_rows_dropped),
    Case("dedupe_within_watermark", DUPES,
         lambda df: wm(df).dropDuplicatesWithinWatermark(["id"]),
         WATERMARK + "- dropDuplicatesWithinWatermark: [ id ]\n"),
    Case("dedupe_within_watermark_long_delay", DUPES,
         lambda df: wm(df, "5 minutes").dropDuplicatesWithinWatermark(["id", "device"]),
         "- withWatermark: { eventTime: ts, delayThreshold: 5 minutes }\n"
         "- dropDuplicatesWithinWatermark: [ id, device ]\n"),
    Case("dedupe_then_count_complete", DUPES,
         lambda df: df.dropDuplicates(["id"]).groupBy("device").agg(F().count("*").alias("n")),
         "- dropDuplicates: [ id ]\n" + agg_yaml(["device"], ["count(*) AS n"], watermark=False),
         mode="complete"),
    # ---- two or more stateful steps (Spark 3.5's chained stateful operators)
    Case("dedupe_then_window_count_append", DUPES,
         lambda df: wm(df).dropDuplicates(["id"]).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().count("*").alias("n")),
         WATERMARK + "- dropDuplicates: [ id ]\n"
         + agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n"], watermark=False),
         check=some_rows_dropped),
    Case("dedupe_within_watermark_then_window_sum_append", DUPES,
         lambda df: wm(df).dropDuplicatesWithinWatermark(["id"])
         .groupBy(F().window("ts", "1 minute"))
         .agg(F().count("*").alias("n"), F().sum("temp").alias("total")),
         WATERMARK + "- dropDuplicatesWithinWatermark: [ id ]\n"
         + agg_yaml(["window(ts, '1 minute')"], ["count(*) AS n", "sum(temp) AS total"],
                    watermark=False)),
    # Spark's chained time windows (the programming guide's example): the
    # second window groups the first one's rows by window_time(window).
    Case("chained_time_windows_append", TUMBLE,
         lambda df: chained_windows(wm(df)),
         agg_yaml(["window(ts, '30 seconds')", "device"], ["count(*) AS n"])
         + agg_yaml(["window(window_time(window), '1 minute')"],
                    ["sum(n) AS n", "count(*) AS windows"], watermark=False),
         check=ends_with_a_no_data_batch),
    Case("sql_group_by_over_group_by_append", LATE,
         lambda df: chained_windows(wm(df)),
         WATERMARK + '- sql: "SELECT window(window_time(window), \'1 minute\') AS window, '
         "sum(n) AS n, count(*) AS windows FROM (SELECT window, device, count(*) AS n FROM input "
         "GROUP BY window(ts, '30 seconds'), device) AS w "
         "GROUP BY window(window_time(window), '1 minute')\"\n",
         check=some_rows_dropped),
    # The watermark comes after the deduplication: late rows pass it and are
    # dropped (and counted) by the aggregation after the watermark.
    Case("late_rows_between_operators", LATE_AND_DUPES,
         lambda df: df.dropDuplicates(["id"]).withWatermark("ts", "10 seconds")
         .groupBy(F().window("ts", "1 minute"), "device").agg(F().count("*").alias("n")),
         "- dropDuplicates: [ id ]\n"
         + agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n"]),
         check=dropped_by_operator_0_only),
    Case("no_data_batch_closes_downstream_window", WITHIN_DELAY,
         lambda df: wm(df).dropDuplicates(["id", "ts"]).groupBy(F().window("ts", "1 minute"))
         .agg(F().count("*").alias("n"), F().sum("temp").alias("total")),
         WATERMARK + "- dropDuplicates: [ id, ts ]\n"
         + agg_yaml(["window(ts, '1 minute')"], ["count(*) AS n", "sum(temp) AS total"],
                    watermark=False),
         check=ends_with_a_no_data_batch),
    # A deduplication after a windowed aggregation: what the aggregation
    # emits at the end of a batch runs through the deduplication in the
    # same batch.
    Case("window_count_then_dedupe_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "30 seconds"), "device")
         .agg(F().count("*").alias("n")).dropDuplicates(["device", "n"]),
         agg_yaml(["window(ts, '30 seconds')", "device"], ["count(*) AS n"])
         + "- dropDuplicates: [ device, n ]\n"),
    Case("dedupe_then_count_then_dedupe_complete", DUPES,
         lambda df: wm(df).dropDuplicates(["id"]).groupBy("device")
         .agg(F().count("*").alias("n")).dropDuplicates(["n"]),
         WATERMARK + "- dropDuplicates: [ id ]\n"
         + agg_yaml(["device"], ["count(*) AS n"], watermark=False)
         + "- dropDuplicates: [ n ]\n",
         mode="complete"),
    # ---- global aggregates (no keys), complete
    Case("global_count_complete", TUMBLE,
         lambda df: df.groupBy().agg(F().count("*").alias("n")),
         agg_yaml([], ["count(*) AS n"], watermark=False), mode="complete"),
    Case("global_aggs_complete", TUMBLE,
         lambda df: df.groupBy().agg(F().count("*").alias("n"), F().sum("temp").alias("total"),
                                     F().avg("temp").alias("avg_temp"),
                                     F().min("ts").alias("first_ts"),
                                     F().max("ts").alias("last_ts")),
         agg_yaml([], ["count(*) AS n", "sum(temp) AS total", "avg(temp) AS avg_temp",
                       "min(ts) AS first_ts", "max(ts) AS last_ts"], watermark=False),
         mode="complete"),
    Case("global_count_complete_with_empty_batch", [TUMBLE[0], [], TUMBLE[1]],
         lambda df: df.groupBy().agg(F().count("*").alias("n"), F().max("id").alias("max_id")),
         agg_yaml([], ["count(*) AS n", "max(id) AS max_id"], watermark=False), mode="complete"),
    # ---- plain columns, complete
    Case("groupby_device_complete", SITES,
         lambda df: df.groupBy("device").agg(F().count("*").alias("n"),
                                             F().sum("temp").alias("total")),
         agg_yaml(["device"], ["count(*) AS n", "sum(temp) AS total"], watermark=False),
         mode="complete"),
    Case("groupby_device_site_complete", SITES,
         lambda df: df.groupBy("device", "site").agg(F().avg("temp").alias("avg_temp"),
                                                     F().max("id").alias("max_id")),
         agg_yaml(["device", "site"], ["avg(temp) AS avg_temp", "max(id) AS max_id"],
                  watermark=False),
         mode="complete"),
    # ---- a sql step with GROUP BY / HAVING (Spark: the same query in the DataFrame API)
    Case("sql_group_by_having_complete", SITES,
         lambda df: df.groupBy("device").agg(F().count("*").alias("n"),
                                             (F().sum("temp") / F().count("*")).alias("mean"))
         .where("n > 1"),
         '- sql: "SELECT device, count(*) AS n, sum(temp) / count(*) AS mean FROM input '
         'WHERE temp IS NOT NULL OR temp IS NULL GROUP BY device HAVING count(*) > 1"\n',
         mode="complete"),
    Case("sql_group_by_window_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().max("temp").alias("hottest")).select("window", "device", "hottest"),
         WATERMARK + '- sql: "SELECT window, device, max(temp) AS hottest FROM input '
         "GROUP BY window(ts, '1 minute'), device\"\n"),
    # ---- nulls
    Case("null_keys_complete", NULLS,
         lambda df: df.groupBy("device", "site").agg(F().count("*").alias("n")),
         agg_yaml(["device", "site"], ["count(*) AS n"], watermark=False), mode="complete"),
    Case("null_values_complete", NULLS,
         lambda df: df.groupBy("device").agg(
             F().count("*").alias("n"), F().count("temp").alias("n_temp"),
             F().sum("temp").alias("total"), F().avg("temp").alias("avg_temp"),
             F().min("temp").alias("lo")),
         agg_yaml(["device"], ["count(*) AS n", "count(temp) AS n_temp", "sum(temp) AS total",
                               "avg(temp) AS avg_temp", "min(temp) AS lo"], watermark=False),
         mode="complete"),
    Case("null_keys_window_append", NULLS,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"), "device")
         .agg(F().count("*").alias("n"), F().max("temp").alias("hi")),
         agg_yaml(["window(ts, '1 minute')", "device"], ["count(*) AS n", "max(temp) AS hi"])),
    # ---- other aggregate functions
    Case("first_last_complete", VALUES,
         lambda df: df.groupBy("device").agg(F().first("temp").alias("first_temp"),
                                             F().last("temp").alias("last_temp")),
         agg_yaml(["device"], ["first(temp) AS first_temp", "last(temp) AS last_temp"],
                  watermark=False),
         mode="complete"),
    Case("stddev_complete", VALUES,
         lambda df: df.groupBy("device").agg(F().stddev("temp").alias("sd"),
                                             F().stddev_pop("temp").alias("sd_pop")),
         agg_yaml(["device"], ["stddev(temp) AS sd", "stddev_pop(temp) AS sd_pop"],
                  watermark=False),
         mode="complete"),
    Case("collect_set_complete", VALUES,
         lambda df: df.groupBy("device").agg(F().collect_set("temp").alias("temps")),
         agg_yaml(["device"], ["collect_set(temp) AS temps"], watermark=False),
         mode="complete"),
    Case("collect_set_window_append", TUMBLE,
         lambda df: wm(df).groupBy(F().window("ts", "1 minute"))
         .agg(F().collect_set("device").alias("devices")),
         agg_yaml(["window(ts, '1 minute')"], ["collect_set(device) AS devices"])),
]


# --------------------------------------------------------------------------
# Running the two engines


# Spark queries run concurrently in waves of this many (one JVM, several
# streaming queries): most of a batch's time is latency, not CPU.
SPARK_WAVE = int(os.environ.get("SILT_STATEFUL_SPARK_WAVE", "6"))


def write_inputs(case: Case, input_dir: Path):
    input_dir.mkdir()
    assert 3 <= len(case.batches) <= 5 and sum(map(len, case.batches)) <= 50, case.name
    for i, batch in enumerate(case.batches):
        write_input_file(input_dir / f"batch-{i:02d}.json", [json.dumps(r) for r in batch])


def start_spark(spark, case: Case, input_dir: Path, work: Path):
    df = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1)
          .json(str(input_dir)))
    return (case.spark(prep(df)).writeStream.format("delta").outputMode(case.mode)
            .queryName(case.name)
            .option("checkpointLocation", str(work / "spark-checkpoint"))
            .trigger(availableNow=True).start(str(work / "spark-table")))


def finish_spark(query, case: Case, work: Path, started: float) -> SparkRun:
    query.awaitTermination()
    # Executed batches only (idle progress events carry no addBatch), one per id.
    progress = {}
    for p in query.recentProgress:
        if "addBatch" in p.get("durationMs", {}):
            progress[p["batchId"]] = p
    return SparkRun(work / "spark-table", len(case.batches),
                    [progress[k] for k in sorted(progress)], time.monotonic() - started)


def silt_job(case: Case, input_dir: Path, work: Path) -> Path:
    steps = textwrap.indent(textwrap.dedent(case.silt).strip("\n"), "  ")
    source = {"format": "json", "schema": SCHEMA,
              "options": {"path": str(input_dir), "maxFilesPerTrigger": 1}}
    sink = {"format": "delta", "path": str(work / "silt-table"), "outputMode": case.mode}
    text = "\n".join([
        "name: " + json.dumps("stateful-" + case.name),
        "source: " + json.dumps(source),
        "transform:",
        "  - " + json.dumps(PREP_SILT),
        steps,
        "sink: " + json.dumps(sink),
        "checkpointLocation: " + json.dumps(str(work / "silt-checkpoint")),
        "trigger: {availableNow: true}",
    ]) + "\n"
    path = work / "job.yaml"
    path.write_text(text)
    return path


def run_silt_job(silt_bin, case: Case, input_dir: Path, work: Path) -> SiltRun:
    proc = run_silt(silt_bin, "run", silt_job(case, input_dir, work), "--progress-json",
                    timeout=120)
    progress = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            progress.append(json.loads(line))
    return SiltRun(work / "silt-table", proc, progress)


@pytest.fixture(scope="module")
def spark_runs(request, spark, tmp_path_factory):
    """Runs the Spark side of every selected case (the ones pytest collected
    from this module), SPARK_WAVE queries at a time. name -> (work, input
    directory, SparkRun or the exception the query failed with)."""
    selected = {}
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.module is request.module and "case" in params:
            selected[params["case"].name] = params["case"]
    cases = list(selected.values())
    out = {}
    started_all = time.monotonic()
    for wave in range(0, len(cases), SPARK_WAVE):
        running = []
        for case in cases[wave:wave + SPARK_WAVE]:
            work = tmp_path_factory.mktemp(case.name)
            write_inputs(case, work / "in")
            running.append((case, work, start_spark(spark, case, work / "in", work),
                            time.monotonic()))
        for case, work, query, started in running:
            try:
                result = finish_spark(query, case, work, started)
            except Exception as e:  # the query's failure is the case's
                result = e
            out[case.name] = (work, work / "in", result)
    print(f"\n[stateful] {len(cases)} Spark queries in {time.monotonic() - started_all:.1f} s")
    return out


def runs(case: Case, spark_runs, silt_bin):
    """(SparkRun, SiltRun) of `case`; silt runs once per case."""
    work, input_dir, spark_run = spark_runs[case.name]
    if isinstance(spark_run, Exception):
        raise AssertionError(f"Spark failed on {case.name}: {spark_run}")
    if case.name not in _SILT:
        _SILT[case.name] = run_silt_job(silt_bin, case, input_dir, work)
    return spark_run, _SILT[case.name]


_SILT: dict = {}


# --------------------------------------------------------------------------
# Comparing


def normalize(value):
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return value
        return float(f"{value:.12g}") + 0.0  # + 0.0: -0.0 == 0.0 as text too
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return sorted((normalize(v) for v in value), key=repr)
    return value


def table_rows(table: Path, version: int):
    from deltalake import DeltaTable

    rows = DeltaTable(str(table), version=version).to_pyarrow_table().to_pylist()
    return sorted((normalize(r) for r in rows), key=lambda r: json.dumps(r, sort_keys=True))


def schema_fields(table: Path):
    """(name, type) of the latest schema, nullability left out."""
    def strip(t):
        if isinstance(t, dict):
            return {k: strip(v) for k, v in t.items()
                    if k not in ("nullable", "containsNull", "valueContainsNull", "metadata")}
        if isinstance(t, list):
            return [strip(v) for v in t]
        return t

    fields = json.loads(snapshot(table).metadata["schemaString"])["fields"]
    return [(f["name"], strip(f["type"])) for f in fields]


def state_progress(progress):
    return [{"batchId": p.get("batchId"),
             "stateOperators": [{k: op.get(k) for k in STATE_FIELDS}
                                for op in p.get("stateOperators", [])]}
            for p in progress]


def assert_same_tables(name, silt_table: Path, spark_table: Path):
    """Same schema, same versions, same rows at every version."""
    spark_versions, silt_versions = log_versions(spark_table), log_versions(silt_table)
    ours, theirs = schema_fields(silt_table), schema_fields(spark_table)
    assert ours == theirs, f"{name}: schemas differ\n silt  {ours}\n spark {theirs}"
    # Batch by batch: version N of both tables is batch N.
    per_batch_spark = [table_rows(spark_table, v) for v in spark_versions]
    per_batch_silt = [table_rows(silt_table, v) for v in silt_versions]
    for v, (got, want) in enumerate(zip(per_batch_silt, per_batch_spark)):
        assert got == want, f"{name}: table at version {v} differs\n silt  {got}\n spark {want}"
    assert silt_versions == spark_versions, (
        f"{name}: silt committed versions {silt_versions}, Spark {spark_versions}")
    assert per_batch_silt[-1] == per_batch_spark[-1], f"{name}: final tables differ"


IDS = [c.name for c in CASES]


def test_cases_are_distinct_and_enough():
    assert len(set(IDS)) == len(IDS)
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tables_match_spark(case, spark_runs, silt_bin):
    spark_run, silt_run = runs(case, spark_runs, silt_bin)
    spark_versions = log_versions(spark_run.table)
    assert spark_versions, f"Spark wrote no table for {case.name}"
    if case.check is not None:
        case.check(spark_run)
    silt_run.assert_ran()

    assert_same_tables(case.name, silt_run.table, spark_run.table)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_progress_matches_spark(case, spark_runs, silt_bin):
    spark_run, silt_run = runs(case, spark_runs, silt_bin)
    silt_run.assert_ran()
    assert state_progress(silt_run.progress) == state_progress(spark_run.progress)


# --------------------------------------------------------------------------
# Combinations Spark refuses: silt refuses them too, before anything is
# written, with Spark's reason.


@dataclass
class Refused:
    name: str
    spark: Callable
    silt: str
    mode: str = "append"


REFUSED = [
    # An aggregation in complete (or update) mode may emit groups behind the
    # watermark, which a later stateful step would drop.
    Refused("aggregation_after_aggregation_complete",
            lambda df: df.groupBy("device", "id").agg(F().count("*").alias("n"))
            .groupBy("device").agg(F().count("*").alias("ids")),
            agg_yaml(["device", "id"], ["count(*) AS n"], watermark=False)
            + agg_yaml(["device"], ["count(*) AS ids"], watermark=False),
            mode="complete"),
    # window.end carries no event-time mark (window_time(window) does).
    Refused("window_over_window_end_append",
            lambda df: (lambda w: w.groupBy(F().window(F().col("window.end"), "1 minute"))
                        .agg(F().sum("n").alias("n")))(
                wm(df).groupBy(F().window("ts", "30 seconds"), "device")
                .agg(F().count("*").alias("n"))),
            agg_yaml(["window(ts, '30 seconds')", "device"], ["count(*) AS n"])
            + agg_yaml(["window(window.end, '1 minute')"], ["sum(n) AS n"], watermark=False)),
    # ANSI interval literals are DayTimeIntervalType in Spark 3.5, not a gap.
    Refused("session_gap_interval_literal",
            lambda df: wm(df).groupBy(F().session_window("ts", F().expr(
                "CASE WHEN device = 'd1' THEN INTERVAL 5 SECONDS ELSE INTERVAL 20 SECONDS END")),
                "device").agg(F().count("*").alias("n")),
            agg_yaml(["session_window(ts, CASE WHEN device = 'd1' THEN INTERVAL 5 SECONDS "
                      "ELSE INTERVAL 20 SECONDS END)", "device"], ["count(*) AS n"])),
    # A second watermark downstream of the first (Spark fails at its second
    # batch; silt before the first).
    Refused("second_watermark",
            lambda df: wm(df).dropDuplicates(["id"]).withColumn("t2", F().col("ts"))
            .withWatermark("t2", "1 minute"),
            WATERMARK + "- dropDuplicates: [ id ]\n- withColumn: { t2: ts }\n"
            "- withWatermark: { eventTime: t2, delayThreshold: 1 minute }\n"),
]


def spark_refusal(spark, case: Refused, work: Path) -> str:
    """Spark's message for `case` (the first line of the exception, without
    the plan or the query id)."""
    work.mkdir(parents=True)
    write_inputs(Case(case.name, TUMBLE, case.spark, case.silt, case.mode), work / "in")
    try:
        query = start_spark(spark, Case(case.name, TUMBLE, case.spark, case.silt, case.mode),
                            work / "in", work)
        query.awaitTermination()
    except Exception as e:  # pyspark's AnalysisException / StreamingQueryException
        text = str(e)
        text = re.sub(r"^\[STREAM_FAILED\] Query \[[^\]]*\] terminated with exception: ", "", text)
        return text.split(";\n")[0].strip()
    raise AssertionError(f"Spark ran {case.name}")


@pytest.mark.parametrize("refused", REFUSED, ids=[c.name for c in REFUSED])
def test_refused_like_spark(refused, spark, silt_bin, tmp_path):
    case = refused
    message = spark_refusal(spark, case, tmp_path / "spark")
    work = tmp_path / "silt"
    work.mkdir()
    proc = run_silt(silt_bin, "run", silt_job(Case(case.name, TUMBLE, case.spark, case.silt,
                                                   case.mode), tmp_path / "spark" / "in", work),
                    timeout=60)
    assert proc.returncode == 2, describe(proc)
    assert message in proc.stderr, f"Spark: {message}\nsilt: {proc.stderr}"
    assert not (work / "silt-table").exists() and not (work / "silt-checkpoint").exists()
