#!/usr/bin/env python3
"""Parquet benchmark: silt vs pyarrow (Arrow C++), one thread, side by side.

Generates ROWS rows shaped like the seed's sensor table (the 13 columns of
examples/sensor-demo.yaml: device ids and types as low-cardinality strings,
an event timestamp, ints, a boolean, four doubles, a plug state, a ~120-byte
raw JSON payload and a processing timestamp; plug-only and door-only fields
are null for the other device kind, as in the seed), writes it once with
pyarrow, uncompressed, as the reference input, then times for each engine,
phase by phase, each phase repeated back to back, in memory:

  write snappy      the whole table -> snappy Parquet bytes
  write zstd(1)     the same with zstd level 1
  read snappy       full read of that engine's snappy file
  read zstd         full read of that engine's zstd file

and prints medians of CPU time (user + system of the process: on a shared
machine it does not count time spent waiting for a CPU) and of wall time,
the silt/pyarrow ratios (< 1 = silt faster) and file sizes. Rounds
alternate between the engines so both see the same machine load. Usage
(from the repository root, after building silt_parquet_bench; see
bench/README.md):

  .venv/bin/python bench/parquet/run.py \
      --silt-bench build/src/silt/parquet/silt_parquet_bench
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

TS = pa.timestamp("us", tz="UTC")
COLUMNS = {
    "device_id": pa.string(),
    "device_type": pa.string(),
    "event_time": TS,
    "linkquality": pa.int32(),
    "contact": pa.bool_(),
    "battery": pa.int32(),
    "power": pa.float64(),
    "voltage": pa.float64(),
    "current": pa.float64(),
    "energy": pa.float64(),
    "plug_state": pa.string(),
    "raw_payload": pa.string(),
    "processed_at": TS,
}


def make_table(rows: int, seed: int = 42) -> pa.Table:
    # Pure Python (the venv has no numpy); deterministic for a given seed.
    rng = random.Random(seed)
    num_plugs, num_doors = 40, 40
    start_us = 1_782_115_200_000_000  # 2026-06-22T08:00:00Z
    cols = {k: [] for k in COLUMNS}
    event_ms = start_us // 1000
    for i in range(rows):
        device = rng.randrange(num_plugs + num_doors)
        is_plug = device < num_plugs
        event_ms += rng.randrange(20)
        lq = 150 + rng.randrange(106)
        cols["event_time"].append(event_ms * 1000)
        cols["linkquality"].append(lq)
        cols["processed_at"].append(start_us + (i // 10_000) * 10_000_000 + 1_234_567)
        if is_plug:
            off = rng.random() < 0.02
            power = 0.0 if off else (750 + rng.randrange(200)) / 10.0
            voltage = (2280 + rng.randrange(40)) / 10.0
            current = round(power * 1000.0 / voltage) / 1000.0
            energy = (1250 + device * 310 + i * 24 // 100) / 100.0
            state = "OFF" if off else "ON"
            cols["device_id"].append("plug-%03d" % device)
            cols["device_type"].append("smart_plug")
            cols["contact"].append(None)
            cols["battery"].append(None)
            cols["power"].append(power)
            cols["voltage"].append(voltage)
            cols["current"].append(current)
            cols["energy"].append(energy)
            cols["plug_state"].append(state)
            cols["raw_payload"].append(
                '{"power":%.1f,"voltage":%.1f,"current":%.3f,"energy":%.2f,"state":"%s",'
                '"linkquality":%d,"update":{"state":"idle"}}'
                % (power, voltage, current, energy, state, lq)
            )
        else:
            contact = rng.random() < 0.9
            battery = 60 + rng.randrange(41)
            cols["device_id"].append("door-%03d" % (device - num_plugs))
            cols["device_type"].append("door_sensor")
            cols["contact"].append(contact)
            cols["battery"].append(battery)
            for k in ("power", "voltage", "current", "energy", "plug_state"):
                cols[k].append(None)
            cols["raw_payload"].append(
                '{"contact":%s,"battery":%d,"linkquality":%d,"voltage":%d,'
                '"battery_low":false,"tamper":false,"update":{"state":"idle"}}'
                % ("true" if contact else "false", battery, lq, 2900 + battery)
            )
    return pa.table({k: pa.array(v, COLUMNS[k]) for k, v in cols.items()})


def time_pyarrow(table: pa.Table, reps: int, zstd_level: int) -> dict:
    """Wall and CPU (process) seconds per phase, as the silt binary reports."""
    out = {}

    def record(key, fn):
        t, c = time.perf_counter(), time.process_time()
        result = fn()
        out.setdefault("cpu_" + key, []).append(time.process_time() - c)
        out.setdefault(key, []).append(time.perf_counter() - t)
        return result

    # Phase by phase, each repeated `reps` times back to back (as the silt
    # binary does), so every sample sees that phase's steady state.
    bufs = {}
    for name, kwargs in (
        ("snappy", dict(compression="snappy")),
        ("zstd", dict(compression="zstd", compression_level=zstd_level)),
    ):
        def write(kwargs=kwargs):
            sink = pa.BufferOutputStream()
            pq.write_table(table, sink, **kwargs)
            return sink.getvalue()

        for _ in range(reps):
            bufs[name] = record("write_" + name, write)
    for name in ("snappy", "zstd"):
        for _ in range(reps):
            record("read_" + name,
                   lambda name=name: pq.read_table(pa.BufferReader(bufs[name]), use_threads=False))
    out["size_snappy"] = bufs["snappy"].size
    out["size_zstd"] = bufs["zstd"].size
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--silt-bench", default="build/src/silt/parquet/silt_parquet_bench")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3, help="rounds (pyarrow, then silt)")
    ap.add_argument("--per-round", type=int, default=3,
                    help="back-to-back repetitions of each phase per round")
    ap.add_argument("--zstd-level", type=int, default=1)
    ap.add_argument(
        "--input",
        help="reference input file: reused when it exists, else generated and kept there "
        "(default: a fresh one in a temporary directory)",
    )
    ap.add_argument(
        "--keep-freed-memory",
        action="store_true",
        help="run silt with glibc malloc told to keep freed memory (GLIBC_TUNABLES mmap and "
        "trim thresholds), as pyarrow's bundled allocator does by default",
    )
    args = ap.parse_args()
    silt_env = dict(os.environ)
    if args.keep_freed_memory:
        silt_env["GLIBC_TUNABLES"] = (
            "glibc.malloc.mmap_threshold=1073741824:glibc.malloc.trim_threshold=4294967296"
        )

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    with tempfile.TemporaryDirectory() as tmp:
        ref = args.input or os.path.join(tmp, "input.parquet")
        if not os.path.exists(ref):
            pq.write_table(make_table(args.rows), ref, compression="none")
        # Both engines start from the same bytes: pyarrow re-reads the
        # reference file, silt reads it inside its bench binary.
        table = pq.read_table(ref, use_threads=False)
        # Interleaved rounds (pyarrow, then silt), so both see the same
        # machine load; in each round every phase runs --per-round times.
        arrow, silt = {}, {}
        for _ in range(args.reps):
            a = time_pyarrow(table, args.per_round, args.zstd_level)
            proc = subprocess.run(
                [args.silt_bench, ref, "--reps", str(args.per_round), "--zstd-level",
                 str(args.zstd_level)],
                check=True,
                capture_output=True,
                text=True,
                env=silt_env,
            )
            s = json.loads(proc.stdout)
            for out, got in ((arrow, a), (silt, s)):
                for k, v in got.items():
                    if isinstance(v, list):
                        out.setdefault(k, []).extend(v)
                    else:
                        out[k] = v

    print(f"rows={args.rows}, {args.reps} rounds x {args.per_round} repetitions per phase "
          "(medians; one thread; ratio = silt / pyarrow, below 1 = silt faster)")
    allocator = pa.default_memory_pool().backend_name
    malloc = "glibc keeping freed memory" if args.keep_freed_memory else "glibc defaults"
    print(f"pyarrow {pa.__version__} (allocator {allocator}); silt with {malloc}")
    ok = True
    for prefix, title in (("cpu_", "CPU seconds (user + system)"), ("", "wall seconds")):
        print()
        print(f"| operation ({title}) | pyarrow | silt | ratio |")
        print("|---|---|---|---|")
        for key, label in (
            ("write_snappy", "write snappy"),
            ("write_zstd", f"write zstd({args.zstd_level})"),
            ("read_snappy", "read snappy"),
            ("read_zstd", f"read zstd({args.zstd_level})"),
        ):
            a = statistics.median(arrow[prefix + key])
            s = statistics.median(silt[prefix + key])
            if prefix == "cpu_":
                ok &= s <= a
            print(f"| {label} | {a:.3f} | {s:.3f} | {s / a:.2f} |")
    print()
    print("| file size | pyarrow bytes | silt bytes | ratio |")
    print("|---|---|---|---|")
    for key, label in (("size_snappy", "snappy"), ("size_zstd", f"zstd({args.zstd_level})")):
        a, s = arrow[key], silt[key]
        ok &= s <= a
        print(f"| {label} | {a:,d} | {s:,d} | {s / a:.3f} |")
    print()
    print("silt at least as fast (CPU) and as small everywhere:", "yes" if ok else "NO")
    return 0


if __name__ == "__main__":
    sys.exit(main())
