#!/usr/bin/env python3
"""Soak benchmark: does silt level off under a steady load?

Runs the seed's job (examples/sensor_stream.yaml: from_json of the envelope,
get_json_object of the payload, Delta sink partitioned by device type and
day) with the fastest trigger (no `trigger:` key) on the built-in generator
source at a steady `rowsPerSecond`, for a given duration, and samples the
silt process from /proc every `--interval` seconds:

  - RSS (VmRSS), CPU seconds (utime + stime of all threads),
  - the table's latest version (= batches committed so far, read from the
    query checkpoint's `commits/`),
  - the size of `_delta_log` (commits, checkpoints, everything in it) and
    the number of files in it, every `--log-interval` seconds.

CPU per batch over an interval is the CPU time spent in it divided by the
versions committed in it. The flatness criterion of issue #22: split the run
into quarters; the last quarter's mean must be within 10 % of the second
quarter's (the first quarter is warm-up), for RSS and for CPU per batch
(a quarter's CPU per batch = its CPU time / its commits).

Several binaries (`--silt LABEL=PATH`, repeatable) run at the same time,
each with its own table and checkpoint, so a before/after comparison sees
the same machine load. Output in --out: `<label>.csv` per engine,
`summary.json`, `summary.md`, and `soak.png` when matplotlib is importable.

  .venv/bin/python bench/soak/run.py --silt new=build/src/silt/cli/silt \
      --duration 600 --rate 10000 --out /tmp/soak

Not part of `make test`: it takes as long as --duration says.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plotting import finish_timeline, timeline_axes  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TICKS = os.sysconf("SC_CLK_TCK")

TRANSFORM_AND_SINK = """
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
  - withWatermark: { eventTime: event_time, delayThreshold: 5 minutes }
  - withColumn: { event_date: to_date(event_time) }
"""


def job_text(name: str, table: Path, checkpoint: Path, rate: float, devices: int,
             table_options: list) -> str:
    options = "".join(f"    {k}: \"{v}\"\n" for k, v in table_options)
    sink = ("sink:\n  format: delta\n  outputMode: append\n"
            f"  path: {table}\n  partitionBy: [device_type, event_date]\n")
    if options:
        sink += "  options:\n" + options
    return (f"name: soak-{name}\n"
            "source:\n  format: generator\n  options:\n"
            f"    rowsPerSecond: {rate:g}\n    numDevices: {devices}\n"
            + TRANSFORM_AND_SINK + sink +
            f"checkpointLocation: {checkpoint}\n"
            "spark.sql.shuffle.partitions: 2\n")


def proc_sample(pid: int):
    """(rss bytes, cpu seconds) of a live process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
        return rss, cpu
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return None


class LogState:
    """Size and file count of `_delta_log`. Files there are written once and
    never rewritten (but `_last_checkpoint`), so each one's size is stat-ed
    once and remembered: a fast stream's log reaches a million files, and a
    stat of each every sample would take the harness seconds and a core."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.sizes = {}

    def _size(self, path: str, name: str) -> int:
        size = self.sizes.get(path)
        if size is None:
            size = os.stat(path).st_size
            if name != "_last_checkpoint":
                self.sizes[path] = size
        return size

    def sample(self):
        """(bytes in _delta_log, files in it)."""
        size, count, seen = 0, 0, set()
        try:
            entries = list(os.scandir(self.log_dir))
        except FileNotFoundError:
            return size, count
        for entry in entries:
            try:
                if entry.is_dir():
                    for sub in os.scandir(entry.path):
                        size += self._size(sub.path, sub.name)
                        seen.add(sub.path)
                        count += 1
                    continue
                size += self._size(entry.path, entry.name)
            except FileNotFoundError:
                continue  # removed by log cleanup while listing
            seen.add(entry.path)
            count += 1
        if len(self.sizes) > len(seen):  # forget what log cleanup removed
            self.sizes = {k: v for k, v in self.sizes.items() if k in seen}
        return size, count


def latest_batch(checkpoint: Path) -> int:
    """The newest batch id in the query checkpoint's `commits/` (a few
    hundred files at most: the checkpoint keeps minBatchesToRetain). This
    job's table is created by batch 0, so it is also the table's version."""
    latest = -1
    try:
        for entry in os.scandir(checkpoint / "commits"):
            if entry.name.isdigit():
                latest = max(latest, int(entry.name))
    except FileNotFoundError:
        pass
    return latest


def load_average() -> float:
    """The machine's 1-minute load average (CPU seconds are what the soak
    compares, but a starved process runs fewer, larger batches)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


class Engine:
    def __init__(self, label: str, binary: str, work: Path, args):
        self.label = label
        self.dir = work / label
        self.dir.mkdir(parents=True)
        self.table = self.dir / "table"
        job = self.dir / "job.yaml"
        # KEY=VALUE applies to every engine, LABEL:KEY=VALUE to one.
        options = []
        for key, value in args.table_option:
            target, _, name = key.rpartition(":")
            if target in ("", label):
                options.append((name, value))
        job.write_text(job_text(label, self.table, self.dir / "checkpoint", args.rate,
                                args.devices, options))
        self.log = open(self.dir / "silt.log", "wb")
        env = dict(os.environ)
        env.update(dict(args.env))
        self.popen = subprocess.Popen([binary, "run", str(job)], stdout=self.log,
                                      stderr=subprocess.STDOUT, env=env)
        self.t0 = time.monotonic()
        self.rows = []  # t, rss_mb, cpu_s, version, log_mb, log_files, load1
        self.rusage = None
        self.log_state = LogState(self.table / "_delta_log")
        self.log_every = args.log_interval
        self.log_next = 0.0
        self.log_last = (0, 0)

    def sample(self, now: float):
        got = proc_sample(self.popen.pid)
        if got is None or self.popen.poll() is not None:
            return False
        rss, cpu = got
        version = latest_batch(self.dir / "checkpoint")
        if now >= self.log_next:
            self.log_last = self.log_state.sample()
            self.log_next = now + self.log_every
        size, count = self.log_last
        self.rows.append((now - self.t0, rss / 2**20, cpu, version, size / 2**20, count,
                          load_average()))
        return True

    def stop(self):
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        try:
            _, status, self.rusage = os.wait4(self.popen.pid, 0)
            self.popen.returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            pass
        self.log.close()


def per_interval(rows, window: float):
    """Rows of (t, rss, cpu, version, log_mb, log_files, load1, cpu_ms_per_batch,
    batches_per_s) where the last two are over the trailing `window` s."""
    out = []
    j = 0
    for i, row in enumerate(rows):
        while rows[j][0] < row[0] - window:
            j += 1
        d_cpu = row[2] - rows[j][2]
        d_ver = row[3] - rows[j][3]
        dt = row[0] - rows[j][0]
        per_batch = 1000.0 * d_cpu / d_ver if d_ver > 0 else float("nan")
        rate = d_ver / dt if dt > 0 else float("nan")
        out.append(tuple(row) + (per_batch, rate))
    return out


def quarters(rows):
    """Per quarter of the run: mean RSS, CPU ms per batch, batches, log MB at end."""
    if len(rows) < 8:
        return []
    end = rows[-1][0]
    out = []
    for q in range(4):
        lo, hi = end * q / 4, end * (q + 1) / 4
        part = [r for r in rows if lo <= r[0] <= hi]
        if len(part) < 2:
            return []
        d_ver = part[-1][3] - part[0][3]
        d_cpu = part[-1][2] - part[0][2]
        out.append({
            "from_s": round(lo, 1), "to_s": round(hi, 1),
            "rss_mean_mb": sum(r[1] for r in part) / len(part),
            "rss_max_mb": max(r[1] for r in part),
            "batches": d_ver,
            "cpu_ms_per_batch": 1000.0 * d_cpu / d_ver if d_ver > 0 else None,
            "cpu_percent": 100.0 * d_cpu / (part[-1][0] - part[0][0]),
            "log_mb_end": part[-1][4],
            "log_files_end": part[-1][5],
            "load1_mean": sum(r[6] for r in part) / len(part),
        })
    return out


def flatness(qs, key):
    if not qs or qs[1][key] in (None, 0) or qs[3][key] is None:
        return None
    ratio = qs[3][key] / qs[1][key]
    return {"q2": qs[1][key], "q4": qs[3][key], "ratio": ratio, "flat": abs(ratio - 1) <= 0.10}


def summarize(engine: Engine):
    qs = quarters(engine.rows)
    last = engine.rows[-1] if engine.rows else None
    return {
        "label": engine.label,
        "exit_code": engine.popen.returncode,
        "samples": len(engine.rows),
        "versions": last[3] if last else None,
        "rss_peak_mb": max((r[1] for r in engine.rows), default=None),
        "rss_first_mb": engine.rows[0][1] if engine.rows else None,
        "log_mb_end": last[4] if last else None,
        "log_files_end": last[5] if last else None,
        "cpu_s": last[2] if last else None,
        "maxrss_mb": engine.rusage.ru_maxrss / 1024 if engine.rusage else None,
        "quarters": qs,
        "rss_flat": flatness(qs, "rss_mean_mb"),
        "cpu_per_batch_flat": flatness(qs, "cpu_ms_per_batch"),
    }


def fmt(value, digits=1):
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def markdown(summaries, args) -> str:
    lines = [f"Soak: generator at {args.rate:g} rows/s ({args.devices} devices), fastest trigger, "
             f"{args.duration:g} s, sampled every {args.interval:g} s; all engines at the same time.",
             ""]
    lines.append("| engine | versions | peak RSS MB | log MB (end) | log files | "
                 "RSS Q2 → Q4 MB | flat? | CPU ms/batch Q2 → Q4 | flat? |")
    lines.append("|---|---:|---:|---:|---:|---:|---|---:|---|")
    for s in summaries:
        r, c = s["rss_flat"], s["cpu_per_batch_flat"]
        rss = f"{fmt(r['q2'])} → {fmt(r['q4'])} ({r['ratio']:.2f}×)" if r else "–"
        cpu = f"{fmt(c['q2'], 2)} → {fmt(c['q4'], 2)} ({c['ratio']:.2f}×)" if c else "–"
        lines.append(f"| {s['label']} | {s['versions']} | {fmt(s['rss_peak_mb'])} | "
                     f"{fmt(s['log_mb_end'])} | {s['log_files_end']} | {rss} | "
                     f"{'yes' if r and r['flat'] else 'no'} | {cpu} | "
                     f"{'yes' if c and c['flat'] else 'no'} |")
    lines += ["", "Per quarter (RSS mean / max MB, batches, rows per batch at the input rate, "
              "CPU ms per batch, CPU %, log MB at the quarter's end, the machine's mean 1-minute "
              "load average):", ""]
    lines.append("| engine | quarter | RSS mean | RSS max | batches | rows/batch | CPU ms/batch | "
                 "CPU % | log MB | load |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in summaries:
        for i, q in enumerate(s["quarters"]):
            span = q["to_s"] - q["from_s"]
            per_batch = args.rate * span / q["batches"] if q["batches"] else None
            lines.append(f"| {s['label']} | Q{i + 1} ({q['from_s']:.0f}–{q['to_s']:.0f} s) | "
                         f"{fmt(q['rss_mean_mb'])} | {fmt(q['rss_max_mb'])} | {q['batches']} | "
                         f"{fmt(per_batch, 0)} | "
                         f"{fmt(q['cpu_ms_per_batch'], 2)} | {fmt(q['cpu_percent'])} | "
                         f"{fmt(q['log_mb_end'])} | {fmt(q.get('load1_mean'))} |")
    return "\n".join(lines) + "\n"


def plot(engines, out: Path, window: float) -> bool:
    try:
        fig, axes = timeline_axes(3, (9, 9))
    except ImportError:
        return False
    for e in engines:
        rows = per_interval(e.rows, window)
        t = [r[0] for r in rows]
        axes[0].plot(t, [r[1] for r in rows], label=e.label)
        axes[1].plot(t, [r[7] for r in rows], label=e.label)
        axes[2].plot(t, [r[4] for r in rows], label=e.label)
    finish_timeline(fig, axes, out,
                    ["RSS MB", f"CPU ms per batch ({window:g} s window)", "_delta_log MB"],
                    "seconds", dpi=100)
    return True


def parse_pair(text: str):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return tuple(text.split("=", 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--silt", action="append", type=parse_pair, required=True,
                    metavar="LABEL=PATH", help="a silt binary to soak (repeatable)")
    ap.add_argument("--duration", type=float, default=600, help="seconds (default 600)")
    ap.add_argument("--rate", type=float, default=10000, help="rows per second (default 10000)")
    ap.add_argument("--devices", type=int, default=20, help="generator numDevices (default 20)")
    ap.add_argument("--interval", type=float, default=1.0, help="sampling period, s")
    ap.add_argument("--log-interval", type=float, default=10.0,
                    help="period of the _delta_log size and file count, s (default 10)")
    ap.add_argument("--window", type=float, default=10.0,
                    help="trailing window of the CPU-per-batch column, s (default 10)")
    ap.add_argument("--table-option", action="append", type=parse_pair, default=[],
                    metavar="[LABEL:]KEY=VALUE",
                    help="a sink option for every engine, or for the one named LABEL, "
                         "e.g. slow:delta.checkpointInterval=100")
    ap.add_argument("--env", action="append", type=parse_pair, default=[],
                    metavar="NAME=VALUE", help="environment of the silt processes")
    ap.add_argument("--out", type=Path, required=True, help="directory for CSV, JSON, Markdown")
    ap.add_argument("--keep", action="store_true", help="keep the tables (in --out/work)")
    args = ap.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="silt-soak-", dir=args.out if args.keep else None))
    engines = []
    try:
        for label, binary in args.silt:
            engines.append(Engine(label, binary, work, args))
        start = time.monotonic()
        next_tick = start
        while time.monotonic() - start < args.duration:
            now = time.monotonic()
            alive = [e.sample(now) for e in engines]
            if not all(alive):
                dead = [e.label for e, a in zip(engines, alive) if not a]
                print(f"engine(s) {dead} exited early", file=sys.stderr)
                break
            next_tick += args.interval
            time.sleep(max(0.0, next_tick - time.monotonic()))
    finally:
        for e in engines:
            e.stop()
    summaries = []
    for e in engines:
        with open(args.out / f"{e.label}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["t_s", "rss_mb", "cpu_s", "version", "log_mb", "log_files", "load1",
                        "cpu_ms_per_batch", "batches_per_s"])
            for r in per_interval(e.rows, args.window):
                w.writerow([f"{r[0]:.2f}", f"{r[1]:.2f}", f"{r[2]:.2f}", r[3], f"{r[4]:.3f}",
                            r[5], f"{r[6]:.2f}", f"{r[7]:.3f}", f"{r[8]:.2f}"])
        summaries.append(summarize(e))
    (args.out / "summary.json").write_text(json.dumps(
        {"rate": args.rate, "devices": args.devices, "duration_s": args.duration,
         "table_options": dict(args.table_option), "engines": summaries}, indent=2))
    md = markdown(summaries, args)
    (args.out / "summary.md").write_text(md)
    if plot(engines, args.out / "soak.png", args.window):
        print(f"plot: {args.out / 'soak.png'}")
    print(md)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    failed = [s["label"] for s in summaries if s["exit_code"] not in (0, None)]
    if failed:
        print(f"engine(s) {failed} failed; see their silt.log (kept in {work})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
