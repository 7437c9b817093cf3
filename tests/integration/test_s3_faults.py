"""silt through a fault-injecting proxy in front of the S3 server (MinIO on
loopback): connections dropped before and after the server executes a
request, delayed answers, and 500/503 errors for a fraction of requests
(s3_fault_proxy.py, fixed seed).

A streaming run with its table and checkpoint behind the proxy completes
with every record exactly once; a reader polling the table during the run
(straight from the server) only ever sees whole batches; afterwards no
multipart upload is left open and every commit and checkpoint file is
complete. The file-system conformance suite (the cases shared with local
disk and memory, plus S3's multipart and conditional-PUT cases) also passes
through the proxy.
"""

import json
import os
import random
import subprocess
import threading
import time
from collections import Counter

import pytest

import minio_service
from helpers import describe, json_file_job, read_with_silt, write_input_file, write_job
from s3_fault_proxy import FaultProxy

NUM_FILES = 30
LINES_PER_FILE = 400
SEED = 424242


@pytest.fixture(scope="module")
def minio():
    yield from minio_service.server_fixture()


def _proxy(minio, seed):
    host, port = minio.endpoint.split("://", 1)[1].split(":")
    return FaultProxy(host, int(port), seed=seed, error_rate=0.06, drop_before_rate=0.03,
                      drop_after_rate=0.05, delay_rate=0.08, max_delay_s=0.3).start()


def test_run_through_faulty_network_writes_every_record_once(silt_bin, silt, minio, work):
    input_dir = work / "in"
    input_dir.mkdir()
    for file_idx in range(NUM_FILES):
        first = file_idx * LINES_PER_FILE
        write_input_file(input_dir / f"events-{file_idx:03d}.json",
                         [json.dumps({"id": i, "payload": f"event {i}"})
                          for i in range(first, first + LINES_PER_FILE)])
    prefix = f"faults-{random.randrange(1 << 32):08x}"
    table_key, checkpoint_key = f"{prefix}/delta/events", f"{prefix}/checkpoints/events"
    table = f"s3a://{minio.bucket}/{table_key}"
    proxy = _proxy(minio, SEED)
    try:
        job = json_file_job("faults", input_dir, table, f"s3a://{minio.bucket}/{checkpoint_key}",
                            schema="id BIGINT, payload STRING", max_files_per_trigger=1)
        job["storage"] = minio_service.job_storage(minio, endpoint=proxy.endpoint)
        job_path = write_job(work / "job.yaml", job)

        # A reader on the server itself, polling while silt writes.
        from deltalake import DeltaTable
        seen_counts, reader_errors = [], []
        done = threading.Event()

        def poll():
            while not done.is_set():
                try:
                    dt = DeltaTable(f"s3://{minio.bucket}/{table_key}",
                                    storage_options=minio.storage_options())
                    ids = dt.to_pyarrow_table(columns=["id"]).column("id").to_pylist()
                except Exception as e:  # noqa: BLE001 - the table may not exist yet
                    if "not a Delta table" not in str(e) and "No files in log" not in str(e) \
                            and "TableNotFound" not in type(e).__name__:
                        reader_errors.append(repr(e))
                    done.wait(0.2)
                    continue
                seen_counts.append(len(ids))
                if len(set(ids)) != len(ids) or len(ids) % LINES_PER_FILE:
                    reader_errors.append(f"reader saw {len(ids)} rows, "
                                         f"{len(ids) - len(set(ids))} duplicated")
                done.wait(0.2)

        reader = threading.Thread(target=poll, daemon=True)
        reader.start()
        try:
            proc = silt("run", job_path, env=minio_service.clean_env(), timeout=300)
        finally:
            done.set()
            reader.join(timeout=30)
    finally:
        proxy.stop()
    assert proc.returncode == 0, describe(proc)
    assert not reader_errors, reader_errors[:5]

    faults = Counter(fate for _, _, fate in proxy.requests if fate != "pass")
    print(f"requests: {len(proxy.requests)}; faults: {dict(faults)}; "
          f"reader snapshots: {len(seen_counts)}")
    for fate in ("error", "drop_before", "drop_after", "delay"):
        assert faults[fate] > 0, f"no '{fate}' fault was injected: {dict(faults)}"
    # Lost answers to conditional commit PUTs are the interesting case.
    assert any(fate == "drop_after" and method == "PUT" and "_delta_log/" in target
               for method, target, fate in proxy.requests) or \
        any(fate == "drop_after" and method == "PUT" and "/offsets/" in target
            for method, target, fate in proxy.requests), "no commit answer was lost"

    expected = list(range(NUM_FILES * LINES_PER_FILE))
    from deltalake import DeltaTable
    dt = DeltaTable(f"s3://{minio.bucket}/{table_key}", storage_options=minio.storage_options())
    ids = sorted(dt.to_pyarrow_table(columns=["id"]).column("id").to_pylist())
    assert ids == expected
    silt_rows = read_with_silt(lambda *a: silt(*a, env=minio.env()), table, "--columns", "id")
    assert sorted(r["id"] for r in silt_rows) == expected
    duck = minio_service.duckdb_over_s3(minio, table_key,
                                        "SELECT count(*), count(DISTINCT id) FROM t")
    assert duck == [(len(expected), len(expected))]

    # Nothing half-written: no open multipart upload, every commit file whole
    # JSON with one batch each, every data file the log names present with
    # the size the log records, and whole checkpoint files.
    assert minio.multipart_uploads(prefix) == []
    commits = minio_service.delta_commits(minio, table_key)
    assert list(commits) == list(range(NUM_FILES))
    sizes = minio.list_keys(table_key + "/")
    for version, actions in commits.items():
        txns = [a["txn"]["version"] for a in actions if "txn" in a]
        assert txns == [version], f"version {version} holds batches {txns}"
        for add in (a["add"] for a in actions if "add" in a):
            assert sizes.get(f"{table_key}/{add['path']}") == add["size"], add["path"]
    for kind in ("offsets", "commits"):
        assert minio_service.checkpoint_batches(minio, checkpoint_key, kind) == \
            list(range(NUM_FILES))
        for batch in range(NUM_FILES):
            text = minio.get_object(f"{checkpoint_key}/{kind}/{batch}").decode()
            assert text.startswith("v1\n"), f"{kind}/{batch}: {text[:80]!r}"
            for line in text.splitlines()[1:]:
                json.loads(line)
    assert minio.list_keys(".silt-probe/") == {}


def test_fs_conformance_multipart_and_conditional_put_through_faulty_network(minio):
    build = os.environ.get("SILT_BUILD_DIR")
    binary = (os.path.join(build, "src/silt/fs/silt_fs_test") if build else
              str(minio_service.REPO / "build" / "src/silt/fs/silt_fs_test"))
    if not os.path.isfile(binary):
        pytest.fail(f"{binary} not built (set SILT_BUILD_DIR)")
    proxy = _proxy(minio, SEED + 1)
    try:
        env = dict(os.environ)
        env.update(minio.env())
        env.update({"SILT_TEST_S3_ENDPOINT": proxy.endpoint, "SILT_TEST_S3_BUCKET": minio.bucket})
        proc = subprocess.run(
            [binary, "--gtest_filter=S3Conformance*Multipart*:S3Conformance*Aborted*:"
                     "S3Conformance*PutIfAbsent*:S3Conformance*WrittenFile*:"
                     "FileSystemConformanceTest/S3.*"
                     "-FileSystemConformanceTest/S3.ReadingADirectoryFails"],
            capture_output=True, text=True, env=env, timeout=300)
    finally:
        proxy.stop()
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "PASSED" in proc.stdout and "SKIPPED" not in proc.stdout, proc.stdout[-3000:]
    faults = Counter(fate for _, _, fate in proxy.requests if fate != "pass")
    print(f"requests: {len(proxy.requests)}; faults: {dict(faults)}")
    assert faults["drop_after"] + faults["error"] + faults["drop_before"] > 0, dict(faults)
    assert minio.multipart_uploads() == []


def test_a_server_restart_mid_run_is_waited_out(silt_bin, work):
    """MinIO stopped for 3 s and started again while a run commits batch
    after batch: silt retries (the server answered before, so this is an
    outage, not a wrong endpoint) and ends with every record once."""
    from helpers import start_silt
    if not minio_service.minio_binary().is_file():
        pytest.skip("MinIO not built: run scripts/setup-minio.sh")
    server = minio_service.start()
    try:
        files, lines = 40, 50
        input_dir = work / "in"
        input_dir.mkdir()
        for file_idx in range(files):
            write_input_file(input_dir / f"events-{file_idx:03d}.json",
                             [json.dumps({"id": i, "payload": f"event {i}"})
                              for i in range(file_idx * lines, (file_idx + 1) * lines)])
        table_key = "restart/delta/events"
        job = json_file_job("restart", input_dir, f"s3://{server.bucket}/{table_key}",
                            f"s3://{server.bucket}/restart/cp", schema="id BIGINT, payload STRING",
                            max_files_per_trigger=1)
        job["storage"] = minio_service.job_storage(server)
        job_path = write_job(work / "job.yaml", job)
        proc = start_silt(silt_bin, "run", job_path, env=minio_service.clean_env())
        try:
            deadline = time.monotonic() + 120
            while len(minio_service.delta_commits(server, table_key)) < 3:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no third commit"
                time.sleep(0.1)
            server.restart(down_seconds=3)
            out, err = proc.communicate(timeout=240)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{err}"
        assert "retrying for up to" in err, err
        commits = minio_service.delta_commits(server, table_key)
        assert list(commits) == list(range(files))
        from deltalake import DeltaTable
        dt = DeltaTable(f"s3://{server.bucket}/{table_key}",
                        storage_options=server.storage_options())
        ids = sorted(dt.to_pyarrow_table(columns=["id"]).column("id").to_pylist())
        assert ids == list(range(files * lines))
    finally:
        server.stop()
