"""Bounded state (issue #15): a windowed aggregation in append mode over two
hours of event time with 100,000 distinct keys keeps its state rows flat
once the watermark starts evicting, and writes every closed window exactly
once. Memory of the same run is measured in the benchmark
(bench/results/2026-12-02-windowed-agg.md), not here.

The input (write_input) is JSON-lines files of one batch each, in event-time
order: every minute of event time carries KEYS_PER_MINUTE keys, the next
slice of the 100,000-key space (so each key comes back every
DISTINCT_KEYS / KEYS_PER_MINUTE minutes and all 100,000 are seen within the
first hour), EVENTS_PER_GROUP events per key and minute. Without eviction
the state would hold every (window, key) group seen so far, 150,000 after
the first hour and 300,000 after the second."""

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

from helpers import describe, json_file_job, write_input_file, write_job

SCHEMA = "key STRING, v DOUBLE, ts TIMESTAMP"
BASE_S = 1_782_115_200  # 2026-06-22T08:00:00Z, on a minute boundary
MINUTES = 120
DISTINCT_KEYS = 100_000
KEYS_PER_MINUTE = 1_700
EVENTS_PER_GROUP = 2
MINUTES_PER_FILE = 4
WINDOW_S = 60
DELAY_S = 5 * 60


def key_of(minute, j):
    return (minute * KEYS_PER_MINUTE + j) % DISTINCT_KEYS


def write_input(input_dir: Path) -> list:
    """Writes the input files; returns each batch's maximum event time (s)."""
    assert MINUTES <= 16 * 60  # the timestamps below stay on 2026-06-22
    input_dir.mkdir(parents=True, exist_ok=True)
    batch_max = []
    for first in range(0, MINUTES, MINUTES_PER_FILE):
        lines = []
        for minute in range(first, first + MINUTES_PER_FILE):
            events = []
            for j in range(KEYS_PER_MINUTE):
                for e in range(EVENTS_PER_GROUP):
                    events.append(((j * 7 + e * 29) % 60, key_of(minute, j), j % 100 + e))
            events.sort()  # event-time order within the minute
            stamp = [f"2026-06-22T{8 + minute // 60:02d}:{minute % 60:02d}:{s:02d}Z"
                     for s in range(60)]
            lines.extend(f'{{"key":"k{key:06d}","v":{v}.0,"ts":"{stamp[second]}"}}'
                         for second, key, v in events)
            latest = BASE_S + minute * 60 + events[-1][0]
        write_input_file(input_dir / f"part-{first // MINUTES_PER_FILE:04d}.json", lines)
        batch_max.append(latest)
    return batch_max


def bounded_job(work: Path) -> Path:
    transform = [
        {"withWatermark": {"eventTime": "ts", "delayThreshold": "5 minutes"}},
        {"groupBy": {"keys": ["window(ts, '1 minute')", "key"],
                     "agg": ["count(*) AS n", "avg(v) AS avg_v", "max(v) AS max_v"]}},
    ]
    job = json_file_job("bounded", work / "in", work / "table", work / "checkpoint", SCHEMA,
                        max_files_per_trigger=1, transform=transform)
    return write_job(work / "bounded.yaml", job)


def max_open_windows(batch_span_s):
    """Windows a batch's state can hold after its eviction: those ending
    after the eviction watermark (the previous batch's maximum event time
    minus the delay) and starting at or before this batch's maximum, an
    interval of at most delay + batch span seconds."""
    return math.ceil((DELAY_S + batch_span_s) / WINDOW_S) + 1


def test_state_rows_stay_flat_over_two_hours_of_100k_keys(silt, work):
    batch_max = write_input(work / "in")
    first_hour_keys = {key_of(m, j) for m in range(60) for j in range(KEYS_PER_MINUTE)}
    assert len(first_hour_keys) == DISTINCT_KEYS  # every key is seen, in the first hour already
    proc = silt("run", bounded_job(work), "--progress-json", timeout=300)
    assert proc.returncode == 0, describe(proc)
    progress = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    data = [p for p in progress if p["numInputRows"] > 0]
    assert len(data) == len(batch_max), [p["batchId"] for p in progress]
    assert sum(p["numInputRows"] for p in data) == MINUTES * KEYS_PER_MINUTE * EVENTS_PER_GROUP
    rows_total = [p["stateOperators"][0]["numRowsTotal"] for p in data]
    assert all(p["stateOperators"][0]["numRowsDroppedByWatermark"] == 0 for p in data)

    spans = [b - a for a, b in zip(batch_max, batch_max[1:])]
    bound = max_open_windows(max(spans)) * KEYS_PER_MINUTE
    # Warm-up: until the eviction watermark (previous batch's max - delay)
    # has passed the first window's end, nothing can be evicted.
    warm = next(i for i in range(1, len(batch_max))
                if batch_max[i - 1] - DELAY_S >= BASE_S + WINDOW_S)
    steady = list(enumerate(rows_total))[warm:]
    over = [(i, n) for i, n in steady if n > bound]
    assert not over, f"state rows above {bound} (open windows x keys per window): {over}"
    hour = len(batch_max) // 2
    first_hour = [n for i, n in steady if i < hour]
    second_hour = [n for i, n in steady if i >= hour]
    assert first_hour and second_hour
    assert max(second_hour) <= max(first_hour), (first_hour, second_hour)
    # Not trivially small either: each steady batch holds the windows it
    # cannot close yet, at least the delay's worth.
    assert min(n for _, n in steady) >= (DELAY_S // WINDOW_S) * KEYS_PER_MINUTE, rows_total

    # Every window the final watermark closed is in the table exactly once,
    # with all its events; the ones after it are still open.
    final_watermark = batch_max[-1] - DELAY_S
    closed_minutes = [m for m in range(MINUTES) if BASE_S + (m + 1) * 60 <= final_watermark]
    table = DeltaTable(str(work / "table")).to_pyarrow_table(columns=["window", "key", "n"])
    starts = pc.cast(pc.struct_field(table.column("window"), "start"), pa.int64())
    starts = [us // 1_000_000 for us in starts.to_pylist()]
    groups = set(zip(starts, table.column("key").to_pylist()))
    assert len(groups) == table.num_rows, "a window of a key written twice"
    assert set(table.column("n").to_pylist()) == {EVENTS_PER_GROUP}
    expected = {(BASE_S + m * 60, f"k{key_of(m, j):06d}")
                for m in closed_minutes for j in range(KEYS_PER_MINUTE)}
    assert len(groups) == len(expected) == len(closed_minutes) * KEYS_PER_MINUTE
    assert groups == expected
