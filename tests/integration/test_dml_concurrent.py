"""Concurrent writers on one Delta table: two `silt sql` writers (UPDATE and
MERGE) racing on the same rows and two delta-rs appenders into another
partition. Every silt failure is a named Delta conflict, and no effect of a
reported success is lost: the shared counter row ends at the number of
successful increments, every id a successful MERGE inserted is there once,
every appended row is there, and the table gained exactly one version per
successful commit. Run on local disk and on MinIO (silt's S3 client with
conditional-PUT commits against delta-rs's with `conditional_put=etag`),
each copy-on-write and on a table with deletion vectors on (created by
Spark), where the writers commit deletion vectors. On MinIO the writers make
200 commits together (100 by silt, 100 appends)."""

import json
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, QueryBuilder, write_deltalake

import minio_service
from helpers import run_silt

CONFLICTS = ("ConcurrentAppendException", "ConcurrentDeleteReadException",
             "ConcurrentDeleteDeleteException", "MetadataChangedException",
             "ProtocolChangedException", "ConcurrentTransactionException")
# Local: fixed rounds per writer. MinIO: the silt writers go on until they
# have committed S3_SILT_COMMITS between them (at most S3_MAX_ROUNDS rounds
# each), the appenders append S3_APPENDS each.
ROUNDS = 12
APPENDS = 10
S3_SILT_COMMITS = 100
S3_MAX_ROUNDS = 120
S3_APPENDS = 50


@pytest.fixture(scope="module")
def minio():
    yield from minio_service.server_fixture()


def _rows(ids, p, v=0):
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array([p] * len(ids)),
                     "v": pa.array([v] * len(ids), pa.int64())})


class Place:
    """Where the table lives: its URI, silt's environment, delta-rs's
    storage options, and how its commits are read back."""

    def __init__(self, uri, env=None, storage_options=None, commits=None):
        self.uri = uri
        self.env = env or {}
        self.storage_options = storage_options
        self.commits = commits

    def table(self):
        return DeltaTable(self.uri, storage_options=self.storage_options)

    def append(self, data, **kwargs):
        write_deltalake(self.uri, data, storage_options=self.storage_options, **kwargs)

    def actions(self):
        """Every action of every commit file."""
        if self.commits is not None:
            return [a for actions in self.commits().values() for a in actions]
        return [json.loads(line) for f in (Path(self.uri) / "_delta_log").glob("*.json")
                for line in f.read_text().splitlines() if line.strip()]


def _local(tmp_path):
    return Place(str(tmp_path / "t"))


def _on_minio(minio):
    options = minio.storage_options()
    # Safe concurrent commits: a conditional PUT of the commit file, as silt
    # makes it, instead of the unsafe rename delta-rs falls back to.
    options.pop("AWS_S3_ALLOW_UNSAFE_RENAME", None)
    options["conditional_put"] = "etag"
    key = f"dml-concurrent-{uuid.uuid4().hex[:12]}"
    def commits():
        # Not minio_service.delta_commits: delta-rs ends its commits without
        # a newline, which that reader (checking silt's commits) refuses.
        return {k: [json.loads(line) for line in minio.get_object(k).decode().splitlines()
                    if line.strip()]
                for k in minio.list_keys(key + "/_delta_log/") if k.endswith(".json")}

    return Place(f"s3://{minio.bucket}/{key}", minio.env(), options, commits)


def _upload_dir(minio, local: Path, uri: str):
    """Copies a local table directory to `uri` on the server (pyarrow's own
    S3 client)."""
    fs = minio.pyarrow_fs()
    prefix = uri[len("s3://"):]
    for f in sorted(local.rglob("*")):
        if f.is_file():
            with fs.open_output_stream(f"{prefix}/{f.relative_to(local)}") as out:
                out.write(f.read_bytes())


def _read(place):
    # deltalake's DataFusion engine applies deletion vectors (its pyarrow
    # reader refuses the feature).
    reader = QueryBuilder().register("t", place.table()).execute("SELECT * FROM t")
    return pa.table(reader.read_all()).to_pylist()


def _create(place, deletion_vectors, request, tmp_path, minio=None):
    if deletion_vectors:
        spark = request.getfixturevalue("spark")
        local = tmp_path / "spark-created"
        spark.sql(f"CREATE TABLE delta.`{local}` (id BIGINT, p STRING, v BIGINT) USING delta "
                  "PARTITIONED BY (p) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
        if minio is None:
            local.rename(place.uri)
        else:
            _upload_dir(minio, local, place.uri)
        place.append(_rows([0, 1, 2], "a"), mode="append")
    else:
        place.append(_rows([0, 1, 2], "a"), partition_by=["p"])
    place.append(_rows([10, 11], "b"), partition_by=["p"], mode="append")


def _race(place, tmp_path, rounds, appends, silt_bin, silt_commits=None):
    """Runs the four writers; returns the silt outcomes
    [(writer, kind, ok, stderr, payload)]. With `silt_commits` the silt
    writers stop once that many of their operations have committed."""
    outcomes = []
    lock = threading.Lock()
    committed = [0]
    in_flight = [0]

    def reserve():
        """May a silt writer start another operation? Without a target,
        always; with one, while the operations committed and running are
        below it (waiting while a running one may still fail)."""
        if silt_commits is None:
            return True
        while True:
            with lock:
                if committed[0] >= silt_commits:
                    return False
                if committed[0] + in_flight[0] < silt_commits:
                    in_flight[0] += 1
                    return True
            time.sleep(0.05)

    def record(w, kind, proc, payload):
        with lock:
            ok = proc.returncode == 0
            outcomes.append((w, kind, ok, proc.stderr, payload))
            committed[0] += ok
            if silt_commits is not None:
                in_flight[0] -= 1

    def silt(*args):
        return run_silt(silt_bin, *args, env=place.env, timeout=300)

    def dml_writer(w):
        for r in range(rounds):
            if not reserve():
                return
            # Both writers increment the same row: they read and rewrite the
            # same file, so one of two racing commits must lose.
            record(w, "increment",
                   silt("sql", f"UPDATE delta.`{place.uri}` SET v = v + 1 WHERE id = 0"), None)
            if not reserve():
                return
            new_id = 1000 + w * 1000 + r
            src = tmp_path / f"src-{w}-{r}.parquet"
            pq.write_table(_rows([1, new_id], "a", v=7), src)
            record(w, "merge",
                   silt("sql", f"MERGE INTO delta.`{place.uri}` t USING parquet.`{src}` s "
                        "ON t.id = s.id AND t.p = s.p "
                        "WHEN MATCHED THEN UPDATE SET v = t.v + 0 "
                        "WHEN NOT MATCHED THEN INSERT *"), new_id)

    def appender(a):
        for i in range(appends):
            # delta-rs refuses its own append when a concurrent commit
            # removed files (its checker treats the append as a read of the
            # table): an appender retries, as a streaming sink would.
            for _ in range(50):
                try:
                    place.append(_rows([5000 + a * 1000 + i], "c"), partition_by=["p"],
                                 mode="append")
                    break
                except Exception as e:  # noqa: BLE001
                    if "concurrent" not in str(e).lower():
                        raise
            else:
                raise AssertionError(f"appender {a} gave up on append {i}")

    errors = []

    def guarded(fn, arg):
        try:
            fn(arg)
        except BaseException as e:  # noqa: BLE001 - re-raised by the test thread
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(dml_writer, w)) for w in range(2)]
    threads += [threading.Thread(target=guarded, args=(appender, a)) for a in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return outcomes


def _check(place, outcomes, deletion_vectors, appends, base_version):
    failures = [o for o in outcomes if not o[2]]
    print(f"{len(failures)} of {len(outcomes)} silt operations lost a conflict")
    for w, kind, ok, stderr, _ in outcomes:
        if not ok:
            assert any(name in stderr for name in CONFLICTS), f"writer {w} {kind}: {stderr}"
    table = place.table()
    successes = len(outcomes) - len(failures)
    # One version per successful commit: none lost, none doubled.
    assert table.version() == base_version + successes + 2 * appends, \
        (table.version(), base_version, successes, appends)
    rows = _read(place)
    if deletion_vectors:
        # The writers wrote deletion vectors, not copies.
        assert any((a.get("add") or {}).get("deletionVector") for a in place.actions())
    ids = Counter(r["id"] for r in rows)
    assert not [i for i, n in ids.items() if n > 1], ids
    increments = sum(1 for _, kind, ok, _, _ in outcomes if kind == "increment" and ok)
    assert increments > 0
    counter = next(r for r in rows if r["id"] == 0)
    assert counter["v"] == increments, (counter, increments)
    inserted = {payload for _, kind, ok, _, payload in outcomes if kind == "merge" and ok}
    assert inserted, "no MERGE succeeded"
    present = {i for i in ids if 1000 <= i < 5000}
    assert present == inserted
    appended = {i for i in ids if i >= 5000}
    assert appended == {5000 + a * 1000 + i for a in range(2) for i in range(appends)}
    return successes


@pytest.mark.parametrize("deletion_vectors", [False, True], ids=["copy_on_write", "dv"])
def test_two_dml_writers_and_two_appenders(silt_bin, tmp_path, deletion_vectors, request):
    place = _local(tmp_path)
    _create(place, deletion_vectors, request, tmp_path)
    base = place.table().version()
    outcomes = _race(place, tmp_path, ROUNDS, APPENDS, silt_bin)
    _check(place, outcomes, deletion_vectors, APPENDS, base)


@pytest.mark.parametrize("deletion_vectors", [False, True], ids=["copy_on_write", "dv"])
def test_two_dml_writers_and_two_appenders_on_minio(silt_bin, tmp_path, deletion_vectors,
                                                    request, minio):
    place = _on_minio(minio)
    _create(place, deletion_vectors, request, tmp_path, minio)
    base = place.table().version()
    outcomes = _race(place, tmp_path, S3_MAX_ROUNDS, S3_APPENDS, silt_bin,
                     silt_commits=S3_SILT_COMMITS)
    successes = _check(place, outcomes, deletion_vectors, S3_APPENDS, base)
    assert successes == S3_SILT_COMMITS, "the silt writers ran out of rounds"
    assert place.table().version() - base == S3_SILT_COMMITS + 2 * S3_APPENDS  # 200 commits
