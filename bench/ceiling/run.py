#!/usr/bin/env python3
"""The ceiling benchmark (issue #22): how close silt gets to the physical
limit of its own job on this machine.

The same events (workload A's: `silt produce` into a 3-partition topic) go
through silt and through each unavoidable stage alone, on one thread:

  json     simdjson On-Demand: envelope + payload, every field read
           (silt_ceiling_bench json)
  encode   a Parquet writer, uncompressed, on the columns silt wrote: silt's
           own (silt_ceiling_bench parquet) and Arrow C++'s (pyarrow); the
           cheaper of the two counts
  snappy   snappy alone on the uncompressed pages (silt_ceiling_bench snappy)

ceiling = events / (json + encode + snappy) CPU seconds, the rate of a
program that did nothing but these three things. silt's figure is workload
A as bench/e2e measures it (Kafka -> Delta, availableNow, CPU = user +
system of the process), plus the same events from a local text file (no
Kafka client) to show what the client costs. The report gives silt's rate
as a share of the ceiling.

  .venv/bin/python bench/ceiling/run.py --silt build/src/silt/cli/silt \
      --bench build/bench/ceiling/silt_ceiling_bench [--events 1000000]

Writes bench/results/<date>-<machine>-ceiling.{md,json} (or --out PREFIX).
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "bench" / "e2e"))

import engines as eng  # noqa: E402
import kafka_service  # noqa: E402
import measure  # noqa: E402

TOPIC = "ceiling-a"
PARTITIONS = 3


def log(msg: str):
    print(f"[ceiling {datetime.now(timezone.utc):%H:%M:%S}] {msg}", flush=True)


def dump_topic(bootstrap: str, count: int, out: Path):
    """Every record value of the topic, one per line, partition by partition
    (the bytes silt reads)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "ceiling-dump",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    written = 0
    try:
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        with open(out, "wb") as f:
            deadline = time.time() + 600
            while written < count and time.time() < deadline:
                for msg in consumer.consume(10000, timeout=1.0):
                    if msg.error():
                        raise RuntimeError(str(msg.error()))
                    value = msg.value()
                    if b"\n" in value:
                        raise RuntimeError("a record holds a newline; one-per-line dump breaks")
                    f.write(value + b"\n")
                    written += 1
    finally:
        consumer.close()
    if written != count:
        raise RuntimeError(f"read back {written} of {count} records")


def run_monitored(argv: list, env: dict, work: Path, name: str) -> dict:
    m = measure.Monitored(argv, env, work / f"{name}.log")
    finished = m.wait(1800)
    m.stop()
    res = m.result()
    if not finished or res["returncode"] != 0:
        raise RuntimeError(f"{name} failed (rc={res['returncode']}): {m.tail(2000)}")
    return res


def silt_kafka(args, broker, work: Path) -> dict:
    spec = eng.RunSpec(broker.bootstrap, TOPIC, work / "kafka" / "table",
                       work / "kafka" / "checkpoint", "ceiling", "availableNow", args.max_offsets)
    spec.table.parent.mkdir(parents=True)
    argv, extra = eng.SiltEngine(args.silt).command(spec, spec.table.parent)
    res = run_monitored(argv, eng.engine_env(extra), spec.table.parent, "silt-kafka")
    res["table"] = str(spec.table)
    return res


def silt_file(args, events: Path, work: Path) -> dict:
    """The same job with `format: text` over the dumped events, in files of
    max_offsets lines (one batch each, as workload A's batches)."""
    base = work / "file"
    inbox = base / "in"
    inbox.mkdir(parents=True)
    lines = events.read_bytes().splitlines(keepends=True)
    for i in range(0, len(lines), args.max_offsets):
        (inbox / f"part-{i // args.max_offsets:05d}.txt").write_bytes(b"".join(
            lines[i:i + args.max_offsets]))
    text = (REPO / "examples" / "sensor_stream.yaml").read_text()
    start = text.index("source:\n")
    end = text.index("# The DataFrame transformations")
    text = (text[:start] + "source:\n  format: text\n  options:\n"
            f"    path: {inbox}\n    maxFilesPerTrigger: 1\n\n" + text[end:])
    text = text.replace("${SENSOR_TABLE:-data/delta/sensor_events}", str(base / "table"))
    text = text.replace("${SENSOR_CHECKPOINT:-data/checkpoints/sensor_stream}",
                        str(base / "checkpoint"))
    text = text.replace("trigger: { processingTime: 60 seconds }", "trigger: { availableNow: true }")
    job = base / "job.yaml"
    job.write_text(text)
    res = run_monitored([args.silt, "run", str(job)], eng.engine_env({}), base, "silt-file")
    res["table"] = str(base / "table")
    return res


def bench_json(args, mode: str, *paths) -> dict:
    out = subprocess.run(["nice", "-n", "0", args.bench, mode, *map(str, paths)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def arrow_encode(files: list) -> dict:
    """Arrow C++'s Parquet writer (pyarrow) on the same columns, into memory,
    uncompressed and with snappy: process CPU seconds of the writes only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    tables = [pq.read_table(f) for f in files]
    out = {"rows": sum(t.num_rows for t in tables)}
    for codec in ("none", "snappy"):
        best = None
        for _ in range(3):  # the least of three, as silt_ceiling_bench
            start = time.process_time()
            size = 0
            for t in tables:
                buf = io.BytesIO()
                pq.write_table(t, buf, compression=codec)
                size += buf.tell()
            cpu = time.process_time() - start
            best = cpu if best is None else min(best, cpu)
        out[f"{codec}_s"] = best
        out[f"{codec}_bytes"] = size
    return out


def machine_name() -> str:
    return "vm" if "vm" in platform.node() or Path("/sys/hypervisor").exists() else platform.node()


def report(r: dict) -> str:
    n = r["events"]
    c = r["ceiling"]
    lines = [
        f"# Ceiling benchmark ({r['date']}, {r['machine']}, commit {r['commit']})",
        "",
        f"{n:,} seed events (`silt produce`, {PARTITIONS} partitions, "
        f"{r['json']['input_bytes'] / 2**20:.1f} MiB of JSON), one thread per stage, the least CPU of three passes; "
        "CPU = user + system seconds. Load average at the start: "
        f"{r['load1']:.1f} (2 shared cores: ratios matter, not absolute times).",
        "",
        "## The stages alone",
        "",
        "| stage | what | CPU s | events per CPU s |",
        "|---|---|---:|---:|",
        f"| json | simdjson On-Demand, envelope + payload, every field | {r['json']['json_s']:.3f} "
        f"| {n / r['json']['json_s']:,.0f} |",
        f"| encode (silt) | silt's Parquet writer, uncompressed, {r['parquet']['files']} files "
        f"| {r['parquet']['encode_s']:.3f} | {n / r['parquet']['encode_s']:,.0f} |",
        f"| encode (Arrow) | pyarrow's Parquet writer, uncompressed | {r['arrow']['none_s']:.3f} "
        f"| {n / r['arrow']['none_s']:,.0f} |",
        f"| snappy | snappy alone, 1 MiB blocks of the uncompressed pages | "
        f"{r['snappy']['snappy_s']:.3f} | {n / r['snappy']['snappy_s']:,.0f} |",
        f"| encode + snappy (silt) | silt's writer with snappy | {r['parquet']['snappy_file_s']:.3f} "
        f"| {n / r['parquet']['snappy_file_s']:,.0f} |",
        f"| encode + snappy (Arrow) | pyarrow's writer with snappy | {r['arrow']['snappy_s']:.3f} "
        f"| {n / r['arrow']['snappy_s']:,.0f} |",
        "",
        f"**Ceiling:** json + the cheaper encoder ({c['encoder']}) + snappy = "
        f"{c['cpu_s']:.3f} CPU s, **{c['events_per_cpu_s']:,.0f} events per CPU-second**.",
        "",
        "## silt against the ceiling",
        "",
        "| run | CPU s | wall s | events per CPU s | share of the ceiling | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, label in (("silt_kafka", "silt, Kafka -> Delta (workload A)"),
                        ("silt_file", "silt, text files -> Delta (no Kafka client)")):
        s = r[name]
        eps = n / s["cpu_s"]
        lines.append(f"| {label} | {s['cpu_s']:.2f} | {s['wall_s']:.2f} | {eps:,.0f} | "
                     f"{eps / c['events_per_cpu_s']:.0%} | {s['peak_rss_mb']:.0f} |")
    lines += [
        "",
        "The ceiling leaves out work silt must also do (the Kafka client, the "
        "casts and `to_timestamp`, the Delta statistics and commit, the "
        "checkpoint files), so 100 % is out of reach by construction; the gap "
        "between the two silt rows is the Kafka client's share.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--silt", required=True)
    ap.add_argument("--bench", required=True, help="silt_ceiling_bench")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--max-offsets", type=int, default=100_000)
    ap.add_argument("--out", default=None, help="results prefix (default bench/results/...)")
    args = ap.parse_args()
    args.silt = str(Path(args.silt).resolve())
    args.bench = str(Path(args.bench).resolve())

    work = Path(tempfile.mkdtemp(prefix="silt-ceiling-"))
    broker = kafka_service.start()
    try:
        import os
        r = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "machine": machine_name(),
             "events": args.events, "load1": os.getloadavg()[0],
             "commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip()}
        broker.create_topic(TOPIC, PARTITIONS)
        log(f"producing {args.events:,} events")
        subprocess.run([args.silt, "produce", "--bootstrap-servers", broker.bootstrap, "--topic",
                        TOPIC, "--count", str(args.events)], check=True, stdout=subprocess.DEVNULL)
        events = work / "events.jsonl"
        dump_topic(broker.bootstrap, args.events, events)
        log("silt: Kafka -> Delta")
        r["silt_kafka"] = silt_kafka(args, broker, work)
        log("silt: text files -> Delta")
        r["silt_file"] = silt_file(args, events, work)
        for name in ("silt_kafka", "silt_file"):
            rows = measure.count_rows(Path(r[name]["table"]))
            if rows != args.events:
                raise RuntimeError(f"{name}: table has {rows} rows, want {args.events}")
        files = sorted(str(p) for p in Path(r["silt_kafka"]["table"]).rglob("*.parquet"))
        log(f"stages alone ({len(files)} data files)")
        r["json"] = bench_json(args, "json", events)
        if r["json"]["events"] != args.events:
            raise RuntimeError(f"json stage saw {r['json']['events']} events")
        r["parquet"] = bench_json(args, "parquet", *files)
        r["snappy"] = bench_json(args, "snappy", *files)
        r["arrow"] = arrow_encode(files)
        encoder = "silt" if r["parquet"]["encode_s"] <= r["arrow"]["none_s"] else "Arrow"
        encode_s = min(r["parquet"]["encode_s"], r["arrow"]["none_s"])
        cpu = r["json"]["json_s"] + encode_s + r["snappy"]["snappy_s"]
        r["ceiling"] = {"encoder": encoder, "cpu_s": cpu, "events_per_cpu_s": args.events / cpu}
        for name in ("silt_kafka", "silt_file"):
            r[name]["share_of_ceiling"] = (args.events / r[name]["cpu_s"]) / (args.events / cpu)
        prefix = Path(args.out) if args.out else \
            REPO / "bench" / "results" / f"{r['date']}-{r['machine']}-ceiling"
        prefix.parent.mkdir(parents=True, exist_ok=True)
        Path(f"{prefix}.json").write_text(json.dumps(r, indent=1, default=str))
        Path(f"{prefix}.md").write_text(report(r))
        print(report(r))
        return 0
    finally:
        for m in list(measure.LIVE):
            m.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
