#!/usr/bin/env python3
"""Plots the CSVs of soak runs made separately (run.py plots only the
engines of one run) on one time axis from each run's start, and writes each
CSV thinned to one row every --every seconds (to keep results small).

    plot.py --csv main=/tmp/a/main.csv --csv branch=/tmp/b/after.csv \
        --png out.png --thin-dir bench/results/x/
"""
import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plotting import finish_timeline, timeline_axes  # noqa: E402


def read(path: Path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def value(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError, TypeError):
        return float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", action="append", required=True, help="LABEL=PATH, repeatable")
    ap.add_argument("--png", type=Path, required=True)
    ap.add_argument("--thin-dir", type=Path, help="write LABEL.csv thinned here")
    ap.add_argument("--every", type=float, default=10.0, help="seconds between kept rows")
    args = ap.parse_args()
    runs = []
    for item in args.csv:
        label, _, path = item.partition("=")
        runs.append((label, read(Path(path))))
    if args.thin_dir:
        args.thin_dir.mkdir(parents=True, exist_ok=True)
        for label, rows in runs:
            kept, next_t = [], 0.0
            for row in rows:
                if value(row, "t_s") >= next_t:
                    kept.append(row)
                    next_t += args.every
            with open(args.thin_dir / f"{label}.csv", "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
                w.writeheader()
                w.writerows(kept)
    fig, axes = timeline_axes(3, (9, 9))
    for label, rows in runs:
        t = [value(r, "t_s") / 60 for r in rows]
        axes[0].plot(t, [value(r, "rss_mb") for r in rows], label=label, linewidth=0.8)
        axes[1].plot(t, [value(r, "cpu_ms_per_batch") for r in rows], label=label, linewidth=0.5)
        axes[2].plot(t, [value(r, "log_mb") for r in rows], label=label, linewidth=0.8)
    finish_timeline(fig, axes, args.png,
                    ["RSS MB", "CPU ms per batch (10 s window)", "_delta_log MB"],
                    "minutes since start", log_panels=(1,))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
