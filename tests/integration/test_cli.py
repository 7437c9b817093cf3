"""The `silt` command line: help and version, `silt read` (formats, time
travel, projection), `silt log`, `silt checkpoint`, and `silt run` options."""

import csv
import io
import json
import re
import shutil
import signal

from pathlib import Path

import pytest

from helpers import (
    checkpoint_batches,
    checkpoint_query_id,
    describe,
    json_file_job,
    read_commit,
    read_with_silt,
    run_silt,
    start_silt,
    wait_for,
    write_input_file,
    write_job,
)

SCHEMA = "id BIGINT, name STRING, score DOUBLE, ok BOOLEAN, ts TIMESTAMP, day DATE"
FILES = [
    [
        {"id": 1, "name": "plain", "score": 1.5, "ok": True,
         "ts": "2026-06-22T08:16:00.123456Z", "day": "2026-06-22"},
        {"id": 2, "name": "comma, and \"quotes\"", "score": 1e10, "ok": False,
         "ts": "2026-06-22T08:16:01Z", "day": "2026-06-23"},
    ],
    [
        {"id": 3, "name": "line\nbreak", "ok": True},
        {"id": 4, "name": "", "score": -0.25},
    ],
    [
        {"id": 5, "name": "a name that is longer than twenty characters", "score": 100.0},
        {"id": 6},
    ],
]
EXPECTED = {
    1: {"id": 1, "name": "plain", "score": 1.5, "ok": True,
        "ts": "2026-06-22T08:16:00.123Z", "day": "2026-06-22"},
    2: {"id": 2, "name": "comma, and \"quotes\"", "score": 1.0e10, "ok": False,
        "ts": "2026-06-22T08:16:01.000Z", "day": "2026-06-23"},
    3: {"id": 3, "name": "line\nbreak", "ok": True},
    4: {"id": 4, "name": "", "score": -0.25},
    5: {"id": 5, "name": "a name that is longer than twenty characters", "score": 100.0},
    6: {"id": 6},
}


@pytest.fixture(scope="module")
def table_env(tmp_path_factory, silt_bin):
    """A three-version table written by a file job, one file per batch."""
    work = tmp_path_factory.mktemp("cli")
    input_dir = work / "in"
    input_dir.mkdir()
    for file_idx, records in enumerate(FILES):
        write_input_file(input_dir / f"{file_idx}.json", [json.dumps(r) for r in records])
    table, checkpoint = work / "table", work / "checkpoint"
    job = write_job(work / "job.yaml", json_file_job(
        "cli", input_dir, table, checkpoint, schema=SCHEMA, max_files_per_trigger=1))
    proc = run_silt(silt_bin, "run", job)
    assert proc.returncode == 0, describe(proc)
    return {"work": work, "table": table, "checkpoint": checkpoint, "job": job,
            "input": input_dir}


def by_id(rows):
    return {r["id"]: r for r in rows}


# ---------------------------------------------------------------- basics


def test_help_lists_every_command(silt):
    proc = silt("--help")
    assert proc.returncode == 0, describe(proc)
    for command in ("run", "demo", "read", "log", "checkpoint"):
        assert re.search(rf"^\s+{command}\b", proc.stdout, re.M), f"{command} missing from help"


def test_command_help_shows_its_options(silt):
    proc = silt("read", "--help")
    assert proc.returncode == 0, describe(proc)
    for option in ("--version", "--format", "--limit", "--columns"):
        assert option in proc.stdout


def test_version(silt):
    """Version, the commit built (``-dirty`` for a modified tree) and the target."""
    import platform
    import subprocess

    proc = silt("--version")
    assert proc.returncode == 0
    match = re.fullmatch(r"silt 0\.1\.0 \(commit ([0-9a-f]{12})(-dirty)?, linux/(\w+)\)",
                         proc.stdout.strip())
    assert match, proc.stdout
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                          capture_output=True, text=True)
    if head.returncode == 0:
        assert head.stdout.startswith(match.group(1)), (head.stdout, proc.stdout)
    assert match.group(3) == {"x86_64": "amd64", "aarch64": "arm64"}[platform.machine()]


@pytest.mark.parametrize("args", [["frobnicate"], [], ["read"], ["read", "t", "--format", "xml"]])
def test_usage_errors_exit_2_with_one_message(silt, args):
    proc = silt(*args)
    assert proc.returncode == 2, describe(proc)
    assert proc.stderr.startswith("silt: error:"), describe(proc)


# ---------------------------------------------------------------- read


def test_read_jsonl_prints_every_row_as_spark_to_json(silt, table_env):
    rows = read_with_silt(silt, table_env["table"])
    assert by_id(rows) == EXPECTED
    assert len(rows) == len(EXPECTED)


def test_read_version_travels_back_in_time(silt, table_env):
    assert set(by_id(read_with_silt(silt, table_env["table"], "--version", "0"))) == {1, 2}
    assert set(by_id(read_with_silt(silt, table_env["table"], "--version", "1"))) == {1, 2, 3, 4}
    assert set(by_id(read_with_silt(silt, table_env["table"], "--version", "2"))) == set(EXPECTED)


def test_read_missing_version_names_it(silt, table_env):
    proc = silt("read", table_env["table"], "--version", "7", "--format", "jsonl")
    assert proc.returncode == 1, describe(proc)
    assert proc.stderr.startswith("silt: error:") and "7" in proc.stderr


def test_read_csv_has_a_header_and_round_trips_through_a_csv_reader(silt, table_env):
    proc = silt("read", table_env["table"], "--format", "csv")
    assert proc.returncode == 0, describe(proc)
    records = list(csv.reader(io.StringIO(proc.stdout, newline="")))
    assert records[0] == ["id", "name", "score", "ok", "ts", "day"]
    rows = {int(r[0]): r for r in records[1:]}
    assert len(rows) == len(EXPECTED)
    # Exact by default: microseconds, shortest round-trip doubles.
    assert rows[1] == ["1", "plain", "1.5", "true", "2026-06-22T08:16:00.123456Z", "2026-06-22"]
    assert rows[2][1] == "comma, and \"quotes\"" and rows[2][2] == "10000000000.0"
    assert rows[3][1] == "line\nbreak"
    assert rows[6] == ["6", "", "", "", "", ""]
    # An empty string is written quoted, so it differs from NULL.
    assert '4,"",-0.25' in proc.stdout
    assert "\n6,,,,,\n" in proc.stdout


def test_read_table_looks_like_spark_show(silt, table_env):
    proc = silt("read", table_env["table"], "--format", "table", "--columns", "id,name,score",
                "--limit", "50")
    assert proc.returncode == 0, describe(proc)
    lines = proc.stdout.splitlines()
    assert lines[0] == lines[2] == lines[-1]
    assert re.fullmatch(r"\+-+\+-+\+-+\+", lines[0])
    assert [c.strip() for c in lines[1].strip("|").split("|")] == ["id", "name", "score"]
    body = lines[3:-1]
    assert len(body) == len(EXPECTED)
    assert all(len(line) == len(lines[0]) for line in lines), "columns are aligned"
    cells = {int(line.strip("|").split("|")[0]): [c.strip() for c in line.strip("|").split("|")]
             for line in body}
    assert cells[5][1] == "a name that is lo..."  # truncated to 20 like show()
    assert cells[3][1] == "line\\nbreak"
    assert cells[6][1:] == ["NULL", "NULL"]
    assert cells[2][2] == "1.0E10"


def test_read_table_limit_says_there_are_more_rows(silt, table_env):
    proc = silt("read", table_env["table"], "--limit", "2")
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.rstrip().endswith("only showing top 2 rows")
    assert len([l for l in proc.stdout.splitlines() if l.startswith("|")]) == 3


def test_read_columns_projects_and_keeps_the_order_given(silt, table_env):
    rows = read_with_silt(silt, table_env["table"], "--columns", "name,id")
    assert all(list(r) == ["name", "id"] or list(r) == ["id"] for r in rows)
    assert by_id(rows)[1] == {"name": "plain", "id": 1}
    proc = silt("read", table_env["table"], "--columns", "id,nope")
    assert proc.returncode == 2, describe(proc)
    assert "nope" in proc.stderr


def test_read_jsonl_limit(silt, table_env):
    assert len(read_with_silt(silt, table_env["table"], "--limit", "3")) == 3


def test_read_of_a_directory_that_is_not_a_table_says_so(silt, work):
    proc = silt("read", work)
    assert proc.returncode == 1, describe(proc)
    assert "not a Delta table" in proc.stderr


# ---------------------------------------------------------------- log


def test_log_text_shows_each_commit(silt, table_env):
    proc = silt("log", table_env["table"])
    assert proc.returncode == 0, describe(proc)
    query_id = checkpoint_query_id(table_env["checkpoint"])
    out = proc.stdout
    for version in range(3):
        assert re.search(rf"^version {version}\s+\d{{4}}-\d\d-\d\dT", out, re.M), out
        assert f"txn: appId={query_id} version={version}" in out
    assert out.count("operation: STREAMING UPDATE") == 3
    assert "outputMode=Append" in out and f"queryId={query_id}" in out and "epochId=1" in out
    assert "protocol: minReaderVersion=1 minWriterVersion=2" in out
    assert "schema: id BIGINT, name STRING, score DOUBLE, ok BOOLEAN, ts TIMESTAMP, day DATE" in out
    assert "partitionColumns: []" in out
    assert out.count("  add: ") == 3
    assert '"numRecords":2' in out and "bytes" in out


def test_log_of_one_version(silt, table_env):
    proc = silt("log", table_env["table"], "1")
    assert proc.returncode == 0, describe(proc)
    assert re.findall(r"^version (\d+)", proc.stdout, re.M) == ["1"]
    assert "metaData" not in proc.stdout


def test_log_json_has_the_raw_actions_of_each_version(silt, table_env):
    proc = silt("log", table_env["table"], "--format", "json")
    assert proc.returncode == 0, describe(proc)
    entries = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["version"] for e in entries] == [0, 1, 2]
    for entry in entries:
        assert entry["actions"] == read_commit(table_env["table"], entry["version"])
        assert entry["timestamp"] == entry["actions"][0]["commitInfo"]["timestamp"]


# ---------------------------------------------------------------- checkpoint


def test_checkpoint_text_shows_batches_and_summary(silt, table_env):
    proc = silt("checkpoint", table_env["checkpoint"])
    assert proc.returncode == 0, describe(proc)
    out = proc.stdout
    assert f"query id:   {checkpoint_query_id(table_env['checkpoint'])}" in out
    for batch_id in range(3):
        assert re.search(rf"^batch {batch_id}$", out, re.M)
    assert out.count("committed: yes") == 3
    assert "offsets[source 0]: " in out and "batch timestamp: " in out
    assert "last committed batch: 2" in out
    assert "batch to re-run: none" in out
    assert "next batch: 3" in out


def test_checkpoint_json_and_the_batch_a_restart_would_rerun(silt, table_env, work):
    proc = silt("checkpoint", table_env["checkpoint"], "--format", "json")
    assert proc.returncode == 0, describe(proc)
    doc = json.loads(proc.stdout)
    assert doc["queryId"] == checkpoint_query_id(table_env["checkpoint"])
    assert [b["batchId"] for b in doc["batches"]] == [0, 1, 2]
    assert all(b["committed"] for b in doc["batches"])
    for batch in doc["batches"]:
        assert len(batch["offsets"]) == 1
        assert isinstance(batch["batchTimestampMs"], int)
        assert isinstance(batch["conf"], dict)
    assert doc["lastCommittedBatch"] == 2 and doc["batchToRerun"] is None
    assert doc["nextBatch"] == 3

    # offsets/2 without commits/2: batch 2 is the one a restart re-runs.
    copy = work / "checkpoint-copy"
    shutil.copytree(table_env["checkpoint"], copy)
    (copy / "commits" / "2").unlink()
    for leftover in (copy / "commits").glob(".2*"):
        leftover.unlink()
    doc = json.loads(silt("checkpoint", copy, "--format", "json").stdout)
    assert doc["lastCommittedBatch"] == 1 and doc["batchToRerun"] == 2 and doc["nextBatch"] == 2
    text = silt("checkpoint", copy).stdout
    assert "batch to re-run: 2" in text


def test_checkpoint_of_a_directory_that_is_not_one_says_so(silt, work):
    proc = silt("checkpoint", work)
    assert proc.returncode == 1, describe(proc)
    assert "not a streaming checkpoint" in proc.stderr


# ---------------------------------------------------------------- run


def test_run_max_batches_and_progress_json(silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    for file_idx in range(3):
        write_input_file(input_dir / f"{file_idx}.json", [json.dumps({"id": file_idx})])
    job = write_job(work / "job.yaml", json_file_job(
        "progress", input_dir, work / "table", work / "checkpoint", schema="id BIGINT",
        max_files_per_trigger=1))
    proc = silt("run", job, "--max-batches", "2", "--progress-json")
    assert proc.returncode == 0, describe(proc)
    progress = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [p["batchId"] for p in progress] == [0, 1]
    for p in progress:
        assert p["numInputRows"] == 1
        assert p["id"] == checkpoint_query_id(work / "checkpoint")
        assert {"runId", "timestamp", "durationMs", "sources", "sink"} <= set(p)
    assert checkpoint_batches(work / "checkpoint", "commits") == [0, 1]

    rest = silt("run", job)
    assert rest.returncode == 0, describe(rest)
    assert re.search(r"^\[silt\] batch 2: 1 rows in \d+ ms -> table version 2$", rest.stdout, re.M)


def test_rerun_of_a_committed_batch_is_reported_as_skipped(silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    for file_idx in range(2):
        write_input_file(input_dir / f"{file_idx}.json", [json.dumps({"id": file_idx})] * 3)
    job = write_job(work / "job.yaml", json_file_job(
        "skip", input_dir, work / "table", work / "checkpoint", schema="id BIGINT",
        max_files_per_trigger=1))
    assert silt("run", job).returncode == 0
    # As if killed between the Delta commit and commits/1.
    (work / "checkpoint" / "commits" / "1").unlink()
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    assert re.search(r"^\[silt\] batch 1: 3 rows in \d+ ms \(already committed; skipped\)$",
                     proc.stdout, re.M), proc.stdout
    assert checkpoint_batches(work / "checkpoint", "commits") == [0, 1]
    assert len(read_with_silt(silt, work / "table")) == 6


def test_sigint_stops_a_running_query_cleanly(silt_bin, silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    write_input_file(input_dir / "0.json", [json.dumps({"id": 0})])
    job = write_job(work / "job.yaml", json_file_job(
        "sigint", input_dir, work / "table", work / "checkpoint", schema="id BIGINT",
        trigger={"processingTime": "100 milliseconds"}))
    proc = start_silt(silt_bin, "run", job)
    try:
        assert wait_for(lambda: checkpoint_batches(work / "checkpoint", "commits") == [0],
                        timeout=60)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{err}"
    assert "stopping after the current batch" in err
    assert "[silt] batch 0: 1 rows" in out
    assert len(read_with_silt(silt, work / "table")) == 1


# ---------------------------------------------------------------- examples


def test_json_files_example_runs_as_documented(silt, repo, work):
    input_dir = work / "incoming"
    input_dir.mkdir()
    write_input_file(input_dir / "a.json", [
        json.dumps({"id": 1, "device_id": "d1", "reading": 1.5, "ok": True,
                    "event_time": "2026-06-22T08:00:00Z"}),
        "not json",
    ])
    env = {"SILT_INPUT": str(input_dir), "SILT_OUTPUT": str(work / "lake")}
    proc = silt("run", repo / "examples" / "json-files.yaml", "--max-batches", "1", env=env)
    assert proc.returncode == 0, describe(proc)
    rows = read_with_silt(silt, work / "lake" / "readings")
    assert sorted(rows, key=lambda r: r.get("id", 0)) == [
        {"_corrupt_record": "not json"},
        {"id": 1, "device_id": "d1", "reading": 1.5, "ok": True,
         "event_time": "2026-06-22T08:00:00.000Z", "event_date": "2026-06-22"},
    ]
    assert (work / "lake" / "_checkpoints" / "readings" / "metadata").is_file()


def test_sensor_demo_example_runs_with_silt_run(silt, repo, work):
    env = {"SILT_DEMO_DIR": str(work / "demo"), "SILT_DEMO_ROWS_PER_BATCH": "100",
           "SILT_DEMO_TOTAL_ROWS": "300"}
    proc = silt("run", repo / "examples" / "sensor-demo.yaml", env=env)
    assert proc.returncode == 0, describe(proc)
    assert len([l for l in proc.stdout.splitlines() if l.startswith("[silt] batch ")]) == 3
    assert len(read_with_silt(silt, work / "demo" / "table")) == 300
