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


def table_files(table):
    """Every file under a table outside _delta_log, relative, sidecars included."""
    from pathlib import Path

    root = Path(table)
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and "_delta_log" not in p.relative_to(root).parts}


def test_vacuum_of_a_spark_table_deletes_the_crc_sidecars_like_delta_spark(spark, silt, tmp_path):
    # Regression (issue #23, point 7): silt deleted a Spark table's data files
    # and left their Hadoop .crc sidecars behind.
    import shutil

    table = tmp_path / "spark-table"
    spark.range(0, 10, 1, 2).write.format("delta").save(str(table))
    before = table_files(table)
    spark.range(10, 20, 1, 2).write.format("delta").mode("overwrite").save(str(table))
    removed = {f for f in before if f.endswith(".parquet")}
    assert removed and all(f".{f}.crc" in before for f in removed), before

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(table, ours)
    shutil.copytree(table, theirs)
    proc = silt("vacuum", ours, "--retain", "0h", "--unsafe-ignore-retention-check")
    assert proc.returncode == 0, describe(proc)
    # Without the check, and listing in 2 tasks rather than Spark's 10000.
    confs = {"spark.databricks.delta.retentionDurationCheck.enabled": "false",
             "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2"}
    for key, value in confs.items():
        spark.conf.set(key, value)
    try:
        spark.sql(f"VACUUM delta.`{theirs}` RETAIN 0 HOURS")
    finally:
        for key in confs:
            spark.conf.unset(key)

    assert table_files(ours) == table_files(theirs)
    assert not any(f in table_files(ours) or f".{f}.crc" in table_files(ours) for f in removed)
    assert read_with_spark(spark, ours).num_rows == 10
