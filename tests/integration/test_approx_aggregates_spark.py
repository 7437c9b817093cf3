"""approx_count_distinct and percentile_approx (issue 15) against pyspark 3.5,
equal to the unit, not approximately.

Batch: `silt sql` over a Delta table that Spark wrote as one Parquet file
(so Spark aggregates the rows in one task, in file order, as silt does) with
groups whose cardinalities span HyperLogLog++'s linear-counting,
bias-corrected and raw ranges (10, 1,000 and 100,000 distinct values) and
percentile_approx's head-buffer flushes (> 50,000 rows per group), under
several relativeSD and accuracy values and argument types.

Streaming: a windowed groupBy with both functions over a file source, one
file per batch (Spark's partial aggregate of a batch is then one task's),
in complete mode so every batch writes every group's merged state; run in
two parts with a restart from the checkpoint in between. The Delta table
after every batch equals Spark's."""

import datetime as dt
import decimal
import json
import random
import textwrap

import pyarrow.parquet as pq
import pytest

from helpers import describe, log_versions, run_silt, write_input_file

GROUPS = {"ten": 10, "thousand": 1000, "hundred_k": 100_000}


def batch_rows():
    rnd = random.Random(1515)
    out = []
    i = 0
    for g, distinct in GROUPS.items():
        n = 120_000 if g == "hundred_k" else max(3 * distinct, 200)
        for _ in range(n):
            k = rnd.randrange(distinct)
            nul = rnd.random() < 0.02
            out.append((
                i, g,
                None if nul else k * 7919 - 3_000_000,                      # INT
                None if nul else k * 1_000_003_001,                          # BIGINT
                None if nul else (k - distinct / 2) * 0.37,                  # DOUBLE
                None if nul else f"s{k}",                                    # STRING
                None if nul else dt.date(2000, 1, 1) + dt.timedelta(days=k % 9000),
                None if nul else dt.datetime(2020, 1, 1) + dt.timedelta(seconds=k * 13),
                None if nul else decimal.Decimal(k * 3 - 999).scaleb(-2),    # DECIMAL(12,2)
                None if nul else decimal.Decimal(k * 10**12 + 7),            # DECIMAL(30,0)
                None if nul else rnd.gauss(0, 100),                          # DOUBLE, all distinct
            ))
            i += 1
    rnd.shuffle(out)
    return out


SCHEMA = ("id BIGINT, g STRING, i INT, l BIGINT, d DOUBLE, s STRING, dt DATE, ts TIMESTAMP, "
          "dec DECIMAL(12,2), big DECIMAL(30,0), x DOUBLE")


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("approx") / "t"
    rows = batch_rows()
    df = spark.createDataFrame(rows, SCHEMA).coalesce(1)
    df.write.format("delta").save(str(path))
    assert len(list(path.glob("*.parquet"))) == 1
    return path


QUERIES = [
    # approx_count_distinct over every type, default and explicit relativeSD
    "approx_count_distinct(i), approx_count_distinct(l), approx_count_distinct(d), "
    "approx_count_distinct(s), approx_count_distinct(dt), approx_count_distinct(ts), "
    "approx_count_distinct(dec), approx_count_distinct(big)",
    "approx_count_distinct(l, 0.01), approx_count_distinct(s, 0.2), approx_count_distinct(i, 0.1), "
    "approx_count_distinct(d, 0.005), approx_count_distinct(x, 0.3), approx_count_distinct(l, 0.39)",
    # percentile_approx: scalars, arrays, accuracies, types
    "percentile_approx(x, 0.5), percentile_approx(x, array(0.01, 0.25, 0.5, 0.75, 0.99)), "
    "percentile_approx(x, array(0.9, 0.1, 0.5), 100), percentile_approx(x, 0.3, 10), "
    "approx_percentile(x, 0.0001, 1000000)",
    "percentile_approx(i, 0.5), percentile_approx(l, array(0.2, 0.8), 500), "
    "percentile_approx(d, 0.75, 50), percentile_approx(dt, 0.5), percentile_approx(ts, 0.9, 200), "
    "percentile_approx(dec, array(0.5, 0.95))",
]


def silt_rows(silt, tmp_path, sql):
    out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}.parquet"
    proc = silt("sql", sql, "--format", "parquet", "--output", out)
    assert proc.returncode == 0, describe(proc)
    return [tuple(r.values()) for r in pq.read_table(out).to_pylist()]


def canon(v):
    if isinstance(v, decimal.Decimal):
        return ("dec", v.normalize())
    if isinstance(v, dt.datetime):
        return ("ts", v.replace(tzinfo=None).isoformat())
    if isinstance(v, (list, tuple)):
        return tuple(canon(x) for x in v)
    return v


@pytest.mark.parametrize("select", QUERIES, ids=[f"q{i}" for i in range(len(QUERIES))])
def test_batch_results_equal_spark(silt, spark, table, tmp_path, select):
    sql = f"SELECT g, {select} FROM delta.`{table}` GROUP BY g"
    got = sorted((canon(r) for r in silt_rows(silt, tmp_path, sql)), key=repr)
    want = sorted((canon(tuple(r)) for r in spark.sql(sql).collect()), key=repr)
    assert len(got) == len(GROUPS)
    assert got == want, f"{sql}\nsilt:  {got}\nspark: {want}"


def test_global_and_empty_results_equal_spark(silt, spark, table, tmp_path):
    for where in ("", "WHERE id < 0", "WHERE i IS NULL"):
        sql = (f"SELECT approx_count_distinct(s), percentile_approx(x, array(0.5)), "
               f"percentile_approx(i, 0.5), percentile_approx(x, array()) "
               f"FROM delta.`{table}` {where}")
        got = [canon(r) for r in silt_rows(silt, tmp_path, sql)]
        want = [canon(tuple(r)) for r in spark.sql(sql).collect()]
        assert got == want, f"{sql}\nsilt:  {got}\nspark: {want}"


def test_cardinalities_cover_every_estimator_range(spark, table):
    # The data is what the module says: 10, ~1,000 and ~100,000 distinct.
    got = {r[0]: r[1] for r in spark.sql(
        f"SELECT g, count(DISTINCT l) FROM delta.`{table}` GROUP BY g").collect()}
    assert got["ten"] == 10 and 900 < got["thousand"] <= 1000 and got["hundred_k"] > 60_000


@pytest.mark.parametrize("call,message", [
    ("percentile_approx(x, 1.5)", "The percentage must be between [0.0, 1.0] (current value = 1.5D)"),
    ("percentile_approx(x, array(0.5, -0.1))", "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE"),
    ("percentile_approx(x, 0.5, 0)", "The accuracy must be between (0, 2147483647]"),
    ("percentile_approx(x, x)", "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT"),
    ("percentile_approx(x, 0.5, id)", "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT"),
    ("percentile_approx(x, CAST(NULL AS DOUBLE))", "The percentage must not be null"),
    ("percentile_approx(x, 0.5, 1.5)", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("percentile_approx(x)", "WRONG_NUM_ARGS"),
    ("approx_count_distinct(x, 0.5)", "Failed preparing of the function `approx_count_distinct`"),
    ("approx_count_distinct(x, 'a')", "The second argument should be a double literal"),
    ("approx_count_distinct(x, 0.05, 1)", "WRONG_NUM_ARGS"),
])
def test_bad_arguments_fail_as_spark(silt, spark, table, call, message):
    sql = f"SELECT {call} FROM delta.`{table}`"
    with pytest.raises(Exception) as spark_error:
        spark.sql(sql).collect()
    proc = silt("sql", sql)
    assert proc.returncode != 0, describe(proc)
    spark_text = str(spark_error.value)
    for key in message.split("|"):
        assert key in spark_text, spark_text
        assert key in proc.stderr, proc.stderr


# --------------------------------------------------------------------------
# Streaming: windowed groupBy with both functions, several batches, a restart

STREAM_SCHEMA = "id BIGINT, ts STRING, device STRING, uid STRING, temp DOUBLE"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def stream_batches():
    rnd = random.Random(77)
    batches = []
    next_id = 0
    for b in range(4):
        rows = []
        for _ in range(4000):
            device = rnd.choices(["d1", "d2", "d3"], weights=[1, 2, 7])[0]
            # Per device a different cardinality of users: small, mid, large.
            span = {"d1": 8, "d2": 600, "d3": 50_000}[device]
            sec = rnd.randrange(0, 180)  # three 1-minute windows, all batches
            row = {"id": next_id, "ts": (T0 + dt.timedelta(seconds=sec)).strftime(
                "%Y-%m-%d %H:%M:%S"), "device": device, "uid": f"u{rnd.randrange(span)}"}
            if rnd.random() > 0.03:
                row["temp"] = round(rnd.gauss(20, 5), 3)
            rows.append(row)
            next_id += 1
        batches.append(rows)
    return batches


AGGS = ["approx_count_distinct(uid) AS users", "approx_count_distinct(uid, 0.01) AS users_fine",
        "approx_count_distinct(id, 0.3) AS ids",
        "percentile_approx(temp, array(0.1, 0.5, 0.9), 100) AS temps",
        "percentile_approx(temp, 0.5) AS median", "approx_percentile(id, 0.25, 1000) AS id_q1"]


def spark_stream(spark, input_dir, work):
    from pyspark.sql import functions as F

    df = (spark.readStream.schema(STREAM_SCHEMA).option("maxFilesPerTrigger", 1)
          .json(str(input_dir)))
    df = df.select(F.col("ts").cast("timestamp").alias("ts"), "id", "device", "uid", "temp")
    agg = df.groupBy(F.window("ts", "1 minute"), "device").agg(*[F.expr(a) for a in AGGS])
    q = (agg.writeStream.format("delta").outputMode("complete")
         .option("checkpointLocation", str(work / "spark-checkpoint"))
         .trigger(availableNow=True).start(str(work / "spark-table")))
    q.awaitTermination()


def silt_stream_job(input_dir, work):
    source = {"format": "json", "schema": STREAM_SCHEMA,
              "options": {"path": str(input_dir), "maxFilesPerTrigger": 1}}
    sink = {"format": "delta", "path": str(work / "silt-table"), "outputMode": "complete"}
    prep = {"select": ["CAST(ts AS TIMESTAMP) AS ts", "id", "device", "uid", "temp"]}
    text = textwrap.dedent(f"""\
        name: approx-stream
        source: {json.dumps(source)}
        transform:
          - {json.dumps(prep)}
          - groupBy:
              keys: [ "window(ts, '1 minute')", "device" ]
              agg: [ {", ".join(json.dumps(a) for a in AGGS)} ]
        sink: {json.dumps(sink)}
        checkpointLocation: {json.dumps(str(work / "silt-checkpoint"))}
        trigger: {{availableNow: true}}
        """)
    path = work / "job.yaml"
    path.write_text(text)
    return path


def delta_rows(table, version):
    from deltalake import DeltaTable

    rows = DeltaTable(str(table), version=version).to_pyarrow_table().to_pylist()
    out = []
    for r in rows:
        r = dict(r)
        r["window"] = {k: v.replace(tzinfo=None).isoformat() for k, v in r["window"].items()}
        out.append(r)
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def test_streaming_window_job_with_restart_equals_spark(spark, silt_bin, tmp_path):
    batches = stream_batches()
    input_dir = tmp_path / "in"
    input_dir.mkdir()
    job = silt_stream_job(input_dir, tmp_path)
    # Part one: two files; both engines stop after them (availableNow).
    for part in (batches[:2], batches[2:]):
        start = len(list(input_dir.glob("*.json")))
        for i, rows in enumerate(part):
            write_input_file(input_dir / f"batch-{start + i:02d}.json",
                             [json.dumps(r) for r in rows])
        spark_stream(spark, input_dir, tmp_path)
        proc = run_silt(silt_bin, "run", job, timeout=300)
        assert proc.returncode == 0, describe(proc)
    spark_table, silt_table = tmp_path / "spark-table", tmp_path / "silt-table"
    versions = log_versions(spark_table)
    assert len(versions) == 4, versions
    assert log_versions(silt_table) == versions
    for v in versions:
        got, want = delta_rows(silt_table, v), delta_rows(spark_table, v)
        assert got == want, f"version {v} differs\n silt  {got[:3]}\n spark {want[:3]}"
    # The data reaches every estimator range of the default precision (9:
    # linear counting, bias-corrected up to 5 m = 2560, raw above): d3's
    # windows see thousands of distinct users, d1's eight.
    final = delta_rows(spark_table, versions[-1])
    assert max(r["users"] for r in final) > 2600
    assert min(r["users"] for r in final) <= 8
