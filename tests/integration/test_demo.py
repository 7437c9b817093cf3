"""`silt demo`: the built-in sensor pipeline writes a partitioned Delta table
that silt, deltalake, pyarrow and duckdb all read back identically."""

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from helpers import (
    checkpoint_batches,
    describe,
    duckdb_query,
    read_with_deltalake,
    read_with_pyarrow,
    read_with_silt,
    run_silt,
    snapshot,
    sort_rows,
    to_json_rows,
)

ROW_KEY = ("device_id", "event_time", "raw_payload")
EXPECTED_COLUMNS = [
    "device_id", "device_type", "event_time", "linkquality", "contact", "battery", "power",
    "voltage", "current", "energy", "plug_state", "raw_payload", "processed_at", "event_date",
]


def printed_counts(stdout):
    """device_type -> rows from the demo's summary table."""
    counts = {}
    in_table = False
    for line in stdout.splitlines():
        if re.match(r"\s+device_type\s+rows\s*$", line):
            in_table = True
            continue
        if in_table:
            m = re.fullmatch(r"\s+(\S+)\s+(\d+)\s*", line)
            if not m:
                break
            counts[m.group(1)] = int(m.group(2))
    return counts


def assert_runnable_hint(stdout, command_tail, cwd, silt_bin):
    """The demo's "Look further" hint for command_tail names a program that,
    run from cwd, is this very silt binary (not a bare `silt` off PATH)."""
    m = re.search(rf"^  (\S+) {re.escape(command_tail)}$", stdout, re.MULTILINE)
    assert m, f"no hint '... {command_tail}' in:\n{stdout}"
    program = m.group(1)
    resolved = shutil.which(program) if "/" not in program else str(Path(cwd) / program)
    assert resolved and Path(resolved).resolve() == Path(silt_bin).resolve(), (program, cwd)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory, silt_bin):
    work = tmp_path_factory.mktemp("demo")
    proc = run_silt(silt_bin, "demo", "--dir", work / "demo", "--batches", "4",
                    "--rows-per-batch", "500")
    assert proc.returncode == 0, describe(proc)
    return work / "demo", proc


def test_demo_prints_progress_counts_and_where_to_look_next(demo_run, silt_bin):
    demo_dir, proc = demo_run
    batches = [l for l in proc.stdout.splitlines() if l.startswith("[silt] batch ")]
    assert len(batches) == 4, describe(proc)
    for batch_id, line in enumerate(batches):
        assert re.fullmatch(
            rf"\[silt\] batch {batch_id}: 500 rows in \d+ ms -> table version {batch_id}", line
        ), line
    counts = printed_counts(proc.stdout)
    assert set(counts) == {"smart_plug", "door_window"}, proc.stdout
    assert sum(counts.values()) == 2000
    for hint in (f"read {demo_dir}/table --limit 5", f"log {demo_dir}/table",
                 f"checkpoint {demo_dir}/checkpoint"):
        assert_runnable_hint(proc.stdout, hint, Path.cwd(), silt_bin)


def test_demo_table_is_partitioned_by_device_type_and_event_date(demo_run):
    demo_dir, proc = demo_run
    table = demo_dir / "table"
    snap = snapshot(table)
    assert snap.partition_columns == ["device_type", "event_date"]
    fields = [f["name"] for f in snap.fields]
    assert fields == EXPECTED_COLUMNS
    assert snap.files
    for rel, add in snap.files.items():
        parts = Path(rel).parts
        assert len(parts) == 3, rel
        assert parts[0] == f"device_type={add['partitionValues']['device_type']}"
        assert parts[1] == f"event_date={add['partitionValues']['event_date']}"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", add["partitionValues"]["event_date"])
        assert re.fullmatch(r"part-\d{5}-[0-9a-f-]{36}\.c000\.snappy\.parquet", parts[2]), rel
        assert (table / rel).is_file()
    counts = printed_counts(proc.stdout)
    per_dir = {}
    for rel, add in snap.files.items():
        device_type = add["partitionValues"]["device_type"]
        per_dir[device_type] = per_dir.get(device_type, 0) + json.loads(add["stats"])["numRecords"]
    assert per_dir == counts


def test_demo_table_reads_back_identically_in_silt_deltalake_and_pyarrow(silt, demo_run):
    demo_dir, _ = demo_run
    table = demo_dir / "table"
    from_silt = sort_rows(read_with_silt(silt, table), *ROW_KEY)
    from_deltalake = sort_rows(to_json_rows(read_with_deltalake(table)), *ROW_KEY)
    from_pyarrow = sort_rows(to_json_rows(read_with_pyarrow(table)), *ROW_KEY)
    assert len(from_silt) == len(from_deltalake) == len(from_pyarrow) == 2000
    for row_idx, (a, b, c) in enumerate(zip(from_silt, from_deltalake, from_pyarrow)):
        assert a == b, f"row {row_idx}: silt {a}\n deltalake {b}"
        assert a == c, f"row {row_idx}: silt {a}\n pyarrow {c}"
    # The seed's columns are really populated: both device kinds, typed fields.
    plugs = [r for r in from_silt if r["device_type"] == "smart_plug"]
    doors = [r for r in from_silt if r["device_type"] == "door_window"]
    assert plugs and doors
    assert all("power" in r and "contact" not in r for r in plugs)
    assert all("contact" in r and "power" not in r for r in doors)
    assert all(r["event_date"] == r["event_time"][:10] for r in from_silt)


def test_demo_table_matches_duckdb_counts_and_sums(demo_run):
    demo_dir, _ = demo_run
    table = demo_dir / "table"
    reference = read_with_deltalake(table).to_pylist()
    rows = duckdb_query(
        table,
        "SELECT device_type, count(*), sum(power), sum(battery), count(contact), "
        "sum(linkquality), count(DISTINCT event_date) FROM {t} GROUP BY device_type "
        "ORDER BY device_type")
    expected = []
    for device_type in sorted({r["device_type"] for r in reference}):
        group = [r for r in reference if r["device_type"] == device_type]

        def total(col):
            values = [r[col] for r in group if r[col] is not None]
            return sum(values) if values else None

        expected.append((device_type, len(group), total("power"), total("battery"),
                         sum(1 for r in group if r["contact"] is not None),
                         total("linkquality"), len({r["event_date"] for r in group})))
    assert len(rows) == len(expected)
    for got, want in zip(rows, expected):
        assert got[0] == want[0] and got[1] == want[1]
        if want[2] is None:
            assert got[2] is None
        else:
            assert math.isclose(got[2], want[2], rel_tol=1e-9)
        assert got[3:] == want[3:]


def test_demo_defaults_run_ten_batches_of_1000_into_silt_demo(silt, silt_bin, work):
    proc = silt("demo", cwd=work, timeout=300)
    assert proc.returncode == 0, describe(proc)
    batches = [l for l in proc.stdout.splitlines() if l.startswith("[silt] batch ")]
    assert len(batches) == 10
    assert all(": 1000 rows in " in l for l in batches)
    assert (work / "silt-demo" / "table" / "_delta_log").is_dir()
    assert checkpoint_batches(work / "silt-demo" / "checkpoint", "commits") == list(range(10))
    assert_runnable_hint(proc.stdout, "read silt-demo/table --limit 5", work, silt_bin)


def test_demo_continues_its_checkpoint_when_run_again(silt, work):
    demo = work / "demo"
    first = silt("demo", "--dir", demo, "--batches", "2", "--rows-per-batch", "100")
    assert first.returncode == 0, describe(first)
    second = silt("demo", "--dir", demo, "--batches", "3", "--rows-per-batch", "100")
    assert second.returncode == 0, describe(second)
    assert "rm -rf" in second.stdout
    batches = [l.split(":")[0] for l in second.stdout.splitlines() if l.startswith("[silt] batch ")]
    assert batches == ["[silt] batch 2", "[silt] batch 3", "[silt] batch 4"]
    assert sum(printed_counts(second.stdout).values()) == 500
    rows = read_with_silt(silt, demo / "table")
    assert len(rows) == 500
    keys = {(r["device_id"], r["event_time"], r.get("raw_payload")) for r in rows}
    assert len(keys) == 500, "continuing the demo must not repeat events"


def test_embedded_demo_job_is_examples_sensor_demo_yaml(silt, repo):
    proc = silt("demo", "--print-job")
    assert proc.returncode == 0, describe(proc)

    def without_paths(text):
        return [line for line in text.splitlines()
                if not re.match(r"\s*(path|checkpointLocation):", line)]

    example = (repo / "examples" / "sensor-demo.yaml").read_text()
    assert without_paths(proc.stdout) == without_paths(example)
