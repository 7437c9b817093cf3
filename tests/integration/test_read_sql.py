"""`silt sql` and `silt read` over a partitioned table with NULLs and several
versions: every query's result equals Spark's (the session `spark`
fixture) and DuckDB's over the same snapshot (read with
delta-rs); --explain shows files skipped by partition values and by
statistics; --count answers from the log's statistics.

Results are compared as rows of Python values: silt writes them with
`--format parquet`, read back with pyarrow, so types survive."""

import datetime as dt
import decimal
import json
import math
import os

import pyarrow.parquet as pq
import pytest

from helpers import describe, json_file_job, write_input_file, write_job

SCHEMA = ("id BIGINT, device_type STRING, reading DOUBLE, qty INT, price DECIMAL(10,2), "
          "ok BOOLEAN, region STRING, event_time TIMESTAMP")
ROWS_PER_VERSION = 60
VERSIONS = 4
BASE = dt.datetime(2026, 6, 22, 8, 0, 0, tzinfo=dt.timezone.utc)
# Commit file modification times: version v was committed at COMMIT_TIMES[v].
COMMIT_TIMES = [dt.datetime(2024, 1, 1, 0, v, 0, tzinfo=dt.timezone.utc) for v in range(VERSIONS)]


def record(i):
    rec = {
        "id": i,
        "device_type": [None, "plug", "bulb", "thermostat", "camera"][i % 5],
        "reading": None if i % 7 == 0 else round(i * 0.5 - 20, 2),
        "qty": None if i % 6 == 0 else i % 13,
        "price": round((i * 37) % 1000 / 100, 2),
        "ok": i % 3 != 0,
        "region": None if i % 8 == 0 else ["eu", "us", "apac"][i % 3],
        "event_time": (BASE + dt.timedelta(minutes=97 * i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
        + "Z",
    }
    return {k: v for k, v in rec.items() if v is not None}


@pytest.fixture(scope="module")
def table(tmp_path_factory, silt_bin):
    from helpers import run_silt

    work = tmp_path_factory.mktemp("read_sql")
    input_dir = work / "in"
    input_dir.mkdir()
    table = work / "table"
    job = write_job(work / "job.yaml", json_file_job(
        "read_sql", input_dir, table, work / "checkpoint",
        schema=SCHEMA,
        max_files_per_trigger=1,
        transform=[{"withColumn": {"event_date": "to_date(event_time)"}}],
        partition_by=["event_date", "region"],
    ))
    for v in range(VERSIONS):
        ids = range(v * ROWS_PER_VERSION, (v + 1) * ROWS_PER_VERSION)
        write_input_file(input_dir / f"part-{v:03d}.json", [json.dumps(record(i)) for i in ids])
        proc = run_silt(silt_bin, "run", job)
        assert proc.returncode == 0, describe(proc)
    for v in range(VERSIONS):
        commit = table / "_delta_log" / f"{v:020d}.json"
        assert commit.exists()
        t = COMMIT_TIMES[v].timestamp()
        os.utime(commit, (t, t))
    return table


# --------------------------------------------------------------------------
# Normalized comparison


def norm(value):
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def sort_key(row):
    return tuple(
        (0, "") if v is None else (1, round(v, 6) if isinstance(v, float) else v)
        for v in row
    )


def same_value(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def assert_rows_equal(actual, expected, ordered, what):
    actual = [tuple(norm(v) for v in r) for r in actual]
    expected = [tuple(norm(v) for v in r) for r in expected]
    if not ordered:
        actual = sorted(actual, key=sort_key)
        expected = sorted(expected, key=sort_key)
    assert len(actual) == len(expected), f"{what}: {len(actual)} rows vs {len(expected)}\n" \
        f"silt: {actual[:10]}\nref:  {expected[:10]}"
    for a, e in zip(actual, expected):
        assert len(a) == len(e) and all(same_value(x, y) for x, y in zip(a, e)), \
            f"{what}: row differs\nsilt: {a}\nref:  {e}"


def silt_rows(silt, work, *args):
    out = work / f"out-{len(list(work.glob('out-*')))}.parquet"
    proc = silt(*args, "--format", "parquet", "--output", out)
    assert proc.returncode == 0, describe(proc)
    t = pq.read_table(out)
    return t.column_names, [tuple(r.values()) for r in t.to_pylist()]


def duckdb_rows(table, sql, version):
    import duckdb
    from deltalake import DeltaTable

    arrow = DeltaTable(str(table), version=version).to_pyarrow_table()
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone='UTC'")
        con.register("t", arrow)
        # Through Arrow: timestamps with a zone need no pytz that way.
        result = con.execute(sql).to_arrow_table()
        return [tuple(r.values()) for r in result.to_pylist()]
    finally:
        con.close()


def version_at(timestamp_text):
    t = dt.datetime.fromisoformat(timestamp_text).replace(tzinfo=dt.timezone.utc)
    return max(v for v, c in enumerate(COMMIT_TIMES) if c <= t)


# (template, ordered, time travel): {t} is the table. Time travel is None,
# ("version", n) or ("timestamp", "YYYY-MM-DD HH:MM:SS").
QUERIES = [
    ("SELECT * FROM {t}", False, None),
    ("SELECT id, device_type FROM {t}", False, ("version", 0)),
    ("SELECT count(*) FROM {t}", False, None),
    ("SELECT count(*) FROM {t}", False, ("version", 1)),
    ("SELECT count(*), count(reading), count(device_type) FROM {t}", False, ("version", 2)),
    ("SELECT count(*) FROM {t}", False, ("timestamp", "2024-01-01 00:01:30")),
    ("SELECT id, reading FROM {t} WHERE id < 20", False, ("timestamp", "2024-01-01 00:00:00")),
    ("SELECT max(id) FROM {t}", False, ("timestamp", "2024-01-01 00:02:00.000001")),
    ("SELECT id, region FROM {t} WHERE region = 'eu'", False, None),
    ("SELECT id FROM {t} WHERE region IS NULL", False, None),
    ("SELECT id FROM {t} WHERE event_date = DATE'2026-06-24'", False, None),
    ("SELECT id, event_date FROM {t} WHERE event_date >= '2026-06-26' AND region <> 'us'",
     False, None),
    ("SELECT id FROM {t} WHERE id BETWEEN 100 AND 130", False, None),
    ("SELECT id, qty FROM {t} WHERE qty IN (1, 2, 3)", False, None),
    ("SELECT id FROM {t} WHERE reading IS NULL", False, None),
    ("SELECT id, reading FROM {t} WHERE reading > 50.5 OR qty = 0", False, None),
    ("SELECT id, price FROM {t} WHERE price >= 5.5 AND price < 7", False, None),
    ("SELECT id FROM {t} WHERE event_time > TIMESTAMP'2026-06-25 00:00:00' AND NOT ok",
     False, None),
    ("SELECT id, upper(device_type) AS dt, reading * 2 AS r2 FROM {t} WHERE device_type LIKE 'th%'",
     False, None),
    ("SELECT device_type, count(*) FROM {t} GROUP BY device_type", False, None),
    ("SELECT device_type, count(*) AS n, sum(qty), avg(reading), min(price), max(price) "
     "FROM {t} GROUP BY device_type", False, None),
    ("SELECT region, event_date, count(*) AS n FROM {t} GROUP BY region, event_date",
     False, ("version", 2)),
    ("SELECT ok, count(DISTINCT device_type) AS d, sum(price) AS s FROM {t} GROUP BY ok",
     False, None),
    ("SELECT device_type, avg(qty) AS a FROM {t} GROUP BY device_type HAVING count(*) > 45",
     False, None),
    ("SELECT region, min(event_time) AS first, max(event_time) AS last FROM {t} "
     "WHERE region IS NOT NULL GROUP BY region", False, None),
    ("SELECT qty % 3 AS bucket, count(*) AS n, sum(reading) AS s FROM {t} "
     "WHERE qty IS NOT NULL GROUP BY qty % 3", False, None),
    ("SELECT id, reading FROM {t} ORDER BY reading DESC NULLS LAST, id LIMIT 15", True, None),
    ("SELECT id, device_type FROM {t} ORDER BY device_type ASC NULLS FIRST, id DESC LIMIT 12",
     True, None),
    ("SELECT device_type, count(*) AS n FROM {t} GROUP BY device_type "
     "ORDER BY n DESC, device_type NULLS LAST", True, None),
    ("SELECT region, sum(qty) AS s FROM {t} GROUP BY region ORDER BY s DESC NULLS LAST LIMIT 2",
     True, None),
    ("SELECT id, coalesce(device_type, 'none') AS d, CASE WHEN qty > 6 THEN 'hi' ELSE 'lo' END "
     "AS level FROM {t} WHERE id % 10 = 3 ORDER BY id", True, None),
    ("SELECT id FROM {t} WHERE region = 'apac' ORDER BY id DESC LIMIT 5", True, ("version", 1)),
    ("SELECT sum(qty), avg(price), min(reading), max(device_type) FROM {t} WHERE id > 10000",
     False, None),
    ("SELECT count(*) FROM {t} WHERE device_type = 'plug' AND region = 'us'", False, None),
]


def silt_sql_text(template, table, travel):
    source = f"delta.`{table}`"
    if travel is not None:
        kind, value = travel
        source += f" VERSION AS OF {value}" if kind == "version" else f" TIMESTAMP AS OF '{value}'"
    return template.format(t=source)


def travel_version(travel):
    if travel is None:
        return None
    kind, value = travel
    return value if kind == "version" else version_at(value)


@pytest.mark.parametrize("template,ordered,travel", QUERIES,
                         ids=[f"q{i:02d}" for i in range(len(QUERIES))])
def test_sql_matches_spark_and_duckdb(silt, table, tmp_path, spark, template, ordered, travel):
    sql = silt_sql_text(template, table, travel)
    _, rows = silt_rows(silt, tmp_path, "sql", sql)
    duck_sql = template.format(t="t")
    expected = duckdb_rows(table, duck_sql, travel_version(travel))
    assert_rows_equal(rows, expected, ordered, f"duckdb: {sql}")
    spark_rows = [tuple(r) for r in spark.sql(sql).collect()]
    assert_rows_equal(rows, spark_rows, ordered, f"spark: {sql}")


# `silt read` flags, each with the equivalent SQL.
READS = [
    (["--where", "region = 'eu' AND id < 100", "--select", "id, reading"],
     "SELECT id, reading FROM t WHERE region = 'eu' AND id < 100", None),
    (["--columns", "id,event_date", "--version", "1"], "SELECT id, event_date FROM t", 1),
    (["--select", "id, price * qty AS total", "--where", "qty IS NOT NULL", "--timestamp",
      "2024-01-01 00:02:00"],
     "SELECT id, price * qty AS total FROM t WHERE qty IS NOT NULL", 2),
    (["--where", "event_date = '2026-06-23'"], "SELECT * FROM t WHERE event_date = '2026-06-23'",
     None),
]


@pytest.mark.parametrize("args,duck_sql,version", READS, ids=[f"r{i}" for i in range(len(READS))])
def test_read_matches_duckdb(silt, table, tmp_path, args, duck_sql, version):
    names, rows = silt_rows(silt, tmp_path, "read", table, *args)
    expected = duckdb_rows(table, duck_sql, version)
    assert_rows_equal(rows, expected, False, f"silt read {args}")


def test_read_limit_and_text_formats(silt, table):
    proc = silt("read", table, "--where", "id < 5", "--select", "id", "--format", "csv")
    assert proc.returncode == 0, describe(proc)
    assert sorted(proc.stdout.splitlines()[1:], key=int) == ["0", "1", "2", "3", "4"]
    proc = silt("read", table, "--format", "jsonl", "--limit", "3")
    assert proc.returncode == 0, describe(proc)
    assert len(proc.stdout.splitlines()) == 3
    proc = silt("read", table)
    assert proc.returncode == 0, describe(proc)
    assert "only showing top 20 rows" in proc.stdout


def explain(silt, table, *args):
    proc = silt("read", table, "--explain", *args)
    assert proc.returncode == 0, describe(proc)
    out = proc.stdout
    files = [int(x) for x in
             __import__("re").search(r"files: (\d+) total, (\d+) skipped by partition, (\d+) "
                                     r"skipped by stats, (\d+) read", out).groups()]
    rows = [int(x) for x in __import__("re").search(
        r"rows: (\d+) scanned, (\d+) matched the filter", out).groups()]
    return files, rows, out


def test_explain_shows_partition_skipping(silt, table):
    (total, by_partition, by_stats, read), (scanned, matched), out = explain(
        silt, table, "--where", "event_date = '2026-06-23' AND region = 'us'")
    assert total > 10, out
    assert by_partition >= total - 3, out
    assert read >= 1, out
    assert matched == len(duckdb_rows(
        table, "SELECT id FROM t WHERE event_date = '2026-06-23' AND region = 'us'", None)), out
    assert "event_date = DATE '2026-06-23'" in out


def test_explain_shows_stats_skipping(silt, table):
    # ids grow with the version: only the files of the last commit hold id >= 200.
    (total, by_partition, by_stats, read), (scanned, matched), out = explain(
        silt, table, "--where", "id >= 200")
    assert by_partition == 0, out
    assert by_stats > 0 and read < total, out
    assert matched == VERSIONS * ROWS_PER_VERSION - 200, out
    assert scanned <= ROWS_PER_VERSION, out
    # A filter the statistics cannot use skips nothing but still filters.
    (total2, p2, s2, read2), (_, matched2), out2 = explain(silt, table, "--where", "id % 2 = 0")
    assert (p2, s2, read2) == (0, 0, total2), out2
    assert matched2 == VERSIONS * ROWS_PER_VERSION // 2


def test_count_from_stats_and_by_scanning(silt, table):
    total = VERSIONS * ROWS_PER_VERSION
    proc = silt("read", table, "--count", "--explain")
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.splitlines()[0] == str(total)
    assert "from the Delta log statistics" in proc.stdout
    expected = duckdb_rows(table, "SELECT count(*) FROM t WHERE region = 'eu' OR "
                           "event_date < '2026-06-24'", None)[0][0]
    proc = silt("read", table, "--count", "--explain", "--where",
                "region = 'eu' OR event_date < '2026-06-24'")
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.splitlines()[0] == str(expected)
    assert "from the Delta log statistics" in proc.stdout
    # A data column in the filter: rows are counted.
    expected = duckdb_rows(table, "SELECT count(*) FROM t WHERE qty > 5", None)[0][0]
    proc = silt("read", table, "--count", "--where", "qty > 5")
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.strip() == str(expected)
    proc = silt("read", table, "--count", "--version", "0")
    assert proc.stdout.strip() == str(ROWS_PER_VERSION)


def test_sql_result_types_and_names_follow_spark(silt, table, tmp_path):
    names, rows = silt_rows(silt, tmp_path, "sql",
                            f"SELECT count(*), sum(qty), avg(qty), sum(price), avg(price) AS ap "
                            f"FROM delta.`{table}`")
    assert names == ["count(1)", "sum(qty)", "avg(qty)", "sum(price)", "ap"]
    schema = pq.read_schema(sorted(tmp_path.glob("out-*.parquet"))[-1])
    assert [str(f.type) for f in schema] == ["int64", "int64", "double", "decimal128(20, 2)",
                                             "decimal128(14, 6)"]


@pytest.mark.parametrize("sql,message", [
    ("SELECT nope FROM delta.`{t}`", "nope"),
    ("SELECT id, count(*) FROM delta.`{t}` GROUP BY device_type", "GROUP BY"),
    ("SELECT id FROM delta.`{t}` VERSION AS OF 99", "99"),
    ("SELECT id FROM delta.`{t}` WHERE id", "BOOLEAN"),
    ("SELECT id FROM delta.`{t}` LIMIT x", "LIMIT"),
])
def test_sql_errors_name_the_problem(silt, table, sql, message):
    proc = silt("sql", sql.format(t=table))
    assert proc.returncode != 0
    assert message in proc.stderr, describe(proc)
