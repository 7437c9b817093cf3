"""Two `silt run` on one checkpoint: the second refuses to start (or loses
the race cleanly) with a clear message, and the table never holds a batch
twice."""

import json
import signal
import subprocess
from collections import Counter

from helpers import (
    checkpoint_batches,
    describe,
    json_file_job,
    read_with_deltalake,
    start_silt,
    wait_for,
    write_input_file,
    write_job,
)

LINES_PER_FILE = 200


def write_files(input_dir, first_file, count):
    for file_idx in range(first_file, first_file + count):
        first = file_idx * LINES_PER_FILE
        write_input_file(input_dir / f"f-{file_idx:04d}.json",
                         [json.dumps({"id": i}) for i in range(first, first + LINES_PER_FILE)])


def assert_each_id_once(table, num_files):
    ids = read_with_deltalake(table).column("id").to_pylist()
    twice = [i for i, n in Counter(ids).items() if n > 1]
    assert not twice, f"ids written twice: {twice[:5]}"
    assert sorted(ids) == list(range(num_files * LINES_PER_FILE))


def assert_refused(proc, checkpoint):
    """A clean refusal: exit 1, one error line naming the checkpoint."""
    assert proc.returncode == 1, describe(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("silt: error:")]
    assert len(errors) == 1, describe(proc)
    assert str(checkpoint) in errors[0], errors[0]


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_second_query_on_a_running_checkpoint_refuses_to_start(silt_bin, silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    table, checkpoint = work / "table", work / "checkpoint"
    job = write_job(work / "job.yaml", json_file_job(
        "concurrent", input_dir, table, checkpoint, schema="id BIGINT",
        max_files_per_trigger=3, trigger={"processingTime": "200 milliseconds"}))
    write_files(input_dir, 0, 6)

    first = start_silt(silt_bin, "run", job)
    try:
        assert wait_for(lambda: 1 in checkpoint_batches(checkpoint, "commits"), timeout=60), \
            "the first query did not commit its first batches"
        second = silt("run", job, timeout=60)
        assert_refused(second, checkpoint)

        # The first query keeps running and picks up new files.
        write_files(input_dir, 6, 3)
        assert wait_for(lambda: 2 in checkpoint_batches(checkpoint, "commits"), timeout=60)
        assert first.poll() is None, "the first query stopped"
        first.send_signal(signal.SIGTERM)
        done = finish(first)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert done.returncode == 0, describe(done)
    assert "stopping after the current batch" in done.stderr
    assert_each_id_once(table, 9)


def test_two_queries_started_together_never_write_a_batch_twice(silt_bin, work):
    input_dir = work / "in"
    input_dir.mkdir()
    table, checkpoint = work / "table", work / "checkpoint"
    job = write_job(work / "job.yaml", json_file_job(
        "race", input_dir, table, checkpoint, schema="id BIGINT", max_files_per_trigger=1))
    num_files = 0
    for _ in range(5):
        write_files(input_dir, num_files, 4)
        num_files += 4
        a = start_silt(silt_bin, "run", job)
        b = start_silt(silt_bin, "run", job)
        results = [finish(a), finish(b)]
        for proc in results:
            if proc.returncode != 0:
                assert_refused(proc, checkpoint)
        assert any(p.returncode == 0 for p in results), [describe(p) for p in results]
        assert_each_id_once(table, num_files)
    # Each batch is committed once in the checkpoint too.
    assert checkpoint_batches(checkpoint, "commits") == list(range(num_files))
