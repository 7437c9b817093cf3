"""Concurrent writers on one Delta table: two `silt sql` writers (UPDATE and
MERGE) racing on the same rows and two delta-rs appenders into another
partition. Every silt failure is a named Delta conflict, and no effect of a
reported success is lost: the shared counter row ends at the number of
successful increments, and every id a successful MERGE inserted is there
once. Run twice: copy-on-write, and on a table with deletion vectors on
(created by Spark), where the writers commit deletion vectors."""

import threading
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, QueryBuilder, write_deltalake

from helpers import run_silt

CONFLICTS = ("ConcurrentAppendException", "ConcurrentDeleteReadException",
             "ConcurrentDeleteDeleteException", "MetadataChangedException",
             "ProtocolChangedException", "ConcurrentTransactionException")
ROUNDS = 12
APPENDS = 10


def _rows(ids, p, v=0):
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array([p] * len(ids)),
                     "v": pa.array([v] * len(ids), pa.int64())})


def _read(table):
    # deltalake's DataFusion engine applies deletion vectors (its pyarrow
    # reader refuses the feature).
    reader = QueryBuilder().register("t", DeltaTable(str(table))).execute("SELECT * FROM t")
    return pa.table(reader.read_all()).to_pylist()


@pytest.mark.parametrize("deletion_vectors", [False, True], ids=["copy_on_write", "dv"])
def test_two_dml_writers_and_two_appenders(silt_bin, tmp_path, deletion_vectors, request):
    table = tmp_path / "t"
    if deletion_vectors:
        spark = request.getfixturevalue("spark")
        spark.sql(f"CREATE TABLE delta.`{table}` (id BIGINT, p STRING, v BIGINT) USING delta "
                  "PARTITIONED BY (p) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
        write_deltalake(str(table), _rows([0, 1, 2], "a"), mode="append")
    else:
        write_deltalake(str(table), _rows([0, 1, 2], "a"), partition_by=["p"])
    write_deltalake(str(table), _rows([10, 11], "b"), partition_by=["p"], mode="append")

    outcomes = []  # (writer, kind, ok, stderr, payload)
    lock = threading.Lock()

    def dml_writer(w):
        for r in range(ROUNDS):
            # Both writers increment the same row: they read and rewrite the
            # same file, so one of two racing commits must lose.
            proc = run_silt(silt_bin, "sql",
                            f"UPDATE delta.`{table}` SET v = v + 1 WHERE id = 0")
            with lock:
                outcomes.append((w, "increment", proc.returncode == 0, proc.stderr, None))
            new_id = 1000 + w * 100 + r
            src = tmp_path / f"src-{w}-{r}.parquet"
            pq.write_table(_rows([1, new_id], "a", v=7), src)
            proc = run_silt(silt_bin, "sql",
                            f"MERGE INTO delta.`{table}` t USING parquet.`{src}` s "
                            "ON t.id = s.id AND t.p = s.p "
                            "WHEN MATCHED THEN UPDATE SET v = t.v + 0 "
                            "WHEN NOT MATCHED THEN INSERT *")
            with lock:
                outcomes.append((w, "merge", proc.returncode == 0, proc.stderr, new_id))

    def appender(a):
        for i in range(APPENDS):
            # delta-rs refuses its own append when a concurrent commit
            # removed files (its checker treats the append as a read of the
            # table): an appender retries, as a streaming sink would.
            for _ in range(50):
                try:
                    write_deltalake(str(table), _rows([5000 + a * 100 + i], "c"),
                                    partition_by=["p"], mode="append")
                    break
                except Exception as e:  # noqa: BLE001
                    if "concurrent" not in str(e).lower():
                        raise

    threads = [threading.Thread(target=dml_writer, args=(w,)) for w in range(2)]
    threads += [threading.Thread(target=appender, args=(a,)) for a in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    failures = [o for o in outcomes if not o[2]]
    print(f"{len(failures)} of {len(outcomes)} silt operations lost a conflict")
    for w, kind, ok, stderr, _ in outcomes:
        if not ok:
            assert any(name in stderr for name in CONFLICTS), f"writer {w} {kind}: {stderr}"
    rows = _read(table)
    if deletion_vectors:
        # The writers wrote deletion vectors, not copies.
        assert any('"deletionVector"' in f.read_text()
                   for f in (table / "_delta_log").glob("*.json"))
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
    assert appended == {5000 + a * 100 + i for a in range(2) for i in range(APPENDS)}
