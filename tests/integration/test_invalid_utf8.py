"""Data that is not valid UTF-8 never makes a table unreadable (issue #23,
point 1). A corrupt record keeps its raw bytes in `_corrupt_record`, and the
data file keeps them (as Spark keeps the bytes of a binary-to-string cast),
but the log stays valid JSON in valid UTF-8: such a column has no min/max in
that file's stats (delta-spark writes U+FFFD there, a bound that makes
readers skip files holding matching rows, see docs/decisions.md), and a
partition value gets U+FFFD like delta-spark's. silt, delta-rs and Spark
read the table, and the next batch commits."""

import json
import os

import pyarrow as pa

from helpers import (
    describe,
    json_file_job,
    log_dir,
    read_with_deltalake,
    read_with_silt,
    write_job,
)

SCHEMA = "id BIGINT, name STRING, _corrupt_record STRING"
GOOD = b'{"id": 1, "name": "one"}'
# Each is a corrupt record holding bytes that are not UTF-8. (A well-formed
# record with such bytes in a string is no corrupt record: Spark's parser
# reads them as U+FFFD, and so does silt's; tests/integration/data/json.)
BAD = [b'{"id": 2, "name": "a\xffb"', b"\x80 not json", b"caf\xc3"]

_clock = [1_760_000_000.0]


def write_bytes_file(path, lines):
    """A JSON-lines file of raw bytes, written atomically and newer than
    every file before it (the file source's order)."""
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_bytes(b"".join(line + b"\n" for line in lines))
    _clock[0] += 1.0
    os.utime(tmp, (_clock[0], _clock[0]))
    os.rename(tmp, path)


def job(work, **kwargs):
    return write_job(work / "job.yaml", json_file_job(
        "invalid-utf8", work / "in", work / "table", work / "checkpoint", schema=SCHEMA,
        mode="PERMISSIVE", corrupt_column="_corrupt_record", **kwargs))


def assert_log_is_utf8_json(table):
    for commit in sorted(log_dir(table).glob("*.json")):
        text = commit.read_bytes().decode("utf-8")  # raises on invalid UTF-8
        for line in text.splitlines():
            json.loads(line)


def raw_corrupt_records(table: pa.Table):
    """The bytes of each non-null _corrupt_record, sorted."""
    column = table.column("_corrupt_record").cast(pa.binary())
    return sorted(v for v in column.to_pylist() if v is not None)


def test_corrupt_records_that_are_not_utf8_keep_the_table_readable(silt, work, spark):
    (work / "in").mkdir()
    write_bytes_file(work / "in" / "a.json", [GOOD] + BAD)
    proc = silt("run", job(work))
    assert proc.returncode == 0, describe(proc)
    table = work / "table"
    assert_log_is_utf8_json(table)

    add = next(json.loads(line)["add"] for line in
               (log_dir(table) / "00000000000000000000.json").read_text().splitlines()
               if "add" in json.loads(line))
    stats = json.loads(add["stats"])
    assert "_corrupt_record" not in stats["minValues"], stats
    assert "_corrupt_record" not in stats["maxValues"], stats
    assert stats["nullCount"]["_corrupt_record"] == 1, stats
    assert stats["minValues"]["id"] == 1, stats

    # silt read prints the records (bytes that are not UTF-8 as U+FFFD, as
    # Spark's to_json does); describe works.
    rows = read_with_silt(silt, table)
    assert len(rows) == 4
    assert sorted(r["_corrupt_record"] for r in rows if "_corrupt_record" in r) == sorted(
        line.decode("utf-8", "replace") for line in BAD)
    proc = silt("describe", table)
    assert proc.returncode == 0, describe(proc)

    # The data file holds the raw bytes; delta-rs reads them.
    assert raw_corrupt_records(read_with_deltalake(table)) == sorted(BAD)

    # The next batch commits.
    second = b"\x80x"
    write_bytes_file(work / "in" / "b.json", [b'{"id": 3, "name": "three"}', second])
    proc = silt("run", job(work))
    assert proc.returncode == 0, describe(proc)
    assert_log_is_utf8_json(table)
    assert len(read_with_silt(silt, table)) == 6
    assert raw_corrupt_records(read_with_deltalake(table)) == sorted(BAD + [second])

    # Spark reads the same bytes and, with no bound to mislead it, skips no
    # file that holds a match. (delta-spark's own bound for the second file
    # would be "\uFFFDx", above "é", and Spark would skip it.)
    df = spark.read.format("delta").load(str(table))
    hex_values = sorted(r[0] for r in df.selectExpr("hex(CAST(_corrupt_record AS BINARY))")
                        .where("_corrupt_record IS NOT NULL").collect())
    assert hex_values == sorted(v.hex().upper() for v in BAD + [second])
    below = [v for v in BAD + [second] if v < "\u00e9".encode()]
    assert df.where("_corrupt_record < '\u00e9'").count() == len(below)
    assert second in below


def test_partition_values_that_are_not_utf8_become_replacement_characters(silt, work, spark):
    (work / "in").mkdir()
    write_bytes_file(work / "in" / "a.json", [GOOD, BAD[1]])
    proc = silt("run", job(work, partition_by=["_corrupt_record"]))
    assert proc.returncode == 0, describe(proc)
    table = work / "table"
    assert_log_is_utf8_json(table)

    expected = {1: None, None: BAD[1].decode("utf-8", "replace")}
    rows = read_with_silt(silt, table)
    assert {r.get("id"): r.get("_corrupt_record") for r in rows} == expected
    theirs = read_with_deltalake(table).to_pylist()
    assert {r["id"]: r["_corrupt_record"] for r in theirs} == expected
    spark_rows = spark.read.format("delta").load(str(table)).collect()
    assert {r["id"]: r["_corrupt_record"] for r in spark_rows} == expected
