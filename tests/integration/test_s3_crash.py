"""kill -9 at many moments of a query whose Delta table AND streaming
checkpoint live on the S3 server (MinIO on loopback), restart, and check
that every input record is in the table exactly once (as test_crash.py does
on local disk).

Kills are aimed by polling the server's listings: right after a new data
file appears (before its commit), right after a new _delta_log version
appears (before commits/N), right after a new offsets/N appears, plus at
random instants within a batch. Aiming is best effort; the invariant is
checked whatever the moments turned out to be.

The table is then read from the server by silt, by deltalake (delta-rs,
storage_options for the endpoint) and by DuckDB's own Delta reader over its
S3 client (the delta and httpfs extensions, from PyPI).
"""

import json
import random
import subprocess
import time
from collections import Counter

import pytest

import minio_service
from helpers import (describe, json_file_job, kill_at_probed_moment, read_with_silt, start_silt,
                     wait_for_change, write_input_file, write_job)
import torture

NUM_FILES = torture.scaled(120)
LINES_PER_FILE = 500
MIN_KILLS = torture.scaled(20)
MAX_KILLS = torture.scaled(30)
# MinIO restarts (2 s down) while the query runs: none under `make test`,
# where test_s3_faults.py covers one; a series under `make torture`.
RESTARTS_AT = torture.restart_points(MIN_KILLS, torture.service_restarts())
RUN_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def minio():
    yield from minio_service.server_fixture()


def test_kill_9_with_table_and_checkpoint_on_s3_never_loses_or_duplicates(
        silt_bin, silt, minio, work):
    input_dir = work / "in"
    input_dir.mkdir()
    for file_idx in range(NUM_FILES):
        first = file_idx * LINES_PER_FILE
        write_input_file(
            input_dir / f"events-{file_idx:03d}.json",
            [json.dumps({"id": i, "payload": f"event {i} of file {file_idx}"})
             for i in range(first, first + LINES_PER_FILE)])
    prefix = f"crash-{random.randrange(1 << 32):08x}"
    table_key, checkpoint_key = f"{prefix}/delta/events", f"{prefix}/checkpoints/events"
    table = f"s3a://{minio.bucket}/{table_key}"  # Spark's scheme, as in the seed
    checkpoint = f"s3a://{minio.bucket}/{checkpoint_key}"
    job = json_file_job("crash", input_dir, table, checkpoint,
                        schema="id BIGINT, payload STRING", max_files_per_trigger=1)
    job["storage"] = minio_service.job_storage(minio)
    job_path = write_job(work / "job.yaml", job)
    env = minio_service.clean_env()

    probes = {
        "after data file": lambda: len(minio.list_keys(f"{table_key}/part-")),
        "after log version": lambda: len(minio.list_keys(f"{table_key}/_delta_log/")),
        "after offsets": lambda: len(minio.list_keys(f"{checkpoint_key}/offsets/")),
    }
    rng = random.Random(20261129)
    modes = ["after data file", "after log version", "after offsets", "random"]
    weights = [3, 3, 2, 2]
    kills = Counter()
    restarts = 0
    stderr_log = work / "silt-stderr.log"
    with open(stderr_log, "w") as err:
        while sum(kills.values()) < MAX_KILLS:
            proc = start_silt(silt_bin, "run", job_path, env=env, stdout=subprocess.DEVNULL,
                              stderr=err)
            mode = rng.choices(modes, weights)[0]
            if restarts < len(RESTARTS_AT) and sum(kills.values()) >= RESTARTS_AT[restarts]:
                # The store goes away under a running query, which retries.
                wait_for_change(proc, probes["after offsets"], time.monotonic() + RUN_TIMEOUT_S)
                minio.restart(down_seconds=2)
                restarts += 1
            killed_as = kill_at_probed_moment(proc, probes, mode, rng,
                                              time.monotonic() + RUN_TIMEOUT_S, 0.05, stderr_log)
            if killed_as is None:
                break
            kills[killed_as] += 1
            if sum(kills.values()) >= MIN_KILLS and rng.random() < 0.1:
                break
    total_kills = sum(kills.values())
    assert total_kills >= MIN_KILLS, (
        f"only {total_kills} kills before the query finished ({dict(kills)}); "
        "the kill schedule needs retuning")

    final = silt("run", job_path, env=env, timeout=300)
    assert final.returncode == 0, describe(final)

    expected = list(range(NUM_FILES * LINES_PER_FILE))
    from deltalake import DeltaTable
    dt = DeltaTable(f"s3://{minio.bucket}/{table_key}", storage_options=minio.storage_options())
    ids = sorted(dt.to_pyarrow_table(columns=["id"]).column("id").to_pylist())
    torture.record("local files -> delta on MinIO", kills, len(expected),
                   *torture.lost_and_doubled(expected, ids), restarts=restarts)
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert not duplicates, f"{len(duplicates)} ids written twice, e.g. {duplicates[:5]}"
    missing = sorted(set(expected) - set(ids))
    assert not missing, f"{len(missing)} ids lost, e.g. {missing[:5]}"
    assert ids == expected

    n = len(expected)
    duck = minio_service.duckdb_over_s3(
        minio, table_key,
        "SELECT count(*), count(DISTINCT id), min(id), max(id), sum(id), "
        "count(*) FILTER (WHERE payload LIKE 'event % of file %') FROM t")
    assert duck == [(n, n, 0, n - 1, n * (n - 1) // 2, n)]

    silt_ids = read_with_silt(lambda *a: silt(*a, env=minio.env()), table, "--columns", "id")
    assert sorted(r["id"] for r in silt_ids) == expected

    # Each batch was committed to the table once, under the query's appId,
    # and the checkpoint on the server agrees with the table.
    commits = minio_service.delta_commits(minio, table_key)
    assert list(commits) == list(range(len(commits))), "gap in the table's versions"
    query_id = minio_service.checkpoint_query_id(minio, checkpoint_key)
    txn_versions = []
    for actions in commits.values():
        for action in actions:
            if "txn" in action:
                assert action["txn"]["appId"] == query_id
                txn_versions.append(action["txn"]["version"])
    assert len(txn_versions) == len(set(txn_versions)), "a batch was committed twice"
    batches = minio_service.checkpoint_batches(minio, checkpoint_key, "commits")
    assert minio_service.checkpoint_batches(minio, checkpoint_key, "offsets") == batches
    # (The checkpoint keeps the newest 100 batches' files, as Spark does.)
    assert sorted(txn_versions) == list(range(batches[-1] + 1))
    assert batches == list(range(batches[0], batches[-1] + 1))
    assert len(batches) >= min(100, batches[-1] + 1)
    # A kill during a multipart upload leaves an upload the server keeps;
    # data files here are far below the part size, so there must be none.
    assert minio.multipart_uploads(prefix) == []

    live = {u.rsplit("/", 1)[1] for u in dt.file_uris()}
    written = {k.rsplit("/", 1)[1] for k in minio.list_keys(f"{table_key}/part-")}
    print(f"kills: {dict(kills)}; batches: {len(batches)}; "
          f"orphaned data files (killed between write and commit): {len(written - live)}")
