#!/usr/bin/env python3
"""Delta snapshot load: silt vs delta-rs (the deltalake Python package).

Builds (once, cached) a Delta table whose log has COMMITS commits of
FILES_PER_COMMIT add actions each (100,000 files over 10,000 commits by
default), shaped like the sensor table of examples/sensor-demo.yaml:
partitioned by device_type and event_date, each add with its
partitionValues and a Spark-style stats JSON (numRecords, min/max values and
null counts of the data columns), each commit with a delta-spark
commitInfo. Commit 0 also holds protocol and metaData. Every
REMOVE_EVERY-th commit removes the files of an earlier commit (as a small
compaction or delete would), so reconciliation has tombstones to apply.
Classic checkpoints are written every 10 commits, as delta-spark and
delta-rs do with the default delta.checkpointInterval, by silt's own
checkpoint writer (silt_snapshot_bench checkpoint). Before anything is
timed, deltalake and silt must find the same live files (path and size) at
both measured versions, as many as the generator made.

Then, in separate processes, alternating the engines, for ROUNDS rounds:

  silt      silt_snapshot_bench load TABLE [--version V]: the snapshot and
            the walk over its live files
  delta-rs  DeltaTable(TABLE[, version=V]) + get_add_actions() in a fresh
            Python process, minus the bare `python -c "import deltalake,
            pyarrow"` baseline, which is measured in the same rounds and
            reported too

for the latest version and for time travel to version TRAVEL. Wall and CPU
seconds (user + system, all threads) and peak RSS of each child come from
GNU time. Medians are printed as a Markdown table.

Usage (from the repository root, after building silt_snapshot_bench; see
bench/README.md):

  .venv/bin/python bench/delta_snapshot/run.py \
      --silt-bench build/bench/delta_snapshot/silt_snapshot_bench
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": name, "type": typ, "nullable": True, "metadata": {}}
        for name, typ in [
            ("device_id", "string"), ("device_type", "string"), ("event_time", "timestamp"),
            ("linkquality", "integer"), ("contact", "boolean"), ("battery", "integer"),
            ("power", "double"), ("voltage", "double"), ("current", "double"),
            ("energy", "double"), ("plug_state", "string"), ("raw_payload", "string"),
            ("processed_at", "timestamp"), ("event_date", "date"),
        ]
    ],
}
PARTITION_COLUMNS = ["device_type", "event_date"]
DEVICE_TYPES = ["smart_plug", "door_sensor"]
START_MS = 1_780_272_000_000  # 2026-06-01T00:00:00Z
COMMIT_INTERVAL_MS = 60_000   # one micro-batch a minute
TABLE_ID = "5f0c5c4e-8a3e-4d6b-9b1e-2f6d7d3c1a00"


def iso(ms):
    t = time.gmtime(ms // 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{ms % 1000:03d}Z"


def make_add(rng, version, index, ts_ms):
    device_type = DEVICE_TYPES[index % 2]
    event_date = time.strftime("%Y-%m-%d", time.gmtime(ts_ms // 1000))
    file_id = uuid.UUID(int=rng.getrandbits(128), version=4)
    path = (f"device_type={device_type}/event_date={event_date}/"
            f"part-{index:05d}-{file_id}.c000.snappy.parquet")
    rows = rng.randint(800, 1200)
    lo = ts_ms - COMMIT_INTERVAL_MS
    plug = device_type == "smart_plug"
    null_plug = 0 if plug else rows
    null_door = rows if plug else 0
    device = f"0x00158d000{rng.randint(0, 79):07x}"
    stats = {
        "numRecords": rows,
        "minValues": {
            "device_id": device, "event_time": iso(lo),
            "linkquality": rng.randint(0, 60),
            **({"power": round(rng.uniform(0, 5), 2), "voltage": round(rng.uniform(220, 225), 1),
                "current": round(rng.uniform(0, 0.05), 3), "energy": round(rng.uniform(0, 50), 2),
                "plug_state": "OFF"} if plug else {"battery": rng.randint(10, 60)}),
            "raw_payload": '{"battery":100,"contact":true,"l',
            "processed_at": iso(ts_ms - 2_000),
        },
        "maxValues": {
            "device_id": device, "event_time": iso(ts_ms),
            "linkquality": rng.randint(120, 255),
            **({"power": round(rng.uniform(100, 2000), 2),
                "voltage": round(rng.uniform(230, 240), 1),
                "current": round(rng.uniform(0.5, 9), 3),
                "energy": round(rng.uniform(50, 500), 2), "plug_state": "ON"}
               if plug else {"battery": rng.randint(60, 100)}),
            "raw_payload": '{"voltage":239.8,"state":"ON","lin',
            "processed_at": iso(ts_ms),
        },
        "nullCount": {
            "device_id": 0, "event_time": 0, "linkquality": 0, "contact": null_door,
            "battery": null_door, "power": null_plug, "voltage": null_plug,
            "current": null_plug, "energy": null_plug, "plug_state": null_plug,
            "raw_payload": 0, "processed_at": 0,
        },
    }
    if not plug:
        stats["minValues"]["contact"] = False
        stats["maxValues"]["contact"] = True
    return {
        "path": path,
        "partitionValues": {"device_type": device_type, "event_date": event_date},
        "size": rng.randint(40_000, 90_000),
        "modificationTime": ts_ms - rng.randint(100, 900),
        "dataChange": True,
        "stats": json.dumps(stats, separators=(",", ":")),
    }


def commit_info(ts_ms, version, adds, removes, rng):
    operation = "WRITE" if not removes else "DELETE"
    params = ({"mode": "Append", "partitionBy": json.dumps(PARTITION_COLUMNS)}
              if not removes else {"predicate": '["(device_type#1 = smart_plug)"]'})
    metrics = {"numFiles": str(len(adds)),
               "numOutputRows": str(sum(json.loads(a["stats"])["numRecords"] for a in adds)),
               "numOutputBytes": str(sum(a["size"] for a in adds))}
    if removes:
        metrics["numRemovedFiles"] = str(len(removes))
    info = {"timestamp": ts_ms, "operation": operation, "operationParameters": params}
    if version > 0:
        info["readVersion"] = version - 1
    info.update({"isolationLevel": "Serializable", "isBlindAppend": not removes,
                 "operationMetrics": metrics,
                 "engineInfo": "Apache-Spark/3.5.3 Delta-Lake/3.2.0",
                 "txnId": str(uuid.UUID(int=rng.getrandbits(128), version=4))})
    return info


def generate_commits(table, commits, files_per_commit, remove_every, seed):
    log = table / "_delta_log"
    log.mkdir(parents=True)
    rng = random.Random(seed)
    added = []  # per version: the adds, for later removes
    for version in range(commits):
        ts_ms = START_MS + version * COMMIT_INTERVAL_MS
        adds = [make_add(rng, version, i, ts_ms) for i in range(files_per_commit)]
        removes = []
        if remove_every and version > 0 and version % remove_every == 0:
            # The files of the commit REMOVE_EVERY - 1 versions back.
            for a in added[version - remove_every + 1]:
                removes.append({"path": a["path"], "deletionTimestamp": ts_ms,
                                "dataChange": True, "extendedFileMetadata": True,
                                "partitionValues": a["partitionValues"], "size": a["size"]})
        lines = [{"commitInfo": commit_info(ts_ms, version, adds, removes, rng)}]
        if version == 0:
            lines.append({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
            lines.append({"metaData": {
                "id": TABLE_ID, "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(SCHEMA, separators=(",", ":")),
                "partitionColumns": PARTITION_COLUMNS, "configuration": {},
                "createdTime": ts_ms}})
        lines += [{"add": a} for a in adds]
        lines += [{"remove": r} for r in removes]
        path = log / f"{version:020d}.json"
        path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
        os.utime(path, ns=(ts_ms * 1_000_000, ts_ms * 1_000_000))
        added.append(adds)
    live = commits * files_per_commit - (
        sum(1 for v in range(1, commits) if remove_every and v % remove_every == 0)
        * files_per_commit)
    return live


def expected_live(version, files_per_commit, remove_every):
    removed = sum(1 for v in range(1, version + 1) if remove_every and v % remove_every == 0)
    return (version + 1 - removed) * files_per_commit


def build_table(args):
    """The table for these parameters: built once into a scratch directory,
    then renamed into the cache (so an interrupted build is never used)."""
    key = f"c{args.commits}-f{args.files_per_commit}-r{args.remove_every}-k{args.checkpoint_every}"
    final = Path(args.cache) / key
    if final.exists():
        return final / "table"
    scratch = Path(args.cache) / (key + ".partial")
    if scratch.exists():
        shutil.rmtree(scratch)
    table = scratch / "table"
    start = time.monotonic()
    generate_commits(table, args.commits, args.files_per_commit, args.remove_every, seed=42)
    print(f"generated {args.commits} commits in {time.monotonic() - start:.1f} s", file=sys.stderr)
    start = time.monotonic()
    subprocess.run([args.silt_bench, "checkpoint", str(table), "--every",
                    str(args.checkpoint_every)], check=True)
    print(f"wrote checkpoints in {time.monotonic() - start:.1f} s", file=sys.stderr)
    scratch.rename(final)
    return final / "table"


CHECK = """
import json, sys
import pyarrow as pa
from deltalake import DeltaTable
out = {}
for v in (None, int(sys.argv[2])):
    dt = DeltaTable(sys.argv[1]) if v is None else DeltaTable(sys.argv[1], version=v)
    t = pa.table(dt.get_add_actions(flatten=False))
    out[str(dt.version())] = sorted(
        f"{size} {path}" for size, path in zip(t.column("size_bytes").to_pylist(),
                                              t.column("path").to_pylist()))
print(json.dumps(out))
"""


def check_table(table, args):
    """deltalake and silt must see the same live files (path and size) at
    both versions, and as many as the generator made."""
    out = subprocess.run([sys.executable, "-c", CHECK, str(table), str(args.travel)],
                         check=True, capture_output=True, text=True).stdout
    delta_rs = json.loads(out)
    for version in (args.commits - 1, args.travel):
        want = expected_live(version, args.files_per_commit, args.remove_every)
        files = delta_rs[str(version)]
        if len(files) != want:
            sys.exit(f"deltalake sees {len(files)} files at version {version}, expected {want}")
        lines = subprocess.run(
            [args.silt_bench, "load", str(table), "--version", str(version), "--list", "1"],
            check=True, capture_output=True, text=True).stdout.splitlines()
        if sorted(lines[1:]) != files:
            sys.exit(f"silt and deltalake disagree on the live files at version {version}")
    print(f"deltalake and silt agree on the live files at versions {args.commits - 1} and "
          f"{args.travel}", file=sys.stderr)


def run_child(cmd):
    """Runs `cmd` under GNU time; returns its stdout and wall/CPU seconds and
    peak RSS. Not wait4() of a child of this process: Python starts children
    with vfork, and Linux then counts the parent's resident set (here, the
    generated log) into the child's peak RSS."""
    with tempfile.NamedTemporaryFile("r") as usage:
        start = time.monotonic()
        proc = subprocess.run(["/usr/bin/time", "-o", usage.name, "-f", "%U %S %M"] + cmd,
                              capture_output=True, text=True)
        wall = time.monotonic() - start
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        user, system, max_kb = usage.read().split()[-3:]
    return proc.stdout, {"wall_s": wall, "cpu_s": float(user) + float(system),
                         "rss_mb": int(max_kb) / 1024}


DELTA_RS = """
import sys
import pyarrow
from deltalake import DeltaTable
v = int(sys.argv[2])
dt = DeltaTable(sys.argv[1]) if v < 0 else DeltaTable(sys.argv[1], version=v)
actions = dt.get_add_actions(flatten=False)
print(dt.version(), actions.num_rows)
"""

BASELINE = "import sys\nimport pyarrow\nfrom deltalake import DeltaTable\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--silt-bench", required=True, help="path of silt_snapshot_bench")
    parser.add_argument("--cache", default="/tmp/silt-bench-delta-snapshot",
                        help="where the generated table is kept between runs")
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--files-per-commit", type=int, default=10)
    parser.add_argument("--remove-every", type=int, default=100)
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--travel", type=int, default=5_000, help="time-travel version")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    table = build_table(args)
    check_table(table, args)
    latest = args.commits - 1
    cases = [("latest", -1, latest), (f"version {args.travel}", args.travel, args.travel)]
    samples = {}  # (case, engine) -> list of measurements

    def record(case, engine, m):
        samples.setdefault((case, engine), []).append(m)

    for round_idx in range(args.rounds):
        for case, version, want_version in cases:
            engines = ["silt", "delta-rs"] if round_idx % 2 == 0 else ["delta-rs", "silt"]
            for engine in engines:
                if engine == "silt":
                    cmd = [args.silt_bench, "load", str(table)]
                    if version >= 0:
                        cmd += ["--version", str(version)]
                    out, m = run_child(cmd)
                    got = json.loads(out)
                    got_version, got_files = got["version"], got["files"]
                else:
                    out, m = run_child([sys.executable, "-c", DELTA_RS, str(table), str(version)])
                    got_version, got_files = (int(x) for x in out.split())
                want_files = expected_live(want_version, args.files_per_commit, args.remove_every)
                if (got_version, got_files) != (want_version, want_files):
                    sys.exit(f"{engine} {case}: version {got_version} with {got_files} files, "
                             f"expected version {want_version} with {want_files}")
                record(case, engine, m)
        _, m = run_child([sys.executable, "-c", BASELINE])
        record("baseline", "python", m)
        print(f"round {round_idx + 1}/{args.rounds} done", file=sys.stderr)

    def med(case, engine, key):
        return statistics.median(s[key] for s in samples[(case, engine)])

    base = {key: med("baseline", "python", key) for key in ("wall_s", "cpu_s", "rss_mb")}
    import deltalake  # noqa: E402 (only for the version string)
    print(f"table: {args.commits} commits x {args.files_per_commit} adds, remove every "
          f"{args.remove_every} commits, classic checkpoint every {args.checkpoint_every} "
          f"commits (silt's writer); {expected_live(latest, args.files_per_commit, args.remove_every)}"
          f" live files at version {latest}")
    print(f"{args.rounds} rounds, engines alternating, medians; deltalake {deltalake.__version__}; "
          f"delta-rs = fresh python process minus the import baseline "
          f"(python + import deltalake, pyarrow: wall {base['wall_s']:.3f} s, "
          f"CPU {base['cpu_s']:.3f} s, peak RSS {base['rss_mb']:.0f} MiB); "
          "ratio = silt / delta-rs\n")
    print("| load | measure | silt | delta-rs | delta-rs incl. baseline | ratio |")
    print("|---|---|---|---|---|---|")
    for case, _, _ in cases:
        for key, label, fmt in (("cpu_s", "CPU s", "{:.3f}"), ("wall_s", "wall s", "{:.3f}"),
                                ("rss_mb", "peak RSS MiB", "{:.0f}")):
            silt = med(case, "silt", key)
            raw = med(case, "delta-rs", key)
            delta = raw - base[key]
            ratio = silt / delta if delta > 0 else float("nan")
            print(f"| {case} | {label} | {fmt.format(silt)} | {fmt.format(delta)} | "
                  f"{fmt.format(raw)} | {ratio:.2f} |")
    raw = {f"{case}/{engine}": values for (case, engine), values in samples.items()}
    (table.parent / "last_results.json").write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
