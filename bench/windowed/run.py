#!/usr/bin/env python3
"""Windowed aggregation benchmark (issue #15): silt against Spark `local[1]`,
side by side in one run, on the seed's events from Kafka.

  .venv/bin/python bench/windowed/run.py --silt build/src/silt/cli/silt \
      [--events 1000000] [--max-offsets 100000] [--runs 1] [--engine silt --engine spark]

Starts a throwaway Kafka 4.1.0 on loopback (tests/integration/
kafka_service.py), fills a 3-partition topic with `silt produce` (the seed's
2 devices, as bench/e2e workload A), then each engine drains it with
availableNow: the seed's from_json and select list, withWatermark 5 minutes,
groupBy(window(event_time, '1 minute'), device_id) with count(*),
avg(power), max(power), append mode into a local Delta table. Measured as
bench/e2e measures (bench/e2e/measure.py): CPU seconds (user + system) and
peak RSS of the engine's whole process tree; also the CPU between the first
and the last table commit (the batches after the first, without start-up).
The tables of the engines must hold the same rows (window, device_id, n,
avg_power, max_power), else the run is reported as failed. Prints a Markdown table and writes the raw numbers
as JSON (--json).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from argparse import Namespace
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "bench" / "e2e"))

import engines as eng  # noqa: E402
import kafka_service  # noqa: E402
import measure  # noqa: E402
import run as e2e  # noqa: E402

SILT_JOB = """\
name: windowed-agg
source:
  format: kafka
  options:
    kafka.bootstrap.servers: {bootstrap}
    subscribe: {topic}
    startingOffsets: earliest
    maxOffsetsPerTrigger: {max_offsets}
transform:
  - select:
      - from_json(CAST(value AS STRING), 'device_id STRING NOT NULL, device_type STRING NOT NULL, ingested_at STRING NOT NULL, payload STRING') AS e
  - select:
      - e.device_id
      - e.device_type
      - to_timestamp(e.ingested_at) AS event_time
      - CAST(get_json_object(e.payload, '$.linkquality') AS INT) AS linkquality
      - CAST(get_json_object(e.payload, '$.contact') AS BOOLEAN) AS contact
      - CAST(get_json_object(e.payload, '$.battery') AS INT) AS battery
      - CAST(get_json_object(e.payload, '$.power') AS DOUBLE) AS power
      - CAST(get_json_object(e.payload, '$.voltage') AS DOUBLE) AS voltage
      - CAST(get_json_object(e.payload, '$.current') AS DOUBLE) AS current
      - CAST(get_json_object(e.payload, '$.energy') AS DOUBLE) AS energy
      - get_json_object(e.payload, '$.state') AS plug_state
      - e.payload AS raw_payload
      - current_timestamp() AS processed_at
  - withWatermark: {{ eventTime: event_time, delayThreshold: 5 minutes }}
  - groupBy:
      keys: [ "window(event_time, '1 minute')", device_id ]
      agg: [ "count(*) AS n", "avg(power) AS avg_power", "max(power) AS max_power" ]
sink:
  format: delta
  outputMode: append
  path: {table}
checkpointLocation: {checkpoint}
spark.sql.shuffle.partitions: 2
trigger: {{ availableNow: true }}
"""


def log(msg: str):
    print(f"[windowed {datetime.now(timezone.utc):%H:%M:%S}] {msg}", flush=True)


def command(engine: str, args, topic: str, bootstrap: str, base: Path) -> list:
    table, checkpoint = base / "table", base / "checkpoint"
    if engine == "spark":
        jars = ",".join(str(j) for j in eng.spark_jars())
        return [str(eng.VENV_PY), str(HERE / "spark_windowed.py"), "--bootstrap", bootstrap,
                "--topic", topic, "--table", str(table), "--checkpoint", str(checkpoint),
                "--max-offsets", str(args.max_offsets), "--jars", jars,
                "--local-dir", str(base / "spark-local")]
    binary = args.silt if engine == "silt" else engine[len("silt@"):]
    job = base / "job.yaml"
    job.write_text(SILT_JOB.format(bootstrap=bootstrap, topic=topic, max_offsets=args.max_offsets,
                                   table=table, checkpoint=checkpoint))
    return [str(Path(binary).resolve()), "run", str(job)]


def table_rows(table: Path) -> list:
    from deltalake import DeltaTable
    t = DeltaTable(str(table)).to_pyarrow_table()
    rows = []
    for r in t.to_pylist():
        w = r["window"]
        avg = r["avg_power"]
        rows.append((w["start"].replace(tzinfo=None).isoformat(), r["device_id"], r["n"],
                     None if avg is None else round(avg, 9), r["max_power"]))
    return sorted(rows, key=lambda x: (x[0], x[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--silt", default=str(REPO / "build" / "src" / "silt" / "cli" / "silt"))
    ap.add_argument("--engine", action="append",
                    help="silt, silt@BINARY or spark (repeatable; default silt and spark)")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--devices", type=int, default=2, help="`silt produce --devices` (seed: 2)")
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--max-offsets", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    args.engine = args.engine or ["silt", "spark"]
    args.silt = str(Path(args.silt).resolve())

    work = Path(tempfile.mkdtemp(prefix="silt-bench-windowed-"))
    broker = kafka_service.start()
    log(f"Kafka on {broker.bootstrap}, work dir {work}")
    results = {"events": args.events, "devices": args.devices, "max_offsets": args.max_offsets,
               "load_before": os.getloadavg(), "runs": []}
    tables = {}
    try:
        bench = e2e.Bench(Namespace(engine=[], silt=args.silt, silt_option=None,
                                    devices=args.devices), broker, work)
        topic = "windowed"
        bench.create_topic(topic, args.partitions)
        t0 = time.time()
        bench.silt_produce(topic, args.events)
        log(f"produced {args.events:,} events in {time.time() - t0:.1f} s")
        for r in range(args.runs):
            for engine in args.engine:
                base = work / f"{r}" / engine.replace("/", "_")
                base.mkdir(parents=True)
                load = os.getloadavg()[0]
                m = measure.Monitored(command(engine, args, topic, broker.bootstrap, base),
                                      eng.engine_env({}), base / "engine.log")
                finished = m.wait(args.timeout)
                m.stop()
                res = m.result()
                res.update(engine=engine, run=r, load1=load, timed_out=not finished)
                try:
                    rows = table_rows(base / "table")
                    res["rows"] = len(rows)
                    res["events_in_rows"] = sum(x[2] for x in rows)
                    tables.setdefault(engine, rows)
                except Exception as e:  # noqa: BLE001 - reported as a failed run
                    res["error"] = f"reading the table: {e}"
                res["ok"] = finished and res["returncode"] == 0 and "error" not in res
                if not res["ok"]:
                    res.setdefault("error", m.tail(1500))
                cs = measure.commits(base / "table")
                res["versions"] = len(cs)
                # Steady state: the CPU between the first table commit (batch
                # 0) and the last, over the events of the batches after the
                # first: start-up, JIT and the first batch's planning left out.
                if len(cs) >= 2 and args.events > args.max_offsets:
                    cpu = m.cpu_at(cs[-1]["time"] - m.t0) - m.cpu_at(cs[0]["time"] - m.t0)
                    res["steady_cpu_s"] = cpu
                    res["steady_events_per_cpu_s"] = (args.events - args.max_offsets) / cpu \
                        if cpu > 0 else None
                res["events_per_cpu_s"] = args.events / res["cpu_s"] if res["cpu_s"] else None
                res["events_per_s"] = args.events / res["wall_s"]
                results["runs"].append(res)
                log(f"run {r} {engine}: ok={res['ok']} rows={res.get('rows')} "
                    f"wall={res['wall_s']:.1f}s cpu={res['cpu_s']:.1f}s "
                    f"rss={res['peak_rss_mb']:.0f}MB load={load:.1f}")
                if not args.keep:
                    shutil.rmtree(base / "spark-local", ignore_errors=True)
    finally:
        for m in list(measure.LIVE):
            m.stop(grace=5)
        broker.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    results["load_after"] = os.getloadavg()
    names = list(tables)
    same = all(tables[n] == tables[names[0]] for n in names)
    results["tables_equal"] = same
    if not same:
        for n in names:
            print(n, len(tables[n]), tables[n][:3], file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    print_table(results)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else math.nan


def print_table(results):
    print(f"\n{results['events']:,} seed events, {results['devices']} devices, "
          f"maxOffsetsPerTrigger {results['max_offsets']:,}; load average "
          f"{results['load_before'][0]:.1f} before, {results['load_after'][0]:.1f} after; "
          f"tables equal: {'yes' if results['tables_equal'] else 'NO'}\n")
    print("| engine | run | ok | windows written | wall s | CPU s | events per CPU s "
          "| after batch 0: CPU s | after batch 0: events per CPU s | peak RSS MB |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results["runs"]:
        steady = r.get("steady_events_per_cpu_s")
        print(f"| {r['engine']} | {r['run']} | {'yes' if r['ok'] else 'NO'} | {r.get('rows', '-')} "
              f"| {r['wall_s']:.1f} | {r['cpu_s']:.2f} | {r['events_per_cpu_s']:,.0f} "
              f"| {r.get('steady_cpu_s', float('nan')):.2f} "
              f"| {'-' if steady is None else f'{steady:,.0f}'} | {r['peak_rss_mb']:.0f} |")
    by = {}
    for r in results["runs"]:
        if r["ok"]:
            by.setdefault(r["engine"], []).append(r)
    if "silt" in by and "spark" in by:
        s_rate = median([r["events_per_cpu_s"] for r in by["silt"]])
        k_rate = median([r["events_per_cpu_s"] for r in by["spark"]])
        s_rss = median([r["peak_rss_mb"] for r in by["silt"]])
        k_rss = median([r["peak_rss_mb"] for r in by["spark"]])
        steady = [median([r.get("steady_events_per_cpu_s") or math.nan for r in by[e]])
                  for e in ("silt", "spark")]
        print(f"\nafter batch 0 (steady state): silt / Spark {steady[0] / steady[1]:.1f}x")
        print(f"silt / Spark events per CPU s: {s_rate / k_rate:.1f}x (target >= 20x: "
              f"{'met' if s_rate / k_rate >= 20 else 'missed'}); peak RSS silt / Spark: "
              f"{s_rss / k_rss:.3f} (target <= 0.1: {'met' if s_rss / k_rss <= 0.1 else 'missed'})")


if __name__ == "__main__":
    main()
