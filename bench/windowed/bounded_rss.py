#!/usr/bin/env python3
"""Memory of the bounded-state run (issue #15): the input and job of
tests/integration/test_stateful_bounded.py (2 hours of event time, 100,000
distinct keys, 1-minute windows, 5-minute watermark, append into Delta),
run under bench/e2e/measure.py's process sampler. Prints CPU seconds, peak
RSS, the state rows (numRowsTotal) per batch, and the largest RSS sampled
while the first and the second hour of event time were processed (so that
memory, like the state rows, can be seen not to grow with the run).
--minutes runs longer than the test's 2 hours.

  .venv/bin/python bench/windowed/bounded_rss.py --silt build/src/silt/cli/silt [--minutes 480]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "bench" / "e2e"))

import engines as eng  # noqa: E402
import measure  # noqa: E402
import test_stateful_bounded as bounded  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--silt", default=str(REPO / "build" / "src" / "silt" / "cli" / "silt"))
    ap.add_argument("--minutes", type=int, default=bounded.MINUTES,
                    help="minutes of event time (the test's: %(default)s)")
    args = ap.parse_args()
    bounded.MINUTES = args.minutes
    work = Path(tempfile.mkdtemp(prefix="silt-bench-bounded-"))
    try:
        batch_max = bounded.write_input(work / "in")
        job = bounded.bounded_job(work)
        m = measure.Monitored([str(Path(args.silt).resolve()), "run", str(job), "--progress-json"],
                              eng.engine_env({}), work / "silt.log", interval=0.05)
        if not m.wait(600):
            sys.exit("timed out")
        m.stop()
        res = m.result()
        lines = (work / "silt.log").read_text().splitlines()
        progress = [json.loads(line) for line in lines if line.startswith("{")]
        rows = [p["stateOperators"][0]["numRowsTotal"] for p in progress]
        # Wall time at which each batch finished (cumulative triggerExecution,
        # aligned so that the last batch ends at the last sample), to tell
        # which RSS samples belong to which hour of event time.
        ends, t = [], 0.0
        for p in progress:
            t += p["durationMs"].get("triggerExecution", 0) / 1e3
            ends.append(t)
        offset = (m.samples[-1][0] - ends[-1]) if m.samples and ends else 0.0
        per_hour = 60 // bounded.MINUTES_PER_FILE
        hours = []
        for h in range(len(batch_max) // per_hour):
            lo = ends[h * per_hour - 1] + offset if h else 0.0
            hi = ends[(h + 1) * per_hour - 1] + offset
            in_hour = [s[1] for s in m.samples if lo < s[0] <= hi]
            hours.append(max(in_hour) / 2**20 if in_hour else float("nan"))
        events = sum(p["numInputRows"] for p in progress)
        print(f"events {events:,}, batches {len(progress)} ({len(batch_max)} with data), "
              f"returncode {res['returncode']}")
        print(f"wall {res['wall_s']:.1f} s, CPU {res['cpu_s']:.2f} s "
              f"({events / res['cpu_s']:,.0f} events per CPU s), peak RSS {res['peak_rss_mb']:.1f} MB")
        print("largest sampled RSS per hour of event time (MB): "
              + ", ".join(f"{x:.1f}" for x in hours))
        print(f"numRowsTotal per batch: {rows}")
        data = [p for p in progress if p["numInputRows"] > 0]
        for h in range(len(data) // per_hour):
            hour = data[h * per_hour:(h + 1) * per_hour]
            parts = {}
            for p in hour:
                for k, v in p["durationMs"].items():
                    parts[k] = parts.get(k, 0) + v
            print(f"hour {h + 1}: ms per batch " + ", ".join(
                f"{k} {v / len(hour):.0f}" for k, v in sorted(parts.items())))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
