"""Records Spark 3.5's answers for the JSON differential corpus.

inputs.txt holds the inputs (one Python bytes expression per line: odd and
malformed JSON, invalid UTF-8, deep nesting, ...), queries.txt the queries
over them (one Spark SQL expression per line over the STRING column `j`;
"@row " marks a query evaluated once per input with `j` replaced by the
input as a constant). This script evaluates every query with pyspark
(local[1], UTC session time zone, ANSI off) and writes expected.jsonl, one
line per query:

  {"query": ..., "row": false, "type": <simpleString>, "values": [<text as
   spark-sql prints it, null for NULL, one per input>]}
  {"query": ..., "row": false, "error": <first line>}     (the query fails)
  {"query": ..., "row": true, "type": ..., "values": [<text | null |
   {"error": <first line>}, one per input>]}

An input reaches Spark as bytes: the view's `j` is CAST(b AS STRING) of a
BINARY column, so invalid UTF-8 is handed to the JSON parser as Spark's
UTF8String holds it. Strings in the values are read through Java (invalid
UTF-8 shows as U+FFFD).

Run from the repo root:
  .venv/bin/python tests/integration/data/json/generate_expected.py
  .venv/bin/python tests/integration/data/json/generate_expected.py --missing
(--missing evaluates only the queries expected.jsonl has no record of yet, for
queries or inputs added later.)
"""

import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs.txt"
QUERIES = HERE / "queries.txt"
EXPECTED = HERE / "expected.jsonl"
VIEW = "silt_json_corpus"
COLUMN = re.compile(r"\bj\b")


def load_inputs():
    """The inputs as bytes, in file order."""
    out = []
    for line in INPUTS.read_text(encoding="ascii").splitlines():
        if line.strip() and not line.startswith("#"):
            value = eval(line, {"__builtins__": {}})  # noqa: S307 - our own data file
            if not isinstance(value, bytes):
                raise ValueError(f"not a bytes expression: {line}")
            out.append(value)
    return out


def load_queries():
    """(query, per_row) in file order."""
    out = []
    for line in QUERIES.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("@row "):
            out.append((line[5:], True))
        else:
            out.append((line, False))
    return out


def constant(data: bytes) -> str:
    """The input as a Spark SQL constant of type STRING holding its bytes."""
    return f"CAST(X'{data.hex().upper()}' AS STRING)"


def with_input(query: str, data: bytes) -> str:
    return COLUMN.sub(lambda _: constant(data), query)


def make_session():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("silt-json-corpus")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.ansi.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def register_inputs(spark, inputs):
    from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

    schema = StructType([StructField("id", IntegerType()), StructField("b", BinaryType())])
    df = spark.createDataFrame([(i, bytearray(data)) for i, data in enumerate(inputs)], schema)
    df.coalesce(1).selectExpr("id", "CAST(b AS STRING) AS j").createOrReplaceTempView(VIEW)


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:300]


def _run(spark, sql):
    """(type, [text or None]) of the single column `x` of `sql`."""
    df = spark.sql(sql)
    dtype = df.schema.fields[0].dataType.simpleString()
    plan = df._jdf.queryExecution().executedPlan()
    jvm = spark._jvm
    texts = jvm.org.apache.spark.sql.execution.HiveResult.hiveResultString(plan)
    texts = list(jvm.scala.collection.JavaConverters.seqAsJavaList(texts))
    nulls = [row[0] for row in df.selectExpr("x IS NULL").collect()]
    return dtype, [None if is_null else text for text, is_null in zip(texts, nulls)]


def table_sql(query: str) -> str:
    if query.startswith("json_tuple("):
        # The generator's columns c0, c1, ... as one struct value.
        return f"SELECT struct(*) AS x FROM (SELECT {query} FROM {VIEW})"
    return f"SELECT ({query}) AS x FROM (SELECT * FROM {VIEW})"


def evaluate(spark, query, per_row, inputs):
    """One expected.jsonl record."""
    record = {"query": query, "row": per_row}
    if not per_row:
        try:
            dtype, values = _run(spark, table_sql(query))
        except Exception as e:  # noqa: BLE001 - analysis and runtime errors alike
            record["error"] = _first_line(e)
            return record
        record["type"] = dtype
        record["values"] = values
        return record
    values = [None] * len(inputs)
    types = []
    _evaluate_rows(spark, query, inputs, list(range(len(inputs))), values, types)
    record["type"] = types[0] if types else None
    record["values"] = values
    return record


def _evaluate_rows(spark, query, inputs, rows, values, types):
    """Evaluates `query` for the inputs `rows` (as one UNION ALL query; when
    that fails, halves until the failing inputs are found)."""
    sql = " UNION ALL ".join(f"SELECT ({with_input(query, inputs[i])}) AS x" for i in rows)
    try:
        dtype, texts = _run(spark, sql)
    except Exception as e:  # noqa: BLE001 - analysis and runtime errors alike
        if len(rows) == 1:
            values[rows[0]] = {"error": _first_line(e)}
            return
        half = len(rows) // 2
        _evaluate_rows(spark, query, inputs, rows[:half], values, types)
        _evaluate_rows(spark, query, inputs, rows[half:], values, types)
        return
    types.append(dtype)
    for i, text in zip(rows, texts):
        values[i] = text


def evaluate_all(spark, inputs, queries):
    register_inputs(spark, inputs)
    return [evaluate(spark, query, per_row, inputs) for query, per_row in queries]


def main():
    inputs = load_inputs()
    queries = load_queries()
    recorded = {}
    if "--missing" in sys.argv[1:] and EXPECTED.exists():
        for line in EXPECTED.read_text(encoding="utf-8").split("\n"):
            if line:
                record = json.loads(line)
                recorded[(record["query"], record["row"])] = record
    spark = make_session()
    register_inputs(spark, inputs)
    records = [
        recorded.get((query, per_row)) or evaluate(spark, query, per_row, inputs)
        for query, per_row in queries
    ]
    spark.stop()
    with EXPECTED.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} queries over {len(inputs)} inputs to {EXPECTED}")


if __name__ == "__main__":
    main()
