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

Side by side (issue #22: judging a change on a shared, loaded machine):
give --silt several times as NAME=PATH and --rounds N; the binaries drain
the same topic in turns (round 1: A, B, ...; round 2: A, B, ...), each run
into a fresh table and checkpoint, and the table shows each binary's median
CPU seconds and its ratio to the first. `--set KEY=VALUE` adds a top-level
job-file key to every run (e.g. `--set parallelism=2`); NAME=PATH@KEY=VALUE
sets it for one binary only. Each row also shows the broker's CPU seconds
during the drain and how busy the whole machine was (all cores, from
/proc/stat): what bounds `parallelism: 2` on a machine the broker shares.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))
import kafka_service  # noqa: E402


def job_text(work: Path, max_offsets: int, extra: dict) -> str:
    text = (REPO / "examples" / "sensor_stream.yaml").read_text()
    for old, new in {
        "  path: ${SENSOR_TABLE:-data/delta/sensor_events}\n": f"  path: {work / 'table'}\n",
        "checkpointLocation: ${SENSOR_CHECKPOINT:-data/checkpoints/sensor_stream}\n":
            f"checkpointLocation: {work / 'checkpoint'}\n",
        "trigger: { processingTime: 60 seconds }\n": "trigger: { availableNow: true }\n",
        "maxOffsetsPerTrigger: 1000\n": f"maxOffsetsPerTrigger: {max_offsets}\n",
    }.items():
        assert old in text, old
        text = text.replace(old, new)
    for key, value in extra.items():
        text += f"\n{key}: {value}\n"
    return text


def callgrind_total(path: Path) -> int:
    """The instruction count (Ir) over all threads of a callgrind output."""
    for line in path.read_text().splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    sys.exit(f"no totals in {path}")


def machine_cpu() -> tuple:
    """(busy, total) CPU seconds of the whole machine since boot, all cores
    (/proc/stat; iowait counts as idle)."""
    ticks = os.sysconf("SC_CLK_TCK")
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / ticks, sum(fields) / ticks


def process_cpu(pid: int) -> float:
    """User+system CPU seconds of one process (all its threads)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drain(silt: str, work: Path, bootstrap: str, max_offsets: int, extra: dict,
          perf: str = "", callgrind: bool = False, broker_pid: int = 0) -> dict:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    job = work / "job.yaml"
    job.write_text(job_text(work, max_offsets, extra))
    env = dict(os.environ, KAFKA_BOOTSTRAP=bootstrap)
    # What else the machine did meanwhile: the broker (on the same cores)
    # and everything else. With parallelism > 1 they bound the wall time.
    busy0, total0 = machine_cpu()
    broker0 = process_cpu(broker_pid) if broker_pid else 0.0
    t0 = time.monotonic()
    argv = [silt, "run", str(job)]
    if perf:
        # A profile of this run (software clock: no hardware counters on
        # shared VMs); `perf report -i PERF` reads it.
        argv = ["perf", "record", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf,16384",
                "-o", perf, "--"] + argv
    if callgrind:
        # Instruction counts: repeatable on a shared machine where CPU seconds
        # are not (all threads; valgrind runs them one at a time).
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work / 'callgrind.out'}",
                "--dump-instr=no"] + argv
    proc = subprocess.Popen(argv, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    busy1, total1 = machine_cpu()
    broker_cpu = process_cpu(broker_pid) - broker0 if broker_pid else 0.0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"silt run ({silt}) failed ({code}):\n{err[-3000:]}")
    rows = None
    try:
        from deltalake import DeltaTable
        rows = DeltaTable(str(work / "table")).to_pyarrow_dataset().count_rows()
    except ImportError:
        pass
    table_mb = sum(f.stat().st_size for f in (work / "table").rglob("*.parquet")) / 2**20
    instructions = callgrind_total(work / "callgrind.out") if callgrind else None
    if callgrind:
        keep = Path(tempfile.gettempdir()) / f"callgrind.{Path(silt).name}.{os.getpid()}.{work.name}"
        shutil.copy(work / "callgrind.out", keep)
        print(f"callgrind output kept in {keep}", file=sys.stderr)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "user": usage.ru_utime,
            "rss_mb": usage.ru_maxrss / 1024, "rows": rows, "table_mb": table_mb,
            "instructions": instructions, "broker_cpu": broker_cpu,
            # Share of all cores busy during the run (1.0 = every core).
            "machine_busy": (busy1 - busy0) / max(total1 - total0, 1e-9)}


def parse_engine(spec: str, common: dict):
    extra = dict(common)
    if "@" in spec:
        head, _, setting = spec.partition("@")
        key, _, value = setting.partition("=")
        extra[key] = value
        spec = head
    name, sep, path = spec.partition("=")
    if not sep:
        name, path = Path(spec).name, spec
    return name, str(Path(path).resolve()), extra


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--silt", action="append",
                    help="PATH or NAME=PATH[@KEY=VALUE]; repeat to compare (default: build's silt)")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--max-offsets", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE job-file key, all runs")
    ap.add_argument("--perf", default="",
                    help="perf record the first binary's last run into this file")
    ap.add_argument("--callgrind", action="store_true",
                    help="run under valgrind's callgrind and compare instruction counts "
                         "(use with --events 200000: about 50x slower)")
    args = ap.parse_args()
    common = dict(s.split("=", 1) for s in args.set)
    engines = [parse_engine(s, common) for s in
               (args.silt or [str(REPO / "build" / "src" / "silt" / "cli" / "silt")])]

    work = Path(tempfile.mkdtemp(prefix="silt-bench-kafka-"))
    broker = kafka_service.start()
    try:
        topic = "sensor-events"
        broker.create_topic(topic, args.partitions)
        t0 = time.monotonic()
        subprocess.run([engines[0][1], "produce", "--bootstrap-servers", broker.bootstrap,
                        "--topic", topic, "--count", str(args.events),
                        "--devices", str(args.devices)], check=True,
                       stdout=subprocess.DEVNULL)
        produce_s = time.monotonic() - t0
        end = broker.end_offsets(topic)
        assert sum(end.values()) == args.events, end
        results = {name: [] for name, _, _ in engines}
        for rnd in range(args.rounds):
            for name, path, extra in engines:
                perf = args.perf if (name == engines[0][0] and rnd == args.rounds - 1) else ""
                r = drain(path, work / name, broker.bootstrap, args.max_offsets, extra, perf,
                          args.callgrind, broker.process.pid)
                if r["rows"] is not None and r["rows"] != args.events:
                    sys.exit(f"{name}: table has {r['rows']} rows, want {args.events}")
                results[name].append(r)
                ir = f", {r['instructions']:,} instructions" if args.callgrind else ""
                print(f"round {rnd + 1} {name}: cpu {r['cpu']:.2f} s, wall {r['wall']:.2f} s, "
                      f"rss {r['rss_mb']:.0f} MB, broker cpu {r['broker_cpu']:.2f} s, machine busy "
                      f"{100 * r['machine_busy']:.0f} %, load {os.getloadavg()[0]:.1f}{ir}",
                      file=sys.stderr, flush=True)
        print(f"produce (not timed): {produce_s:.1f} s; {args.events:,} events, "
              f"{args.partitions} partitions; load average now "
              f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}", file=sys.stderr)
        if args.callgrind:
            first = None
            print("| binary | instructions (callgrind, all threads) | vs first |")
            print("|---|---:|---:|")
            for name, _, _ in engines:
                ir = statistics.median(r["instructions"] for r in results[name])
                first = first or ir
                print(f"| {name} | {ir / 1e9:.3f} G | {100 * (ir / first - 1):+.1f} % |")
            return
        print("| binary | runs | wall s | events/s | CPU s (user+sys) | events per CPU s "
              "| CPU vs first | peak RSS MB | broker CPU s | machine busy |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        base = None
        for name, _, extra in engines:
            rs = results[name]
            cpu = statistics.median(r["cpu"] for r in rs)
            wall = statistics.median(r["wall"] for r in rs)
            rss = statistics.median(r["rss_mb"] for r in rs)
            broker_cpu = statistics.median(r["broker_cpu"] for r in rs)
            busy = statistics.median(r["machine_busy"] for r in rs)
            base = base or cpu
            label = name + "".join(f" ({k}={v})" for k, v in extra.items() if k not in common)
            print(f"| {label} | {len(rs)} | {wall:.2f} | {args.events / wall:,.0f} | {cpu:.2f} "
                  f"| {args.events / cpu:,.0f} | {cpu / base:.2f} | {rss:.0f} | {broker_cpu:.2f} "
                  f"| {100 * busy:.0f} % |")
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
