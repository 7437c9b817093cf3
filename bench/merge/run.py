#!/usr/bin/env python3
"""MERGE benchmark (issue #16): upsert a 100,000-row batch into a 10-million-row
partitioned Delta table, silt vs delta-rs vs delta-spark, side by side in one
run, each engine on its own fresh copy of the same table.

  .venv/bin/python bench/merge/run.py --silt build/src/silt/cli/silt \
      [--rows 10000000] [--batch 100000] [--engine silt --engine delta-rs --engine spark]
      [--dir DIR] [--json FILE]

The table (written once by delta-rs, kept in --dir for later runs): columns
id BIGINT, day STRING (partition column, 10 days of 1,000,000 rows), device
STRING (80 values), v DOUBLE, n BIGINT, payload STRING (~50 bytes), ids
contiguous per day and 8 files of 125,000 rows per day (so the id stats of a
file are a narrow range), 80 commits.

The batch (a Parquet file, read by each engine inside its timed process):
1% of its rows (1,000) are existing ids of one past day (day 7, spread over
all of that day's 8 files) with new values, 99% (99,000) new ids of a new
day. The statement, the same for all three:

  MERGE INTO target t USING batch s ON t.day = s.day AND t.id = s.id
  WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *

  silt      silt sql "MERGE INTO delta.`T` t USING parquet.`B` s ..."
  delta-rs  DeltaTable(T).merge(pq.read_table(B), ...).when_matched_update_all()
            .when_not_matched_insert_all().execute() (deltalake's defaults:
            streamed source)
  spark     spark.sql("MERGE INTO delta.`T` t USING s ...") with the batch
            as a temp view (local[2], driver memory 2g, delta-spark 3.2.1)

Measured over the engine's whole process tree (delta-rs and Spark: the
Python interpreter included, and Spark's JVM), sampled from /proc every
0.1 s as bench/e2e/measure.py does but without psutil: wall seconds, CPU
seconds (user + system; the larger of the samples and wait4()'s rusage) and
peak RSS (the largest sum of VmHWM over the processes alive at one sample,
or of their RSS, whichever is larger; not wait4()'s ru_maxrss, which counts
the forked copy of this Python process before exec);
delta-rs's import baseline (python + import deltalake, pyarrow) is measured
too and printed beside it. Afterwards every table is read back with
delta-rs's DataFusion engine: the row count and a checksum query (per-day
counts and sums over every column) must be equal across engines and equal
to the expected ones, else the run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

TICKS = os.sysconf("SC_CLK_TCK")


def _proc_stat(pid: int):
    """(ppid, cpu seconds incl. reaped children, rss bytes, VmHWM bytes) or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        hwm = rss = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
                elif line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        return None
    if fields[0] == "Z":
        return None
    cpu = sum(int(x) for x in fields[11:15]) / TICKS
    return int(fields[1]), cpu, rss, hwm


class Tree:
    """A command and its descendants, sampled from /proc every 0.1 s."""

    def __init__(self, argv: list, log_path: Path):
        self.log = open(log_path, "wb")
        self.log_path = log_path
        self.t0 = time.monotonic()
        self.popen = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        self.cpu_by_pid = {}
        self.peak_rss = 0
        self.peak_hwm = 0
        self.rusage = None
        self.returncode = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sampler, daemon=True)
        self._thread.start()

    def _sample(self):
        stats = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                s = _proc_stat(int(name))
                if s is not None:
                    stats[int(name)] = s
        tree, frontier = set(), [self.popen.pid]
        while frontier:
            pid = frontier.pop()
            if pid in stats and pid not in tree:
                tree.add(pid)
                frontier += [p for p, s in stats.items() if s[0] == pid]
        # Before exec the child is a copy of this process: not the engine.
        if _cmdline(self.popen.pid) == _cmdline(os.getpid()):
            return
        for pid in tree:
            self.cpu_by_pid[pid] = stats[pid][1]
        self.peak_rss = max(self.peak_rss, sum(stats[p][2] for p in tree))
        self.peak_hwm = max(self.peak_hwm, sum(stats[p][3] for p in tree))

    def _sampler(self):
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(0.1)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status, usage = os.wait4(self.popen.pid, os.WNOHANG)
            if pid != 0:
                self.end = time.monotonic()
                self.returncode = os.waitstatus_to_exitcode(status)
                self.rusage = usage
                break
            time.sleep(0.02)
        else:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()
            self.end = time.monotonic()
        try:  # descendants that outlived the top process (a JVM)
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._stop.set()
        self._thread.join()
        self.log.close()
        return self.returncode is not None

    def result(self) -> dict:
        cpu = sum(self.cpu_by_pid.values())
        if self.rusage is not None:
            cpu = max(cpu, self.rusage.ru_utime + self.rusage.ru_stime)
        return {"returncode": self.returncode, "wall_s": self.end - self.t0, "cpu_s": cpu,
                "peak_rss_mb": max(self.peak_rss, self.peak_hwm) / 2**20}

    def tail(self, chars: int) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


DAYS = 10
FILES_PER_DAY = 8
MATCH_DAY = 7


def day_name(d: int) -> str:
    return f"2026-11-{d + 1:02d}"


def rows_table(ids: pa.Array, day: str, salt: int) -> pa.Table:
    """Deterministic rows for `ids` (int64) in partition `day`."""
    n = len(ids)
    mix = pc.bit_wise_and(pc.add(pc.multiply(ids, 2654435761), salt), 0xFFFFFFFF)
    dev = pc.cast(pc.divide(pc.bit_wise_and(mix, 0xFFFF), 820), pa.int64())  # 0..79
    device = pc.binary_join_element_wise("dev-", pc.cast(dev, pa.string()), "")
    v = pc.divide(pc.cast(pc.bit_wise_and(mix, 0xFFFFF), pa.float64()), 1000.0)
    payload = pc.binary_join_element_wise(
        '{"id":', pc.cast(ids, pa.string()), ',"mix":', pc.cast(mix, pa.string()),
        ',"state":"ON"}', "")
    return pa.table({
        "id": ids,
        "day": pa.array([day] * n, pa.string()),
        "device": device,
        "v": v,
        "n": pc.add(mix, salt),
        "payload": payload,
    })


def build_table(path: Path, rows: int) -> None:
    from deltalake import write_deltalake
    per_day = rows // DAYS
    per_file = per_day // FILES_PER_DAY
    for d in range(DAYS):
        for f in range(FILES_PER_DAY):
            first = d * per_day + f * per_file
            ids = pa.array(range(first, first + per_file), pa.int64())
            write_deltalake(str(path), rows_table(ids, day_name(d), 0), partition_by=["day"],
                            mode="append")


def build_batch(path: Path, rows: int, batch: int) -> dict:
    """1% updates of day MATCH_DAY, spread over its files; 99% new ids of a new day."""
    per_day = rows // DAYS
    matches = batch // 100
    step = per_day // matches
    first = MATCH_DAY * per_day
    upd = pa.array([first + i * step + (i * 7919) % step for i in range(matches)], pa.int64())
    ins = pa.array(range(rows, rows + batch - matches), pa.int64())
    t = pa.concat_tables([rows_table(upd, day_name(MATCH_DAY), 1),
                          rows_table(ins, day_name(DAYS), 1)])
    pq.write_table(t, path)
    return {"matched_ids": len(upd), "inserted_ids": len(ins)}


DELTA_RS = """
import sys
import pyarrow.parquet as pq
from deltalake import DeltaTable
if len(sys.argv) > 2:
    m = (DeltaTable(sys.argv[1])
         .merge(pq.read_table(sys.argv[2]), predicate="t.day = s.day AND t.id = s.id",
                source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())
    print(m)
"""

SPARK = """
import sys, glob, os
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
from pyspark.sql import SparkSession
jars = glob.glob(os.path.join(sys.argv[3], "delta-*", "*.jar"))
s = (SparkSession.builder.master("local[2]").config("spark.jars", ",".join(jars))
     .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
     .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
     .config("spark.driver.memory", "2g").config("spark.ui.enabled", "false")
     .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
     .config("spark.sql.shuffle.partitions", "2")
     .getOrCreate())
s.read.parquet(sys.argv[2]).createOrReplaceTempView("s")
print(s.sql(f"MERGE INTO delta.`{sys.argv[1]}` t USING s ON t.day = s.day AND t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *").collect())
s.stop()
"""

CHECKSUM = """
SELECT day, count(*) AS rows, count(DISTINCT id) AS ids, sum(id) AS sum_id,
       sum(v) AS sum_v, sum(n) AS sum_n, sum(length(payload)) AS payload_bytes,
       sum(CAST(substr(device, 5) AS BIGINT)) AS sum_device
FROM t GROUP BY day ORDER BY day
"""


def checksum(table: Path) -> list:
    from deltalake import DeltaTable, QueryBuilder
    reader = QueryBuilder().register("t", DeltaTable(str(table))).execute(CHECKSUM)
    rows = pa.table(reader.read_all()).to_pylist()
    for r in rows:  # float sums depend on the summation order
        r["sum_v"] = round(r["sum_v"], 3)
    return rows


def expected_checksum(rows: int, batch_path: Path) -> list:
    """The checksum the merged table must have, computed from the inputs."""
    per_day = rows // DAYS
    per_file = per_day // FILES_PER_DAY
    batch = pq.read_table(batch_path)
    out = []
    for d in range(DAYS + 1):
        name = day_name(d)
        new = batch.filter(pc.equal(batch["day"], name))
        parts = [new]
        if d < DAYS:
            old = pa.concat_tables([
                rows_table(pa.array(range(d * per_day + f * per_file,
                                          d * per_day + (f + 1) * per_file), pa.int64()), name, 0)
                for f in range(FILES_PER_DAY)])
            keep = pc.invert(pc.is_in(old["id"], value_set=new["id"]))
            parts.insert(0, old.filter(keep))
        t = pa.concat_tables(parts)
        if t.num_rows == 0:
            continue
        dev = pc.cast(pc.utf8_slice_codeunits(t["device"], 4), pa.int64())
        out.append({"day": name, "rows": t.num_rows,
                    "ids": len(pc.unique(t["id"])), "sum_id": pc.sum(t["id"]).as_py(),
                    "sum_v": round(pc.sum(t["v"]).as_py(), 3), "sum_n": pc.sum(t["n"]).as_py(),
                    "payload_bytes": pc.sum(pc.utf8_length(t["payload"])).as_py(),
                    "sum_device": pc.sum(dev).as_py()})
    return out


def command(engine: str, args, table: Path, batch: Path) -> list:
    if engine == "silt":
        return [args.silt, "sql",
                f"MERGE INTO delta.`{table}` t USING parquet.`{batch}` s "
                "ON t.day = s.day AND t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"]
    if engine == "delta-rs":
        return [sys.executable, "-c", DELTA_RS, str(table), str(batch)]
    if engine == "delta-rs-baseline":
        return [sys.executable, "-c", DELTA_RS, str(table)]
    if engine == "spark":
        return [sys.executable, "-c", SPARK, str(table), str(batch),
                str(REPO / ".cache" / "spark-jars")]
    raise ValueError(engine)


def machine() -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = int(line.split()[1]) // 1024
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": cpu, "mem_mb": mem, "kernel": platform.release(),
            "machine": platform.machine()}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--silt", default=str(REPO / "build/src/silt/cli/silt"))
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--engine", action="append",
                    help="silt, delta-rs, spark (default: all three)")
    ap.add_argument("--dir", default=None, help="keeps the generated table for later runs")
    ap.add_argument("--json", default=None, help="writes the raw numbers here")
    ap.add_argument("--timeout", type=float, default=3600)
    args = ap.parse_args()
    engines = args.engine or ["silt", "delta-rs", "spark"]
    work = Path(args.dir or tempfile.mkdtemp(prefix="silt-merge-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    source = work / f"table-{args.rows}"
    batch = work / f"batch-{args.rows}-{args.batch}.parquet"
    if not (source / "_delta_log").is_dir():
        t0 = time.time()
        build_table(source, args.rows)
        log(f"table written in {time.time() - t0:.0f} s")
    shape = build_batch(batch, args.rows, args.batch)
    size = sum(p.stat().st_size for p in source.rglob("*.parquet"))
    files = len(list(source.rglob("*.parquet")))
    log(f"table: {args.rows:,} rows, {files} files, {size / 2**20:.0f} MiB in {source}; "
        f"batch: {args.batch:,} rows ({shape['matched_ids']} matching)")
    expected = expected_checksum(args.rows, batch)

    results = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "machine": machine(), "rows": args.rows, "batch": args.batch, **shape,
               "table_files": files, "table_mib": size / 2**20,
               "load_before": os.getloadavg(), "runs": []}
    try:
        import deltalake
        results["deltalake"] = deltalake.__version__
        import pyspark
        results["pyspark"] = pyspark.__version__
    except ImportError:
        pass
    ok = True
    to_run = list(engines)
    if "delta-rs" in to_run:
        to_run.insert(to_run.index("delta-rs"), "delta-rs-baseline")
    for engine in to_run:
        table = work / f"run-{engine}"
        shutil.rmtree(table, ignore_errors=True)
        shutil.copytree(source, table)
        subprocess.run(["sync"], check=False)
        load = os.getloadavg()[0]
        m = Tree(command(engine, args, table, batch), work / f"{engine}.log")
        finished = m.wait(args.timeout)
        res = m.result()
        res.update(engine=engine, load1=load, timed_out=not finished)
        res["output"] = m.tail(600)
        if engine != "delta-rs-baseline":
            try:
                got = checksum(table)
                res["checksum_ok"] = got == expected
                res["rows_after"] = sum(r["rows"] for r in got)
                if not res["checksum_ok"]:
                    res["checksum"] = got
            except Exception as e:  # noqa: BLE001 - reported as a failed run
                res["checksum_ok"] = False
                res["error"] = f"reading the table: {e}"
        res["ok"] = finished and res["returncode"] == 0 and res.get("checksum_ok", True)
        ok &= res["ok"]
        log(f"{engine}: ok={res['ok']} wall={res['wall_s']:.1f}s cpu={res['cpu_s']:.1f}s "
            f"rss={res['peak_rss_mb']:.0f}MB rows={res.get('rows_after')} load={load:.1f}")
        if not res["ok"]:
            print(res["output"], file=sys.stderr)
        results["runs"].append(res)
        shutil.rmtree(table, ignore_errors=True)
    results["load_after"] = os.getloadavg()
    results["expected_rows"] = sum(r["rows"] for r in expected)

    by = {r["engine"]: r for r in results["runs"]}
    print()
    print(f"MERGE of {args.batch:,} rows (1% matching) into {args.rows:,} rows, "
          f"{files} files, partitioned by day; load {results['load_before'][0]:.1f} before, "
          f"{results['load_after'][0]:.1f} after")
    print()
    print("| engine | wall s | CPU s | peak RSS MB | rows after | table equal |")
    print("|---|---:|---:|---:|---:|---|")
    for r in results["runs"]:
        print(f"| {r['engine']} | {r['wall_s']:.1f} | {r['cpu_s']:.2f} | {r['peak_rss_mb']:.0f} | "
              f"{r.get('rows_after', '')} | {'yes' if r.get('checksum_ok') else '-'} |")
    if "silt" in by:
        for other in ("delta-rs", "spark"):
            if other in by:
                s, o = by["silt"], by[other]
                print(f"silt / {other}: wall {s['wall_s'] / o['wall_s']:.3f}, "
                      f"CPU {s['cpu_s'] / o['cpu_s']:.3f}, "
                      f"peak RSS {s['peak_rss_mb'] / o['peak_rss_mb']:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    if not args.dir:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
