"""Parquet bloom filters and pruning in silt, against pyarrow and DuckDB.

Drives the test-only tool `silt_parquet_roundtrip` (see
test_parquet_interop.py): `copy` rewrites a file with silt's writer (with
bloom filters), `bloom` asks silt's reader for bloom-filter lookups, `prune`
runs SelectRowGroups + ReadRowGroupPruned for a conjunction of predicates.

* DuckDB writes bloom filters for dictionary-encoded columns: silt's lookups
  agree with DuckDB's parquet_bloom_probe, value by value, row group by row
  group.
* silt's bloom filters: pyarrow and DuckDB read the file unchanged, and
  DuckDB's probe of silt's filters agrees with silt's own lookups (never a
  false negative).
* Pruning: for files pyarrow and silt write with a page index, the rows silt
  returns are a superset of the rows the predicate selects, every returned
  row is a real row with all its columns (flat, struct, list) aligned, and
  row groups and pages the statistics rule out are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("SILT_BUILD_DIR", REPO / "build"))
TOOL = BUILD_DIR / "src" / "silt" / "parquet" / "silt_parquet_roundtrip"


@pytest.fixture(scope="module")
def tool() -> Path:
    if not TOOL.is_file() or not os.access(TOOL, os.X_OK):
        pytest.fail(f"{TOOL} not found: build the silt_parquet_roundtrip target "
                    "(it is built with the unit tests) or set SILT_BUILD_DIR")
    return TOOL


def run(tool: Path, *args: str) -> str:
    proc = subprocess.run([str(tool), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{tool.name} {' '.join(args)} failed:\n{proc.stderr}"
    return proc.stdout


def silt_bloom(tool: Path, path: Path, column: str, value) -> list:
    out = run(tool, "bloom", str(path), column, str(value))
    return [json.loads(line) for line in out.splitlines() if line]


def duckdb_excludes(path: Path, column: str, value) -> list:
    rows = duckdb.sql(
        f"SELECT row_group_id, bloom_filter_excludes FROM "
        f"parquet_bloom_probe('{path}', '{column}', {sql_literal(value)}) ORDER BY row_group_id"
    ).fetchall()
    return [excludes for _, excludes in rows]


def sql_literal(value) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


# --------------------------------------------------------------------------
# Bloom filters


def test_silt_reads_duckdb_bloom_filters(tool, tmp_path):
    path = tmp_path / "duck.parquet"
    duckdb.sql(
        "COPY (SELECT 'device-' || (i % 200)::VARCHAR AS s, (i % 1000)::BIGINT AS k, "
        "(i % 300)::INTEGER AS n, i AS id FROM range(100000) t(i)) "
        f"TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 20000)"
    )
    md = duckdb.sql(
        f"SELECT path_in_schema, bloom_filter_offset FROM parquet_metadata('{path}')"
    ).fetchall()
    assert any(col == "s" and off is not None for col, off in md), "DuckDB wrote no bloom filter"
    checked_absent = 0
    for column, values in (
        ("s", ["device-5", "device-199", "device-200", "nope", ""]),
        ("k", [0, 999, 1000, -1, 123456]),
        ("n", [7, 299, 300, -5]),
    ):
        for value in values:
            silt = silt_bloom(tool, path, column, value)
            duck = duckdb_excludes(path, column, value)
            assert len(silt) == len(duck) == 5
            for rg, (mine, theirs) in enumerate(zip(silt, duck)):
                assert mine is not None, f"silt sees no filter for {column} in row group {rg}"
                assert mine == (not theirs), f"{column}={value!r} row group {rg}"
                checked_absent += not mine
    assert checked_absent > 0


def sensor_like_table(rows: int = 30000) -> pa.Table:
    ids = list(range(rows))
    return pa.table({
        "device_id": pa.array([f"dev-{i % 150:03d}" for i in ids]),
        "reading": pa.array([i % 977 for i in ids], pa.int64()),
        "small": pa.array([i % 50 for i in ids], pa.int32()),
        "power": pa.array([None if i % 11 == 0 else (i % 400) / 4 for i in ids], pa.float64()),
        "payload": pa.array([f'{{"n":{i}}}' for i in ids]),
    })


@pytest.mark.parametrize("sizing", ["", ":5000:0.001"], ids=["ndv-from-data", "ndv-given"])
def test_duckdb_and_pyarrow_read_silt_bloom_filters(tool, tmp_path, sizing):
    src = tmp_path / "src.parquet"
    table = sensor_like_table()
    pq.write_table(table, src, row_group_size=10000)
    out = tmp_path / "silt.parquet"
    run(tool, "copy", str(src), str(out), "--row-group-bytes", "200000",
        "--bloom", "device_id" + sizing, "--bloom", "reading" + sizing,
        "--bloom", "small" + sizing, "--bloom", "power" + sizing)

    # The file reads back unchanged in pyarrow and DuckDB.
    assert pq.read_table(out).equals(table)
    got = duckdb.sql(f"SELECT count(*), sum(reading), count(power) FROM '{out}'").fetchall()[0]
    assert got == (table.num_rows, sum(table["reading"].to_pylist()),
                   table.num_rows - table["power"].null_count)
    md = pq.ParquetFile(out).metadata
    assert md.num_row_groups > 1

    for column, present, absent in (
        ("device_id", ["dev-000", "dev-149", "dev-077"], ["dev-150", "x", ""]),
        ("reading", [0, 976, 500], [977, -1, 10**12]),
        ("small", [0, 49], [50, -7]),
        ("power", [0.25, 99.75], [100.5, 1e300]),
    ):
        for value in present + absent:
            silt = silt_bloom(tool, out, column, value)
            duck = duckdb_excludes(out, column, value)
            assert len(silt) == len(duck) == md.num_row_groups
            for rg, (mine, theirs) in enumerate(zip(silt, duck)):
                assert mine is not None
                assert mine == (not theirs), f"{column}={value!r} row group {rg}"
            if value in present:
                assert all(silt), f"false negative for {column}={value!r}"
        # Absent values are mostly ruled out (fpp 1% or 0.1%).
        ruled_out = sum(not x for v in absent for x in silt_bloom(tool, out, column, v))
        assert ruled_out >= len(absent) * md.num_row_groups - 1


def test_bloom_filter_prunes_row_groups(tool, tmp_path):
    src = tmp_path / "src.parquet"
    # Each row group holds different devices; statistics alone cannot rule
    # out "dev-0005x" style values in between, the bloom filter can.
    names = [f"dev-{(i // 1000) * 10 + i % 7:04d}" for i in range(6000)]
    pq.write_table(pa.table({"device_id": names, "id": list(range(6000))}), src,
                   row_group_size=1000)
    out = tmp_path / "silt.parquet"
    run(tool, "copy", str(src), str(out), "--row-group-bytes", "1", "--bloom", "device_id")
    assert pq.ParquetFile(out).metadata.num_row_groups == 6
    head = json.loads(run(tool, "prune", str(out), "--pred", "device_id", "=", "dev-0023",
                          "--columns", "id").splitlines()[0])
    assert head["row_groups"] == [2]
    # dev-0008 lies within row group 0's bounds but is not in it: only the
    # bloom filter rules it out.
    head = json.loads(run(tool, "prune", str(out), "--pred", "device_id", "=", "dev-0008",
                          "--columns", "id").splitlines()[0])
    assert head["row_groups"] == []


# --------------------------------------------------------------------------
# Pruning


def pruning_table(rows: int = 40000) -> pa.Table:
    ids = list(range(rows))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "s": pa.array([f"v{i:06d}" for i in ids]),
        "x": pa.array([None if i % 7 == 0 else i * 0.5 for i in ids], pa.float64()),
        "grp": pa.array([["a", "b", "c"][i % 3] for i in ids]),
        "st": pa.array([{"a": i, "b": f"b{i}"} for i in ids],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "arr": pa.array([[i, i + 1] for i in ids], pa.list_(pa.int64())),
        "ts": pa.array([1_700_000_000_000_000 + i * 1_000_000 for i in ids],
                       pa.timestamp("us", tz="UTC")),
    })


def expected_row(i: int) -> dict:
    return {"id": i, "s": f"v{i:06d}", "x": None if i % 7 == 0 else i * 0.5,
            "grp": ["a", "b", "c"][i % 3], "st": {"a": i, "b": f"b{i}"}, "arr": [i, i + 1],
            "ts": 1_700_000_000_000_000 + i * 1_000_000}


def prune(tool: Path, path: Path, *preds: tuple, columns: str | None = None):
    args = ["prune", str(path)]
    if columns:
        args += ["--columns", columns]
    for column, op, value in preds:
        args += ["--pred", column, op, str(value)]
    lines = run(tool, *args).splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


CASES = [
    # (predicates, python filter)
    ([("id", ">=", 12345), ("id", "<", 12400)], lambda i: 12345 <= i < 12400),
    ([("s", "=", "v030000")], lambda i: i == 30000),
    ([("s", ">", "v039990")], lambda i: i > 39990),
    ([("id", "in", "5,25000,39999")], lambda i: i in (5, 25000, 39999)),
    ([("st.a", "<=", 100)], lambda i: i <= 100),
    ([("x", "isnull", "-")], lambda i: i % 7 == 0),
    ([("x", "<", 10.0)], lambda i: i % 7 != 0 and i * 0.5 < 10),
    ([("ts", ">=", 1_700_000_000_000_000 + 39_000 * 1_000_000)], lambda i: i >= 39000),
    ([("id", ">", 100000)], lambda i: False),
    ([("grp", "=", "b"), ("id", "<", 3000)], lambda i: i % 3 == 1 and i < 3000),
]


def check_pruned(tool, path: Path, rows: int, preds, keep, columns=None) -> int:
    head, got = prune(tool, path, *preds, columns=columns)
    wanted = {i for i in range(rows) if keep(i)}
    ids = [r["id"] for r in got]
    assert len(ids) == len(set(ids)), "a row came back twice"
    assert wanted <= set(ids), f"{preds}: rows missing: {sorted(wanted - set(ids))[:10]}"
    names = columns.split(",") if columns else None
    for r in got:
        exp = expected_row(r["id"])
        if names:
            exp = {k: exp[k] for k in names}
        assert r == exp, f"{preds}: row misaligned: {r} != {exp}"
    assert ids == sorted(ids), "rows out of file order"
    assert sum(head["rows_per_group"]) == len(got)
    return len(got)


@pytest.mark.parametrize("writer", ["pyarrow", "silt", "silt-v2"])
def test_pruned_reads_return_every_matching_row_aligned(tool, tmp_path, writer):
    rows = 40000
    src = tmp_path / "src.parquet"
    pq.write_table(pruning_table(rows), src, row_group_size=10000, data_page_size=2048,
                   write_page_index=True, write_statistics=True)
    path = src
    if writer != "pyarrow":
        path = tmp_path / "silt.parquet"
        extra = ["--page-v2"] if writer == "silt-v2" else []
        run(tool, "copy", str(src), str(path), "--row-group-bytes", "60000",
            "--page-bytes", "2048", *extra)
    for preds, keep in CASES:
        n = check_pruned(tool, path, rows, preds, keep)
        if preds[0][0] in ("id", "s", "ts") and preds[0][1] != "in":
            # Sorted columns: pages ruled out, far fewer rows than the file.
            assert n < rows // 4, f"{preds}: {n} rows read, pruning did nothing"
    # Projections, including a struct field and the list column.
    check_pruned(tool, path, rows, [("id", ">=", 20000), ("id", "<=", 20010)], lambda i:
                 20000 <= i <= 20010, columns="arr,st,id")
    check_pruned(tool, path, rows, [("s", "<", "v000100")], lambda i: i < 100,
                 columns="id,grp")


def test_row_groups_are_selected_by_statistics(tool, tmp_path):
    src = tmp_path / "src.parquet"
    pq.write_table(pruning_table(40000), src, row_group_size=10000)
    head, _ = prune(tool, src, ("id", ">=", 25000), ("id", "<", 26000), columns="id")
    assert head["row_groups"] == [2]
    head, _ = prune(tool, src, ("s", "<", "v010000"), columns="id")
    assert head["row_groups"] == [0]
    head, _ = prune(tool, src, ("x", "notnull", "-"), columns="id")
    assert head["row_groups"] == [0, 1, 2, 3]
    head, _ = prune(tool, src, ("id", "isnull", "-"), columns="id")
    assert head["row_groups"] == []
