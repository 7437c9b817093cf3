"""Parquet bloom filters turned on from a job file (parquet-mr's option names
on the Delta sink), seen by pyarrow and DuckDB in the files the job writes.

* `parquet.bloom.filter.enabled#<column>` / `expected.ndv#<column>` /
  `fpp#<column>`: the named columns of every data file get a split-block
  bloom filter, the others none; DuckDB's probe finds every value written
  and rules out values that are not there.
* `parquet.bloom.filter.enabled: true`: every column that can have one
  (not booleans), with `enabled#<column>: false` opting one out.
* A key naming no column, a partition column, a boolean column or a bad
  value stops the job before anything is written, naming the key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import (
    READING_SCHEMA,
    describe,
    json_file_job,
    reading_record,
    snapshot,
    write_input_file,
    write_job,
)

pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

ROWS = 3000


def make_job(work: Path, options: dict, partition_by=None) -> Path:
    inputs = work / "in"
    inputs.mkdir(exist_ok=True)
    write_input_file(inputs / "part-0.json",
                     [json.dumps(reading_record(i)) for i in range(ROWS)])
    job = json_file_job("bloom", inputs, work / "table", work / "ckpt", READING_SCHEMA,
                        partition_by=partition_by)
    job["sink"]["options"] = options
    return write_job(work / "job.yaml", job)


def data_files(table: Path) -> list[Path]:
    snap = snapshot(table)
    assert snap.files, "the job wrote no data files"
    return [table / rel for rel in sorted(snap.files)]


def bloom_columns(path: Path) -> set[str]:
    """Columns whose chunks all carry a bloom filter (pyarrow's metadata)."""
    md = pq.ParquetFile(path).metadata
    with_filter = set()
    for i in range(md.num_columns):
        name = md.row_group(0).column(i).path_in_schema
        if all(md.row_group(rg).column(i).bloom_filter_offset is not None
               for rg in range(md.num_row_groups)):
            with_filter.add(name)
    return with_filter


def duckdb_excludes(path: Path, column: str, literal: str) -> list[bool]:
    rows = duckdb.sql(
        f"SELECT row_group_id, bloom_filter_excludes FROM "
        f"parquet_bloom_probe('{path}', '{column}', {literal}) ORDER BY row_group_id"
    ).fetchall()
    return [excludes for _, excludes in rows]


def test_job_options_write_bloom_filters_duckdb_probes(silt, work):
    job = make_job(work, {
        "parquet.bloom.filter.enabled#device_id": "true",
        "parquet.bloom.filter.expected.ndv#device_id": "100",
        "parquet.bloom.filter.enabled#ID": "true",  # column names are case-insensitive
        "parquet.bloom.filter.fpp#id": "0.001",
    })
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    for path in data_files(work / "table"):
        assert bloom_columns(path) == {"device_id", "id"}
        # Every value written is found; values not written are ruled out.
        for d in range(7):
            assert duckdb_excludes(path, "device_id", f"'dev-{d}'") == [False], d
        assert duckdb_excludes(path, "device_id", "'dev-not-there'") == [True]
        ids = pq.read_table(path, columns=["id"]).column("id").to_pylist()
        for i in ids[:50]:
            assert duckdb_excludes(path, "id", str(i)) == [False], i
        absent = [ROWS + 1000 + k for k in range(20)]
        excluded = sum(duckdb_excludes(path, "id", str(v))[0] for v in absent)
        assert excluded >= 18, f"only {excluded} of 20 absent ids ruled out at fpp 0.001"
        # The data reads the same with the filters there.
        assert pq.read_table(path).num_rows == len(ids)


def test_enabled_for_all_columns_with_one_opted_out(silt, work):
    job = make_job(work, {
        "parquet.bloom.filter.enabled": "true",
        "parquet.bloom.filter.enabled#reading": "false",
    }, partition_by=["ok"])
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    for path in data_files(work / "table"):
        # `ok` is the partition column (not in the files); booleans would
        # get none anyway.
        assert bloom_columns(path) == {"id", "device_id", "event_time"}


@pytest.mark.parametrize("options, key, words", [
    ({"parquet.bloom.filter.enabled#no_such": "true"},
     "sink.options.parquet.bloom.filter.enabled#no_such", "no column 'no_such'"),
    ({"parquet.bloom.filter.enabled#ok": "true"},
     "sink.options.parquet.bloom.filter.enabled#ok", "boolean"),
    ({"parquet.bloom.filter.enabled#device_id": "yes"},
     "sink.options.parquet.bloom.filter.enabled#device_id", "expected true or false"),
    ({"parquet.bloom.filter.enabled#device_id": "true",
      "parquet.bloom.filter.expected.ndv#device_id": "0"},
     "sink.options.parquet.bloom.filter.expected.ndv#device_id", "at least 1"),
    ({"parquet.bloom.filter.enabled#device_id": "true",
      "parquet.bloom.filter.fpp#device_id": "1.5"},
     "sink.options.parquet.bloom.filter.fpp#device_id", "(0, 1)"),
], ids=["unknown-column", "boolean", "bad-bool", "bad-ndv", "bad-fpp"])
def test_bad_bloom_filter_options_fail_before_writing(silt, work, options, key, words):
    job = make_job(work, options)
    proc = silt("run", job)
    assert proc.returncode != 0, describe(proc)
    assert key in proc.stderr and words in proc.stderr, describe(proc)
    assert not (work / "table" / "_delta_log").exists() or not any(
        (work / "table").glob("*.parquet")), "files were written despite the bad option"


def test_partition_column_cannot_have_a_bloom_filter(silt, work):
    job = make_job(work, {"parquet.bloom.filter.enabled#device_id": "true"},
                   partition_by=["device_id"])
    proc = silt("run", job)
    assert proc.returncode != 0, describe(proc)
    assert "sink.options.parquet.bloom.filter.enabled#device_id" in proc.stderr, describe(proc)
    assert "partition column" in proc.stderr, describe(proc)
