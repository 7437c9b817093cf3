#!/usr/bin/env python3
"""`make torture`: the kill -9 tests at K times their `make test` size.

Runs every crash test of tests/integration (file, MinIO, Kafka multi-table
and merge, stateful over Kafka on local disk and MinIO, Delta source on
local disk and MinIO, MQTT) with SILT_TORTURE_SCALE=K: K times the kills
over K times the input, with broker and MinIO restarts while the query runs
(tests/integration/torture.py). Each test checks its exactly-once invariant
as under `make test` and appends its tally; this script then writes
tests/torture/results/<date>-<host>.md (kills by kind, restarts, rows,
lost, doubled, pass/fail) and exits non-zero when any test failed or any
row was lost or doubled.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CRASH_TESTS = [
    "test_crash.py",
    "test_s3_crash.py",
    "test_kafka_sinks_crash.py",
    "test_stateful_crash.py",
    "test_delta_source_crash.py",
    "test_mqtt_crash.py",
    "test_scaleout_crash.py",
]


def git_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--silt", required=True, help="the silt executable")
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--scale", type=float, default=4.0,
                        help="times the make-test size (4 gives >= 1,000 kills)")
    parser.add_argument("--out", default=None, help="results file (default: results/<date>)")
    parser.add_argument("tests", nargs="*", help="crash test files (default: all)")
    args = parser.parse_args()

    tests = args.tests or CRASH_TESTS
    results_path = Path(tempfile.mkstemp(prefix="silt-torture-", suffix=".jsonl")[1])
    env = dict(os.environ, SILT_TORTURE_SCALE=str(args.scale),
               SILT_TORTURE_RESULTS=str(results_path),
               SILT_BIN=str(Path(args.silt).resolve()),
               SILT_BUILD_DIR=str(Path(args.build_dir).resolve()))
    started = time.monotonic()
    outcomes = {}
    for test in tests:
        print(f"[torture] {test} at scale {args.scale}", flush=True)
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-ra", "-s",
                               str(ROOT / "tests" / "integration" / test)], env=env, cwd=ROOT)
        outcomes[test] = (proc.returncode, time.monotonic() - t0)
        print(f"[torture] {test}: exit {proc.returncode} in {outcomes[test][1]:.0f} s",
              flush=True)
    elapsed = time.monotonic() - started

    tallies = [json.loads(line) for line in results_path.read_text().splitlines() if line]
    results_path.unlink()
    total_kills = sum(t["kills"] for t in tallies)
    total_restarts = sum(t["restarts"] for t in tallies)
    lost = sum(t["lost"] for t in tallies)
    doubled = sum(t["doubled"] for t in tallies)
    failed = [t for t, (rc, _) in outcomes.items() if rc != 0]

    today = dt.date.today().isoformat()
    out = Path(args.out) if args.out else (
        ROOT / "tests" / "torture" / "results" / f"{today}-{platform.node() or 'host'}.md")
    lines = [
        f"# Torture run {today}",
        "",
        f"silt commit `{git_commit()}`, {platform.machine()}, {os.cpu_count()} cores, "
        f"scale {args.scale:g} (times the `make test` size), {elapsed / 60:.0f} minutes.",
        "",
        f"**{total_kills} kills, {total_restarts} service restarts, {lost} rows lost, "
        f"{doubled} rows doubled; {len(failed)} of {len(outcomes)} test files failed"
        + (f" ({', '.join(failed)})" if failed else "") + ".**",
        "",
        "| query | kills | by kind | restarts | rows | lost | doubled |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for t in tallies:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(t["kill_kinds"].items()))
        lines.append(f"| {t['test']} | {t['kills']} | {kinds} | {t['restarts']} | {t['rows']} "
                     f"| {t['lost']} | {t['doubled']} |")
    lines += ["", "| test file | exit | seconds |", "|---|---:|---:|"]
    lines += [f"| {t} | {rc} | {s:.0f} |" for t, (rc, s) in outcomes.items()]
    lines += ["", "Rows are the records (or, for the windowed aggregation, the windows) the "
              "final table must hold; lost and doubled are counted before the tests' own "
              "exactly-once assertions, which also check every batch committed once per "
              "table under the query's txn appId. Regenerate with `make torture`."]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"[torture] {total_kills} kills, {lost} lost, {doubled} doubled; wrote {out}")
    return 1 if failed or lost or doubled else 0


if __name__ == "__main__":
    sys.exit(main())
