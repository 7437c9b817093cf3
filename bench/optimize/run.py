#!/usr/bin/env python3
"""OPTIMIZE benchmark: compact ~1 GB of small files, silt vs delta-rs vs Spark.

Builds one Delta table of FILES small snappy Parquet files (the seed's sensor
columns, partitioned by device_type; one commit listing them all, as a long
streaming run leaves them after checkpointing), copies it once per engine and
compacts each copy into ~128 MB files, one engine at a time:

  silt     silt optimize TABLE --target-size 128MB
  deltalake DeltaTable(TABLE).optimize.compact(target_size=128 MB)
  spark    OPTIMIZE delta.`TABLE` with maxFileSize 128 MB (--spark; needs the
           Delta jars of scripts/setup-spark.sh, local[2], driver memory 2g)

For each: wall time, CPU seconds (user + system of the process and its
children) and peak RSS (largest process), from wait4(). Afterwards every copy
is read back with deltalake and its row count checked.

  .venv/bin/python bench/optimize/run.py --silt build/src/silt/cli/silt [--files 1000] [--spark]
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
TS = pa.timestamp("us", tz="UTC")
DATA_COLUMNS = {
    "device_id": pa.string(),
    "event_time": TS,
    "linkquality": pa.int32(),
    "contact": pa.bool_(),
    "battery": pa.int32(),
    "power": pa.float64(),
    "voltage": pa.float64(),
    "current": pa.float64(),
    "energy": pa.float64(),
    "plug_state": pa.string(),
    "raw_payload": pa.string(),
}
DELTA_TYPES = {
    pa.string(): "string", TS: "timestamp", pa.int32(): "integer", pa.bool_(): "boolean",
    pa.float64(): "double",
}


def make_file_table(rows, seed, plug):
    rng = random.Random(seed)
    cols = {k: [] for k in DATA_COLUMNS}
    t = 1_782_115_200_000_000 + seed * 1_000_000_000
    for i in range(rows):
        t += rng.randrange(20_000_000)
        dev = rng.randrange(40)
        lq = 150 + rng.randrange(106)
        cols["event_time"].append(t)
        cols["linkquality"].append(lq)
        if plug:
            power = (750 + rng.randrange(200)) / 10.0
            voltage = (2280 + rng.randrange(40)) / 10.0
            cols["device_id"].append("plug-%03d" % dev)
            cols["contact"].append(None)
            cols["battery"].append(None)
            cols["power"].append(power)
            cols["voltage"].append(voltage)
            cols["current"].append(round(power / voltage, 3))
            cols["energy"].append((1250 + i) / 100.0)
            cols["plug_state"].append("ON")
            payload = {"power": power, "voltage": voltage, "state": "ON", "linkquality": lq}
        else:
            contact = rng.random() < 0.5
            battery = 50 + rng.randrange(50)
            cols["device_id"].append("door-%03d" % dev)
            cols["contact"].append(contact)
            cols["battery"].append(battery)
            for k in ("power", "voltage", "current", "energy", "plug_state"):
                cols[k].append(None)
            payload = {"contact": contact, "battery": battery, "linkquality": lq}
        cols["raw_payload"].append(json.dumps(payload) + " " * rng.randrange(40))
    return pa.table({k: pa.array(v, type=DATA_COLUMNS[k]) for k, v in cols.items()})


def build_table(path, files, rows_per_file):
    """FILES small files, half per device_type, and one commit adding them."""
    path.mkdir(parents=True)
    (path / "_delta_log").mkdir()
    templates = {plug: make_file_table(rows_per_file, 7 + plug, plug) for plug in (True, False)}
    adds = []
    for i in range(files):
        plug = i % 2 == 0
        part = "device_type=" + ("smart_plug" if plug else "door_window")
        rel = f"{part}/part-{i:05d}-{uuid.uuid4()}.c000.snappy.parquet"
        (path / part).mkdir(exist_ok=True)
        pq.write_table(templates[plug], path / rel, compression="snappy")
        adds.append({"add": {
            "path": rel, "partitionValues": {"device_type": part.split("=")[1]},
            "size": (path / rel).stat().st_size, "modificationTime": int(time.time() * 1000),
            "dataChange": True, "stats": json.dumps({"numRecords": rows_per_file})}})
    fields = [{"name": k, "type": DELTA_TYPES[v], "nullable": True, "metadata": {}}
              for k, v in DATA_COLUMNS.items()]
    fields.append({"name": "device_type", "type": "string", "nullable": True, "metadata": {}})
    actions = [
        {"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "WRITE",
                        "operationParameters": {"mode": "Append"}}},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps({"type": "struct", "fields": fields}),
                      "partitionColumns": ["device_type"], "configuration": {},
                      "createdTime": int(time.time() * 1000)}},
    ] + adds
    (path / "_delta_log" / f"{0:020d}.json").write_text(
        "".join(json.dumps(a) + "\n" for a in actions))
    return sum(a["add"]["size"] for a in adds)


def measure(cmd, env=None):
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({proc.returncode}):\n{out}\n{err}")
    result = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
              "peak_rss_mb": usage.ru_maxrss / 1024}
    for line in out.splitlines():
        if line.startswith("JVM "):
            _, cpu, rss = line.split()
            result["cpu_s"] += float(cpu)
            result["peak_rss_mb"] = max(result["peak_rss_mb"], float(rss))
    return result


DELTALAKE = """
import sys
from deltalake import DeltaTable
m = DeltaTable(sys.argv[1]).optimize.compact(target_size=128 * 1024 * 1024)
print(m)
"""

SPARK = """
import sys, glob, os
from pyspark.sql import SparkSession
jars = glob.glob(os.path.join(sys.argv[2], "delta-*", "*.jar"))
s = (SparkSession.builder.master("local[2]").config("spark.jars", ",".join(jars))
     .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
     .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
     .config("spark.driver.memory", "2g").config("spark.ui.enabled", "false")
     .config("spark.databricks.delta.optimize.maxFileSize", str(128 * 1024 * 1024))
     .getOrCreate())
s.sql(f"OPTIMIZE delta.`{sys.argv[1]}`").collect()
# The JVM is not a waited-for child of this process: report its own CPU time
# and peak RSS from /proc before stopping it.
pid = s.sparkContext._gateway.proc.pid
stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
ticks = os.sysconf("SC_CLK_TCK")
cpu = sum(int(x) for x in stat[11:15]) / ticks
hwm = [l for l in open(f"/proc/{pid}/status") if l.startswith("VmHWM")][0].split()[1]
print("JVM", cpu, int(hwm) / 1024)
s.stop()
"""


def count_rows(table):
    from deltalake import DeltaTable
    dt = DeltaTable(str(table))
    return sum(f.metadata.num_rows for f in dt.to_pyarrow_dataset().get_fragments()), \
        len(dt.file_uris())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--silt", default=str(REPO / "build/src/silt/cli/silt"))
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--rows-per-file", type=int, default=36000)
    ap.add_argument("--spark", action="store_true")
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    work = Path(args.dir or tempfile.mkdtemp(prefix="silt-optimize-bench-"))
    source = work / "source"
    if not source.exists():
        bytes_in = build_table(source, args.files, args.rows_per_file)
    else:
        bytes_in = sum(p.stat().st_size for p in source.rglob("*.parquet"))
    print(f"input: {args.files} files, {bytes_in / 2**20:.0f} MiB, "
          f"{args.files * args.rows_per_file} rows, in {work}", flush=True)
    engines = [
        ("silt", lambda t: [args.silt, "optimize", str(t), "--target-size", "128MB"]),
        ("deltalake", lambda t: [sys.executable, "-c", DELTALAKE, str(t)]),
    ]
    if args.spark:
        jars = REPO / ".cache" / "spark-jars"
        engines.append(("spark", lambda t: [sys.executable, "-c", SPARK, str(t), str(jars)]))
    results = {}
    for name, cmd in engines:
        table = work / name
        if table.exists():
            shutil.rmtree(table)
        shutil.copytree(source, table)
        subprocess.run(["sync"], check=False)
        results[name] = measure(cmd(table))
        rows, files = count_rows(table)
        assert rows == args.files * args.rows_per_file, (name, rows)
        results[name]["files_after"] = files
        print(name, json.dumps(results[name]), flush=True)
        shutil.rmtree(table)
    print(f"{'engine':<10} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12} {'files after':>12}")
    for name, r in results.items():
        print(f"{name:<10} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} {r['peak_rss_mb']:>12.0f} "
              f"{r['files_after']:>12}")


if __name__ == "__main__":
    main()
