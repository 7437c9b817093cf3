"""Parquet interoperability between silt's own codec and pyarrow.

Drives the test-only tool `silt_parquet_roundtrip` (built with the unit tests
from src/silt/parquet/tools/): it writes a fixed data set covering every
primitive type, and reads any flat Parquet file, printing rows as JSON lines.

* silt -> pyarrow: files silt writes (each codec, dictionary on/off, many
  row groups and pages) read back in pyarrow with the expected Arrow types,
  Parquet physical types and values, and with footer statistics that agree
  with the data.
* pyarrow -> silt: files pyarrow writes (each codec, dictionary on/off, data
  page v1/v2, INT96 timestamps, decimals as integers or fixed-length bytes,
  millisecond and nanosecond timestamps, unsigned integers; BROTLI, which
  silt reads but does not write) read in silt give the values pyarrow reads.
* Statistics silt writes for the leaves of nested columns equal pyarrow's.

The tool is found at $SILT_BUILD_DIR/src/silt/parquet/silt_parquet_roundtrip
(SILT_BUILD_DIR defaults to <repo>/build). Skipped when pyarrow is missing.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from helpers import golden_dir, require_golden  # noqa: E402 - after the importorskips

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("SILT_BUILD_DIR", REPO / "build"))
TOOL = BUILD_DIR / "src" / "silt" / "parquet" / "silt_parquet_roundtrip"

CODECS = ["snappy", "zstd", "gzip", "lz4", "none"]
# silt's codec names -> pyarrow's.
PYARROW_CODEC = {"snappy": "snappy", "zstd": "zstd", "gzip": "gzip", "lz4": "lz4", "none": "none"}
# As pyarrow names a column chunk's codec (it reports LZ4_RAW as "LZ4").
PARQUET_CODEC = {"snappy": "SNAPPY", "zstd": "ZSTD", "gzip": "GZIP", "lz4": "LZ4",
                 "none": "UNCOMPRESSED"}


@pytest.fixture(scope="module")
def tool() -> Path:
    if not TOOL.is_file() or not os.access(TOOL, os.X_OK):
        pytest.fail(f"{TOOL} not found: build the silt_parquet_roundtrip target "
                    "(it is built with the unit tests) or set SILT_BUILD_DIR")
    return TOOL


def run_tool(tool: Path, *args: str) -> list[dict]:
    proc = subprocess.run([str(tool), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{tool.name} {' '.join(args)} failed:\n{proc.stderr}"
    return [json.loads(line) for line in proc.stdout.splitlines() if line]


# --------------------------------------------------------------------------
# Normalising pyarrow values to the tool's JSON forms


def _float(v):
    if v is None:
        return None
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return float(v)


_TS_TO_MICROS = {"s": lambda v: v * 1_000_000, "ms": lambda v: v * 1000,
                 "us": lambda v: v, "ns": lambda v: v // 1000}


def column_as_json(col) -> list:
    """A pyarrow ChunkedArray as the list of values the tool would print."""
    t = col.type
    if pa.types.is_dictionary(t):
        col = col.cast(t.value_type)
        t = t.value_type
    if pa.types.is_timestamp(t):
        raw = col.cast(pa.int64()).to_pylist()
        conv = _TS_TO_MICROS[t.unit]
        return [None if v is None else conv(v) for v in raw]
    if pa.types.is_date32(t):
        return col.cast(pa.int32()).to_pylist()
    values = col.to_pylist()
    if pa.types.is_floating(t):
        return [_float(v) for v in values]
    if pa.types.is_decimal(t):
        return [None if v is None else Decimal(v) for v in values]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return [None if v is None else v.hex() for v in values]
    return values


def same_value(expected, actual) -> bool:
    if isinstance(expected, Decimal) or isinstance(actual, Decimal):
        return (expected is not None and actual is not None
                and Decimal(expected) == Decimal(actual))
    if isinstance(expected, float):
        return (isinstance(actual, float) and actual == expected
                and math.copysign(1, actual) == math.copysign(1, expected))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return expected == actual


def assert_columns_match(name: str, expected: list, actual: list) -> None:
    assert len(expected) == len(actual), f"{name}: {len(expected)} rows vs {len(actual)}"
    for row, (e, a) in enumerate(zip(expected, actual)):
        assert same_value(e, a), f"{name} row {row}: expected {e!r}, got {a!r}"


def json_column(rows: list[dict], name: str) -> list:
    return [r[name] for r in rows]


# --------------------------------------------------------------------------
# silt writes, pyarrow reads

EXPECTED_ARROW_TYPES = {
    "c_bool": pa.bool_(),
    "c_byte": pa.int8(),
    "c_short": pa.int16(),
    "c_int": pa.int32(),
    "c_long": pa.int64(),
    "c_float": pa.float32(),
    "c_double": pa.float64(),
    "c_dec_int32": pa.decimal128(9, 2),
    "c_dec_int64": pa.decimal128(18, 6),
    "c_dec_flba9": pa.decimal128(20, 4),
    "c_dec_flba16": pa.decimal128(38, 10),
    "c_string": pa.string(),
    "c_binary": pa.binary(),
    "c_date": pa.date32(),
    "c_ts": pa.timestamp("us", tz="UTC"),
    "c_ts_ntz": pa.timestamp("us"),
}

EXPECTED_PHYSICAL = {
    "c_bool": ("BOOLEAN", None),
    "c_byte": ("INT32", None),
    "c_dec_int32": ("INT32", None),
    "c_dec_int64": ("INT64", None),
    "c_dec_flba9": ("FIXED_LEN_BYTE_ARRAY", 9),
    "c_dec_flba16": ("FIXED_LEN_BYTE_ARRAY", 16),
    "c_string": ("BYTE_ARRAY", None),
    "c_ts": ("INT64", None),
}


def check_pyarrow_reads(path: Path, written: list[dict]) -> pq.ParquetFile:
    # silt writes a CRC-32 in every page header; pyarrow checks each one.
    table = pq.read_table(path, page_checksum_verification=True)
    assert table.num_rows == len(written)
    for name, arrow_type in EXPECTED_ARROW_TYPES.items():
        for col_name, nullable in ((name, True), (name + "_nn", False)):
            field = table.schema.field(col_name)
            assert field.type == arrow_type, f"{col_name}: {field.type} != {arrow_type}"
            assert field.nullable == nullable, col_name
            assert_columns_match(col_name, json_column(written, col_name),
                                 column_as_json(table.column(col_name)))
    pf = pq.ParquetFile(path)
    assert pf.metadata.created_by.startswith("silt version ")
    for name, (physical, length) in EXPECTED_PHYSICAL.items():
        col = pf.schema.column(pf.schema.names.index(name))
        assert col.physical_type == physical, name
        if length is not None:
            assert col.length == length, name
    return pf


@pytest.mark.parametrize("dictionary", [True, False], ids=["dict", "plain"])
@pytest.mark.parametrize("codec", CODECS)
def test_pyarrow_reads_what_silt_writes(tool, tmp_path, codec, dictionary):
    path = tmp_path / f"silt.{codec}.parquet"
    # Each value four rows in a row: every column's dictionary pays off, so
    # with the dictionary on, every non-boolean column is read through one.
    args = ["write", str(path), "--codec", codec, "--rows", "2000", "--repeat", "4"]
    if not dictionary:
        args.append("--no-dictionary")
    written = run_tool(tool, *args)
    pf = check_pyarrow_reads(path, written)
    rg = pf.metadata.row_group(0)
    for i in range(rg.num_columns):
        col = rg.column(i)
        assert col.compression == PARQUET_CODEC[codec]
        assert ("RLE_DICTIONARY" in col.encodings) == (dictionary and col.physical_type != "BOOLEAN")


def test_dictionary_is_kept_only_where_it_pays_off(tool, tmp_path):
    # In the fixed data set most columns hold distinct values: a dictionary
    # would be the values again plus an index per row, so silt writes them
    # PLAIN (as parquet-mr does) and keeps the dictionary for columns whose
    # values repeat. Either way pyarrow reads the same values.
    path = tmp_path / "silt.parquet"
    written = run_tool(tool, "write", str(path), "--rows", "2000")
    pf = check_pyarrow_reads(path, written)
    table = pf.read()
    rg = pf.metadata.row_group(0)
    for i in range(rg.num_columns):
        col = rg.column(i)
        if col.physical_type == "BOOLEAN":
            continue
        values = table.column(col.path_in_schema).drop_null()
        distinct = len(values.unique())
        if distinct <= len(values) // 4:
            assert "RLE_DICTIONARY" in col.encodings, (col.path_in_schema, distinct)
        elif distinct == len(values):
            assert col.encodings == ("PLAIN", "RLE"), (col.path_in_schema, col.encodings)
            assert col.dictionary_page_offset is None, col.path_in_schema


def test_pyarrow_reads_many_row_groups_and_pages(tool, tmp_path):
    path = tmp_path / "small_limits.parquet"
    written = run_tool(tool, "write", str(path), "--rows", "20000", "--page-bytes", "4096",
                       "--row-group-bytes", "200000")
    pf = check_pyarrow_reads(path, written)
    assert pf.metadata.num_row_groups > 2
    offsets = [pf.metadata.row_group(i).column(0).file_offset
               for i in range(pf.metadata.num_row_groups)]
    assert offsets == sorted(offsets)


def duckdb_expression(name: str) -> str:
    """A DuckDB expression yielding the tool's JSON form of column `name`."""
    if name.startswith("c_dec"):
        return f"{name}::VARCHAR"
    if name.startswith("c_binary"):
        return f"lower(hex({name}))"
    if name.startswith("c_date"):
        return f"({name} - DATE '1970-01-01')"
    if name.startswith("c_ts"):
        return f"epoch_us({name})"
    return name


def test_duckdb_reads_what_silt_writes(tool, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "for_duckdb.parquet"
    written = run_tool(tool, "write", str(path), "--rows", "3000", "--page-bytes", "8192",
                       "--row-group-bytes", "300000")
    names = list(written[0])
    select = ", ".join(duckdb_expression(n) for n in names)
    con = duckdb.connect()
    source = f"read_parquet('{path}')"
    described = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    assert described["c_ts"] == "TIMESTAMP WITH TIME ZONE"
    assert described["c_ts_ntz"] == "TIMESTAMP"
    assert described["c_dec_flba16"] == "DECIMAL(38,10)"
    # DuckDB keeps file order for a plain scan (preserve_insertion_order).
    rows = con.execute(f"SELECT {select} FROM {source}").fetchall()
    assert len(rows) == len(written)
    for col_idx, name in enumerate(names):
        actual = [_float(r[col_idx]) if isinstance(r[col_idx], float) else r[col_idx]
                  for r in rows]
        assert_columns_match(name, json_column(written, name), actual)


def test_footer_statistics_agree_with_the_data(tool, tmp_path):
    path = tmp_path / "stats.parquet"
    written = run_tool(tool, "write", str(path), "--rows", "3000", "--row-group-bytes", "10000000")
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 1
    rg = meta.row_group(0)
    names = [rg.column(i).path_in_schema for i in range(rg.num_columns)]
    for name in ["c_byte", "c_int", "c_long_nn", "c_string", "c_date", "c_dec_int64",
                 "c_dec_flba16", "c_double"]:
        stats = rg.column(names.index(name)).statistics
        values = [v for v in json_column(written, name) if v is not None]
        if name == "c_double":
            # NaN/inf are printed as strings. A chunk holding NaN gets no
            # bounds (Spark's parquet-mr ignores nan_count; decisions.md 38).
            if any(v == "NaN" for v in values):
                assert not stats.has_min_max, name
                assert stats.null_count == sum(
                    1 for v in json_column(written, name) if v is None), name
                continue
            values = [v for v in values if isinstance(v, float)]
            values += [math.inf, -math.inf]
        if name.startswith("c_dec"):
            values = [Decimal(v) for v in values]
        if name == "c_date":
            values = [dt.date(1970, 1, 1) + dt.timedelta(days=v) for v in values]
        assert stats.has_min_max, name
        assert stats.null_count == sum(1 for v in json_column(written, name) if v is None), name
        assert stats.min == min(values), name
        assert stats.max == max(values), name


# --------------------------------------------------------------------------
# pyarrow writes, silt reads


def reference_table(rows: int = 3000) -> pa.Table:
    def nulls(values, every=5):
        return [None if i % every == 2 else v for i, v in enumerate(values)]

    idx = list(range(rows))
    base = dt.datetime(2024, 2, 29, 12, 34, 56, 789012)
    epoch = dt.datetime(1970, 1, 1)
    words = ["", "alpha", "caf\u00e9", "\u65e5\u672c", "\U0001F600", "a\"b\\c"]
    floats = [float("nan"), float("inf"), -float("inf"), -0.0, 1.5e-45]
    return pa.table({
        "bool": pa.array(nulls([i % 3 == 0 for i in idx]), pa.bool_()),
        "i8": pa.array(nulls([(i * 37) % 256 - 128 for i in idx]), pa.int8()),
        "i16": pa.array(nulls([(i * 7919) % 65536 - 32768 for i in idx]), pa.int16()),
        "i32": pa.array([(i * 2654435761) % (2**32) - 2**31 for i in idx], pa.int32()),
        "i64": pa.array(nulls([(i * 0x9E3779B97F4A7C15) % (2**64) - 2**63 for i in idx]),
                        pa.int64()),
        "u8": pa.array(nulls([(i * 13) % 256 for i in idx]), pa.uint8()),
        "u16": pa.array(nulls([(i * 7919) % 65536 for i in idx]), pa.uint16()),
        "u32": pa.array(nulls([(i * 2654435761) % (2**32) for i in idx]), pa.uint32()),
        "u64": pa.array(nulls([(i * 0x9E3779B97F4A7C15) % (2**64) for i in idx]), pa.uint64()),
        "f32": pa.array(nulls([floats[i] if i < 5 else i / 7 for i in idx]), pa.float32()),
        "f64": pa.array(nulls([floats[i] if i < 5 else -i / 3 for i in idx]), pa.float64()),
        "dec9": pa.array(nulls([Decimal(i * 12345 - 10**7).scaleb(-2) for i in idx]),
                         pa.decimal128(9, 2)),
        "dec18": pa.array(nulls([Decimal((i * 10**14 + 7) * (-1) ** i).scaleb(-6) for i in idx]),
                          pa.decimal128(18, 6)),
        "dec38": pa.array(nulls([Decimal((i * 7**45 + i) % 10**38 * (-1) ** i).scaleb(-10)
                                 for i in idx]), pa.decimal128(38, 10)),
        "str": pa.array(nulls([words[i % 6] + str(i % 17) for i in idx]), pa.string()),
        "large_str": pa.array(nulls([words[i % 4] * (i % 3) for i in idx]), pa.large_string()),
        "dict_str": pa.array(nulls([words[i % 3] for i in idx])).dictionary_encode(),
        "bin": pa.array(nulls([bytes([(i + k) % 256 for k in range(i % 7)]) for i in idx]),
                        pa.binary()),
        "date": pa.array(nulls([dt.date(1970, 1, 1) + dt.timedelta(days=(i * 97) % 80000 - 40000)
                                for i in idx]), pa.date32()),
        "ts_us_utc": pa.array(nulls([base + dt.timedelta(seconds=i * 3601, microseconds=i)
                                     for i in idx]), pa.timestamp("us", tz="UTC")),
        "ts_us": pa.array(nulls([base - dt.timedelta(days=i * 11, microseconds=i * 7)
                                 for i in idx]), pa.timestamp("us")),
        "ts_ms": pa.array(nulls([int((base - epoch).total_seconds() * 1000) - i * 86_400_123
                                 for i in idx]), pa.timestamp("ms", tz="UTC")),
        "ts_ns": pa.array(nulls([1_700_000_000_123_456_789 - i * 3_600_000_000_123 * 7
                                 for i in idx]), pa.timestamp("ns")),
    })


# Spark types silt must report for the reference table's columns.
EXPECTED_DDL = {
    "bool": "BOOLEAN", "i8": "TINYINT", "i16": "SMALLINT", "i32": "INT", "i64": "BIGINT",
    "u8": "SMALLINT", "u16": "INT", "u32": "BIGINT", "u64": "DECIMAL(20,0)",
    "f32": "FLOAT", "f64": "DOUBLE", "dec9": "DECIMAL(9,2)", "dec18": "DECIMAL(18,6)",
    "dec38": "DECIMAL(38,10)", "str": "STRING", "large_str": "STRING", "dict_str": "STRING",
    "bin": "BINARY", "date": "DATE", "ts_us_utc": "TIMESTAMP", "ts_us": "TIMESTAMP_NTZ",
    "ts_ms": "TIMESTAMP", "ts_ns": "TIMESTAMP_NTZ",
}


def check_silt_reads(tool: Path, path: Path, table: pa.Table, int96: bool = False) -> None:
    ddl = subprocess.run([str(tool), "schema", str(path)], capture_output=True, text=True,
                         check=True).stdout
    for name, spark_type in EXPECTED_DDL.items():
        if int96 and name.startswith("ts_"):
            spark_type = "TIMESTAMP"  # INT96 carries no zone flag: Spark reads it as timestamp
        assert f"{name}: {spark_type}" in ddl, f"{name} should be {spark_type} in {ddl}"
    rows = run_tool(tool, "read", str(path))
    assert len(rows) == table.num_rows
    for name in table.column_names:
        expected = column_as_json(table.column(name))
        if name.startswith("u64"):
            expected = [None if v is None else Decimal(v) for v in expected]
        assert_columns_match(name, expected, json_column(rows, name))


@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False], ids=["dict", "plain"])
@pytest.mark.parametrize("codec", CODECS)
def test_silt_reads_what_pyarrow_writes(tool, tmp_path, codec, dictionary, page_version):
    table = reference_table()
    path = tmp_path / "pyarrow.parquet"
    pq.write_table(table, path, compression=PYARROW_CODEC[codec], use_dictionary=dictionary,
                   data_page_version=page_version, row_group_size=1000, data_page_size=4096)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    check_silt_reads(tool, path, table)


def first_data_page_body(path: Path) -> int:
    """The file offset of a byte in the middle of the first column's only page."""
    col = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert col.dictionary_page_offset is None
    return col.data_page_offset + col.total_compressed_size // 2


@pytest.mark.parametrize("page_version", ["v1", "v2"])
def test_page_checksums_turn_a_flipped_bit_into_an_error(tool, tmp_path, page_version):
    path = tmp_path / "silt.parquet"
    args = ["write", str(path), "--codec", "none", "--no-dictionary", "--rows", "2000",
            "--page-bytes", str(64 << 20)]
    if page_version == "v2":
        args.append("--page-v2")
    run_tool(tool, *args)
    data = bytearray(path.read_bytes())
    data[first_data_page_body(path)] ^= 0x10
    path.write_bytes(bytes(data))
    proc = subprocess.run([str(tool), "read", str(path)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "page checksum mismatch" in proc.stderr, proc.stderr
    with pytest.raises(OSError, match="(?i)crc|checksum"):
        pq.read_table(path, page_checksum_verification=True)


def test_silt_checks_the_page_checksums_pyarrow_writes(tool, tmp_path):
    table = reference_table()
    path = tmp_path / "pyarrow.parquet"
    pq.write_table(table, path, compression="snappy", write_page_checksum=True,
                   row_group_size=1000, data_page_size=4096)
    check_silt_reads(tool, path, table)


def test_silt_reads_int96_timestamps(tool, tmp_path):
    table = reference_table(1500)
    path = tmp_path / "int96.parquet"
    pq.write_table(table, path, use_deprecated_int96_timestamps=True)
    schema = pq.ParquetFile(path).schema
    assert schema.column(schema.names.index("ts_us")).physical_type == "INT96"
    check_silt_reads(tool, path, table, int96=True)


def test_silt_reads_decimals_stored_as_integers(tool, tmp_path):
    table = reference_table(1200)
    path = tmp_path / "dec_int.parquet"
    try:
        pq.write_table(table, path, store_decimal_as_integer=True)
    except TypeError:
        pytest.skip("this pyarrow cannot store decimals as integers")
    schema = pq.ParquetFile(path).schema
    assert schema.column(schema.names.index("dec9")).physical_type == "INT32"
    assert schema.column(schema.names.index("dec18")).physical_type == "INT64"
    check_silt_reads(tool, path, table)


def test_round_trip_through_both(tool, tmp_path):
    """silt writes, pyarrow rewrites with other settings, silt reads the same rows."""
    first = tmp_path / "silt.parquet"
    written = run_tool(tool, "write", str(first), "--rows", "1500")
    second = tmp_path / "rewritten.parquet"
    pq.write_table(pq.read_table(first), second, compression="zstd", data_page_version="2.0",
                   use_dictionary=False)
    again = run_tool(tool, "read", str(second))
    assert len(again) == len(written)
    for name in written[0]:
        assert_columns_match(name, [r[name] for r in written], [r[name] for r in again])


# --------------------------------------------------------------------------
# Nested types (struct, list, map three levels deep), both ways

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _micros(delta: dt.timedelta) -> int:
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def nested_as_json(t, v):
    """A pyarrow Python value of type `t` in the tool's JSON form."""
    if v is None:
        return None
    if pa.types.is_dictionary(t):
        return nested_as_json(t.value_type, v)
    if pa.types.is_struct(t):
        return {t.field(i).name: nested_as_json(t.field(i).type, v[t.field(i).name])
                for i in range(t.num_fields)}
    if pa.types.is_map(t):
        return [[nested_as_json(t.key_type, k), nested_as_json(t.item_type, x)] for k, x in v]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [nested_as_json(t.value_type, x) for x in v]
    if pa.types.is_timestamp(t):
        return _micros(v - (_EPOCH_UTC if v.tzinfo else _EPOCH))
    if pa.types.is_date32(t):
        return (v - dt.date(1970, 1, 1)).days
    if pa.types.is_floating(t):
        return _float(v)
    if pa.types.is_decimal(t):
        return Decimal(v)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return v.hex()
    return v


def same_nested(expected, actual) -> bool:
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and expected.keys() == actual.keys()
                and all(same_nested(expected[k], actual[k]) for k in expected))
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(expected) == len(actual)
                and all(same_nested(e, a) for e, a in zip(expected, actual)))
    return same_value(expected, actual)


def assert_nested_match(name: str, expected: list, actual: list) -> None:
    assert len(expected) == len(actual), f"{name}: {len(expected)} rows vs {len(actual)}"
    for row, (e, a) in enumerate(zip(expected, actual)):
        assert same_nested(e, a), f"{name} row {row}: expected {e!r}, got {a!r}"


EXPECTED_NESTED_ARROW_TYPES = {
    "n_list": pa.list_(pa.field("element", pa.int32())),
    "n_list3": pa.list_(pa.field("element", pa.list_(pa.field(
        "element", pa.list_(pa.field("element", pa.float64())))))),
    "n_map": pa.map_(pa.string(), pa.list_(pa.field("element", pa.date32()))),
}


@pytest.mark.parametrize("settings", [[], ["--no-dictionary", "--page-bytes", "2048"]],
                         ids=["default", "plain-small-pages"])
def test_pyarrow_reads_nested_silt_writes(tool, tmp_path, settings):
    path = tmp_path / "nested.parquet"
    written = run_tool(tool, "write", str(path), "--nested", "--rows", "3000",
                       "--row-group-bytes", "200000", *settings)
    table = pq.read_table(path)
    assert table.num_rows == len(written)
    for name, arrow_type in EXPECTED_NESTED_ARROW_TYPES.items():
        assert table.schema.field(name).type == arrow_type, name
    assert not table.schema.field("n_list_nn").nullable
    for name in table.column_names:
        col = table.column(name)
        actual = [nested_as_json(col.type, v) for v in col.to_pylist()]
        assert_nested_match(name, json_column(written, name), actual)


def nested_reference_table(rows: int = 2000) -> pa.Table:
    point = pa.struct([("x", pa.float64()), ("tags", pa.list_(pa.string()))])
    idx = range(rows)

    def maybe(i, v, every=7):
        return None if i % every == 3 else v

    return pa.table({
        "id": pa.array(list(idx), pa.int64()),
        "s": pa.array([maybe(i, {"a": i, "b": str(i), "inner": maybe(i, {
            "d": Decimal(i * 1234567).scaleb(-3), "t": dt.datetime(1900 + i % 300, 1, 1)}, 5)})
            for i in idx], pa.struct([("a", pa.int32()), ("b", pa.string()), ("inner", pa.struct(
                [("d", pa.decimal128(25, 3)), ("t", pa.timestamp("us"))]))])),
        "l3": pa.array([maybe(i, [maybe(j, [maybe(k, [maybe(m, i * j + k * m, 3)
                                                     for m in range(k)], 4)
                                           for k in range(j % 3)], 5)
                                  for j in range(i % 4)]) for i in idx],
                       pa.list_(pa.list_(pa.list_(pa.int16())))),
        "lp": pa.array([maybe(i, [maybe(j, {"x": i / (j + 1), "tags": [f"t{k}" for k in range(j)]})
                                  for j in range(i % 3)]) for i in idx], pa.list_(point)),
        "m": pa.array([maybe(i, [(f"k{j}", maybe(j, {f"q{k}": [k, None] for k in range(j)}, 2))
                                 for j in range(i % 4)]) for i in idx],
                      pa.map_(pa.string(), pa.map_(pa.string(), pa.list_(pa.int64())))),
        "ml": pa.array([[(j, [dt.date(2000, 1, 1) + dt.timedelta(days=i + j)])
                         for j in range(i % 2)] for i in idx],
                       pa.map_(pa.int32(), pa.list_(pa.date32()))),
    })


@pytest.mark.parametrize("compliant", [True, False], ids=["element", "item"])
@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False], ids=["dict", "plain"])
def test_silt_reads_nested_pyarrow_writes(tool, tmp_path, dictionary, page_version, compliant):
    table = nested_reference_table()
    path = tmp_path / "nested_pyarrow.parquet"
    pq.write_table(table, path, use_dictionary=dictionary, data_page_version=page_version,
                   row_group_size=700, data_page_size=2048,
                   use_compliant_nested_type=compliant)
    rows = run_tool(tool, "read", str(path))
    assert len(rows) == table.num_rows
    for name in table.column_names:
        col = table.column(name)
        expected = [nested_as_json(col.type, v) for v in col.to_pylist()]
        assert_nested_match(name, expected, json_column(rows, name))


def test_nested_round_trip_through_both(tool, tmp_path):
    """silt writes nested data, pyarrow rewrites it as v2 pages, silt reads the same rows."""
    first = tmp_path / "silt_nested.parquet"
    written = run_tool(tool, "write", str(first), "--nested", "--rows", "1500")
    second = tmp_path / "rewritten_nested.parquet"
    pq.write_table(pq.read_table(first), second, compression="zstd", data_page_version="2.0",
                   use_dictionary=False)
    again = run_tool(tool, "read", str(second))
    for name in written[0]:
        assert_nested_match(name, json_column(written, name), json_column(again, name))


# --------------------------------------------------------------------------
# Every Parquet file of Delta's golden tables

GOLDEN = golden_dir()


def _table_as_json(table: pa.Table) -> dict:
    out = {}
    for name in table.column_names:
        col = table.column(name)
        t = col.type
        if pa.types.is_timestamp(t) or pa.types.is_date32(t) or not pa.types.is_nested(t):
            out[name] = column_as_json(col)
        else:
            out[name] = [nested_as_json(t, v) for v in col.to_pylist()]
    return out


def test_every_golden_parquet_file_reads_like_pyarrow(tool):
    require_golden()
    files = sorted(GOLDEN.rglob("*.parquet"))
    assert files, f"no Parquet files under {GOLDEN}"
    ok, not_supported, pyarrow_fails, wrong = [], [], [], []
    for path in files:
        rel = path.relative_to(GOLDEN)
        try:
            table = pq.read_table(path)
        except Exception as e:  # noqa: BLE001 - a file pyarrow cannot read is not compared
            pyarrow_fails.append(f"{rel}: {e}")
            continue
        proc = subprocess.run([str(tool), "read", str(path)], capture_output=True, text=True,
                              timeout=120)
        if proc.returncode != 0:
            message = proc.stderr.strip()
            if message.startswith("Not supported"):
                not_supported.append(f"{rel}: {message}")
            else:
                wrong.append(f"{rel}: silt failed: {message}")
            continue
        rows = [json.loads(line) for line in proc.stdout.splitlines() if line]
        if len(rows) != table.num_rows:
            wrong.append(f"{rel}: {len(rows)} rows, pyarrow reads {table.num_rows}")
            continue
        expected = _table_as_json(table)
        bad = [name for name, values in expected.items()
               if not all(same_nested(e, r.get(name)) for e, r in zip(values, rows))]
        if bad:
            wrong.append(f"{rel}: values differ in {bad}")
        else:
            ok.append(rel)
    print(f"\ngolden Parquet files: {len(ok)} ok, {len(not_supported)} not supported, "
          f"{len(wrong)} wrong, {len(pyarrow_fails)} unreadable by pyarrow")
    for line in not_supported + pyarrow_fails:
        print("  " + line)
    assert not wrong, "golden Parquet files silt reads differently:\n" + "\n".join(wrong)
    for line in not_supported:
        # A NotSupported must name what silt lacks: an encoding, codec or type.
        assert any(w in line for w in ("encoding", "codec", "type", "compression")), line


# --------------------------------------------------------------------------
# DELTA_* and BYTE_STREAM_SPLIT encodings and data page v2, both ways

SILT_ENCODINGS = {
    "c_int": "DELTA_BINARY_PACKED",
    "c_long_nn": "DELTA_BINARY_PACKED",
    "c_byte": "DELTA_BINARY_PACKED",
    "c_date": "BYTE_STREAM_SPLIT",
    "c_ts": "DELTA_BINARY_PACKED",
    "c_float": "BYTE_STREAM_SPLIT",
    "c_double_nn": "BYTE_STREAM_SPLIT",
    "c_dec_int64": "DELTA_BINARY_PACKED",
    "c_dec_flba9": "BYTE_STREAM_SPLIT",
    "c_dec_flba16": "DELTA_BYTE_ARRAY",
    "c_string": "DELTA_LENGTH_BYTE_ARRAY",
    "c_string_nn": "DELTA_BYTE_ARRAY",
    "c_binary": "DELTA_LENGTH_BYTE_ARRAY",
    "c_bool": "PLAIN",
}


@pytest.mark.parametrize("page_v2", [False, True], ids=["v1", "v2"])
def test_pyarrow_reads_silt_encodings(tool, tmp_path, page_v2):
    path = tmp_path / "encodings.parquet"
    args = ["write", str(path), "--rows", "3000", "--page-bytes", "4096", "--codec", "zstd"]
    for name, encoding in SILT_ENCODINGS.items():
        args += ["--encoding", f"{name}={encoding.lower()}"]
    if page_v2:
        args.append("--page-v2")
    written = run_tool(tool, *args)
    pf = check_pyarrow_reads(path, written)
    rg = pf.metadata.row_group(0)
    by_name = {rg.column(i).path_in_schema: rg.column(i) for i in range(rg.num_columns)}
    for name, encoding in SILT_ENCODINGS.items():
        encodings = by_name[name].encodings
        assert encoding in encodings, f"{name}: {encodings}"
        assert "RLE_DICTIONARY" not in encodings, name
    # Data page v2 carries the row count per page; pyarrow exposes the page
    # type through its reader only, so check the values read back instead.
    table = pq.read_table(path)
    assert table.num_rows == len(written)


PYARROW_ENCODINGS = {
    "i8": "DELTA_BINARY_PACKED", "i16": "BYTE_STREAM_SPLIT", "i32": "DELTA_BINARY_PACKED",
    "i64": "BYTE_STREAM_SPLIT", "u32": "DELTA_BINARY_PACKED", "u64": "DELTA_BINARY_PACKED",
    "f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT", "dec9": "BYTE_STREAM_SPLIT",
    "dec18": "DELTA_BYTE_ARRAY", "dec38": "BYTE_STREAM_SPLIT", "str": "DELTA_LENGTH_BYTE_ARRAY",
    "large_str": "DELTA_BYTE_ARRAY", "bin": "DELTA_BYTE_ARRAY", "date": "DELTA_BINARY_PACKED",
    "ts_us_utc": "DELTA_BINARY_PACKED", "ts_us": "BYTE_STREAM_SPLIT",
    "ts_ms": "DELTA_BINARY_PACKED", "ts_ns": "DELTA_BINARY_PACKED",
}


@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
@pytest.mark.parametrize("codec", ["snappy", "none"])
def test_silt_reads_pyarrow_encodings(tool, tmp_path, page_version, codec):
    table = reference_table(2500).drop_columns(["dict_str"])
    path = tmp_path / "pyarrow_encodings.parquet"
    pq.write_table(table, path, use_dictionary=False, column_encoding=PYARROW_ENCODINGS,
                   data_page_version=page_version, compression=codec, row_group_size=1000,
                   data_page_size=2048)
    rg = pq.ParquetFile(path).metadata.row_group(0)
    by_name = {rg.column(i).path_in_schema: rg.column(i) for i in range(rg.num_columns)}
    for name, encoding in PYARROW_ENCODINGS.items():
        assert encoding in by_name[name].encodings, f"{name}: {by_name[name].encodings}"
    rows = run_tool(tool, "read", str(path))
    assert len(rows) == table.num_rows
    for name in table.column_names:
        expected = column_as_json(table.column(name))
        if name.startswith("u64"):
            expected = [None if v is None else Decimal(v) for v in expected]
        assert_columns_match(name, expected, json_column(rows, name))


def test_silt_reads_pyarrow_nested_with_delta_encodings(tool, tmp_path):
    table = nested_reference_table(1500)
    path = tmp_path / "nested_delta.parquet"
    pq.write_table(table, path, use_dictionary=False, data_page_version="2.0",
                   column_encoding={"id": "DELTA_BINARY_PACKED",
                                    "s.b": "DELTA_BYTE_ARRAY",
                                    "l3.list.element.list.element.list.element":
                                        "DELTA_BINARY_PACKED",
                                    "m.key_value.key": "DELTA_LENGTH_BYTE_ARRAY"})
    rows = run_tool(tool, "read", str(path))
    for name in table.column_names:
        col = table.column(name)
        expected = [nested_as_json(col.type, v) for v in col.to_pylist()]
        assert_nested_match(name, expected, json_column(rows, name))


# --------------------------------------------------------------------------
# Page index


def test_silt_writes_a_page_index_pyarrow_and_duckdb_accept(tool, tmp_path):
    path = tmp_path / "page_index.parquet"
    written = run_tool(tool, "write", str(path), "--rows", "5000", "--page-bytes", "2048",
                       "--row-group-bytes", "400000")
    pf = check_pyarrow_reads(path, written)
    for rg in range(pf.metadata.num_row_groups):
        for i in range(pf.metadata.num_columns):
            col = pf.metadata.row_group(rg).column(i)
            assert col.has_offset_index, col.path_in_schema
            if col.path_in_schema not in ("c_float", "c_float_nn", "c_double", "c_double_nn"):
                # Float pages holding only NaN have no bounds: no column index there.
                assert col.has_column_index, col.path_in_schema
    duckdb = pytest.importorskip("duckdb")
    count = duckdb.connect().execute(
        f"SELECT count(*) FROM read_parquet('{path}') WHERE c_int > 0").fetchone()[0]
    assert count == sum(1 for r in written if r["c_int"] is not None and r["c_int"] > 0)


def test_silt_reads_files_with_a_pyarrow_page_index(tool, tmp_path):
    table = reference_table(2000)
    path = tmp_path / "pyarrow_page_index.parquet"
    pq.write_table(table, path, write_page_index=True, data_page_size=2048)
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).has_column_index
    check_silt_reads(tool, path, table)


# --------------------------------------------------------------------------
# Read-only codecs and nested statistics


@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False], ids=["dict", "plain"])
def test_silt_reads_brotli_pyarrow_writes(tool, tmp_path, dictionary, page_version):
    table = reference_table()
    path = tmp_path / "brotli.parquet"
    pq.write_table(table, path, compression="brotli", use_dictionary=dictionary,
                   data_page_version=page_version, row_group_size=1000, data_page_size=4096)
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "BROTLI"
    check_silt_reads(tool, path, table)


def test_silt_reads_nested_brotli(tool, tmp_path):
    table = nested_reference_table(800)
    path = tmp_path / "nested_brotli.parquet"
    pq.write_table(table, path, compression="brotli")
    rows = run_tool(tool, "read", str(path))
    for name in table.column_names:
        col = table.column(name)
        expected = [nested_as_json(col.type, v) for v in col.to_pylist()]
        assert_nested_match(name, expected, json_column(rows, name))


def test_nested_leaf_statistics_agree_with_pyarrow(tool, tmp_path):
    # silt writes min/max/null_count for the leaves of nested columns; they
    # must be what pyarrow computes for the same data.
    src = tmp_path / "nested_src.parquet"
    table = nested_reference_table(1200)
    pq.write_table(table, src)
    out = tmp_path / "nested_silt.parquet"
    subprocess.run([str(tool), "copy", str(src), str(out)], check=True)
    theirs = pq.ParquetFile(src).metadata.row_group(0)
    ours = pq.ParquetFile(out).metadata.row_group(0)
    assert ours.num_columns == theirs.num_columns
    checked = 0
    for i in range(ours.num_columns):
        a, b = theirs.column(i), ours.column(i)
        assert a.path_in_schema == b.path_in_schema
        if a.physical_type == "BOOLEAN" or not a.is_stats_set or not a.statistics.has_min_max:
            continue
        assert b.is_stats_set and b.statistics.has_min_max, b.path_in_schema
        sa, sb = a.statistics, b.statistics
        assert (sb.min, sb.max) == (sa.min, sa.max), b.path_in_schema
        assert sb.null_count == sa.null_count, b.path_in_schema
        checked += 1
    assert checked > 0
