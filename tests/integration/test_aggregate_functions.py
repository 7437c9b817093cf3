"""Aggregate functions of `silt sql` (exec::HashAggregator, whose update and
merge code the streaming StreamingAggregator shares) against pyspark 3.5 on
the same Delta table.

The table is written by Spark as a single Parquet file, so both engines see
the rows in one order and Spark aggregates them in one task: order-sensitive
results (first, last, collect_list) and floating-point ones (avg, the
central moments) must then agree exactly; doubles are compared bit for bit.
collect_set is compared as a set (silt returns first-arrival order, Spark a
hash order)."""

import decimal
import math
import random
import struct

import pyarrow.parquet as pq
import pytest

from helpers import describe

ROWS = 600


def rows():
    rnd = random.Random(15)
    out = []
    for i in range(ROWS):
        g = [None, "a", "b", "c", "d"][i % 5]
        if i == ROWS - 1:
            g = "single"  # a group of one row: the sample variants are NULL
        if g == "d":
            i_val = d_val = dec_val = l_val = None  # a group without values
        else:
            i_val = None if rnd.random() < 0.2 else rnd.randint(-10**6, 10**6)
            d_val = None if rnd.random() < 0.2 else rnd.uniform(-1e4, 1e4) * rnd.choice([1, 1e-7, 1e9])
            dec_val = None if rnd.random() < 0.2 else decimal.Decimal(rnd.randint(-10**9, 10**9)).scaleb(-2)
            l_val = rnd.randint(-2**62, 2**62)
        s_val = None if rnd.random() < 0.3 else rnd.choice(["x", "y", "", "zz", "x"])
        f_val = None if rnd.random() < 0.2 else rnd.choice([1.5, -0.5, 2.25, float("nan"), -0.0, 0.0])
        out.append((i, g, i_val, l_val, d_val, dec_val, s_val, f_val))
    return out


SCHEMA = ("id BIGINT, g STRING, i INT, l BIGINT, d DOUBLE, dec DECIMAL(12,2), s STRING, "
          "f DOUBLE")


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("aggregates") / "t"
    df = spark.createDataFrame(rows(), SCHEMA).orderBy("id").coalesce(1)
    df.write.format("delta").save(str(path))
    assert len(list(path.glob("*.parquet"))) == 1
    return path


def bits(v):
    if isinstance(v, float):
        return ("nan",) if math.isnan(v) else ("f", struct.pack("<d", v))
    if isinstance(v, decimal.Decimal):
        return ("dec", v.normalize() if v == v else v)
    if isinstance(v, dict):  # a struct from pyarrow (Spark's Row is a tuple)
        v = tuple(v.values())
    if isinstance(v, (list, tuple)):
        return ("list", tuple(bits(x) for x in v))
    return v


def as_set(v):
    return None if v is None else ("set", tuple(sorted((bits(x) for x in v), key=repr)))


# (select list, set-valued output columns by index). Every query groups by g
# (first column) and is also run without GROUP BY.
QUERIES = [
    ("first(i), first(i, true), last(i), last(i, false), last(i, true), first_value(s), "
     "last_value(d), first(dec, true), last(f)", ()),
    ("stddev(d), stddev_samp(d), std(i), stddev_pop(d), variance(d), var_samp(i), var_pop(d), "
     "var_pop(dec), stddev(l), stddev_pop(f), variance(f)", ()),
    ("collect_list(i), array_agg(s), collect_list(d), collect_list(dec), collect_set(s), "
     "collect_set(i), collect_set(f)", (4, 5, 6)),
    ("count(*), count(d), count(DISTINCT s), sum(i), sum(l), sum(d), sum(dec), avg(i), avg(d), "
     "avg(dec), min(s), max(f), min(dec), mean(l), count(DISTINCT f), sum(f), avg(f)", ()),
]


def silt_rows(silt, tmp_path, sql):
    out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}.parquet"
    proc = silt("sql", sql, "--format", "parquet", "--output", out)
    assert proc.returncode == 0, describe(proc)
    t = pq.read_table(out)
    return [tuple(r.values()) for r in t.to_pylist()]


def normalize(rows_, set_columns):
    out = []
    for r in rows_:
        out.append(tuple(as_set(v) if c in set_columns else bits(v) for c, v in enumerate(r)))
    return sorted(out, key=repr)


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "global"])
@pytest.mark.parametrize("select,set_columns", QUERIES, ids=[f"q{i}" for i in range(len(QUERIES))])
def test_aggregates_match_spark(silt, spark, table, tmp_path, select, set_columns, grouped):
    if grouped:
        sql = f"SELECT g, {select} FROM delta.`{table}` GROUP BY g"
        set_columns = tuple(c + 1 for c in set_columns)
    else:
        sql = f"SELECT {select} FROM delta.`{table}`"
    got = normalize(silt_rows(silt, tmp_path, sql), set_columns)
    expected = normalize([tuple(r) for r in spark.sql(sql).collect()], set_columns)
    assert len(got) == len(expected)
    for a, e in zip(got, expected):
        assert a == e, f"{sql}\nsilt:  {a}\nspark: {e}"


def test_struct_keys_and_values_match_spark(silt, spark, table, tmp_path):
    key = "named_struct('g', g, 'b', i % 3 = 0)"
    sql = (f"SELECT {key} AS k, count(*), first(named_struct('s', s, 'f', f)), "
           f"last(named_struct('i', i, 'f', f), true), collect_list(named_struct('i', i, 's', s)), "
           f"collect_set(named_struct('s', s, 'f', f)) FROM delta.`{table}` GROUP BY {key}")
    got = normalize(silt_rows(silt, tmp_path, sql), (5,))
    expected = normalize([tuple(r) for r in spark.sql(sql).collect()], (5,))
    assert len(got) == len(expected)
    for a, e in zip(got, expected):
        assert a == e, f"{sql}\nsilt:  {a}\nspark: {e}"


def test_result_types_match_spark(silt, spark, table, tmp_path):
    sql = (f"SELECT first(dec), last(s), stddev(i), var_pop(dec), collect_list(i), "
           f"collect_set(s) FROM delta.`{table}`")
    out = tmp_path / "types.parquet"
    proc = silt("sql", sql, "--format", "parquet", "--output", out)
    assert proc.returncode == 0, describe(proc)
    silt_types = [str(f.type) for f in pq.read_schema(out)]
    spark_types = [f.dataType.simpleString() for f in spark.sql(sql).schema.fields]
    assert spark_types == ["decimal(12,2)", "string", "double", "double", "array<int>",
                           "array<string>"]
    assert silt_types[:4] == ["decimal128(12, 2)", "string", "double", "double"]
    assert silt_types[4].startswith("list<") and "int32" in silt_types[4]
    assert silt_types[5].startswith("list<") and "string" in silt_types[5]
