#!/usr/bin/env python3
"""End-to-end benchmark (issue #9): silt against the seed's PySpark job and a
delta-rs consumer loop, Kafka -> seed transformation -> partitioned Delta
table on local disk, on the same machine in the same run.

  scripts/setup-bench.sh        # once (`make bench` does both)
  .venv/bin/python bench/e2e/run.py [--silt build/src/silt/cli/silt] [--quick]
      [--workloads A,B,C,D] [--runs 3] [--engine silt --engine spark ...]

Starts its own single-node Kafka 4.1.0 on loopback (tests/integration/
kafka_service.py) and stops it at the end. Workloads:
  A  throughput: a 3-partition topic pre-filled with N seed events
     (`silt produce`), each engine drains it with availableNow into its own
     table; rows verified with deltalake (exactly N, else the run failed)
  B  latency: a steady R events/s for S seconds, fastest trigger and 1 s;
     produce time -> commit time of the version holding the row; RSS, CPU%
  C  start-up: process start -> first new version committed, with an
     existing checkpoint (availableNow over 1,000 new events)
  D  the seed's settings: trigger 60 s, maxOffsetsPerTrigger 1000, seed rate;
     all engines at once, RSS and CPU over a few minutes
  and the binary size of silt against JVM + Spark + jars.
Writes bench/results/<date>-<machine>.{json,md} and PNG plots
(bench/e2e/report.py renders them from the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(HERE))

import kafka_service  # noqa: E402
import numpy as np  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

import engines as eng  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402


def log(msg: str):
    print(f"[bench {datetime.now(timezone.utc):%H:%M:%S}] {msg}", flush=True)



# Workload B's series over time: latency percentiles per BUCKET_S seconds of
# produce time, CPU per bucket, RSS at most one point (the max) per second.
BUCKET_S = 10


def latency_timeline(lat: list, produced_at: list, lo_us: int, bucket_s: float) -> list:
    """[{"t": bucket start s, "n", "p50_ms", "p99_ms", "max_ms"}, ...] by produce time."""
    if not lat:
        return []
    lat_all, ts_all = np.concatenate(lat), np.concatenate(produced_at)
    bucket = ((ts_all - lo_us) // int(bucket_s * 1e6)).astype(np.int64)
    out = []
    for b in np.unique(bucket):
        x = np.sort(lat_all[bucket == b])
        out.append({"t": float(b * bucket_s), "n": int(x.size),
                    "p50_ms": round(float(x[max(0, int(np.ceil(0.5 * x.size)) - 1)]), 1),
                    "p99_ms": round(float(x[max(0, int(np.ceil(0.99 * x.size)) - 1)]), 1),
                    "max_ms": round(float(x[-1]), 1)})
    return out


def cpu_timeline(samples: list, t0: float, t1: float, bucket_s: float) -> list:
    """[{"t", "cpu_pct"}] per bucket of the load window from the tree's CPU samples."""
    out, t = [], t0
    while t + bucket_s <= t1 + 1e-9:
        inside = [s for s in samples if t <= s[0] <= t + bucket_s]
        if len(inside) >= 2:
            dt = inside[-1][0] - inside[0][0]
            if dt > 0:
                out.append({"t": round(t - t0, 1),
                            "cpu_pct": round(100 * (inside[-1][2] - inside[0][2]) / dt, 1)})
        t += bucket_s
    return out


def rss_series(samples: list, lo: float, hi: float, origin: float) -> list:
    """(seconds since origin, MB): the largest sample of each second in [lo, hi]."""
    best = {}
    for s in samples:
        if lo <= s[0] <= hi:
            k = int(np.floor(s[0] - origin))
            best[k] = max(best.get(k, 0), s[1])
    return [(k, round(v / 2**20, 1)) for k, v in sorted(best.items())]


class Bench:
    def __init__(self, args, broker, work: Path):
        self.args = args
        self.broker = broker
        self.work = work
        self.engines = [eng.parse_engine_arg(e, args.silt, args.silt_option or ())
                        for e in args.engine]
        self.admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        self.counter = 0
        self.results = None
        self.results_path = None

    def save_partial(self, workload: str, data: dict):
        """Writes the results so far (a long workload keeps what it measured
        if the run is stopped)."""
        if self.results is not None:
            self.results[workload] = dict(data, partial=True)
            self.results_path.write_text(json.dumps(self.results, indent=1, default=str))

    def uid(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter}"

    def create_topic(self, name: str, partitions: int = 3):
        futures = self.admin.create_topics([NewTopic(name, partitions, 1)])
        for f in futures.values():
            f.result(60)
        deadline = time.time() + 60
        while time.time() < deadline:
            md = self.admin.list_topics(name, timeout=10)
            t = md.topics.get(name)
            if t is not None and t.error is None and len(t.partitions) == partitions and \
                    all(p.leader >= 0 for p in t.partitions.values()):
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"topic {name} not ready")
        # The leaders must also answer ListOffsets (silt fails at once on a
        # "Not leader for partition" right after creation; Spark retries).
        from confluent_kafka import Consumer, TopicPartition
        c = Consumer({"bootstrap.servers": self.broker.bootstrap, "group.id": "bench-probe"})
        try:
            for p in range(partitions):
                while True:
                    try:
                        c.get_watermark_offsets(TopicPartition(name, p), timeout=10)
                        break
                    except Exception:  # noqa: BLE001 - retried until the deadline
                        if time.time() > deadline:
                            raise
                        time.sleep(0.2)
        finally:
            c.close()
        time.sleep(0.5)

    def silt_produce(self, topic: str, count: int, start: int = 0):
        subprocess.run([self.args.silt, "produce", "--bootstrap-servers", self.broker.bootstrap,
                        "--topic", topic, "--count", str(count), "--from", str(start),
                        "--devices", str(self.args.devices)],
                       check=True, stdout=subprocess.DEVNULL)

    def py_produce(self, topic: str, *extra) -> dict:
        out = subprocess.run([str(eng.VENV_PY), str(HERE / "producer.py"), "--bootstrap",
                              self.broker.bootstrap, "--topic", topic, *map(str, extra)],
                             check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    def spec(self, engine, topic, trigger, max_offsets, tag) -> eng.RunSpec:
        base = self.work / tag / engine.name
        base.mkdir(parents=True, exist_ok=True)
        return eng.RunSpec(self.broker.bootstrap, topic, base / "table", base / "checkpoint",
                           self.uid(f"bench-{engine.name}"), trigger, max_offsets)

    def start(self, engine, spec, tag) -> measure.Monitored:
        argv, extra = engine.command(spec, spec.table.parent)
        return measure.Monitored(argv, eng.engine_env(extra),
                                 spec.table.parent / f"{engine.name}.log")

    # ---------------------------------------------------------------- A
    def workload_a(self) -> dict:
        n = self.args.events
        topic = "bench-a"
        self.create_topic(topic, self.args.partitions)
        t0 = time.time()
        self.silt_produce(topic, n)
        log(f"A: produced {n:,} events in {time.time() - t0:.1f} s")
        runs = {e.name: [] for e in self.engines}
        for r in range(self.args.runs):
            for engine in self.engines:
                if engine.name == "spark" and r >= self.args.spark_runs:
                    continue
                tag = f"a/{r}"
                spec = self.spec(engine, topic, "availableNow", self.args.a_max_offsets, tag)
                load = os.getloadavg()[0]
                m = self.start(engine, spec, tag)
                finished = m.wait(self.args.a_timeout)
                m.stop()
                res = m.result()
                res["load1"] = load
                res["timed_out"] = not finished
                rows = None
                try:
                    rows = measure.count_rows(spec.table)
                except Exception as e:  # noqa: BLE001 - reported as a failed run
                    res["error"] = f"reading the table: {e}"
                res["rows"] = rows
                res["ok"] = finished and res["returncode"] == 0 and rows == n
                if not res["ok"] and "error" not in res:
                    res["error"] = (f"rc={res['returncode']} rows={rows} (want {n})"
                                    f"{' timed out' if not finished else ''}: " + m.tail(1500))
                res["versions"] = len(measure.commits(spec.table))
                res["table_mb"] = measure.dir_bytes(spec.table) / 2**20
                res["checkpoint_mb"] = measure.dir_bytes(spec.checkpoint) / 2**20
                res["events_per_s"] = n / res["wall_s"]
                res["events_per_cpu_s"] = n / res["cpu_s"] if res["cpu_s"] else None
                cs = measure.commits(spec.table)
                if len(cs) >= 2:
                    res["first_commit_s"] = cs[0]["time"] - m.t0
                runs[engine.name].append(res)
                log(f"A run {r} {engine.name}: ok={res['ok']} rows={rows} wall={res['wall_s']:.1f}s "
                    f"cpu={res['cpu_s']:.1f}s rss={res['peak_rss_mb']:.0f}MB load={load:.1f}")
                if not self.args.keep:
                    shutil.rmtree(spec.table.parent, ignore_errors=True)
        return {"events": n, "partitions": self.args.partitions,
                "max_offsets": self.args.a_max_offsets, "runs": runs}

    # ---------------------------------------------------------------- B
    def workload_b(self) -> dict:
        """Per trigger and engine: one process on a fresh topic, a warm-up
        commit, then `runs` windows of steady load (each a run), so the
        engine's start-up (minutes for Spark on a loaded machine) is paid
        once per trigger, not per run."""
        rate, seconds = self.args.b_rate, self.args.b_seconds
        out = {"rate": rate, "seconds": seconds, "max_offsets": self.args.b_max_offsets,
               "triggers": {}}
        for trigger in self.args.b_triggers.split(","):
            runs = {}
            for engine in self.engines:
                tag = f"b/{trigger.replace(' ', '')}"
                topic = self.uid("bench-b")
                self.create_topic(topic, self.args.partitions)
                spec = self.spec(engine, topic, trigger, self.args.b_max_offsets, tag)
                runs[engine.name] = self.latency_runs(engine, spec, tag, rate, seconds)
                out["triggers"][trigger] = runs
                self.save_partial("B", out)
                for r, res in enumerate(runs[engine.name]):
                    log(f"B {trigger} run {r} {engine.name}: p50={res.get('p50_ms')} "
                        f"p99={res.get('p99_ms')} ms rss={res.get('steady_peak_rss_mb', 0):.0f}MB "
                        f"cpu%={res.get('cpu_pct')} ok={res['ok']}")
                if not self.args.keep:
                    shutil.rmtree(spec.table.parent, ignore_errors=True)
            out["triggers"][trigger] = runs
        return out

    def latency_runs(self, engine, spec, tag, rate, seconds) -> list:
        m = self.start(engine, spec, tag)
        windows = []
        results = []
        try:
            warm = 100
            self.py_produce(spec.topic, "--count", warm)
            m.wait(self.args.ready_timeout,
                   until=lambda: measure.committed_rows(spec.table) >= warm)
            if m.poll() is not None or measure.committed_rows(spec.table) < warm:
                return [{"ok": False, "error": "no first commit: " + m.tail(1500)}]
            ready_s = time.time() - m.t0
            produced = warm
            for r in range(self.args.runs):
                load = os.getloadavg()[0]
                time.sleep(2)
                t_start = time.time()
                prod = self.py_produce(spec.topic, "--rate", rate, "--seconds", seconds,
                                       "--start-index", produced)
                t_prod_end = time.time()
                produced += prod["produced"]
                m.wait(self.args.drain_timeout,
                       until=lambda: measure.committed_rows(spec.table) >= produced)
                t_end = time.time()
                windows.append(dict(load=load, t_start=t_start, t_prod_end=t_prod_end,
                                    t_end=t_end, prod=prod, want=produced,
                                    cpu0=m.cpu_at(t_start - m.t0),
                                    cpu1=m.cpu_at(t_prod_end - m.t0)))
                if m.poll() is not None:
                    break
        finally:
            m.stop()
        overall = m.result()
        cs = measure.commits(spec.table)
        for w in windows:
            lat, produced_at = [], []
            lo, hi = int(w["t_start"] * 1e6), int(w["t_prod_end"] * 1e6) + 1_000_000
            for c in cs:
                if c["time"] < w["t_start"]:
                    continue
                for f in c["adds"]:
                    ts = measure.event_times_us(f)
                    ts = ts[(ts >= lo) & (ts < hi)]
                    if ts.size:
                        lat.append((c["time"] * 1e6 - ts) / 1000.0)
                        produced_at.append(ts)
            timeline = latency_timeline(lat, produced_at, lo, BUCKET_S)
            lat = np.sort(np.concatenate(lat)) if lat else np.array([])
            total = sum(c["rows"] for c in cs if c["time"] <= w["t_end"])
            # Commits made while the load ran: CPU per batch is the tree's CPU
            # time over the window divided by them (the fastest trigger's cost
            # of one micro-batch, issue #22).
            batches = sum(1 for c in cs if w["t_start"] <= c["time"] <= w["t_prod_end"])
            win = [s for s in m.samples if w["t_start"] - m.t0 <= s[0] <= w["t_prod_end"] - m.t0]
            prod = w["prod"]
            res = dict(
                load1=w["load"], ready_s=ready_s, produced=prod["produced"],
                produce_rate=prod["produced"] / prod["seconds"],
                rows_total=total, rows_measured=int(lat.size),
                ok=total >= w["want"] and lat.size == prod["produced"],
                cpu_pct=round(100 * (w["cpu1"] - w["cpu0"]) / (w["t_prod_end"] - w["t_start"]), 1),
                batches=batches,
                cpu_ms_per_batch=(round(1000 * (w["cpu1"] - w["cpu0"]) / batches, 2)
                                  if batches else None),
                steady_peak_rss_mb=max((s[1] for s in win), default=0) / 2**20,
                steady_mean_rss_mb=(sum(s[1] for s in win) / len(win) / 2**20) if win else 0,
                drain_s=w["t_end"] - w["t_prod_end"],
                process=overall,
                rss_series=rss_series(m.samples, w["t_start"] - m.t0 - 5, w["t_end"] - m.t0,
                                      w["t_start"] - m.t0),
                timeline=timeline + cpu_timeline(m.samples, w["t_start"] - m.t0,
                                                 w["t_prod_end"] - m.t0, BUCKET_S),
            )
            # Events not committed by the end of the drain wait count as
            # infinitely late: a percentile they reach is reported as None.
            n = prod["produced"]
            res["committed_pct"] = round(100 * lat.size / n, 2) if n else 0

            def pct(q):
                k = max(0, int(np.ceil(q / 100 * n)) - 1)
                return round(float(lat[k]), 1) if k < lat.size else None

            if lat.size:
                res.update(p50_ms=pct(50), p99_ms=pct(99),
                           max_ms=round(float(lat[-1]), 1) if lat.size == n else None,
                           cdf=[pct(q) for q in np.linspace(0, 100, 201)])
            if not res["ok"]:
                res["error"] = (f"committed {total} rows by the end of the window (want "
                                f"{w['want']}), measured {lat.size} of {prod['produced']}: "
                                + m.tail(800))
            results.append(res)
        return results

    # ---------------------------------------------------------------- C
    def workload_c(self) -> dict:
        topic = "bench-c"
        base_n, step = self.args.c_prefill, 1000
        self.create_topic(topic, self.args.partitions)
        self.silt_produce(topic, base_n)
        specs = {}
        runs = {e.name: [] for e in self.engines}
        initial = {}
        for engine in self.engines:
            spec = self.spec(engine, topic, "availableNow", 1000, "c")
            specs[engine.name] = spec
            m = self.start(engine, spec, "c")
            m.wait(self.args.a_timeout)
            m.stop()
            initial[engine.name] = m.result()
            initial[engine.name]["versions"] = len(measure.commits(spec.table))
        produced = base_n
        for r in range(self.args.runs):
            self.silt_produce(topic, step, produced)
            produced += step
            for engine in self.engines:
                spec = specs[engine.name]
                before = len(measure.commits(spec.table))
                load = os.getloadavg()[0]
                m = self.start(engine, spec, "c")
                m.wait(self.args.a_timeout)
                m.stop()
                res = m.result()
                res["load1"] = load
                cs = measure.commits(spec.table)
                new = cs[before:]
                rows = measure.committed_rows(spec.table)
                res["ok"] = bool(new) and res["returncode"] == 0 and rows == produced
                if new:
                    res["first_commit_ms"] = (new[0]["time"] - m.t0) * 1000
                if not res["ok"]:
                    res["error"] = f"rows {rows} (want {produced}), new versions {len(new)}: " + \
                        m.tail(800)
                runs[engine.name].append(res)
                log(f"C run {r} {engine.name}: first commit "
                    f"{res.get('first_commit_ms', float('nan')):.0f} ms, exit "
                    f"{res['wall_s'] * 1000:.0f} ms, ok={res['ok']}")
        return {"prefill": base_n, "step": step, "initial": initial, "runs": runs}

    # ---------------------------------------------------------------- D
    def workload_d(self) -> dict:
        topic = "bench-d"
        self.create_topic(topic, self.args.partitions)
        trigger = f"{self.args.d_trigger} seconds"
        procs = {}
        specs = {}
        load = os.getloadavg()[0]
        for engine in self.engines:
            spec = self.spec(engine, topic, trigger, 1000, "d")
            specs[engine.name] = spec
            procs[engine.name] = self.start(engine, spec, "d")
        t0 = time.time()
        prod = self.py_produce(topic, "--rate", self.args.d_rate, "--seconds", self.args.d_seconds)
        elapsed = time.time() - t0
        out = {"trigger": trigger, "max_offsets": 1000, "rate": self.args.d_rate,
               "seconds": elapsed, "produced": prod["produced"], "load1": load, "engines": {}}
        for name, m in procs.items():
            m.stop()
            res = m.result()
            series = m.samples
            tail = [s for s in series if s[0] >= res["wall_s"] / 3]
            res.update(
                rows=measure.committed_rows(specs[name].table),
                versions=len(measure.commits(specs[name].table)),
                cpu_pct=round(100 * res["cpu_s"] / res["wall_s"], 2),
                cpu_pct_after_start=round(
                    100 * (series[-1][2] - m.cpu_at(res["wall_s"] / 3)) /
                    max(1e-9, series[-1][0] - res["wall_s"] / 3), 2) if series else None,
                mean_rss_mb=(sum(s[1] for s in tail) / len(tail) / 2**20) if tail else 0,
                rss_series=[(round(s[0], 1), round(s[1] / 2**20, 1)) for s in series[::5]],
            )
            out["engines"][name] = res
            log(f"D {name}: rows={res['rows']} cpu={res['cpu_s']:.1f}s "
                f"({res['cpu_pct']}%) peak rss={res['peak_rss_mb']:.0f}MB "
                f"mean rss={res['mean_rss_mb']:.0f}MB")
        return out


def cpu_pressure():
    """Linux PSI: % of the last 60 s in which some runnable task waited for a CPU."""
    try:
        for line in Path("/proc/pressure/cpu").read_text().splitlines():
            if line.startswith("some"):
                return float(line.split("avg60=")[1].split()[0])
    except (OSError, IndexError, ValueError):
        pass
    return None


def binary_sizes(silt: str) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="silt-strip-"))
    try:
        stripped = tmp / "silt"
        subprocess.run(["strip", "-o", str(stripped), silt], check=True)
        silt_bytes = stripped.stat().st_size
    finally:
        pass
    libs = {}
    for line in subprocess.run(["ldd", silt], capture_output=True, text=True).stdout.splitlines():
        parts = line.split("=>")
        path = (parts[1] if len(parts) == 2 else parts[0]).split("(")[0].strip()
        if path.startswith("/") and os.path.exists(path):
            libs[Path(path).name] = os.path.getsize(os.path.realpath(path))
    shutil.rmtree(tmp, ignore_errors=True)
    glibc = ("libc.so", "libm.so", "ld-linux", "libpthread", "libdl.so", "librt.so")
    non_glibc = {k: v for k, v in libs.items() if not k.startswith(glibc)}
    java = Path(os.path.realpath(shutil.which("java") or "/usr/bin/java"))
    java_home = java.parents[1]
    import pyspark
    spark_dir = Path(pyspark.__file__).parent
    cache = REPO / ".cache" / "spark-jars"
    extra_jars = sum(f.stat().st_size for f in cache.rglob("*.jar"))
    return {
        "silt_stripped_mb": silt_bytes / 2**20,
        "silt_unstripped_mb": os.path.getsize(silt) / 2**20,
        "shared_libs": {k: round(v / 2**20, 2) for k, v in sorted(libs.items())},
        "shared_libs_mb": sum(libs.values()) / 2**20,
        "shared_libs_non_glibc_mb": sum(non_glibc.values()) / 2**20,
        "jvm_dir": str(java_home), "jvm_mb": measure.dir_bytes(java_home) / 2**20,
        "pyspark_mb": measure.dir_bytes(spark_dir) / 2**20,
        "spark_jars_mb": measure.dir_bytes(spark_dir / "jars") / 2**20,
        "delta_kafka_jars_mb": extra_jars / 2**20,
    }


def environment(args) -> dict:
    def cmd(*argv):
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            return (p.stdout + p.stderr).strip().splitlines()[0]
        except Exception:  # noqa: BLE001
            return "?"
    import confluent_kafka
    import deltalake
    import pyarrow
    import pyspark
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        mem = f"{int(Path('/proc/meminfo').read_text().split()[1]) / 2**20:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": args.machine, "cpus": os.cpu_count(), "cpu": cpu, "memory": mem,
        "kernel": platform.release(), "python": platform.python_version(),
        "silt": cmd(args.silt, "--version"),
        "silt_commit": cmd("git", "-C", str(REPO), "rev-parse", "--short", "HEAD"),
        "java": cmd("java", "-version"),
        "pyspark": pyspark.__version__, "deltalake": deltalake.__version__,
        "pyarrow": pyarrow.__version__,
        "confluent_kafka": f"{confluent_kafka.version()} (librdkafka "
                           f"{confluent_kafka.libversion()[0]})",
        "kafka_broker": kafka_service.KAFKA_VERSION,
        "quick": args.quick, "runs": args.runs, "engines": args.engine,
        "drain_timeout": args.drain_timeout, "spark_runs_a": args.spark_runs,
        "command": " ".join(["bench/e2e/run.py"] + sys.argv[1:]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--silt", default=str(REPO / "build" / "src" / "silt" / "cli" / "silt"))
    ap.add_argument("--engine", action="append",
                    help="silt, silt@BINARY (another silt build), spark, deltars, or "
                         "NAME='command template' (repeatable; "
                         "default: silt, spark, deltars)")
    ap.add_argument("--silt-option", action="append",
                    help="extra silt source option KEY=VALUE for experiments, e.g. "
                         "kafka.fetch.wait.max.ms=10 (engine reported as silt+KEY)")
    ap.add_argument("--workloads", default="A,C,D,B")
    ap.add_argument("--quick", action="store_true",
                    help="small smoke run: 50k events, 10 s latency runs, 1 run each")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--spark-runs", type=int,
                    help="runs of the spark engine in workload A (default: --runs); on a "
                         "loaded machine one Spark drain of 1M events can take 15+ minutes")
    ap.add_argument("--events", type=int)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--devices", type=int, default=2, help="`silt produce --devices` (seed: 2)")
    ap.add_argument("--a-max-offsets", type=int, default=100_000,
                    help="batch size of workload A (maxOffsetsPerTrigger, all engines)")
    ap.add_argument("--a-timeout", type=float, default=1800)
    ap.add_argument("--b-rate", type=float, default=10_000)
    ap.add_argument("--b-seconds", type=float)
    ap.add_argument("--b-triggers", default="fastest,1 second",
                    help="workload B's triggers, comma-separated (default: fastest,1 second)")
    ap.add_argument("--b-max-offsets", type=int, default=100_000)
    ap.add_argument("--ready-timeout", type=float, default=300)
    ap.add_argument("--drain-timeout", type=float, default=90)
    ap.add_argument("--c-prefill", type=int, default=3_000)
    ap.add_argument("--d-rate", type=float, default=0.11,
                    help="seed rate: one smart-plug event per 10 s plus a door sensor now and then")
    ap.add_argument("--d-seconds", type=float)
    ap.add_argument("--d-trigger", type=float)
    ap.add_argument("--machine", default=socket.gethostname())
    ap.add_argument("--out", help="results directory (default bench/results; "
                                  "--quick: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    args.engine = args.engine or ["silt", "spark", "deltars"]
    q = args.quick
    args.runs = args.runs or (1 if q else 3)
    args.spark_runs = min(args.runs, args.spark_runs or args.runs)
    args.events = args.events or (50_000 if q else 1_000_000)
    args.b_seconds = args.b_seconds or (10 if q else 60)
    args.d_seconds = args.d_seconds or (40 if q else 180)
    args.d_trigger = args.d_trigger or (10 if q else 60)
    args.silt = str(Path(args.silt).resolve())
    if not os.access(args.silt, os.X_OK):
        sys.exit(f"silt binary not found: {args.silt} (build it, or pass --silt)")
    out_dir = Path(args.out) if args.out else (
        Path(tempfile.mkdtemp(prefix="silt-bench-quick-")) if q else REPO / "bench" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{datetime.now(timezone.utc):%Y-%m-%d}-{args.machine}"

    results = {"env": environment(args), "load": {}}
    work = Path(tempfile.mkdtemp(prefix="silt-bench-e2e-"))
    log(f"work dir {work}; results -> {out_dir}/{stem}.md")
    # SIGTERM (e.g. kill of a nohup'd run) unwinds like Ctrl-C, so the engines'
    # process groups and the broker are stopped.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    broker = kafka_service.start()
    log(f"Kafka on {broker.bootstrap}")
    try:
        bench = Bench(args, broker, work)
        bench.results, bench.results_path = results, out_dir / f"{stem}.json"
        results["binary"] = binary_sizes(args.silt)
        for w in args.workloads.split(","):
            w = w.strip().upper()
            fn = getattr(bench, f"workload_{w.lower()}")
            before = os.getloadavg()
            t0 = time.time()
            log(f"workload {w} ...")
            results[w] = fn()
            results["load"][w] = {"before": before, "after": os.getloadavg(),
                                  "minutes": (time.time() - t0) / 60,
                                  "cpu_pressure_after": cpu_pressure()}
            (out_dir / f"{stem}.json").write_text(json.dumps(results, indent=1, default=str))
    finally:
        for m in list(measure.LIVE):
            m.stop(grace=5)
        broker.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    (out_dir / f"{stem}.json").write_text(json.dumps(results, indent=1, default=str))
    md = report.render(results, out_dir, stem)
    log(f"wrote {md}")


if __name__ == "__main__":
    main()
