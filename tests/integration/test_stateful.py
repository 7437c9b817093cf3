"""Stateful steps through the binary: a windowed aggregation and a
deduplication over JSON-lines files, one file per batch. These tests prove
what needs no reference engine: restarts (clean and kill -9) give the table
an uninterrupted run gives, the checkpoint records the step and refuses a
changed one, `silt state` / `silt checkpoint` show the state, and Spark's
checker rules refuse bad jobs before anything is written. Equality with
Spark itself is test_stateful_spark.py's job."""

import json
import random
import signal
import time

import pytest

from helpers import (
    describe,
    json_file_job,
    log_versions,
    read_with_silt,
    start_silt,
    write_input_file,
    write_job,
)

SCHEMA = "id BIGINT, device STRING, temp DOUBLE, ts TIMESTAMP"
BASE = 1_782_116_160  # 2026-06-22T08:16:00Z, seconds


def event(i, device, temp, second):
    ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BASE + second))
    return json.dumps({"id": i, "device": device, "temp": temp, "ts": ts})


def write_batches(input_dir, batches):
    """batches: list of lists of (device, temp, second offset)."""
    input_dir.mkdir(exist_ok=True)
    i = 0
    for b, rows in enumerate(batches):
        lines = []
        for device, temp, second in rows:
            lines.append(event(i, device, temp, second))
            i += 1
        write_input_file(input_dir / f"part-{b:03d}.json", lines)


def windowed_job(work, name="windowed", mode="append", agg=None, watermark="30 seconds"):
    transform = []
    if watermark:
        transform.append({"withWatermark": {"eventTime": "ts", "delayThreshold": watermark}})
    transform.append({"groupBy": {
        "keys": ["window(ts, '1 minute')", "device"],
        "agg": agg or ["count(*) AS n", "sum(temp) AS total", "max(temp) AS hottest"],
    }})
    job = json_file_job(name, work / "in", work / "table", work / "checkpoint", SCHEMA,
                        max_files_per_trigger=1, transform=transform)
    job["sink"]["outputMode"] = mode
    return write_job(work / f"{name}.yaml", job)


# Six minutes of two devices, a late row in batch 3 (behind the watermark)
# and one inside the delay in batch 2.
BATCHES = [
    [("a", 1.0, 5), ("b", 2.0, 10), ("a", 3.0, 50)],
    [("a", 4.0, 65), ("b", 5.0, 70), ("b", 6.0, 119)],
    [("a", 7.0, 130), ("a", 8.0, 100), ("b", 9.0, 170)],
    [("a", 10.0, 200), ("b", 11.0, 10), ("a", 12.0, 250)],
    [("b", 13.0, 330), ("a", 14.0, 390)],
]


def rows_of(silt, table):
    rows = read_with_silt(silt, table)
    return sorted(rows, key=lambda r: (r["window"]["start"], r["device"]))


def test_append_mode_emits_each_window_once_after_the_watermark(silt, work):
    write_batches(work / "in", BATCHES)
    job = windowed_job(work)
    proc = silt("run", job, "--progress-json")
    assert proc.returncode == 0, describe(proc)
    progress = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    # Five batches with data, then Spark's no-data batch closes what the last
    # watermark passed.
    assert len(progress) == 6, [p["batchId"] for p in progress]
    ops = [p["stateOperators"][0] for p in progress]
    assert all(op["operatorName"] == "stateStoreSave" for op in ops)
    assert ops[3]["numRowsDroppedByWatermark"] == 1  # b@10s is behind the watermark
    rows = rows_of(silt, work / "table")
    windows = [(r["window"]["start"][11:16], r["device"], r["n"]) for r in rows]
    # By Spark's rules (test_stateful_spark.py checks them against Spark):
    # batch 2 closes 08:16, 3 closes 08:17 and drops b@08:16:10 (its window
    # ended before the previous watermark, 08:17:29), 4 closes 08:18, the
    # no-data batch (watermark 08:22:00) closes 08:19..08:21; 08:22 stays open.
    assert windows == [("08:16", "a", 2), ("08:16", "b", 1), ("08:17", "a", 2), ("08:17", "b", 2),
                       ("08:18", "a", 1), ("08:18", "b", 1), ("08:19", "a", 1), ("08:20", "a", 1),
                       ("08:21", "b", 1)]
    assert [op["numRowsTotal"] for op in ops] == [2, 4, 4, 4, 4, 1]


def test_restart_between_batches_gives_the_uninterrupted_table(silt, work):
    write_batches(work / "in", BATCHES)
    whole = work / "whole"
    whole.mkdir()
    (whole / "in").symlink_to(work / "in")
    proc = silt("run", windowed_job(whole))
    assert proc.returncode == 0, describe(proc)
    job = windowed_job(work)
    for _ in range(4):
        proc = silt("run", job, "--max-batches", "2")
        assert proc.returncode == 0, describe(proc)
    assert rows_of(silt, work / "table") == rows_of(silt, whole / "table")


def test_kill_9_at_random_moments_gives_the_uninterrupted_table(silt, silt_bin, work):
    # 600 one-file batches, so that a kill lands in every phase of a batch:
    # reading, the state commit, the table commit, commits/N (300 ran out
    # before the 40th kill once the binary got faster).
    batches = [[("d%d" % (k % 7), float(k), 13 * b + k % 13) for k in range(40)]
               for b in range(600)]
    write_batches(work / "in", batches)
    whole = work / "whole"
    whole.mkdir()
    (whole / "in").symlink_to(work / "in")
    proc = silt("run", windowed_job(whole, watermark="5 seconds"))
    assert proc.returncode == 0, describe(proc)
    expected = rows_of(silt, whole / "table")
    assert expected

    job = windowed_job(work, watermark="5 seconds")
    rng = random.Random(15)
    kills = 0
    while kills < 40:
        p = start_silt(silt_bin, "run", job)
        time.sleep(rng.uniform(0.01, 0.08))
        if p.poll() is not None:
            out, err = p.communicate()
            assert p.returncode == 0, f"exit {p.returncode}\n{out}\n{err}"
            if "[silt] batch " not in out:
                break  # nothing was left to do
            continue
        p.send_signal(signal.SIGKILL)
        p.wait()
        kills += 1
    while True:
        proc = silt("run", job)
        assert proc.returncode == 0, describe(proc)
        if "[silt] batch " not in proc.stdout:
            break
    assert kills >= 40, f"only {kills} kills before the input ran out"
    assert rows_of(silt, work / "table") == expected


def test_state_and_checkpoint_commands_show_the_state(silt, work):
    write_batches(work / "in", BATCHES[:2])
    job = windowed_job(work)
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    state = silt("state", work / "checkpoint", "--format", "jsonl")
    assert state.returncode == 0, describe(state)
    rows = [json.loads(line) for line in state.stdout.splitlines()]
    # Windows still open after the last batch (and its no-data batch).
    assert rows and all(set(r) == {"window", "device", "n", "total", "hottest"} for r in rows)
    first = silt("state", work / "checkpoint", "--batch", "0", "--format", "jsonl")
    assert first.returncode == 0, describe(first)
    after_first = {(r["window"]["start"], r["device"]): r["n"]
                   for r in map(json.loads, first.stdout.splitlines())}
    assert after_first[("2026-06-22T08:16:00.000000Z", "a")] == 2
    shown = silt("checkpoint", work / "checkpoint", "--format", "json")
    assert shown.returncode == 0, describe(shown)
    ops = json.loads(shown.stdout)["stateOperators"]
    assert ops[0]["operatorName"] == "stateStoreSave" and ops[0]["numRows"] == len(rows)
    missing = silt("state", work / "checkpoint", "--operator", "3")
    assert missing.returncode != 0 and "has no stateful operator 3" in missing.stderr


def test_a_changed_stateful_step_is_refused(silt, work):
    write_batches(work / "in", BATCHES[:1])
    proc = silt("run", windowed_job(work))
    assert proc.returncode == 0, describe(proc)
    changed = windowed_job(work, name="changed", agg=["count(*) AS n"])
    proc = silt("run", changed)
    assert proc.returncode == 2, describe(proc)
    assert "needs a new checkpointLocation" in proc.stderr, proc.stderr


@pytest.mark.parametrize("mode,watermark,transform,message", [
    ("append", None, None, "Append output mode not supported when there are streaming "
                           "aggregations on streaming DataFrames/DataSets without watermark"),
    ("complete", "10 seconds", [{"dropDuplicates": ["id"]}],
     "Complete output mode not supported when there are no streaming aggregations"),
    ("append", None, [{"dropDuplicatesWithinWatermark": ["id"]}], "needs a withWatermark step"),
])
def test_spark_checker_rules_refuse_the_job_before_anything_is_written(
        silt, work, mode, watermark, transform, message):
    write_batches(work / "in", BATCHES[:1])
    job_path = windowed_job(work, mode=mode, watermark=watermark)
    if transform is not None:
        job = json.loads(job_path.read_text())
        job["transform"] = ([{"withWatermark": {"eventTime": "ts", "delayThreshold": watermark}}]
                            if watermark else []) + transform
        write_job(job_path, job)
    proc = silt("run", job_path)
    assert proc.returncode == 2, describe(proc)
    assert message in proc.stderr, proc.stderr
    assert not (work / "checkpoint").exists() and not (work / "table").exists()


def test_drop_duplicates_keeps_the_first_row_per_key_across_batches(silt, work):
    write_batches(work / "in", [[("a", 1.0, 1), ("b", 2.0, 2)], [("c", 3.0, 3)]])
    # ids 0, 1 | 2: make ids repeat across files by deduplicating on device.
    job = json_file_job("dedup", work / "in", work / "table", work / "checkpoint", SCHEMA,
                        max_files_per_trigger=1,
                        transform=[{"dropDuplicates": ["device"]}])
    path = write_job(work / "dedup.yaml", job)
    proc = silt("run", path)
    assert proc.returncode == 0, describe(proc)
    write_input_file(work / "in" / "part-100.json", [event(9, "a", 9.0, 9), event(10, "d", 1.0, 9)])
    proc = silt("run", path, "--progress-json")
    assert proc.returncode == 0, describe(proc)
    last = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")][-1]
    assert last["stateOperators"][0]["operatorName"] == "dedupe"
    assert last["stateOperators"][0]["customMetrics"]["numDroppedDuplicateRows"] == 1
    rows = sorted(r["device"] for r in read_with_silt(silt, work / "table"))
    assert rows == ["a", "b", "c", "d"]
    assert len(log_versions(work / "table")) >= 3


def test_a_sql_step_with_group_by_is_the_groupby_step(silt, work):
    write_batches(work / "in", BATCHES)
    by_step = work / "step"
    by_step.mkdir()
    (by_step / "in").symlink_to(work / "in")
    proc = silt("run", windowed_job(by_step))
    assert proc.returncode == 0, describe(proc)
    job = json_file_job("sql", work / "in", work / "table", work / "checkpoint", SCHEMA,
                        max_files_per_trigger=1, transform=[
                            {"withWatermark": {"eventTime": "ts", "delayThreshold": "30 seconds"}},
                            {"sql": "SELECT window, device, count(*) AS n, sum(temp) AS total, "
                                    "max(temp) AS hottest FROM input "
                                    "GROUP BY window(ts, '1 minute'), device"}])
    proc = silt("run", write_job(work / "sql.yaml", job))
    assert proc.returncode == 0, describe(proc)
    assert rows_of(silt, work / "table") == rows_of(silt, by_step / "table")
    # HAVING filters the emitted groups; an item may combine aggregates.
    job["transform"][1]["sql"] = (
        "SELECT window.start AS start, device, sum(temp) / count(*) AS mean FROM input "
        "GROUP BY window(ts, '1 minute'), device HAVING count(*) > 1")
    job["checkpointLocation"] = str(work / "checkpoint2")
    job["sink"]["path"] = str(work / "table2")
    proc = silt("run", write_job(work / "having.yaml", job))
    assert proc.returncode == 0, describe(proc)
    having = sorted((r["start"][11:16], r["device"], r["mean"])
                    for r in read_with_silt(silt, work / "table2"))
    expected = sorted((r["window"]["start"][11:16], r["device"], r["total"] / r["n"])
                      for r in rows_of(silt, by_step / "table") if r["n"] > 1)
    assert having == expected and expected
