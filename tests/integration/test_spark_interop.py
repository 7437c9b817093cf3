"""Cross-engine checks with pyspark 3.5 + delta-spark 3.2 (the seed's
engine): Spark reads the tables silt writes, and silt reads what Spark
appends to them."""

import pytest

from helpers import (
    assert_same_rows,
    describe,
    read_with_deltalake,
    read_with_silt,
    read_with_spark,
    run_silt,
    normalize_silt_rows,
    to_json_rows,
)

ROW_KEY = ("device_id", "event_time", "raw_payload")


@pytest.fixture(scope="module")
def demo_table(tmp_path_factory, silt_bin):
    work = tmp_path_factory.mktemp("spark-demo")
    proc = run_silt(silt_bin, "demo", "--dir", work / "demo", "--batches", "3",
                    "--rows-per-batch", "400")
    assert proc.returncode == 0, describe(proc)
    tables = [p.parent for p in (work / "demo").rglob("_delta_log")]
    assert len(tables) == 1, tables
    return tables[0]


def test_spark_reads_silts_table_like_deltalake(spark, demo_table):
    from_spark = to_json_rows(read_with_spark(spark, demo_table))
    from_deltalake = to_json_rows(read_with_deltalake(demo_table))
    assert len(from_spark) == 1200
    assert_same_rows(from_spark, from_deltalake, "spark vs deltalake", *ROW_KEY)


def test_spark_time_travel_over_silts_versions(spark, demo_table):
    for version in range(0, 3):
        rows = read_with_spark(spark, demo_table, version=version)
        assert rows.num_rows == 400 * (version + 1), f"version {version}"


def test_silt_reads_what_spark_appends_to_its_table(spark, demo_table, silt, tmp_path):
    # Append through Spark to a copy, so the other tests keep their table.
    import shutil

    table = tmp_path / "table"
    shutil.copytree(demo_table, table)
    df = spark.read.format("delta").load(str(table)).limit(50)
    df.write.format("delta").mode("append").save(str(table))

    expected = to_json_rows(read_with_spark(spark, table))
    assert len(expected) == 1250
    got = normalize_silt_rows(read_with_silt(silt, table, "--limit", "100000"))
    assert_same_rows(got, expected, "silt vs spark after a Spark append", *ROW_KEY)
