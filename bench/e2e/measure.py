"""Process-tree measurement and Delta-log inspection for bench/e2e.

Monitored starts a command in its own process group and samples the whole
tree (the engine and every descendant, e.g. pyspark's JVM) with psutil:
resident memory summed over the tree, and CPU time (user + system, with the
reaped children each process accounts for). At exit the sampled CPU is
compared with wait4()'s rusage of the top process (exact for a single
process such as silt) and the larger is kept; the same for peak RSS. CPU time
matters more than wall time here: the machine is shared, so CPU-based ratios
are the meaningful ones.

Commit times are the modification times of the _delta_log/<version>.json
files: the moment a version became visible to readers (local disk).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import unquote

import psutil
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


LIVE = []  # every Monitored not yet stopped (run.py stops them on exit)


class Monitored:
    def __init__(self, argv: list, env: dict, log_path: Path, interval: float = 0.1):
        LIVE.append(self)
        self.log = open(log_path, "wb")
        self.log_path = log_path
        self.t0 = time.time()
        self.popen = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        self.pid = self.popen.pid
        try:
            self.root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            self.root = None
        self.samples = []  # (seconds since start, rss bytes, cpu seconds)
        self.cpu_by_pid = {}
        self.write_by_pid = {}
        # Largest sum over the processes alive at one sample of their VmHWM
        # (peak RSS since exec): catches a spike between two samples. Not a
        # sum over every process ever seen: Spark forks thousands of
        # short-lived children (Hadoop's chmod) whose peaks never coexist.
        self.peak_hwm = 0
        self.returncode = None
        self.rusage = None
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sampler, daemon=True)
        self._thread.start()

    def _sampler(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self):
        if self.root is None:
            return
        try:
            procs = [self.root] + self.root.children(recursive=True)
        except psutil.Error:
            procs = []
        rss = 0
        hwm_sum = 0
        for p in procs:
            try:
                with p.oneshot():
                    if p.status() == psutil.STATUS_ZOMBIE:
                        continue
                    rss += p.memory_info().rss
                    hwm = _vm_hwm(p.pid)
                    hwm_sum += hwm if hwm is not None else p.memory_info().rss
                    ct = p.cpu_times()
                    self.cpu_by_pid[p.pid] = (ct.user + ct.system + ct.children_user +
                                              ct.children_system)
                    try:
                        self.write_by_pid[p.pid] = p.io_counters().write_bytes
                    except (psutil.Error, AttributeError):
                        pass
            except psutil.Error:
                continue
        self.peak_hwm = max(self.peak_hwm, hwm_sum)
        if procs:
            self.samples.append((time.time() - self.t0, rss, sum(self.cpu_by_pid.values())))

    def poll(self):
        if self.returncode is not None:
            return self.returncode
        pid, status, usage = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            return None
        self.end = time.time()
        self.returncode = os.waitstatus_to_exitcode(status)
        self.popen.returncode = self.returncode
        self.rusage = usage
        return self.returncode

    def wait(self, timeout: float, until=None) -> bool:
        """Waits for exit, or for until() to hold; False on timeout."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.poll() is not None:
                return True
            if until is not None and until():
                return True
            time.sleep(0.05)
        return False

    def stop(self, grace: float = 15.0):
        """SIGTERM to the process group, SIGKILL after `grace` seconds."""
        if self.poll() is None:
            self.sample()
            try:
                os.killpg(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            if not self.wait(grace):
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.wait(30)
        # Descendants that outlived the top process (e.g. a JVM).
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._stop.set()
        self._thread.join()
        self.log.close()
        if self in LIVE:
            LIVE.remove(self)

    def result(self) -> dict:
        sampled_cpu = sum(self.cpu_by_pid.values())
        cpu = sampled_cpu
        # Peak RSS: the largest sampled tree sum, or peak_hwm if larger. Not
        # wait4's ru_maxrss: it counts the forked copy of this (large) Python
        # process before exec.
        peak = max(max((s[1] for s in self.samples), default=0), self.peak_hwm)
        if self.rusage is not None:
            cpu = max(cpu, self.rusage.ru_utime + self.rusage.ru_stime)
        return {"returncode": self.returncode, "wall_s": getattr(self, "end", time.time()) - self.t0,
                "cpu_s": cpu, "peak_rss_mb": peak / 2**20, "rss_method": "live-hwm",
                "io_write_mb": sum(self.write_by_pid.values()) / 2**20}

    def cpu_at(self, t_rel: float) -> float:
        """Sampled tree CPU seconds at `t_rel` seconds after start (nearest sample)."""
        if not self.samples:
            return 0.0
        return min(self.samples, key=lambda s: abs(s[0] - t_rel))[2]

    def tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def _vm_hwm(pid: int):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def commits(table: Path) -> list:
    """[{version, time, adds: [paths], rows}] of the table's JSON commits (the
    adds that change data: compaction rewrites are left out)."""
    log = Path(table) / "_delta_log"
    out = []
    if not log.is_dir():
        return out
    for f in sorted(log.glob("*.json")):
        if not f.stem.isdigit():
            continue
        try:
            mtime = f.stat().st_mtime_ns / 1e9
            lines = f.read_text().splitlines()
        except OSError:
            continue
        adds, rows = [], 0
        for line in lines:
            if not line.strip():
                continue
            action = json.loads(line)
            add = action.get("add")
            # A rewrite (OPTIMIZE, autoCompact: dataChange false) adds no new
            # rows: its files hold rows an earlier commit added.
            if add and add.get("dataChange", True):
                path = Path(table) / unquote(add["path"])
                adds.append(path)
                stats = add.get("stats")
                n = json.loads(stats).get("numRecords") if stats else None
                rows += n if n is not None else pq.ParquetFile(path).metadata.num_rows
        out.append({"version": int(f.stem), "time": mtime, "adds": adds, "rows": rows})
    return out


def committed_rows(table: Path) -> int:
    return sum(c["rows"] for c in commits(table))


def event_times_us(path: Path):
    col = pq.ParquetFile(path).read(columns=["event_time"]).column("event_time")
    col = pc.cast(col, pa.timestamp("us", tz=col.type.tz) if col.type.tz else pa.timestamp("us"))
    return pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False)


def dir_bytes(path: Path) -> int:
    path = Path(path)
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def count_rows(table: Path) -> int:
    from deltalake import DeltaTable
    return DeltaTable(str(table)).to_pyarrow_dataset().count_rows()
