#!/usr/bin/env python3
"""Kafka drain benchmark (issue #5): events/s, CPU seconds and peak RSS for
silt draining a pre-filled topic of seed events into a local Delta table with
trigger availableNow.

  scripts/setup-kafka.sh                       # once: Kafka 4.1.0 into .cache/
  .venv/bin/python bench/kafka/drain.py --silt build/src/silt/cli/silt \\
      [--events 1000000] [--partitions 3] [--devices 2]

Starts a throwaway single-node Kafka (tests/integration/kafka_service.py),
publishes the events with `silt produce` (not timed), then times `silt run`
on examples/sensor_stream.yaml with local paths, availableNow and
maxOffsetsPerTrigger raised to --max-offsets. CPU and peak RSS come from
wait4()'s rusage of the silt process. Prints one Markdown table row.
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))
import kafka_service  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--silt", default=str(REPO / "build" / "src" / "silt" / "cli" / "silt"))
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--max-offsets", type=int, default=100_000)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="silt-bench-kafka-"))
    broker = kafka_service.start()
    try:
        topic = "sensor-events"
        broker.create_topic(topic, args.partitions)
        t0 = time.monotonic()
        subprocess.run([args.silt, "produce", "--bootstrap-servers", broker.bootstrap,
                        "--topic", topic, "--count", str(args.events),
                        "--devices", str(args.devices)], check=True,
                       stdout=subprocess.DEVNULL)
        produce_s = time.monotonic() - t0
        end = broker.end_offsets(topic)
        assert sum(end.values()) == args.events, end

        text = (REPO / "examples" / "sensor_stream.yaml").read_text()
        for old, new in {
            "  path: ${SENSOR_TABLE:-data/delta/sensor_events}\n": f"  path: {work / 'table'}\n",
            "checkpointLocation: ${SENSOR_CHECKPOINT:-data/checkpoints/sensor_stream}\n":
                f"checkpointLocation: {work / 'checkpoint'}\n",
            "trigger: { processingTime: 60 seconds }\n": "trigger: { availableNow: true }\n",
            "maxOffsetsPerTrigger: 1000\n": f"maxOffsetsPerTrigger: {args.max_offsets}\n",
        }.items():
            assert old in text, old
            text = text.replace(old, new)
        job = work / "job.yaml"
        job.write_text(text)

        env = dict(os.environ, KAFKA_BOOTSTRAP=broker.bootstrap)
        t0 = time.monotonic()
        proc = subprocess.Popen([args.silt, "run", str(job)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace")
        if proc.returncode != 0:
            sys.exit(f"silt run failed ({proc.returncode}):\n{err[-3000:]}")
        cpu = usage.ru_utime + usage.ru_stime
        rss_mb = usage.ru_maxrss / 1024  # KiB on Linux
        rows = None
        try:
            from deltalake import DeltaTable
            rows = DeltaTable(str(work / "table")).to_pyarrow_dataset().count_rows()
        except ImportError:
            pass
        table_mb = sum(f.stat().st_size for f in (work / "table").rglob("*.parquet")) / 2**20
        print(f"produce (not timed): {produce_s:.1f} s; table rows: {rows}; "
              f"parquet {table_mb:.1f} MB", file=sys.stderr)
        print("| events | partitions | wall s | events/s | CPU s (user+sys) | peak RSS MB |")
        print("|---:|---:|---:|---:|---:|---:|")
        print(f"| {args.events:,} | {args.partitions} | {wall:.1f} | {args.events / wall:,.0f} "
              f"| {cpu:.1f} | {rss_mb:.0f} |")
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
