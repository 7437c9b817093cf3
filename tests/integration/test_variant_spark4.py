"""The VARIANT type against Spark 4 (the `spark4` fixture: pyspark 4 +
delta-spark 4).

- A differential corpus: the JSON documents of data/variant/docs.jsonl
  (scalars of every width, decimals with trailing zeros, 38/39 digits,
  exponents, unicode keys and escapes, nesting, wide objects and arrays,
  and malformed text) in a Delta table; one SELECT of parse_json /
  try_parse_json, to_json, schema_of_variant, is_variant_null,
  try_variant_get over many paths and target types, CASTs to and from
  VARIANT and to_variant_object runs in silt (`silt sql`) and in Spark 4,
  and every value must be equal, the variants byte for byte (value and
  metadata binaries).
- Errors: the expressions for which Spark raises (malformed JSON, duplicate
  keys, invalid casts, invalid paths) raise in silt too, with Spark's error
  class in the message.
- Tables: a table with variant columns at every nesting depth written by
  Spark 4 over several commits reads equal in silt at every version; a
  table Spark 4 writes with shredding on; the golden table
  spark-variant-checkpoint; a table silt writes from a streaming job
  (parse_json of the seed's payload) reads equal in Spark 4, carries the
  variantType feature, and Spark 4 appends to it.
"""

import datetime
import decimal
import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from helpers import golden_dir, run_silt

DATA = Path(__file__).resolve().parent / "data" / "variant"
REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("SILT_BUILD_DIR", REPO / "build"))


def load_docs():
    with (DATA / "docs.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


DOCS = load_docs()

V = "try_parse_json(j)"
PATH_TYPES = [
    ("$", ["variant", "string", "int", "bigint", "double", "float", "decimal(10,2)",
           "decimal(38,10)", "boolean", "date", "timestamp", "timestamp_ntz", "binary",
           "tinyint", "array<string>", "array<int>", "map<string,string>",
           "struct<a string, b bigint>", "struct<a variant, k299 int>", "array<variant>"]),
    ("$.a", ["variant", "string", "int", "double", "decimal(5,1)", "boolean", "array<int>",
             "struct<b variant, x string>", "map<string,int>"]),
    ("$[0]", ["variant", "string", "bigint", "double", "array<int>"]),
    ("$.a.b", ["variant", "string", "int"]),
    ("$.a[1]", ["variant", "string"]),
    ("$.a[2].x", ["variant", "string"]),
    ('$["k e y"]', ["variant", "int"]),
    ('$["a.b"]', ["variant", "int"]),
    ("$.a]", ["variant"]),
    ('$[""]', ["variant"]),
    ("$.k299", ["variant", "int"]),
    ("$[299]", ["variant", "int"]),
    ("$.power", ["variant", "double", "decimal(4,1)", "string"]),
    ("$.state", ["variant", "string", "boolean"]),
    ("$.b", ["variant", "string", "int", "tinyint", "array<variant>"]),
    ("$.c", ["variant", "date", "timestamp", "string"]),
    ('$["\u00e9"]', ["variant", "int"]),
    ("$.num", ["variant", "double", "string"]),
    ("$.big", ["variant", "decimal(38,0)", "bigint", "double"]),
]


def corpus_columns():
    cols = [
        ("v", V),
        ("strict_ok", f"{V} IS NOT NULL"),
        ("json", f"to_json({V})"),
        ("schema", f"schema_of_variant({V})"),
        ("is_null", f"is_variant_null({V})"),
        ("get_default", f"try_variant_get({V}, '$.a')"),
        ("cast_string", f"try_cast({V} AS STRING)"),
        ("cast_int", f"try_cast({V} AS INT)"),
        ("cast_double", f"try_cast({V} AS DOUBLE)"),
        ("cast_array", f"try_cast({V} AS ARRAY<STRING>)"),
        ("cast_map", f"try_cast({V} AS MAP<STRING, BIGINT>)"),
        ("in_struct", f"to_json(named_struct('v', {V}, 'n', 1))"),
        ("in_array", f"to_json(array({V}, {V}))"),
        ("string_variant", "cast(j AS VARIANT)"),
        ("object", "to_variant_object(named_struct('j', j, 'n', length(j), 'a', array(1, 2)))"),
        ("object_json", "to_json(to_variant_object(map('k', 1, 'z', 2)))"),
    ]
    n = 0
    for path, types in PATH_TYPES:
        for t in types:
            expr = f"try_variant_get({V}, '{path}', '{t}')"
            if t in ("date", "timestamp", "timestamp_ntz"):
                # As text: Python's datetime stops at year 9999.
                expr = f"CAST({expr} AS STRING)"
            cols.append((f"g{n}", expr))
            n += 1
    return cols


def sql_of(table, cols):
    select = ", ".join(f"{expr} AS {name}" for name, expr in cols)
    return f"SELECT id, {select} FROM delta.`{table}`"


def normalize(value):
    """Python values of both engines in one form: variants as (value,
    metadata) bytes, maps as dicts, structs as dicts, timestamps as naive
    UTC, floats with NaN comparable."""
    if value is None:
        return None
    if hasattr(value, "value") and hasattr(value, "metadata") and not isinstance(value, dict):
        return ("variant", bytes(value.value), bytes(value.metadata))
    if isinstance(value, dict):
        if set(value) == {"value", "metadata"}:
            return ("variant", bytes(value["value"]), bytes(value["metadata"]))
        return {k: normalize(v) for k, v in value.items()}
    if hasattr(value, "asDict"):
        return normalize(value.asDict(recursive=False))
    if isinstance(value, list):
        if value and all(isinstance(x, tuple) and len(x) == 2 for x in value):
            return {k: normalize(v) for k, v in value}
        return [normalize(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value
    if isinstance(value, decimal.Decimal):
        return value.normalize() if value == value else "NaN"
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.isoformat()
    return value


SPARK_ROWS = """
from pyspark.sql.types import Row
def conv(v):
    if v is None:
        return None
    if type(v).__name__ == 'VariantVal':
        return {'value': bytes(v.value), 'metadata': bytes(v.metadata)}
    if isinstance(v, Row):
        return {k: conv(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        return {k: conv(x) for k, x in v.items()}
    if isinstance(v, list):
        return [conv(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    return v
result = [{k: conv(x) for k, x in r.asDict(recursive=False).items()}
          for r in spark.sql(query).collect()]
"""


def spark_rows(spark4, query):
    return spark4.run(SPARK_ROWS, query=query)


def silt_rows(silt_bin, work, query, name):
    out = work / f"{name}.parquet"
    proc = run_silt(silt_bin, "sql", query, "--format", "parquet", "--output", str(out))
    assert proc.returncode == 0, f"silt sql failed:\n{proc.stderr[-2000:]}"
    return pq.read_table(out).to_pylist(maps_as_pydicts="strict")


def compare(silt, spark, cols, key="id", what=""):
    by_key = {r[key]: r for r in spark}
    assert len(silt) == len(spark), f"{what}: {len(silt)} rows in silt, {len(spark)} in Spark"
    mismatches = []
    compared = 0
    for row in silt:
        ref = by_key[row[key]]
        for name, expr in cols:
            compared += 1
            a = normalize(row.get(name))
            b = normalize(ref.get(name))
            if a != b:
                mismatches.append(f"{key}={row[key]} {name} [{expr}]:\n   silt  {a!r}\n   spark {b!r}")
    return compared, mismatches


@pytest.fixture(scope="module")
def docs_table(spark4, tmp_path_factory):
    path = tmp_path_factory.mktemp("variant") / "docs"
    rows = [(i, doc) for i, doc in enumerate(DOCS)]
    spark4.run("spark.createDataFrame(rows, 'id INT, j STRING').coalesce(1)"
               ".write.format('delta').save(path)", rows=rows, path=str(path))
    return path


def test_corpus_has_enough_documents():
    assert len(DOCS) >= 100


def test_expression_corpus_equals_spark4(silt_bin, spark4, docs_table, work):
    cols = corpus_columns()
    query = sql_of(docs_table, cols)
    silt = silt_rows(silt_bin, work, query, "corpus")
    spark = spark_rows(spark4, query)
    compared, mismatches = compare(silt, spark, cols, what="corpus")
    print(f"\n{len(DOCS)} documents x {len(cols)} expressions = {compared} values compared, "
          f"{len(mismatches)} differ")
    assert not mismatches, f"{len(mismatches)} of {compared} values differ:\n" + \
        "\n".join(mismatches[:40])


# Expressions for which Spark 4 raises an error at run time; silt must fail
# too, naming Spark's error class where it has one.
ERROR_CASES = [
    "parse_json('{')",
    "parse_json('')",
    "parse_json('[1,]')",
    "parse_json('01')",
    "parse_json('truex')",
    "parse_json('{\"a\":1,\"a\":2}')",
    "parse_json('\"\\\\ud800\"')",
    "variant_get(parse_json('\"abc\"'), '$', 'int')",
    "variant_get(parse_json('300'), '$', 'tinyint')",
    "variant_get(parse_json('{\"a\":1}'), '$', 'int')",
    "variant_get(parse_json('[1,\"x\"]'), '$', 'array<int>')",
    "variant_get(parse_json('1e20'), '$', 'bigint')",
    "CAST(parse_json('\"abc\"') AS INT)",
    "CAST(parse_json('[1]') AS MAP<STRING, INT>)",
    "variant_get(parse_json('1'), 'a', 'int')",
    "variant_get(parse_json('1'), '$.', 'int')",
    "variant_get(parse_json('[1]'), '$[-1]', 'int')",
]

# Expressions Spark 4 evaluates: silt gives the same printed value.
VALUE_CASES = [
    "variant_get(parse_json('3.7'), '$', 'int')",
    "variant_get(parse_json('1.25'), '$', 'decimal(2,1)')",
    "variant_get(parse_json('1'), '$', 'timestamp')",
    "variant_get(parse_json('1.5'), '$', 'timestamp')",
    "CAST(parse_json('{\"a\":1}') AS STRING)",
    "CAST(parse_json('[1,2]') AS ARRAY<STRING>)",
    "to_json(CAST(timestamp'2024-01-02 03:04:05.100' AS VARIANT))",
    "to_json(CAST(CAST(timestamp'2024-01-02 03:04:05' AS TIMESTAMP_NTZ) AS VARIANT))",
    "to_json(CAST(date'2024-01-02' AS VARIANT))",
    "to_json(CAST(X'0102' AS VARIANT))",
    "to_json(CAST(1.5f AS VARIANT))",
    "to_json(CAST(3.0BD AS VARIANT))",
    "to_json(CAST(array(1, 2) AS VARIANT))",
    "schema_of_variant(CAST(array(date'2024-01-01', timestamp'2024-01-01 00:00:00') AS VARIANT))",
    "is_variant_null(CAST(NULL AS VARIANT))",
    "variant_get(NULL, '$.a')",
]


def silt_eval(exprs):
    tool = BUILD / "src" / "silt" / "expr" / "silt_expr_eval"
    proc = subprocess.run([str(tool)], input="".join(e + "\n" for e in exprs),
                          capture_output=True, text=True, timeout=120, check=True)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_errors_and_values_like_spark4(spark4):
    silt = silt_eval(ERROR_CASES + [f"CAST({e} AS STRING)" for e in VALUE_CASES])
    problems = []
    import spark4 as spark4_module
    for expr, got in zip(ERROR_CASES, silt[: len(ERROR_CASES)]):
        try:
            spark4.sql(f"SELECT {expr} AS r")
            problems.append(f"{expr}: Spark 4 did not fail")
            continue
        except spark4_module.Spark4Error as exc:
            condition = (exc.condition or str(exc).split("]")[0].lstrip("[")).split(".")[0]
        if "error" not in got:
            problems.append(f"{expr}: Spark fails with {condition}, silt gives {got}")
        elif condition and condition.isupper() and condition not in got["error"] and \
                condition not in ("NUMBER_FORMAT",):
            problems.append(f"{expr}: Spark's class {condition} not in silt's error "
                            f"{got['error'][:200]}")
    for expr, got in zip(VALUE_CASES, silt[len(ERROR_CASES):]):
        rows = spark4.run("result = [str(r[0]) if r[0] is not None else None for r in "
                          "spark.sql(q).collect()]", q=f"SELECT CAST({expr} AS STRING) AS r")
        want = rows[0]
        if "error" in got:
            problems.append(f"{expr}: silt fails: {got['error'][:200]}")
        elif got.get("value") != want and not (got.get("value") is None and want is None):
            problems.append(f"{expr}: silt {got.get('value')!r}, Spark 4 {want!r}")
    assert not problems, "\n".join(problems)


# ---- tables ---------------------------------------------------------------

NESTED_QUERY = """
  SELECT id,
         parse_json(j) AS v,
         array(parse_json(j), NULL, parse_json('[1,{"x":2}]')) AS arr,
         named_struct('v', parse_json(j), 'n', id) AS st,
         map('k', parse_json(j), 'nul', CAST(NULL AS VARIANT)) AS m,
         IF(id % 3 = 0, NULL, parse_json(j)) AS sometimes
  FROM VALUES {values} AS t(id, j)
"""

READ_COLUMNS = [
    ("json", "to_json(v)"),
    ("v", "v"),
    ("arr", "to_json(arr)"),
    ("st", "to_json(st)"),
    ("m", "to_json(m)"),
    ("sometimes", "sometimes"),
    ("a", "variant_get(v, '$.a', 'string')"),
    ("schema", "schema_of_variant(v)"),
]


def values_sql(rows):
    return ", ".join(f"({i}, '{j}')" for i, j in rows)


def versions(table):
    return sorted(int(p.stem) for p in (Path(table) / "_delta_log").glob("*.json")
                  if p.stem.isdigit())


def compare_every_version(silt_bin, spark4, work, table, cols, label):
    total = 0
    for version in versions(table):
        select = ", ".join(f"{expr} AS {name}" for name, expr in cols)
        query = f"SELECT id, {select} FROM delta.`{table}` VERSION AS OF {version}"
        silt = silt_rows(silt_bin, work, query, f"{label}-v{version}")
        spark = spark_rows(spark4, query)
        compared, mismatches = compare(silt, spark, cols, what=f"{label} v{version}")
        assert not mismatches, f"{label} version {version}:\n" + "\n".join(mismatches[:20])
        total += compared
    return total


def test_spark4_variant_table_reads_equal_at_every_version(silt_bin, spark4, work):
    table = work / "spark_variant"
    rows1 = [(i, DOCS[i].replace("'", "''")) for i in range(40)
             if i not in (len(DOCS) - 1,)]
    # Only documents Spark parses (parse_json fails on the others).
    ok = spark4.run("result = [r.id for r in spark.sql(q).collect()]",
                    q=f"SELECT id FROM VALUES {values_sql(rows1)} AS t(id, j) "
                      "WHERE try_parse_json(j) IS NOT NULL")
    rows1 = [r for r in rows1 if r[0] in set(ok)]
    spark4.run("spark.sql(q).write.format('delta').save(p)",
               q=NESTED_QUERY.replace("{values}", values_sql(rows1)), p=str(table))
    rows2 = [(1000 + i, '{"a":"second","n":' + str(i) + ',"f":' + str(i / 4) + '}')
             for i in range(10)]
    spark4.run("spark.sql(q).write.format('delta').mode('append').save(p)",
               q=NESTED_QUERY.replace("{values}", values_sql(rows2)), p=str(table))
    spark4.sql(f"DELETE FROM delta.`{table}` WHERE id % 4 = 1")
    spark4.sql(f"UPDATE delta.`{table}` SET v = parse_json('{{\"a\":\"updated\"}}') "
               "WHERE id >= 1005")
    protocol = [json.loads(line) for line in (table / "_delta_log" / "00000000000000000000.json")
                .read_text().splitlines() if '"protocol"' in line][0]["protocol"]
    assert any(f.startswith("variantType") for f in protocol["readerFeatures"]), protocol
    total = compare_every_version(silt_bin, spark4, work, table, READ_COLUMNS, "spark table")
    print(f"\n{len(versions(table))} versions, {total} values equal")


def test_spark4_shredded_variant_table_reads_equal(silt_bin, spark4, work):
    """Spark 4 with shredding enabled (delta.enableVariantShredding and
    Spark's writeShredding): the data files hold typed_value columns, which
    silt reassembles."""
    table = work / "shredded"
    docs = ['{"a":"x","b":1,"c":{"d":1.5,"e":[1,2]}}', '{"a":"y","b":"not a number"}',
            '{"b":2,"extra":true,"c":{"d":"str"}}', '[1,2,3]', '"just a string"', 'null',
            '{"a":null,"b":3,"c":{}}', '{"a":"z","b":4,"c":{"d":2.25,"e":[]}}']
    rows = [(i, d) for i, d in enumerate(docs * 4)]
    try:
        spark4.run("""
spark.conf.set('spark.sql.variant.writeShredding.enabled', 'true')
spark.conf.set('spark.sql.variant.allowReadingShredded', 'true')
spark.conf.set('spark.sql.variant.inferShreddingSchema', 'true')
spark.conf.set('spark.sql.variant.forceShreddingSchemaForTest',
               'a string, b long, c struct<d double, e array<long>>')
spark.sql(f"CREATE TABLE delta.`{p}` (id INT, v VARIANT) USING delta "
          "TBLPROPERTIES ('delta.enableVariantShredding' = 'true')")
spark.sql(q).write.format('delta').mode('append').save(p)
""", p=str(table), q=f"SELECT id, parse_json(j) AS v FROM VALUES {values_sql(rows)} AS t(id, j)")
    finally:
        spark4.run("""
for k in ['spark.sql.variant.writeShredding.enabled', 'spark.sql.variant.inferShreddingSchema',
          'spark.sql.variant.forceShreddingSchemaForTest']:
    spark.conf.unset(k)
""")
    files = list(table.glob("*.parquet"))
    shredded = any("typed_value" in pq.read_schema(f).to_string() for f in files)
    protocol = [json.loads(line) for line in (table / "_delta_log" / "00000000000000000000.json")
                .read_text().splitlines() if '"protocol"' in line][0]["protocol"]
    print(f"\nshredded files: {shredded}; protocol {protocol}")
    cols = [("json", "to_json(v)"), ("a", "variant_get(v, '$.a', 'string')"),
            ("d", "try_variant_get(v, '$.c.d', 'double')"), ("schema", "schema_of_variant(v)")]
    compare_every_version(silt_bin, spark4, work, table, cols, "shredded")
    if not shredded:
        pytest.xfail("this Spark 4 / Delta wrote no typed_value columns")


def test_golden_variant_table_reads_like_spark4(silt_bin, spark4, work):
    source = golden_dir() / "spark-variant-checkpoint"
    if not source.is_dir():
        pytest.skip("golden tables not present")
    table = work / "golden"
    shutil.copytree(source, table)
    cols = [("v", "to_json(v)"), ("array_of_variants", "to_json(array_of_variants)"),
            ("struct_of_variants", "to_json(struct_of_variants)"),
            ("map_of_variants", "to_json(map_of_variants)"),
            ("array_of_struct_of_variants", "to_json(array_of_struct_of_variants)"),
            ("struct_of_array_of_variants", "to_json(struct_of_array_of_variants)"),
            ("raw", "v")]
    total = compare_every_version(silt_bin, spark4, work, table, cols, "golden")
    assert total > 0


def test_silt_streaming_variant_table_reads_in_spark4(silt_bin, spark4, work):
    """The showcase: the seed's job keeping raw_payload as a variant
    (examples/sensor-variant.yaml, on the generator); Spark 4 reads the
    table equal to silt, sees the variantType feature, and appends to it."""
    env = dict(os.environ, SILT_VARIANT_DIR=str(work / "run"), SILT_VARIANT_TOTAL_ROWS="600",
               SILT_VARIANT_ROWS_PER_BATCH="200")
    proc = run_silt(silt_bin, "run", str(REPO / "examples" / "sensor-variant.yaml"), env=env,
                    timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = work / "run" / "table"
    log = [json.loads(line) for line in (table / "_delta_log" / "00000000000000000000.json")
           .read_text().splitlines()]
    protocol = next(a["protocol"] for a in log if "protocol" in a)
    assert protocol["minReaderVersion"] == 3 and protocol["minWriterVersion"] == 7
    assert "variantType" in protocol["readerFeatures"] and "variantType" in protocol["writerFeatures"]
    schema = json.loads(next(a["metaData"] for a in log if "metaData" in a)["schemaString"])
    assert {f["name"]: f["type"] for f in schema["fields"]}["raw_payload"] == "variant"
    cols = [("raw_payload", "raw_payload"), ("json", "to_json(raw_payload)"),
            ("power", "variant_get(raw_payload, '$.power', 'double')"),
            ("state", "variant_get(raw_payload, '$.state', 'string')"),
            ("schema", "schema_of_variant(raw_payload)")]
    select = ", ".join(f"{e} AS {n}" for n, e in cols)
    query = f"SELECT device_id, event_time, {select} FROM delta.`{table}`"
    silt = silt_rows(silt_bin, work, query, "stream")
    spark = spark_rows(spark4, query)
    key = lambda r: (r["device_id"], str(normalize(r["event_time"])))  # noqa: E731
    for r in silt + spark:
        r["k"] = key(r)
    compared, mismatches = compare(silt, spark, cols, key="k", what="stream")
    assert not mismatches, "\n".join(mismatches[:20])
    assert len(silt) == 600
    # Spark 4 appends to silt's table; silt reads both engines' rows.
    spark4.sql(f"INSERT INTO delta.`{table}` (device_id, device_type, raw_payload, event_date) "
               "SELECT 'spark-1', 'plug', parse_json('{\"power\": 1.5}'), date'2026-01-01'")
    rows = silt_rows(silt_bin, work, f"SELECT device_id, to_json(raw_payload) AS j FROM "
                                     f"delta.`{table}` WHERE device_id = 'spark-1'", "after")
    assert rows == [{"device_id": "spark-1", "j": '{"power":1.5}'}]
    print(f"\n{len(silt)} streamed rows, {compared} values equal in Spark 4")


def test_silt_variant_table_in_delta_rs(silt_bin, work):
    """delta-rs (deltalake) reads silt's variant table; where it knows the
    feature it sees the variant as its struct of binaries, which must hold
    silt's bytes."""
    env = dict(os.environ, SILT_VARIANT_DIR=str(work / "run"), SILT_VARIANT_TOTAL_ROWS="50",
               SILT_VARIANT_ROWS_PER_BATCH="50")
    proc = run_silt(silt_bin, "run", str(REPO / "examples" / "sensor-variant.yaml"), env=env,
                    timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = work / "run" / "table"
    from deltalake import DeltaTable
    try:
        got = DeltaTable(str(table)).to_pyarrow_table(columns=["device_id", "raw_payload"])
    except Exception as exc:  # delta-rs refuses features it does not know
        pytest.xfail(f"delta-rs does not read variant tables: {str(exc)[:200]}")
    out = work / "silt.parquet"
    proc = run_silt(silt_bin, "sql", f"SELECT device_id, raw_payload FROM delta.`{table}`",
                    "--format", "parquet", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    mine = sorted((r["device_id"], normalize(r["raw_payload"])) for r in pq.read_table(out).to_pylist())
    theirs = sorted((r["device_id"], normalize(r["raw_payload"])) for r in got.to_pylist())
    assert mine == theirs
