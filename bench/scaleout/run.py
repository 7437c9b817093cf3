#!/usr/bin/env python3
"""Scale-out benchmark (issue #20, docs/scale-out.md), two parts in one run:

1. Commit contention: commits per second one Delta table sustains with 1, 2,
   4 and 8 writers, on local disk and on MinIO (conditional PUT), each
   writer committing what a scale-out worker commits (a blind append of one
   file plus a compare-and-set txn of its own partition) as fast as it can
   (bench/scaleout/commit_bench_main.cc, one thread per writer).
2. Workers: 1, 2 and 4 `silt run` workers of one `scaleOut:` job draining
   the same pre-filled topic (seed sensor events, 12 partitions) into one
   fresh table: aggregate events per second (until the table's txn actions
   reach the topic's end offsets) and the workers' CPU-seconds, beside the
   same job run as one ordinary query (availableNow) on the same topic.

  make bench-scaleout
  .venv/bin/python bench/scaleout/run.py --silt build/src/silt/cli/silt \\
      --commit-bench build/bench/scaleout/silt_commit_bench [--seconds 15] \\
      [--events 1000000] [--out bench/results]

Writes <out>/<date>-scaleout.json and .md. Kafka and MinIO are the test
suite's throwaway loopback services (tests/integration/*_service.py).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))
import kafka_service  # noqa: E402
import minio_service  # noqa: E402

PARTITIONS = 12
TICKS = os.sysconf("SC_CLK_TCK")


def commit_contention(bench: str, seconds: float, writers_list, minio) -> list:
    rows = []
    for storage in ("local", "minio"):
        for writers in writers_list:
            if storage == "local":
                base = Path(tempfile.mkdtemp(prefix="silt-bench-commits-"))
                table, env = str(base / "table"), dict(os.environ)
            else:
                base = None
                table = f"s3://{minio.bucket}/commits-{writers}-{time.time_ns()}"
                env = dict(os.environ, **minio.env())
            proc = subprocess.run([bench, "--table", table, "--writers", str(writers),
                                   "--seconds", str(seconds)],
                                  capture_output=True, text=True, env=env, timeout=seconds + 300)
            if base is not None:
                shutil.rmtree(base, ignore_errors=True)
            if proc.returncode != 0:
                sys.exit(f"commit bench failed ({storage}, {writers} writers):\n{proc.stderr}")
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            row["storage"] = storage
            rows.append(row)
            print(f"commits {storage} x{writers}: {row['commits_per_second']:.1f}/s "
                  f"(p50 {row['latency_ms_p50']:.1f} ms, p99 {row['latency_ms_p99']:.1f} ms)",
                  file=sys.stderr)
    return rows


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


class LogFollower:
    """The txn versions of the table's commits, read as they appear."""

    def __init__(self, table: Path, app_id: str):
        self.log = table / "_delta_log"
        self.prefix = app_id + ":"
        self.next_version = 0
        self.offsets = {}

    def poll(self) -> dict:
        while True:
            path = self.log / f"{self.next_version:020d}.json"
            try:
                text = path.read_text()
            except FileNotFoundError:
                return self.offsets
            if not text.endswith("\n") and not text.rstrip().endswith("}"):
                return self.offsets  # not complete yet (never with put-if-absent)
            for line in text.splitlines():
                if '"txn"' not in line:
                    continue
                txn = json.loads(line)["txn"]
                if txn["appId"].startswith(self.prefix):
                    partition = int(txn["appId"].rsplit(":", 1)[1])
                    self.offsets[partition] = txn["version"]
            self.next_version += 1


def worker_job(work: Path, bootstrap: str, topic: str, app_id: str) -> Path:
    job = yaml.safe_load((REPO / "examples" / "sensor_stream.yaml").read_text())
    job["name"] = app_id
    job["source"]["options"].update({
        "kafka.bootstrap.servers": bootstrap, "subscribe": topic,
        "startingOffsets": "earliest", "maxOffsetsPerTrigger": 200_000})
    job["sink"]["path"] = str(work / "table")
    job["checkpointLocation"] = str(work / "workers")
    job.pop("trigger", None)  # default: as fast as possible
    job.pop("storage", None)
    job.pop("spark.sql.shuffle.partitions", None)
    job["scaleOut"] = {"mode": "consumerGroup", "workerId": "${WORKER_ID}"}
    path = work / "job.yaml"
    path.write_text(yaml.safe_dump(job, sort_keys=False))
    return path


def single_query(silt: str, bootstrap: str, events: int) -> dict:
    """The reference: the same job without scaleOut, one process with its
    own checkpoint, trigger availableNow (CPU from wait4)."""
    work = Path(tempfile.mkdtemp(prefix="silt-bench-single-"))
    job = yaml.safe_load((REPO / "examples" / "sensor_stream.yaml").read_text())
    job["source"]["options"].update({
        "kafka.bootstrap.servers": bootstrap, "subscribe": "sensor-events",
        "startingOffsets": "earliest", "maxOffsetsPerTrigger": 200_000})
    job["sink"]["path"] = str(work / "table")
    job["checkpointLocation"] = str(work / "checkpoint")
    job["trigger"] = {"availableNow": True}
    job.pop("storage", None)
    (work / "job.yaml").write_text(yaml.safe_dump(job, sort_keys=False))
    t0 = time.monotonic()
    proc = subprocess.Popen([silt, "run", str(work / "job.yaml")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"the single query failed:\n{proc.stderr.read().decode()[-3000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    commits = len(list((work / "table" / "_delta_log").glob("*.json")))
    shutil.rmtree(work, ignore_errors=True)
    row = {"workers": 0, "events": events, "wall_s": round(wall, 2),
           "events_per_s": round(events / wall), "cpu_s": round(cpu, 2),
           "events_per_cpu_s": round(events / cpu), "commits": commits}
    print(f"single query: {row['events_per_s']:,} events/s, {row['cpu_s']} CPU-s",
          file=sys.stderr)
    return row


def load_average() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def worker_scaling(silt: str, events: int, workers_list) -> list:
    rows = []
    broker = kafka_service.start()
    try:
        topic = "sensor-events"
        broker.create_topic(topic, PARTITIONS)
        subprocess.run([silt, "produce", "-b", broker.bootstrap, "-t", topic,
                        "--count", str(events), "--devices", "480"], check=True,
                       stdout=subprocess.DEVNULL)
        ends = broker.end_offsets(topic)
        assert sum(ends.values()) == events, ends
        rows.append(single_query(silt, broker.bootstrap, events))
        for workers in workers_list:
            work = Path(tempfile.mkdtemp(prefix="silt-bench-workers-"))
            app_id = f"bench-{workers}w"
            job = worker_job(work, broker.bootstrap, topic, app_id)
            follower = LogFollower(work / "table", app_id)
            t0 = time.monotonic()
            procs = [subprocess.Popen([silt, "run", str(job)],
                                      env=dict(os.environ, WORKER_ID=f"w{i}"),
                                      stdout=subprocess.DEVNULL,
                                      stderr=open(work / f"w{i}.log", "w"))
                     for i in range(workers)]
            cpu = 0.0
            try:
                while True:
                    if any(p.poll() is not None for p in procs):
                        logs = "".join((work / f"w{i}.log").read_text()[-2000:]
                                       for i in range(workers))
                        sys.exit(f"a worker exited early:\n{logs}")
                    if follower.poll() == ends:
                        break
                    if time.monotonic() - t0 > 1800:
                        sys.exit("workers did not drain the topic in 30 minutes")
                    time.sleep(0.05)
                wall = time.monotonic() - t0
                cpu = sum(cpu_seconds(p.pid) for p in procs)
            finally:
                for p in procs:
                    p.send_signal(signal.SIGTERM)
                for p in procs:
                    p.wait(timeout=120)
            row = {"workers": workers, "events": events, "wall_s": round(wall, 2),
                   "events_per_s": round(events / wall), "cpu_s": round(cpu, 2),
                   "events_per_cpu_s": round(events / cpu), "commits": follower.next_version - 1}
            rows.append(row)
            print(f"workers x{workers}: {row['events_per_s']:,} events/s, "
                  f"{row['cpu_s']} CPU-s, {row['commits']} commits", file=sys.stderr)
            shutil.rmtree(work, ignore_errors=True)
    finally:
        broker.stop()
    return rows


def markdown(result: dict) -> str:
    out = [f"# Scale-out benchmark, {result['date']} ({result['host']})", "",
           f"{result['cpus']} CPUs; silt {result['silt_version']}. "
           "Produced by bench/scaleout/run.py (make bench-scaleout).", "",
           "## Commits per second on one table", "",
           f"Each writer commits a blind append of one file plus a compare-and-set txn of its "
           f"own partition, as fast as it can, for {result['seconds']} s "
           "(one thread per writer, one process).", "",
           "| storage | writers | commits/s | p50 ms | p90 ms | p99 ms | max ms |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for row in result["commits"]:
        out.append(f"| {row['storage']} | {row['writers']} | {row['commits_per_second']:.1f} | "
                   f"{row['latency_ms_p50']:.1f} | {row['latency_ms_p90']:.1f} | "
                   f"{row['latency_ms_p99']:.1f} | {row['latency_ms_max']:.1f} |")
    out += ["", "## Workers draining one topic into one table", "",
            f"{result['events']:,} seed sensor events on {PARTITIONS} partitions, "
            "examples/sensor_stream.yaml's transform and partitioning, default trigger, "
            "maxOffsetsPerTrigger 200,000; wall time from starting the workers until the "
            "table's txns reach the topic's end offsets; CPU = the workers' user + system "
            "seconds at that moment.", "",
            "| workers | wall s | events/s | CPU s | events per CPU-s | commits |",
            "|---:|---:|---:|---:|---:|---:|"]
    for row in result["workers"]:
        name = (str(row["workers"]) if row["workers"]
                else "single query (no scaleOut, availableNow; CPU incl. start and stop)")
        out.append(f"| {name} | {row['wall_s']} | {row['events_per_s']:,} | "
                   f"{row['cpu_s']} | {row['events_per_cpu_s']:,} | {row['commits']} |")
    out += ["", f"Load average (1/5/15 min) at the start: {result['load_before']}; "
            f"at the end: {result['load_after']}. The machine is shared: wall-clock figures "
            "(events/s, latencies) move with the load, CPU-seconds much less."]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--silt", default=str(REPO / "build" / "src" / "silt" / "cli" / "silt"))
    ap.add_argument("--commit-bench",
                    default=str(REPO / "build" / "bench" / "scaleout" / "silt_commit_bench"))
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--skip-commits", action="store_true")
    ap.add_argument("--skip-workers", action="store_true")
    args = ap.parse_args()

    version = subprocess.run([args.silt, "--version"], capture_output=True,
                             text=True).stdout.strip()
    result = {"date": dt.date.today().isoformat(), "host": platform.node(),
              "cpus": os.cpu_count(), "silt_version": version, "seconds": args.seconds,
              "events": args.events, "commits": [], "workers": [],
              "load_before": load_average()}
    if not args.skip_commits:
        minio = minio_service.start()
        try:
            result["commits"] = commit_contention(args.commit_bench, args.seconds,
                                                  (1, 2, 4, 8), minio)
        finally:
            minio.stop()
    if not args.skip_workers:
        result["workers"] = worker_scaling(args.silt, args.events, (1, 2, 4))
    result["load_after"] = load_average()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{result['date']}-scaleout"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    stem.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
