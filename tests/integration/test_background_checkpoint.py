"""The Delta sink writes its checkpoints in a background thread after the
commit (decision 152). kill -9 while one is being written, restart, and check
that no record is lost or doubled, that every checkpoint the runs left holds
exactly the files of its version (as replaying the JSON commits gives them),
and that delta-rs reads the table at every checkpointed version.
"""

import json
import os
import subprocess
import time

import pyarrow.parquet as pq
from deltalake import DeltaTable

from helpers import (
    describe,
    json_file_job,
    kill,
    log_versions,
    read_commit,
    read_with_deltalake,
    start_silt,
    write_input_file,
    write_job,
)

# 120 batches, and at least 3 checkpoints checked: background checkpoints are
# paced (decisions 178, 189), so a fast binary on a loaded machine wrote as
# few as 3 in 60 batches (make test of stop 39).
MIN_CHECKPOINTS = 3
NUM_FILES = 120
LINES_PER_FILE = 50
MIN_KILLS = 4


def checkpoint_files(log_dir):
    """Names of classic checkpoints and of checkpoint temp files in the log."""
    try:
        return {n for n in os.listdir(log_dir) if ".checkpoint." in n}
    except FileNotFoundError:
        return set()


def test_kill_during_background_checkpoints_keeps_table_and_checkpoints_exact(
        silt_bin, silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    table, checkpoint = work / "table", work / "checkpoint"
    for f in range(NUM_FILES):
        first = f * LINES_PER_FILE
        write_input_file(input_dir / f"events-{f:03d}.json",
                         [json.dumps({"id": i, "p": i % 3})
                          for i in range(first, first + LINES_PER_FILE)])
    job = json_file_job("bgckpt", input_dir, table, checkpoint, schema="id BIGINT, p INT",
                        max_files_per_trigger=1, partition_by=["p"])
    # A checkpoint every other version: many of them, each racing the next
    # batches.
    job["sink"]["options"] = {"delta.checkpointInterval": "2"}
    write_job(work / "job.yaml", job)
    log_dir = table / "_delta_log"

    kills = 0
    for _ in range(40):
        proc = start_silt(silt_bin, "run", work / "job.yaml",
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = checkpoint_files(log_dir)
        deadline = time.monotonic() + 60
        seen = False
        while time.monotonic() < deadline and proc.poll() is None:
            # A new name: a checkpoint's temp file or the checkpoint itself,
            # i.e. one is being written or has just been published.
            if checkpoint_files(log_dir) - start:
                seen = True
                break
        if proc.poll() is not None:
            assert proc.returncode == 0
            break
        kill(proc)
        kills += int(seen)
        if kills >= MIN_KILLS * 2:
            break
    assert kills >= MIN_KILLS, f"only {kills} kills while a checkpoint was being written"

    final = silt("run", work / "job.yaml", timeout=300)
    assert final.returncode == 0, describe(final)

    expected = list(range(NUM_FILES * LINES_PER_FILE))
    ids = sorted(read_with_deltalake(table).column("id").to_pylist())
    assert ids == expected

    # Every checkpoint holds the files of its version: the adds of the JSON
    # commits up to it (blind appends only, so nothing is removed).
    added = {}
    live = set()
    for version in log_versions(table):
        for action in read_commit(table, version):
            if "add" in action:
                live.add(action["add"]["path"])
            assert "remove" not in action
        added[version] = set(live)
    checkpoints = sorted(n for n in os.listdir(log_dir) if n.endswith(".checkpoint.parquet"))
    assert len(checkpoints) >= MIN_CHECKPOINTS, checkpoints
    for name in checkpoints:
        version = int(name.split(".")[0])
        rows = pq.read_table(log_dir / name, columns=["add"]).column("add").to_pylist()
        paths = {r["path"] for r in rows if r is not None}
        assert paths == added[version], f"checkpoint {name}"
        # delta-rs loads that version from the checkpoint and agrees.
        dt = DeltaTable(str(table), version=version)
        names = {u.rsplit("/", 1)[1] for u in dt.file_uris()}
        assert names == {p.rsplit("/", 1)[1] for p in added[version]}, \
            f"delta-rs at version {version}"
