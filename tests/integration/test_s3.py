"""silt against a real S3-compatible server (MinIO on loopback): the file
system's behaviours, a job writing its table and checkpoint to s3://, the
table read back by silt and by deltalake straight from the server, and the
errors users see for wrong credentials, a missing bucket and an unreachable
endpoint."""

import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from urllib.parse import unquote

import pytest

import minio_service
from helpers import (
    READING_SCHEMA,
    assert_same_rows,
    describe,
    expected_reading_row,
    json_file_job,
    reading_record,
    read_with_silt,
    to_json_rows,
    write_input_file,
    write_job,
)

LINES_PER_FILE = 50


@pytest.fixture(scope="session")
def minio():
    if not minio_service.minio_binary().is_file():
        pytest.skip(f"MinIO not built at {minio_service.minio_binary()}: "
                    "run scripts/setup-minio.sh")
    server = minio_service.start()
    yield server
    server.stop()


@pytest.fixture
def prefix(minio):
    """A fresh key prefix in the test bucket for one test."""
    return f"s3://{minio.bucket}/t-{uuid.uuid4().hex[:12]}"


def _build_dir() -> Path:
    env = os.environ.get("SILT_BUILD_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "build"


def s3_job(minio, input_dir, table, checkpoint, **storage):
    job = json_file_job("readings", input_dir, table, checkpoint, schema=READING_SCHEMA,
                        transform=[{"withColumn": {"event_date": "to_date(event_time)"}}],
                        partition_by=["event_date"])
    settings = {"endpoint": minio.endpoint, "accessKey": minio.access_key,
                "secretKey": minio.secret_key, "pathStyleAccess": True}
    settings.update(storage)
    job["storage"] = {"s3": settings}
    return job


def write_files(input_dir, first, count):
    for file_idx in range(first, first + count):
        ids = range(file_idx * LINES_PER_FILE, (file_idx + 1) * LINES_PER_FILE)
        write_input_file(input_dir / f"part-{file_idx:03d}.json",
                         [json.dumps(reading_record(i)) for i in ids])


def clean_env():
    """silt's environment without AWS variables, so only the job file counts."""
    return {k: "" for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                            "AWS_ENDPOINT_URL", "AWS_PROFILE")} | {"HOME": "/nonexistent"}


def test_fs_conformance_cases_pass_against_minio(minio):
    """The same file-system cases as local disk and memory, plus S3's own."""
    binary = _build_dir() / "src" / "silt" / "fs" / "silt_fs_test"
    if not binary.is_file():
        pytest.fail(f"{binary} not built (set SILT_BUILD_DIR)")
    env = dict(os.environ)
    env.update(minio.env())
    env.update({"SILT_TEST_S3_ENDPOINT": minio.endpoint, "SILT_TEST_S3_BUCKET": minio.bucket})
    # The S3-only cases, and the suite every file system passes (local and
    # memory run it in the unit tests) against the server; reading a key
    # prefix as a file is the one case S3 cannot share (it skips).
    proc = subprocess.run(
        [str(binary), "--gtest_filter=S3Conformance*:FileSystemConformanceTest/S3.*"
                      "-FileSystemConformanceTest/S3.ReadingADirectoryFails"],
        capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "SKIPPED" not in proc.stdout, proc.stdout[-3000:]
    assert "PASSED" in proc.stdout
    # Aborted and failed multipart uploads leave no orphaned parts behind.
    status, body = minio_service.signed_request(minio.endpoint, "GET", f"/{minio.bucket}?uploads")
    assert status == 200, body[:500]
    assert b"<Upload>" not in body, body[:2000]


def test_job_writes_table_and_checkpoint_to_s3_and_readers_agree(silt, minio, prefix, work):
    input_dir = work / "in"
    input_dir.mkdir()
    table, checkpoint = f"{prefix}/delta/readings", f"{prefix}/checkpoints/readings"
    # s3a:// (Spark's scheme) for the table, s3:// for the checkpoint.
    table_s3a = "s3a://" + table[len("s3://"):]
    job = write_job(work / "job.yaml", s3_job(minio, input_dir, table_s3a, checkpoint))

    write_files(input_dir, 0, 3)
    first = silt("run", job, env=clean_env())
    assert first.returncode == 0, describe(first)
    write_files(input_dir, 3, 2)
    second = silt("run", job, env=clean_env())
    assert second.returncode == 0, describe(second)
    assert minio.secret_key not in first.stdout + first.stderr + second.stdout + second.stderr

    expected = [expected_reading_row(i) for i in range(5 * LINES_PER_FILE)]
    # silt read finds the server through the AWS environment variables.
    rows = read_with_silt(lambda *a: silt(*a, env=minio.env()), table)
    assert_same_rows(rows, expected, "silt read", "id")

    from deltalake import DeltaTable
    dt = DeltaTable(table, storage_options=minio.storage_options())
    assert_same_rows(to_json_rows(dt.to_pyarrow_table()), expected, "deltalake", "id")

    # The streaming checkpoint is on the server too, in Spark's layout, and
    # holds no secret.
    status, body = minio_service.signed_request(
        minio.endpoint, "GET",
        f"/{minio.bucket}?list-type=2&prefix=" + checkpoint.split("/", 3)[3] + "/")
    assert status == 200
    text = body.decode()
    assert "/commits/" in text and "/offsets/" in text and "/metadata<" in text, text[:2000]
    assert minio.secret_key.encode() not in body


def test_wrong_secret_key_fails_fast_with_a_clear_message(silt, minio, prefix, work):
    input_dir = work / "in"
    input_dir.mkdir()
    write_files(input_dir, 0, 1)
    job = write_job(work / "job.yaml", s3_job(minio, input_dir, f"{prefix}/table",
                                             f"{prefix}/cp", secretKey="wrong-secret-value"))
    start = time.monotonic()
    proc = silt("run", job, env=clean_env(), timeout=60)
    elapsed = time.monotonic() - start
    assert proc.returncode != 0, describe(proc)
    output = proc.stdout + proc.stderr
    assert "SignatureDoesNotMatch" in output, describe(proc)
    assert minio.endpoint in output, describe(proc)
    assert "wrong-secret-value" not in output
    assert elapsed < 30, f"took {elapsed:.1f} s"


def test_missing_bucket_is_named(silt, minio, work):
    input_dir = work / "in"
    input_dir.mkdir()
    write_files(input_dir, 0, 1)
    bucket = f"no-such-bucket-{uuid.uuid4().hex[:8]}"
    job = write_job(work / "job.yaml", s3_job(minio, input_dir, f"s3://{bucket}/table",
                                             f"s3://{bucket}/cp"))
    proc = silt("run", job, env=clean_env(), timeout=60)
    assert proc.returncode != 0, describe(proc)
    output = proc.stdout + proc.stderr
    assert f"bucket '{bucket}' does not exist" in output, describe(proc)


def test_unreachable_endpoint_is_named(silt, minio, work):
    input_dir = work / "in"
    input_dir.mkdir()
    write_files(input_dir, 0, 1)
    dead = "http://127.0.0.1:" + str(minio_service._free_port())
    job = write_job(work / "job.yaml", s3_job(minio, input_dir, f"s3://{minio.bucket}/x/table",
                                             f"s3://{minio.bucket}/x/cp", endpoint=dead))
    start = time.monotonic()
    proc = silt("run", job, env=clean_env(), timeout=60)
    elapsed = time.monotonic() - start
    assert proc.returncode != 0, describe(proc)
    output = proc.stdout + proc.stderr
    assert dead in output and "cannot connect" in output, describe(proc)
    assert elapsed < 30, f"took {elapsed:.1f} s"


def test_concurrent_writers_appending_to_one_s3_table_lose_and_duplicate_nothing(
        silt_bin, minio, prefix, work):
    from helpers import start_silt

    table = f"{prefix}/delta/shared"
    files_per_writer = 8

    def start_writer(writer):
        input_dir = work / f"in-{writer}"
        input_dir.mkdir()
        write_files(input_dir, writer * files_per_writer, files_per_writer)
        job = s3_job(minio, input_dir, table, f"{prefix}/checkpoints/w{writer}")
        job["source"]["options"]["maxFilesPerTrigger"] = 1
        return start_silt(silt_bin, "run", write_job(work / f"job-{writer}.yaml", job),
                          env=clean_env())

    def finish(proc):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{err}"

    # The first writer creates the table (concurrent creation is the Delta
    # layer's concern); then four processes append at once, their commits
    # racing for the same versions through conditional PUT.
    finish(start_writer(0))
    for proc in [start_writer(writer) for writer in range(1, 5)]:
        finish(proc)

    from deltalake import DeltaTable
    dt = DeltaTable(table, storage_options=minio.storage_options())
    ids = dt.to_pyarrow_table().column("id").to_pylist()
    batches = 5 * files_per_writer
    assert sorted(ids) == list(range(batches * LINES_PER_FILE))
    # Every batch is its own table version.
    assert dt.version() == batches - 1

    # Every version file is whole and holds exactly one writer's batch: one
    # txn, whose (appId, batch) pair appears nowhere else, and adds whose
    # files exist with the recorded size.
    table_key = table.split("/", 3)[3]
    commits = minio_service.delta_commits(minio, table_key)
    assert list(commits) == list(range(batches))
    sizes = minio_service.list_keys(minio.endpoint, minio.bucket, table_key + "/")
    seen_txns = set()
    for version, actions in commits.items():
        txns = [(a["txn"]["appId"], a["txn"]["version"]) for a in actions if "txn" in a]
        assert len(txns) == 1, f"version {version}: {txns}"
        assert txns[0] not in seen_txns, f"version {version} repeats batch {txns[0]}"
        seen_txns.add(txns[0])
        assert any("commitInfo" in a for a in actions), f"version {version} has no commitInfo"
        adds = [a["add"] for a in actions if "add" in a]
        assert adds, f"version {version} adds no file"
        for add in adds:
            assert sizes.get(f"{table_key}/{unquote(add['path'])}") == add["size"], add["path"]
    assert len({app for app, _ in seen_txns}) == 5
    assert minio.multipart_uploads(table_key) == []
    # How much the four writers interleaved (timing-dependent, reported only).
    order = [next(a["txn"]["appId"] for a in actions if "txn" in a)
             for actions in commits.values()]
    switches = sum(1 for a, b in zip(order, order[1:]) if a != b)
    print(f"writer switches between consecutive versions: {switches}")
