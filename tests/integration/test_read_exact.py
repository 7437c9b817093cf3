"""`silt read --format jsonl|csv` is lossless by default (issue #23 point 8):
microsecond timestamps, decimals with every digit of their scale, doubles
and floats in the shortest digits that read back to the same value. The
values are compared with those pyarrow (the Parquet files) and DuckDB read
from the same table; `--values spark` keeps Spark's to_json forms."""

import csv
import datetime as dt
import io
import json
import math
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

from helpers import describe, duckdb_query, read_with_deltalake

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)

TIMESTAMPS_US = [0, 1, -1, 1_750_000_000_123_456, 1_750_000_000_000_001, -62_135_596_800_000_000,
                 253_402_300_799_999_999, 999]
DOUBLES = [0.1, 1 / 3, 1e-300, 5e-324, 1e22, 1e15, 2.0 ** 53 + 2, -0.0, 1.0, 123456.789,
           math.exp(42), float("nan"), float("inf")]
FLOATS = [0.1, 3.4028234663852886e38, 1.401298464324817e-45, 16777217.0, 0.3, -2.5, 1e-7, 7.0]
DECIMALS = [Decimal("12345678901234567890.123456789012345678"), Decimal("-0.000000000000000001"),
            Decimal("0E-18"), Decimal("1.500000000000000000"), Decimal("-99999999999999999999.0")]
SMALL_DECIMALS = [Decimal("0.00000001"), Decimal("1.50000000"), Decimal("-0.00000010")]


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    import deltalake

    n = max(len(TIMESTAMPS_US), len(DOUBLES), len(FLOATS), len(DECIMALS), len(SMALL_DECIMALS))

    def pad(values):
        return list(values) + [None] * (n - len(values))

    data = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "ts": pa.array(pad(TIMESTAMPS_US), pa.timestamp("us", tz="UTC")),
        "d": pa.array(pad(DOUBLES), pa.float64()),
        "f": pa.array(pad([f32(x) for x in FLOATS]), pa.float32()),
        "big": pa.array(pad(DECIMALS), pa.decimal128(38, 18)),
        "small": pa.array(pad(SMALL_DECIMALS), pa.decimal128(10, 8)),
    })
    path = tmp_path_factory.mktemp("exact") / "t"
    deltalake.write_deltalake(str(path), data)
    return path


def micros(text):
    """Microseconds since the epoch of an exact-style timestamp text
    ("yyyy-MM-ddTHH:mm:ss.ffffffZ", always six fraction digits)."""
    assert text.endswith("Z") and len(text.split(".")[-1]) == 7, text
    t = dt.datetime.fromisoformat(text[:-1] + "+00:00")
    return (t - EPOCH) // dt.timedelta(microseconds=1)


def significant_digits(text):
    mantissa = text.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0").rstrip("0")
    return len(mantissa) or 1


def check_double(text, expected, is_float):
    if expected is None:
        assert text is None
        return
    if math.isnan(expected):
        assert text == "NaN"
        return
    if math.isinf(expected):
        assert text == ("Infinity" if expected > 0 else "-Infinity")
        return
    value = f32(float(text)) if is_float else float(text)
    assert value == expected and math.copysign(1, value) == math.copysign(1, expected), \
        (text, expected)
    # Shortest: no more significant digits than the shortest text that reads
    # back to the same value (Python's repr for doubles; searched for float32).
    if is_float:
        best = next(p for p in range(1, 10) if f32(float(f"{expected:.{p - 1}e}")) == expected)
    else:
        best = significant_digits(repr(expected))
    assert significant_digits(text) <= best, (text, expected)


def reference_rows(table):
    rows = read_with_deltalake(table).to_pylist()
    return {r["id"]: r for r in rows}


def test_jsonl_is_exact_and_agrees_with_pyarrow_and_duckdb(silt, table):
    proc = silt("read", table, "--format", "jsonl")
    assert proc.returncode == 0, describe(proc)
    # Numbers as text: parse_float keeps every digit the output has.
    silt_rows = {r["id"]: r for r in
                 (json.loads(line, parse_float=str, parse_int=str) for line in
                  proc.stdout.splitlines())}
    silt_rows = {int(k): v for k, v in silt_rows.items()}
    ref = reference_rows(table)
    duck = {r[0]: r for r in duckdb_query(
        table, "SELECT id, epoch_us(ts), d, f, big, small FROM {t}")}
    assert set(silt_rows) == set(ref) == set(duck)
    for row_id, want in ref.items():
        got = silt_rows[row_id]
        if want["ts"] is None:
            assert "ts" not in got
        else:
            expected_us = (want["ts"] - EPOCH) // dt.timedelta(microseconds=1)
            assert expected_us == duck[row_id][1]
            assert micros(got["ts"]) == expected_us, (got["ts"], expected_us)
        check_double(got.get("d"), want["d"], is_float=False)
        check_double(got.get("f"), want["f"], is_float=True)
        if want["d"] is not None and not math.isnan(want["d"]):
            assert float(got["d"]) == duck[row_id][2]
        for col, idx in (("big", 4), ("small", 5)):
            if want[col] is None:
                assert col not in got
                continue
            # Every digit of the scale, and the exact value.
            assert Decimal(got[col]) == want[col] == duck[row_id][idx]
            assert -Decimal(got[col]).as_tuple().exponent == (18 if col == "big" else 8), got[col]


def test_csv_is_exact_too(silt, table):
    proc = silt("read", table, "--format", "csv")
    assert proc.returncode == 0, describe(proc)
    records = list(csv.reader(io.StringIO(proc.stdout, newline="")))
    header, body = records[0], records[1:]
    ref = reference_rows(table)
    for record in body:
        got = dict(zip(header, record))
        want = ref[int(got["id"])]
        if want["ts"] is not None:
            assert micros(got["ts"]) == (want["ts"] - EPOCH) // dt.timedelta(microseconds=1)
        check_double(got["d"] or None, want["d"], is_float=False)
        check_double(got["f"] or None, want["f"], is_float=True)
        if want["big"] is not None:
            assert Decimal(got["big"]) == want["big"]
            assert -Decimal(got["big"]).as_tuple().exponent == 18


def test_spark_values_keep_spark_to_json_forms(silt, table, spark):
    proc = silt("read", table, "--format", "jsonl", "--values", "spark", "--where", "id = 3")
    assert proc.returncode == 0, describe(proc)
    got = json.loads(proc.stdout, parse_float=str)
    # The table holds year-1 timestamps: read them as written (proleptic).
    key = "spark.sql.parquet.datetimeRebaseModeInRead"
    before = spark.conf.get(key)
    spark.conf.set(key, "CORRECTED")
    try:
        df = spark.read.format("delta").load(str(table)).where("id = 3")
        want = json.loads(df.selectExpr("to_json(struct(*)) AS j").collect()[0]["j"],
                          parse_float=str)
    finally:
        spark.conf.set(key, before)
    assert got == want, (got, want)
