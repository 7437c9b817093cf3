"""Stream-static joins (issue #17) against pyspark + delta-spark.

Each case joins a file stream (maxFilesPerTrigger 1, so both engines cut
the same batches) with one shared Delta table, in Spark as
stream.join(static, usingColumns, how) and in silt as a `join` step (or a
sql step's JOIN). Between the two runs of every case the static table gets
an UPDATE, a DELETE and an INSERT; Spark plans a Delta static side anew per
micro-batch, so the second run's batches must join the changed table. The
target tables must be equal at every version (one per batch), with the
same schema. A last test changes the static table between the batches of
one running query in both engines, in lock step."""

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import describe, kill, log_versions, run_silt, snapshot, start_silt, wait_for, \
    write_input_file, write_job

STREAM_SCHEMA = "device_id BIGINT, zone STRING, temp DOUBLE, note STRING"


def stream_rows(batch):
    """Deterministic stream rows; device ids 0-7 and NULL, some unmatched."""
    rows = []
    for i in range(6):
        n = batch * 6 + i
        device = None if n % 11 == 5 else n % 8
        rows.append({"device_id": device, "zone": "ab"[n % 2], "temp": float(n % 13) - 4.5,
                     "note": f"r{n}"})
    return rows


@dataclass
class Case:
    name: str
    # The Spark query: (stream DataFrame, static DataFrame) -> DataFrame.
    spark: object
    # silt's transform steps (with STATIC standing for the table path).
    silt: list = field(default_factory=list)


def static_select(static):
    return static.selectExpr("device_id", "site", "active")


SILT_STATIC = {"format": "delta", "path": "STATIC", "select": ["device_id", "site", "active"]}

CASES = [
    Case("inner", lambda s, t: s.join(static_select(t), ["device_id"]),
         [{"join": {"with": SILT_STATIC, "on": ["device_id"]}}]),
    Case("left", lambda s, t: s.join(static_select(t), ["device_id"], "left"),
         [{"join": {"with": SILT_STATIC, "on": "device_id", "how": "left"}}]),
    Case("left-outer-name", lambda s, t: s.join(static_select(t), ["device_id"], "left_outer"),
         [{"join": {"with": SILT_STATIC, "on": ["device_id"], "how": "leftouter"}}]),
    Case("left-semi", lambda s, t: s.join(static_select(t), ["device_id"], "left_semi"),
         [{"join": {"with": SILT_STATIC, "on": ["device_id"], "how": "left_semi"}}]),
    Case("left-anti", lambda s, t: s.join(static_select(t), ["device_id"], "left_anti"),
         [{"join": {"with": SILT_STATIC, "on": ["device_id"], "how": "anti"}}]),
    Case("two-keys", lambda s, t: s.join(t, ["device_id", "zone"], "left"),
         [{"join": {"with": {"format": "delta", "path": "STATIC"},
                    "on": ["device_id", "zone"], "how": "left"}}]),
    Case("static-where-select",
         lambda s, t: s.join(t.where("active").selectExpr("device_id", "upper(site) AS site_name",
                                                          "zone AS home_zone"),
                             ["device_id"], "left"),
         [{"join": {"with": {"format": "delta", "path": "STATIC", "where": "active",
                             "select": ["device_id", "upper(site) AS site_name",
                                        "zone AS home_zone"]},
                    "on": ["device_id"], "how": "left"}}]),
    Case("steps-around",
         lambda s, t: s.where("temp > -3").join(static_select(t), ["device_id"])
         .selectExpr("site", "device_id", "temp * 2 AS double_temp"),
         [{"where": "temp > -3"},
          {"join": {"with": SILT_STATIC, "on": ["device_id"]}},
          {"select": ["site", "device_id", "temp * 2 AS double_temp"]}]),
    Case("sql-left-join",
         lambda s, t: s.join(t.selectExpr("device_id", "site"), ["device_id"], "left")
         .where("temp > 0").selectExpr("device_id", "temp", "site"),
         [{"sql": "SELECT device_id, temp, site FROM input LEFT JOIN "
                  "delta.`STATIC` USING (device_id) WHERE temp > 0"}]),
    Case("sql-inner-join",
         lambda s, t: s.join(t, ["device_id", "zone"]).selectExpr("note", "site", "active"),
         [{"sql": "SELECT note, site, active FROM input AS s JOIN delta.`STATIC` t "
                  "USING (device_id, zone)"}]),
]


def create_static(spark, table: Path):
    spark.sql(f"CREATE TABLE delta.`{table}` (device_id INT, zone STRING, site STRING, "
              "active BOOLEAN) USING delta")
    spark.sql(f"INSERT INTO delta.`{table}` VALUES (0, 'a', 'north', true), "
              "(1, 'b', 'south', true), (2, 'a', 'east', false), (3, 'b', 'west', true), "
              "(3, 'a', 'west-2', true), (NULL, 'a', 'nowhere', true), (5, 'b', 'hill', true)")


def change_static(spark, table: Path):
    spark.sql(f"UPDATE delta.`{table}` SET site = 'north-new', active = false WHERE device_id = 0")
    spark.sql(f"DELETE FROM delta.`{table}` WHERE device_id = 1")
    spark.sql(f"INSERT INTO delta.`{table}` VALUES (6, 'a', 'valley', true), "
              "(7, 'b', 'lake', true)")


def silt_steps(case: Case, static: Path):
    return json.loads(json.dumps(case.silt).replace("STATIC", str(static)))


def silt_job(case: Case, work: Path, static: Path, trigger=None) -> Path:
    return write_job(work / "job.yaml", {
        "name": "join-" + case.name,
        "source": {"format": "json", "schema": STREAM_SCHEMA,
                   "options": {"path": str(work / "in"), "maxFilesPerTrigger": 1}},
        "transform": silt_steps(case, static),
        "sink": {"format": "delta", "path": str(work / "silt-table")},
        "checkpointLocation": str(work / "silt-checkpoint"),
        "trigger": trigger or {"availableNow": True},
    })


def start_spark(spark, case: Case, work: Path, static: Path, trigger=None):
    stream = (spark.readStream.schema(STREAM_SCHEMA).option("maxFilesPerTrigger", 1)
              .json(str(work / "in")))
    table = spark.read.format("delta").load(str(static))
    return (case.spark(stream, table).writeStream.format("delta")
            .option("checkpointLocation", str(work / "spark-checkpoint"))
            .trigger(**(trigger or {"availableNow": True})).start(str(work / "spark-table")))


def write_batches(work: Path, first: int, count: int):
    (work / "in").mkdir(parents=True, exist_ok=True)
    for b in range(first, first + count):
        write_input_file(work / "in" / f"part-{b:02d}.json",
                         [json.dumps(r) for r in stream_rows(b)])


def normalize(value):
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else float(f"{value:.12g}") + 0.0
    return value


def rows_at(table: Path, version: int):
    from deltalake import DeltaTable

    rows = DeltaTable(str(table), version=version).to_pyarrow_table().to_pylist()
    return sorted(({k: normalize(v) for k, v in r.items()} for r in rows),
                  key=lambda r: json.dumps(r, sort_keys=True))


def schema_of(table: Path):
    fields = json.loads(snapshot(table).metadata["schemaString"])["fields"]
    return [(f["name"], f["type"]) for f in fields]


def assert_same_tables(name, silt_table: Path, spark_table: Path):
    assert schema_of(silt_table) == schema_of(spark_table), name
    silt_versions, spark_versions = log_versions(silt_table), log_versions(spark_table)
    for v in spark_versions:
        if v in silt_versions:
            assert rows_at(silt_table, v) == rows_at(spark_table, v), f"{name}: version {v}"
    assert silt_versions == spark_versions, name


def test_stream_static_joins_match_spark_across_a_static_table_update(spark, silt, tmp_path):
    static = tmp_path / "static"
    create_static(spark, static)
    works = {case.name: tmp_path / case.name for case in CASES}
    for work in works.values():
        write_batches(work, 0, 2)

    def run_all():
        queries = [start_spark(spark, case, works[case.name], static) for case in CASES]
        for query in queries:
            query.awaitTermination()
        for case in CASES:
            proc = silt("run", silt_job(case, works[case.name], static))
            assert proc.returncode == 0, f"{case.name}: {describe(proc)}"

    run_all()
    for case in CASES:
        assert_same_tables(case.name, works[case.name] / "silt-table",
                           works[case.name] / "spark-table")
    change_static(spark, static)
    for work in works.values():
        write_batches(work, 2, 2)
    run_all()
    for case in CASES:
        work = works[case.name]
        assert_same_tables(case.name, work / "silt-table", work / "spark-table")
        assert len(log_versions(work / "silt-table")) == 4, case.name
    # The changes reached the joined rows (device 6 matched only after them).
    left = rows_at(works["left"] / "silt-table", 3)
    assert any(r["device_id"] == 6 and r["site"] == "valley" for r in left), left


def test_a_static_table_change_between_batches_of_one_running_query(spark, silt_bin, tmp_path):
    case = next(c for c in CASES if c.name == "left")
    static = tmp_path / "static"
    create_static(spark, static)
    work = tmp_path / "work"
    write_batches(work, 0, 1)
    trigger = {"processingTime": "200 milliseconds"}
    query = start_spark(spark, case, work, static, trigger)
    proc = start_silt(silt_bin, "run", silt_job(case, work, static, trigger))
    try:
        for batch in range(4):
            # Both engines commit batch `batch`, then the static table and
            # the input move on.
            assert wait_for(lambda: (work / "silt-checkpoint" / "commits" / str(batch)).exists()
                            and (work / "spark-checkpoint" / "commits" / str(batch)).exists(),
                            timeout=90), f"batch {batch} not committed by both"
            if batch == 1:
                change_static(spark, static)
            elif batch == 2:
                spark.sql(f"UPDATE delta.`{static}` SET site = concat(site, '+') "
                          "WHERE device_id >= 5")
            if batch < 3:
                write_batches(work, batch + 1, 1)
    finally:
        query.stop()
        if proc.poll() is None:
            kill(proc)
    assert_same_tables("running", work / "silt-table", work / "spark-table")


def test_join_errors_name_the_step(silt, tmp_path, spark):
    static = tmp_path / "static"
    create_static(spark, static)
    write_batches(tmp_path, 0, 1)

    def run(join):
        case = Case("bad", None, [{"join": join}])
        return silt("run", silt_job(case, tmp_path, static))

    proc = run({"with": {"path": "STATIC"}, "on": ["missing"]})
    assert proc.returncode != 0
    assert "transform[0].join: on[0]: [UNRESOLVED_USING_COLUMN_FOR_JOIN] USING column " \
        "`missing` cannot be resolved on the left (stream) side" in proc.stderr, describe(proc)
    proc = run({"with": {"path": "STATIC"}, "on": ["device_id"], "how": "full"})
    assert "transform[0].join: how: 'full' is not supported between a stream and a static " \
        "table" in proc.stderr, describe(proc)
    proc = run({"with": {"path": str(tmp_path / "nope")}, "on": ["device_id"]})
    assert "transform[0].join: with.path: '" in proc.stderr and "is not a Delta table" in \
        proc.stderr, describe(proc)
    proc = run({"with": {"path": "STATIC", "select": ["site AS device_id", "zone"]},
                "on": ["device_id"]})
    assert "the join column `device_id` is BIGINT in the stream and STRING in the static " \
        "table" in proc.stderr, describe(proc)
