"""Expression benchmark: silt vs DuckDB vs Spark local[1], one core each.

Workloads over N seed-shaped rows (the seed job's parsed event: device_id,
device_type, ingested_at, payload JSON text), the same rows for every
engine:
  select  the seed job's second select list (to_timestamp, nine
          get_json_object + CAST, the raw payload, current_timestamp)
  mix     WHERE device_type = 'smart_plug' AND power > 5, then three
          projected columns
silt runs build/src/silt/expr/silt_expr_seed_timing (the expressions over
in-memory batches, shared JSON parse per row; the mix's WHERE bound as a
BoundFilter sharing the select list's session, as the stream transform
binds a where step and the select after it); DuckDB runs the SQL with
threads=1 into a temp table; Spark runs local[1] over a cached DataFrame and
writes to the noop sink. Rows/s per core are rows / CPU seconds of the
engine's process (silt: the evaluating thread; DuckDB: the Python process
running it; Spark: the JVM, all of its threads), so other load on a shared
machine does not count; wall-clock rows/s are printed too. Each engine's best
run counts. Writes results.json.

  .venv/bin/python bench/expr/run.py [--rows 1000000] [--build build]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SELECT = [
    "device_id",
    "device_type",
    "to_timestamp(ingested_at) AS event_time",
    "CAST(get_json_object(payload, '$.linkquality') AS INT) AS linkquality",
    "CAST(get_json_object(payload, '$.contact') AS BOOLEAN) AS contact",
    "CAST(get_json_object(payload, '$.battery') AS INT) AS battery",
    "CAST(get_json_object(payload, '$.power') AS DOUBLE) AS power",
    "CAST(get_json_object(payload, '$.voltage') AS DOUBLE) AS voltage",
    "CAST(get_json_object(payload, '$.current') AS DOUBLE) AS current",
    "CAST(get_json_object(payload, '$.energy') AS DOUBLE) AS energy",
    "get_json_object(payload, '$.state') AS plug_state",
    "payload AS raw_payload",
    "current_timestamp() AS processed_at",
]
MIX_WHERE = "device_type = 'smart_plug' AND CAST(get_json_object(payload, '$.power') AS DOUBLE) > 5.0"
MIX_SELECT = [
    "device_id",
    "CAST(get_json_object(payload, '$.power') AS DOUBLE) * 2 AS double_power",
    "upper(device_type) AS kind",
]


def seed_row(i):
    """The same rows as silt_expr_seed_timing's SeedMessage."""
    if i % 2 == 0:
        payload = (f'{{"power": {i % 100}.{i % 10}, "voltage": 230.1, "current": 0.37, '
                   f'"energy": 12.5, "state": "ON", "linkquality": {i % 255}}}')
        return (f"smart-plug-{i % 7:02d}", "smart_plug",
                f"2026-06-22T08:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1000000:06d}+00:00", payload)
    payload = f'{{"contact": false, "battery": {i % 100}, "linkquality": {i % 255}}}'
    return (f"door-{i % 5:02d}", "door_window", "2026-06-22T08:21:10.441+00:00", payload)


def arrow_table(rows):
    import pyarrow as pa

    cols = list(zip(*(seed_row(i) for i in range(rows))))
    return pa.table({name: pa.array(col) for name, col in
                     zip(["device_id", "device_type", "ingested_at", "payload"], cols)})


def duckdb_sql(expr):
    """Spark SQL -> DuckDB for the functions used here."""
    expr = re.sub(r"get_json_object\(payload, '([^']+)'\)", r"json_extract_string(payload, '\1')", expr)
    expr = expr.replace("to_timestamp(ingested_at)", "CAST(ingested_at AS TIMESTAMPTZ)")
    expr = expr.replace("current_timestamp()", "current_timestamp")
    return expr.replace("CAST(json_extract_string", "TRY_CAST(json_extract_string")


def run_silt(build, rows):
    tool = Path(build) / "src" / "silt" / "expr" / "silt_expr_seed_timing"
    out = subprocess.run([str(tool), str(rows)], capture_output=True, text=True, check=True).stdout
    def best(label):
        runs = re.findall(re.escape(label) + r": (\d+) rows.* in ([\d.]+) s CPU \(([\d.]+) s wall\)", out)
        return {"cpu": max(int(r) / float(c) for r, c, _ in runs),
                "wall": max(int(r) / float(w) for r, _, w in runs)}

    return {"select": best("seed select list, shared JSON parse (BindSession)"),
            "mix": best("filter + projection mix, BoundFilter + shared session")}, out


def run_duckdb(table, rows):
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads=1")
    con.register("src", table)
    con.execute("CREATE TABLE t AS SELECT * FROM src")
    queries = {
        "select": "SELECT " + ", ".join(duckdb_sql(e) for e in SELECT) + " FROM t",
        "mix": "SELECT " + ", ".join(duckdb_sql(e) for e in MIX_SELECT) +
               " FROM t WHERE " + duckdb_sql(MIX_WHERE),
    }
    result = {}
    for name, sql in queries.items():
        cpu, wall = [], []
        for _ in range(3):
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            con.execute(f"CREATE OR REPLACE TEMP TABLE r AS {sql}")
            cpu.append(time.process_time() - cpu_start)
            wall.append(time.perf_counter() - wall_start)
        result[name] = {"cpu": rows / min(cpu), "wall": rows / min(wall)}
    return result


def jvm_cpu_seconds(spark):
    """User + system CPU seconds of the Spark driver JVM (all its threads)."""
    pid = spark.sparkContext._gateway.proc.pid
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_spark(table, rows):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("silt-expr-bench")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.memory", "4g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    import tempfile

    import pyarrow.parquet as pq

    path = Path(tempfile.mkdtemp(prefix="silt-expr-bench-")) / "rows.parquet"
    pq.write_table(table, path)
    df = spark.read.parquet(str(path)).cache()
    df.count()
    result = {}
    for name, make in {
        "select": lambda: df.selectExpr(*SELECT),
        "mix": lambda: df.where(MIX_WHERE).selectExpr(*MIX_SELECT),
    }.items():
        cpu, wall = [], []
        for _ in range(3):
            cpu_start, wall_start = jvm_cpu_seconds(spark), time.perf_counter()
            make().write.format("noop").mode("overwrite").save()
            cpu.append(jvm_cpu_seconds(spark) - cpu_start)
            wall.append(time.perf_counter() - wall_start)
        result[name] = {"cpu": rows / min(cpu), "wall": rows / min(wall)}
    spark.stop()
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--build", default=str(REPO / "build"))
    parser.add_argument("--skip-spark", action="store_true")
    args = parser.parse_args()
    silt, silt_out = run_silt(args.build, args.rows)
    table = arrow_table(args.rows)
    duck = run_duckdb(table, args.rows)
    spark = None if args.skip_spark else run_spark(table, args.rows)
    results = {"rows": args.rows, "silt": silt, "duckdb": duck, "spark": spark}
    print(silt_out.strip())
    for clock in ("cpu", "wall"):
        print(f"rows/s per {'CPU second' if clock == 'cpu' else 'wall second'}:")
        print(f"{'workload':<8} {'silt':>14} {'duckdb':>14} {'spark':>14}"
              f" {'silt/duckdb':>11} {'silt/spark':>10}")
        for name in ("select", "mix"):
            s, d = silt[name][clock], duck[name][clock]
            p = spark[name][clock] if spark else float("nan")
            print(f"{name:<8} {s:>14,.0f} {d:>14,.0f} {p:>14,.0f} {s / d:>11.2f} {s / p:>10.1f}")
    (Path(__file__).resolve().parent / "results.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
