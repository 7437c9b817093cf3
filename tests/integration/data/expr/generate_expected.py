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

A line may start with settings before the optional "T ": "@ansi "
(spark.sql.ansi.enabled=true; the case gets "ansi": true) and "@tz=<zone> "
(spark.sql.session.timeZone=<zone>, the table's cells read in that zone
too; the case gets "tz": <zone>). A generator at the top of the expression
(explode, window with its row expansion) records all of its rows for a
table line, the first row otherwise.

"known_difference": <reason> marks the expressions listed in
known_differences.tsv (<key><TAB>reason, the key being the settings
prefix and the expression, e.g. "@ansi 1/0"): cases where silt deliberately
or knowingly differs; they count as not passing.

Run from the repo root:
  .venv/bin/python tests/integration/data/expr/generate_expected.py
  .venv/bin/python tests/integration/data/expr/generate_expected.py --relabel
  .venv/bin/python tests/integration/data/expr/generate_expected.py --missing
(--relabel only re-applies known_differences.tsv to cases.jsonl, no Spark;
--missing evaluates only the lines cases.jsonl has no case for yet and keeps
the recorded ones.)
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


def parse_line(line):
    """(expr, table, conf) of one exprs.txt line; conf has "ansi" / "tz"."""
    conf = {}
    while line.startswith("@"):
        setting, _, line = line.partition(" ")
        if setting == "@ansi":
            conf["ansi"] = True
        elif setting.startswith("@tz="):
            conf["tz"] = setting[4:]
        else:
            raise ValueError(f"unknown setting {setting!r} in exprs.txt")
    if line.startswith("T "):
        return line[2:], True, conf
    return line, False, conf


def case_key(case):
    """The known_differences.tsv key of a case: settings prefix + expr."""
    prefix = ("@ansi " if case.get("ansi") else "") + (f"@tz={case['tz']} " if "tz" in case else "")
    return prefix + case["expr"]


def load_exprs():
    return [
        parse_line(line)
        for line in EXPRS.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]


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


def evaluate(spark, expr, table, conf=None):
    """Spark's answer: (type, [texts or None]) or an error string."""
    conf = conf or {}
    if not conf:
        return _evaluate(spark, expr, table)
    spark.conf.set("spark.sql.ansi.enabled", "true" if conf.get("ansi") else "false")
    spark.conf.set("spark.sql.session.timeZone", conf.get("tz", "UTC"))
    try:
        if table and "tz" in conf:
            register_table(spark)
        return _evaluate(spark, expr, table)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", "false")
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        if table and "tz" in conf:
            register_table(spark)


def _evaluate(spark, expr, table):
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


def case_for(spark, expr, table, known, conf=None):
    conf = conf or {}
    result, error = evaluate(spark, expr, table, conf)
    case = {"expr": expr}
    if table:
        case["table"] = True
    case.update(conf)
    if error is not None:
        case.update({"type": None, "expected": None, "spark_error": error[:300]})
    else:
        dtype, values = result
        case["type"] = dtype
        case["expected"] = values if table else (values[0] if values else None)
    if case_key(case) in known:
        case["known_difference"] = known[case_key(case)]
    return case


def relabel():
    known = load_known()
    cases = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line]
    for case in cases:
        case.pop("known_difference", None)
        if case_key(case) in known:
            case["known_difference"] = known[case_key(case)]
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
    recorded = {}
    if "--missing" in sys.argv[1:] and CASES.exists():
        for line in CASES.read_text(encoding="utf-8").splitlines():
            if line:
                case = json.loads(line)
                recorded[(case_key(case), bool(case.get("table")))] = case
    cases = []
    for expr, table, conf in load_exprs():
        case = recorded.get((case_key({"expr": expr, **conf}), table))
        if case is None:
            case = case_for(spark, expr, table, known, conf)
        cases.append(case)
    write_cases(cases)
    errors = sum(1 for c in cases if "spark_error" in c)
    print(f"wrote {len(cases)} cases ({errors} where Spark reports an error) to {CASES}")
    spark.stop()


if __name__ == "__main__":
    main()
