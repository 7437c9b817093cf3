"""Records Spark 3.5's answers for the expression corpus.

Reads exprs.txt (one Spark SQL expression per line; `#` comments; a line
"T <expr>" is evaluated over the input table of table.tsv as
`SELECT <expr> FROM t`, others as `SELECT <expr>`), evaluates every
expression with pyspark (local[1], UTC session time zone, ANSI off) and
writes cases.jsonl, one case per line:

  {"expr": ..., "type": <simpleString>, "expected": <text as spark-sql prints
   it, null for NULL>}                                   scalar cases
  {"expr": ..., "table": true, "type": ..., "expected": [<one per row>]}
  {"expr": ..., "spark_error": <first line>, "type": null, "expected": null}

and "known_difference": <reason> for the expressions listed in
known_differences.tsv (expr<TAB>reason): cases where silt deliberately or
knowingly differs; they count as not passing.

Run from the repo root:
  .venv/bin/python tests/integration/data/expr/generate_expected.py
  .venv/bin/python tests/integration/data/expr/generate_expected.py --relabel
(--relabel only re-applies known_differences.tsv to cases.jsonl, no Spark.)
The values are HiveResult.hiveResultString's, the text spark-sql prints.
"""

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPRS = HERE / "exprs.txt"
TABLE = HERE / "table.tsv"
CASES = HERE / "cases.jsonl"
KNOWN = HERE / "known_differences.tsv"
# The temp view of the input table (named so as not to clash with other tests).
VIEW = "silt_expr_t"


def load_exprs():
    out = []
    for line in EXPRS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("T "):
            out.append((line[2:], True))
        else:
            out.append((line, False))
    return out


def load_known():
    known = {}
    if KNOWN.exists():
        for line in KNOWN.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                expr, reason = line.split("\t", 1)
                known[expr] = reason
    return known


def table_sql():
    """The input table as an inline VALUES relation with exact column types."""
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    header = [h.split(" ", 1) for h in lines[0].split("\t")]
    rows = []
    for line in lines[1:]:
        if not line:
            continue
        cells = line.split("\t")
        rows.append(
            "(" + ", ".join(f"CAST({c} AS {t})" for c, (_, t) in zip(cells, header)) + ")"
        )
    names = ", ".join(name for name, _ in header)
    return f"SELECT * FROM VALUES {', '.join(rows)} AS t({names})"


def make_session():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("silt-expr-corpus")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.ansi.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def register_table(spark):
    spark.sql(table_sql()).createOrReplaceTempView(VIEW)


def evaluate(spark, expr, table):
    """Spark's answer: (type, [texts or None]) or an error string."""
    query = f"SELECT ({expr}) AS x" + (f" FROM {VIEW}" if table else "")
    try:
        df = spark.sql(query)
        dtype = df.schema.fields[0].dataType.simpleString()
        plan = df._jdf.queryExecution().executedPlan()
        jvm = spark._jvm
        texts = jvm.org.apache.spark.sql.execution.HiveResult.hiveResultString(plan)
        texts = list(jvm.scala.collection.JavaConverters.seqAsJavaList(texts))
        nulls = [row[0] for row in df.selectExpr("x IS NULL").collect()]
    except Exception as e:  # noqa: BLE001 - Spark's analysis and runtime errors alike
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return None, message
    values = [None if is_null else text for text, is_null in zip(texts, nulls)]
    return (dtype, values), None


def case_for(spark, expr, table, known):
    result, error = evaluate(spark, expr, table)
    case = {"expr": expr}
    if table:
        case["table"] = True
    if error is not None:
        case.update({"type": None, "expected": None, "spark_error": error[:300]})
    else:
        dtype, values = result
        case["type"] = dtype
        case["expected"] = values if table else values[0]
    if expr in known:
        case["known_difference"] = known[expr]
    return case


def relabel():
    known = load_known()
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line]
    for case in cases:
        case.pop("known_difference", None)
        if case["expr"] in known:
            case["known_difference"] = known[case["expr"]]
    write_cases(cases)
    print(f"relabelled {len(cases)} cases ({len(known)} known differences)")


def write_cases(cases):
    with CASES.open("w", encoding="utf-8") as f:
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")


def main():
    if "--relabel" in sys.argv[1:]:
        relabel()
        return
    spark = make_session()
    register_table(spark)
    known = load_known()
    cases = [case_for(spark, expr, table, known) for expr, table in load_exprs()]
    write_cases(cases)
    errors = sum(1 for c in cases if "spark_error" in c)
    print(f"wrote {len(cases)} cases ({errors} where Spark reports an error) to {CASES}")
    spark.stop()


if __name__ == "__main__":
    main()
