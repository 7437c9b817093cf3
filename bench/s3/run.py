#!/usr/bin/env python3
"""S3 benchmark: silt vs delta-rs (the `deltalake` package) against one local
MinIO server, in one run.

Starts a throwaway MinIO on loopback (tests/integration/minio_service.py;
build it first with scripts/setup-minio.sh), writes FILE_MB MiB of random
bytes to a local payload file, then for each engine:

  upload    FILES objects, each the payload, written through the engine's
            own S3 client as a stream of 1 MiB pieces (silt: multipart with
            parallel parts; delta-rs: object_store via DeltaStorageHandler)
  download  each object read back whole and compared with the payload
  commit    COMMITS blind-append Delta commits of one add action each to a
            fresh table (silt: latest snapshot + conditional PUT, as a
            streaming batch does; delta-rs: create_write_transaction with
            conditional PUT, `conditional_put=etag`)

ROUNDS times, alternating engines so both see the same machine load, and
prints MB/s (MiB/s, total bytes / total time) and commit latency p50/p99
over all rounds (each round commits to a fresh table).
Usage, from the repository root, after `ninja -C build silt_s3_bench`:

  .venv/bin/python bench/s3/run.py --silt-bench build/bench/s3/silt_s3_bench
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))
import minio_service  # noqa: E402


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def run_silt(bench, server, payload_path, files, commits):
    env = dict(os.environ)
    env.update(server.env())
    proc = subprocess.run(
        [bench, "--prefix", f"s3://{server.bucket}/silt", "--payload", str(payload_path),
         "--files", str(files), "--commits", str(commits)],
        capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"silt_s3_bench failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def run_delta_rs(server, payload, files, commits):
    import pyarrow as pa
    from deltalake import DeltaTable
    from deltalake.fs import DeltaStorageHandler
    from deltalake.transaction import AddAction

    options = server.storage_options()
    options.pop("AWS_S3_ALLOW_UNSAFE_RENAME", None)
    options["conditional_put"] = "etag"
    root = f"s3://{server.bucket}/delta-rs/bench-{uuid.uuid4()}"
    handler = DeltaStorageHandler(root, options)
    upload_s, download_s = [], []
    for file_idx in range(files):
        start = time.perf_counter()
        # The raw object_store stream (pyarrow's PythonFile wrapper would
        # hand it Buffers, which it does not take).
        out = handler._handler.open_output_stream(f"data/file-{file_idx}.bin", None)
        for offset in range(0, len(payload), 1 << 20):
            out.write(payload[offset:offset + (1 << 20)])
        out.close()
        upload_s.append(time.perf_counter() - start)
    for file_idx in range(files):
        start = time.perf_counter()
        back = handler._handler.open_input_file(f"data/file-{file_idx}.bin").read()
        download_s.append(time.perf_counter() - start)
        if back != payload:
            raise RuntimeError("delta-rs read back differs from what it wrote")

    schema = pa.schema([("id", pa.int64())])
    table_uri = root + "/table"
    dt = DeltaTable.create(table_uri, schema, storage_options=options)
    commit_ms = []
    for commit_idx in range(1, commits + 1):
        add = AddAction(f"part-{commit_idx}.parquet", 1000, {}, 1_700_000_000_000, True, "{}")
        start = time.perf_counter()
        dt.create_write_transaction([add], "append", schema)
        commit_ms.append((time.perf_counter() - start) * 1000)
    version = DeltaTable(table_uri, storage_options=options).version()
    if version != commits:
        raise RuntimeError(f"delta-rs table at version {version}, expected {commits}")
    return {"upload_s": upload_s, "download_s": download_s, "commit_ms": commit_ms,
            "bytes_per_file": len(payload)}


def summarize(name, result):
    mib = result["bytes_per_file"] / (1 << 20)
    return {
        "engine": name,
        "upload_mib_s": mib * len(result["upload_s"]) / sum(result["upload_s"]),
        "download_mib_s": mib * len(result["download_s"]) / sum(result["download_s"]),
        "commit_p50_ms": statistics.median(result["commit_ms"]),
        "commit_p99_ms": percentile(result["commit_ms"], 99),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--silt-bench", default=str(REPO / "build" / "bench" / "s3" /
                                                    "silt_s3_bench"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=2, help="objects per round")
    parser.add_argument("--file-mb", type=int, default=64)
    parser.add_argument("--commits", type=int, default=100, help="commits per round")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    payload = os.urandom(args.file_mb << 20)
    server = minio_service.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            payload_path = Path(tmp) / "payload.bin"
            payload_path.write_bytes(payload)
            # Rounds alternate between the engines so that both see the same
            # machine load (the build machines are shared).
            totals = {"silt": None, "delta-rs": None}
            for _ in range(args.rounds):
                for name in totals:
                    if name == "silt":
                        result = run_silt(args.silt_bench, server, payload_path, args.files,
                                          args.commits)
                    else:
                        result = run_delta_rs(server, payload, args.files, args.commits)
                    if totals[name] is None:
                        totals[name] = result
                    else:
                        for key in ("upload_s", "download_s", "commit_ms"):
                            totals[name][key] += result[key]
            rows = [summarize(name, result) for name, result in totals.items()]
    finally:
        server.stop()

    if args.json:
        print(json.dumps(rows, indent=2))
        return
    import deltalake
    print(f"MinIO {minio_service.MINIO_VERSION_NOTE}; deltalake {deltalake.__version__}; "
          f"{args.rounds} rounds of {args.files} x {args.file_mb} MiB objects and "
          f"{args.commits} commits per engine; load average {os.getloadavg()[0]:.1f}")
    print(f"{'engine':<10}{'upload MiB/s':>14}{'download MiB/s':>16}"
          f"{'commit p50 ms':>15}{'commit p99 ms':>15}")
    for row in rows:
        print(f"{row['engine']:<10}{row['upload_mib_s']:>14.1f}{row['download_mib_s']:>16.1f}"
              f"{row['commit_p50_ms']:>15.2f}{row['commit_p99_ms']:>15.2f}")


if __name__ == "__main__":
    main()
