"""kill -9 at many moments of a running query, restart, and check that every
input record is in the table exactly once (DESIGN.md §5).

The kills are aimed by watching the table and checkpoint directories with
tight polling: right after a new data file appears (before its commit), right
after a new _delta_log version appears (before commits/N), right after a new
offsets/N appears (before the batch's data), plus at random times. Aiming is
best effort; the invariant is checked whatever the moments turned out to be.
"""

import json
import os
import random
import subprocess
import time
import warnings
from collections import Counter

from helpers import (
    checkpoint_batches,
    checkpoint_query_id,
    describe,
    json_file_job,
    kill_at_probed_moment,
    log_versions,
    read_commit,
    read_with_deltalake,
    read_with_pyarrow,
    read_with_silt,
    snapshot,
    start_silt,
    TEST_PARALLELISM,
    write_input_file,
    write_job,
)
import torture

NUM_FILES = torture.scaled(100)
LINES_PER_FILE = 1000
# With SILT_TEST_PARALLELISM, batches of that many files (one part each).
MAX_FILES_PER_TRIGGER = max(1, TEST_PARALLELISM)
MIN_KILLS = torture.scaled(40)
MAX_KILLS = torture.scaled(80)
RUN_TIMEOUT_S = 60


def table_data_files(table):
    """Names in the table directory other than the log (data and temp files)."""
    try:
        return {name for name in os.listdir(table) if name != "_delta_log"}
    except FileNotFoundError:
        return set()


def count_entries(path):
    try:
        return len(os.listdir(path))
    except FileNotFoundError:
        return 0


def committed_without_commit_mark(table, checkpoint):
    """True when the table's newest commit records a batch whose commits/N
    is missing (the kill fell between the Delta commit and commits/N)."""
    versions = log_versions(table)
    if not versions:
        return False
    try:
        txns = [a["txn"]["version"] for a in read_commit(table, versions[-1]) if "txn" in a]
    except (FileNotFoundError, ValueError):
        return False
    return bool(txns) and txns[0] not in checkpoint_batches(checkpoint, "commits")


def test_kill_9_at_random_moments_never_loses_or_duplicates_a_record(silt_bin, silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    table, checkpoint = work / "table", work / "checkpoint"
    for file_idx in range(NUM_FILES):
        first = file_idx * LINES_PER_FILE
        write_input_file(
            input_dir / f"events-{file_idx:03d}.json",
            [json.dumps({"id": i, "payload": f"event {i} of file {file_idx}"})
             for i in range(first, first + LINES_PER_FILE)])
    job = write_job(work / "job.yaml", json_file_job(
        "crash", input_dir, table, checkpoint,
        schema="id BIGINT, payload STRING",
        max_files_per_trigger=MAX_FILES_PER_TRIGGER))
    log_dir = table / "_delta_log"
    offsets_dir = checkpoint / "offsets"

    probes = {
        "after data file": lambda: table_data_files(table),
        "after log version": lambda: count_entries(log_dir),
        "after offsets": lambda: count_entries(offsets_dir),
    }
    rng = random.Random(20260622)
    modes = ["after data file", "after log version", "after offsets", "random"]
    weights = [3, 3, 2, 2]
    kills = Counter()
    windows = Counter()
    stderr_log = work / "silt-stderr.log"
    with open(stderr_log, "w") as err:
        while sum(kills.values()) < MAX_KILLS:
            proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
            mode = rng.choices(modes, weights)[0]
            # Tight polling (interval 0): the moments are milliseconds apart.
            killed_as = kill_at_probed_moment(proc, probes, mode, rng,
                                              time.monotonic() + RUN_TIMEOUT_S, 0.02, stderr_log,
                                              interval=0)
            if killed_as is None:
                break  # the run drained the input before the moment came
            kills[killed_as] += 1
            if committed_without_commit_mark(table, checkpoint):
                windows["between table commit and commits/N"] += 1
            if sum(kills.values()) >= MIN_KILLS and rng.random() < 0.1:
                break
    total_kills = sum(kills.values())
    assert total_kills >= MIN_KILLS, (
        f"only {total_kills} kills before the query finished ({dict(kills)}); "
        "the kill schedule needs retuning")

    final = silt("run", job, timeout=300)
    assert final.returncode == 0, describe(final)

    expected = list(range(NUM_FILES * LINES_PER_FILE))
    ids = sorted(read_with_deltalake(table).column("id").to_pylist())
    torture.record("local files -> local delta", kills, len(expected),
                   *torture.lost_and_doubled(expected, ids), windows=dict(windows))
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert not duplicates, f"{len(duplicates)} ids written twice, e.g. {duplicates[:5]}"
    missing = sorted(set(expected) - set(ids))
    assert not missing, f"{len(missing)} ids lost, e.g. {missing[:5]}"
    assert ids == expected
    assert sorted(read_with_pyarrow(table).column("id").to_pylist()) == expected
    assert sorted(r["id"] for r in read_with_silt(silt, table, "--columns", "id")) == expected

    # Each batch id was committed to the table once, under the query's appId,
    # and the checkpoint agrees with the table.
    query_id = checkpoint_query_id(checkpoint)
    txn_versions = []
    for version in log_versions(table):
        for action in read_commit(table, version):
            if "txn" in action:
                assert action["txn"]["appId"] == query_id
                txn_versions.append(action["txn"]["version"])
    assert len(txn_versions) == len(set(txn_versions)), "a batch was committed twice"
    batches = checkpoint_batches(checkpoint, "commits")
    assert checkpoint_batches(checkpoint, "offsets") == batches
    # (The checkpoint keeps the newest 100 batches' files, as Spark does.)
    assert sorted(txn_versions) == list(range(batches[-1] + 1))
    assert batches == list(range(batches[0], batches[-1] + 1))
    assert len(batches) >= min(100, batches[-1] + 1)
    assert snapshot(table).txns[query_id] == batches[-1]

    # Best-effort aiming, reported rather than asserted: data files that no
    # commit refers to show kills between a data-file write and its commit.
    orphans = table_data_files(table) - {p.split("/")[0] for p in snapshot(table).files}
    print(f"kills: {dict(kills)}; windows hit: {dict(windows)}; "
          f"orphaned data files (killed between write and commit): {len(orphans)}; "
          f"batches: {len(batches)}")
    if kills["after data file"] and not orphans:
        warnings.warn("no kill landed between a data file write and its commit")
