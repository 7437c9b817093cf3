"""kill -9 at many moments of a Delta -> Delta stream (the Delta streaming
source of issue #17), restart, and check that the target holds every source
row exactly once; on local disk and with both tables and the checkpoint on
the S3 server (MinIO on loopback).

The source table is written by silt itself (a JSON -> Delta job, one commit
per input file), then a Delta -> Delta job with maxFilesPerTrigger 1 and a
transformation streams it into the target while being killed: right after a
new offsets/N appears (the batch planned, nothing written), right after a new
target log version appears (before commits/N), and at random instants.
"""

import json
import random
import subprocess
import time
from collections import Counter

import pytest

import minio_service
from helpers import (
    checkpoint_batches,
    describe,
    json_file_job,
    kill_at_probed_moment,
    read_with_deltalake,
    read_with_silt,
    start_silt,
    write_input_file,
    write_job,
)
import torture

NUM_FILES = torture.scaled(100)
LINES_PER_FILE = 120
MIN_KILLS = torture.scaled(20)
MAX_KILLS = torture.scaled(60)
RUN_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def minio():
    yield from minio_service.server_fixture()


def write_inputs(input_dir):
    input_dir.mkdir()
    for file_idx in range(NUM_FILES):
        first = file_idx * LINES_PER_FILE
        write_input_file(
            input_dir / f"events-{file_idx:03d}.json",
            [json.dumps({"id": i, "payload": f"event {i} of file {file_idx}"})
             for i in range(first, first + LINES_PER_FILE)])


def delta_job(source, target, checkpoint, storage=None):
    job = {
        "name": "delta-crash",
        "source": {"format": "delta", "options": {"path": source, "maxFilesPerTrigger": 1}},
        "transform": [{"withColumn": {"doubled": "id * 2"}},
                      {"where": "id >= 0"}],
        "sink": {"format": "delta", "path": target},
        "checkpointLocation": checkpoint,
        "trigger": {"availableNow": True},
    }
    if storage:
        job["storage"] = storage
    return job


def crash_until_drained(silt_bin, job_path, probes, seed, log_path, env=None):
    rng = random.Random(seed)
    modes = list(probes) + ["random"]
    kills = Counter()
    with open(log_path, "w") as err:
        while sum(kills.values()) < MAX_KILLS:
            proc = start_silt(silt_bin, "run", job_path, stdout=subprocess.DEVNULL, stderr=err,
                              env=env)
            mode = rng.choice(modes)
            killed_as = kill_at_probed_moment(proc, probes, mode, rng,
                                              time.monotonic() + RUN_TIMEOUT_S, 0.03, log_path)
            if killed_as is None:
                break
            kills[killed_as] += 1
    return kills


def check_target(silt, job_path, target, kills, storage_options=None, env=None):
    total = sum(kills.values())
    assert total >= MIN_KILLS, f"only {total} kills ({dict(kills)}); retune the schedule"
    final = silt("run", job_path, timeout=300, env=env)
    assert final.returncode == 0, describe(final)
    expected = list(range(NUM_FILES * LINES_PER_FILE))
    if storage_options:
        from deltalake import DeltaTable

        table = DeltaTable(target, storage_options=storage_options).to_pyarrow_table()
    else:
        table = read_with_deltalake(target)
    ids = table.column("id").to_pylist()
    torture.record(f"delta -> delta ({'MinIO' if storage_options else 'local'})", kills,
                   len(expected), *torture.lost_and_doubled(expected, ids))
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert not duplicates, f"{len(duplicates)} ids written twice, e.g. {duplicates[:5]}"
    missing = sorted(set(expected) - set(ids))
    assert not missing, f"{len(missing)} ids lost, e.g. {missing[:5]}"
    assert table.column("doubled").to_pylist() == [i * 2 for i in ids]
    print(f"kills: {dict(kills)}")


def test_kill_9_a_delta_to_delta_stream_keeps_every_row_once(silt_bin, silt, work):
    write_inputs(work / "in")
    source, target, checkpoint = work / "source", work / "target", work / "checkpoint"
    build = write_job(work / "build.yaml", json_file_job(
        "build-source", work / "in", source, work / "build-checkpoint",
        schema="id BIGINT, payload STRING", max_files_per_trigger=1))
    proc = silt("run", build, timeout=300)
    assert proc.returncode == 0, describe(proc)
    job_path = write_job(work / "job.yaml", delta_job(str(source), str(target), str(checkpoint)))

    def count(path):
        return len(list(path.iterdir())) if path.is_dir() else 0

    probes = {
        "after offsets": lambda: count(checkpoint / "offsets"),
        "after log version": lambda: count(target / "_delta_log"),
    }
    kills = crash_until_drained(silt_bin, job_path, probes, 20261202, work / "stderr.log")
    check_target(silt, job_path, target, kills)
    # One batch per source file (the initial snapshot, split one file per
    # batch), and the checkpoint agrees with the target.
    batches = checkpoint_batches(checkpoint, "commits")
    # (The checkpoint keeps the newest 100 batches' files, as Spark does.)
    assert batches == list(range(max(0, NUM_FILES - 100), NUM_FILES)), batches
    rows = read_with_silt(silt, target, "--columns", "id")
    assert sorted(r["id"] for r in rows) == list(range(NUM_FILES * LINES_PER_FILE))


def test_kill_9_a_delta_to_delta_stream_on_s3_keeps_every_row_once(silt_bin, silt, minio, work):
    write_inputs(work / "in")
    prefix = f"delta-crash-{random.randrange(1 << 32):08x}"
    keys = {name: f"{prefix}/{name}" for name in ("source", "target", "checkpoint")}
    uri = {name: f"s3a://{minio.bucket}/{key}" for name, key in keys.items()}
    storage = minio_service.job_storage(minio)
    env = minio_service.clean_env()
    build = json_file_job("build-source", work / "in", uri["source"],
                          f"s3a://{minio.bucket}/{prefix}/build-checkpoint",
                          schema="id BIGINT, payload STRING", max_files_per_trigger=1)
    build["storage"] = storage
    proc = silt("run", write_job(work / "build.yaml", build), timeout=300, env=env)
    assert proc.returncode == 0, describe(proc)
    job_path = write_job(work / "job.yaml",
                         delta_job(uri["source"], uri["target"], uri["checkpoint"], storage))
    probes = {
        "after offsets": lambda: len(minio.list_keys(f"{keys['checkpoint']}/offsets/")),
        "after log version": lambda: len(minio.list_keys(f"{keys['target']}/_delta_log/")),
    }
    kills = crash_until_drained(silt_bin, job_path, probes, 20261203, work / "stderr.log", env)
    check_target(silt, job_path, f"s3://{minio.bucket}/{keys['target']}", kills,
                 storage_options=minio.storage_options(), env=env)
