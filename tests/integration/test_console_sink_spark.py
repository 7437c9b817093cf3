"""The console sink (issue #15: "A console sink prints each batch in every
mode, as Spark's does"): silt's stdout against pyspark 3.5's console sink
for the same jobs, in append, complete and update mode, with numRows and
truncate.

Spark runs in a subprocess (its console sink prints from the JVM, whose
stdout only a subprocess's pipe can capture), all cases one after the
other, each preceded by a marker line. Both engines read JSON-lines files
with maxFilesPerTrigger 1 and trigger availableNow, so the batches are the
same. Per case the printed blocks are compared: the "Batch: N" banners and
table borders and header line exactly, the data lines exactly for
unaggregated jobs (file order is the row order in both) and as multisets
for aggregations (their row order is the hash table's in both engines), and
the "only showing top N rows" lines exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import describe, run_silt, write_input_file

SCHEMA = "id BIGINT, ts STRING, k STRING, note STRING, v DOUBLE"

ROWS = [
    [{"id": 1, "ts": "2026-01-01 00:00:05", "k": "a", "note": "short", "v": 1.5},
     {"id": 2, "ts": "2026-01-01 00:00:15", "k": "b", "note": "a note longer than twenty chars",
      "v": 2.0},
     {"id": 3, "ts": "2026-01-01 00:00:25", "k": "a", "note": None, "v": -0.25},
     {"id": 4, "ts": "2026-01-01 00:00:35", "k": "c", "note": "x", "v": 1e10}],
    [{"id": 5, "ts": "2026-01-01 00:01:05", "k": "a", "note": "tab\there", "v": 3.0},
     {"id": 6, "ts": "2026-01-01 00:01:10", "k": None, "note": "", "v": None}],
    [{"id": 7, "ts": "2026-01-01 00:02:30", "k": "b", "note": "z", "v": 7.0}],
]

# name, (Spark DataFrame code over `df`, silt transform steps), mode,
# options, ordered (row order comparable)
CASES = [
    ("append_rows", ("df", []), "append", {}, True),
    ("append_num_rows_2", ("df", []), "append", {"numRows": "2"}, True),
    ("append_no_truncate", ("df", []), "append", {"truncate": "false"}, True),
    ("complete_counts",
     ("df.groupBy('k').agg(F.count('*').alias('n'), F.sum('v').alias('total'))",
      [{"groupBy": {"keys": ["k"], "agg": ["count(*) AS n", "sum(v) AS total"]}}]),
     "complete", {}, False),
    ("update_counts",
     ("df.groupBy('k').agg(F.count('*').alias('n'), F.max('note').alias('last_note'))",
      [{"groupBy": {"keys": ["k"], "agg": ["count(*) AS n", "max(note) AS last_note"]}}]),
     "update", {}, False),
    ("append_windows",
     ("df.withColumn('ts', F.col('ts').cast('timestamp')).withWatermark('ts', '10 seconds')"
      ".groupBy(F.window('ts', '1 minute')).agg(F.count('*').alias('n'))",
      [{"select": ["CAST(ts AS TIMESTAMP) AS ts", "id", "k", "note", "v"]},
       {"withWatermark": {"eventTime": "ts", "delayThreshold": "10 seconds"}},
       {"groupBy": {"keys": ["window(ts, '1 minute')"], "agg": ["count(*) AS n"]}}]),
     "append", {"truncate": "false"}, False),
]

SPARK_SCRIPT = textwrap.dedent("""
    import json, os, sys
    from pyspark.sql import SparkSession, functions as F
    jars = sys.argv[2].split(",")
    spark = (SparkSession.builder.master("local[2]").config("spark.jars", ",".join(jars))
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for case in json.loads(open(sys.argv[1]).read()):
        print("=== case " + case["name"], flush=True)
        df = (spark.readStream.schema(case["schema"]).option("maxFilesPerTrigger", 1)
              .json(case["input"]))
        df = eval(case["code"])
        w = (df.writeStream.format("console").outputMode(case["mode"])
             .option("checkpointLocation", case["checkpoint"]))
        for k, v in case["options"].items():
            w = w.option(k, v)
        w.trigger(availableNow=True).start().awaitTermination()
        sys.stdout.flush()
    print("=== end", flush=True)
    spark.stop()
""")


def blocks(text: str):
    """The printed batches: [(banner lines, table lines)], one per batch."""
    lines = [line for line in text.splitlines() if not line.startswith("{")]
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("Batch: "):
            banner = lines[i - 1:i + 2]
            j = i + 2
            table = []
            while j < len(lines) and not (j + 1 < len(lines) and lines[j + 1].startswith("Batch: ")
                                           and lines[j].startswith("-----")):
                table.append(lines[j])
                j += 1
            while table and table[-1] == "":
                table.pop()
            out.append((banner, table))
            i = j
        else:
            i += 1
    return out


def comparable(table, ordered):
    if ordered or len(table) < 4:
        return table
    # Borders and header, the data lines as a sorted multiset, the rest.
    end = max(i for i, line in enumerate(table) if line.startswith("+"))
    return table[:3] + sorted(table[3:end]) + table[end:]


@pytest.fixture(scope="module")
def spark_output(tmp_path_factory, repo):
    work = tmp_path_factory.mktemp("console-spark")
    cases = []
    for name, (code, _), mode, options, _ in CASES:
        input_dir = work / name / "in"
        write_inputs(input_dir)
        cases.append({"name": name, "schema": SCHEMA, "input": str(input_dir), "code": code,
                      "mode": mode, "options": options,
                      "checkpoint": str(work / name / "spark-checkpoint")})
    spec = work / "cases.json"
    spec.write_text(json.dumps(cases))
    script = work / "console.py"
    script.write_text(SPARK_SCRIPT)
    jars = sorted(str(p) for p in (repo / ".cache" / "spark-jars").glob("delta-*/*.jar"))
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    proc = subprocess.run([sys.executable, str(script), str(spec), ",".join(jars)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, describe(proc)
    out = {}
    current = None
    for line in proc.stdout.splitlines():
        if line.startswith("=== "):
            current = line[len("=== case "):] if line.startswith("=== case ") else None
            if current:
                out[current] = []
            continue
        if current:
            out[current].append(line)
    return {name: "\n".join(lines) for name, lines in out.items()}


def write_inputs(input_dir: Path):
    input_dir.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(ROWS):
        write_input_file(input_dir / f"b{i}.json",
                         [json.dumps({k: v for k, v in r.items() if v is not None}) for r in rows])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_console_output_matches_spark(case, spark_output, work, silt_bin):
    name, (_, steps), mode, options, ordered = case
    write_inputs(work / "in")
    job = {
        "source": {"format": "json", "schema": SCHEMA,
                   "options": {"path": str(work / "in"), "maxFilesPerTrigger": 1}},
        "transform": steps,
        "sink": {"format": "console", "outputMode": mode, "options": options},
        "checkpointLocation": str(work / "checkpoint"),
        "trigger": {"availableNow": True},
    }
    if not steps:
        del job["transform"]
    path = work / "job.yaml"
    path.write_text(json.dumps(job) + "\n")
    proc = run_silt(silt_bin, "run", path, "--progress-json")
    assert proc.returncode == 0, describe(proc)
    expected = blocks(spark_output[name])
    got = blocks(proc.stdout)
    assert expected, spark_output[name]
    assert len(got) == len(expected), f"silt:\n{proc.stdout}\nspark:\n{spark_output[name]}"
    for (b1, t1), (b2, t2) in zip(got, expected):
        assert b1 == b2
        assert comparable(t1, ordered) == comparable(t2, ordered), (
            f"silt:\n" + "\n".join(t1) + "\nspark:\n" + "\n".join(t2))
