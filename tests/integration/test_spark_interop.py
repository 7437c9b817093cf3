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


NULLABILITY_SELECT = [
    "id",
    "current_timestamp() AS processed_at",
    "named_struct('a', id, 'b', 'x') AS s",
    "array(id, 1) AS arr",
    "map('k', 1) AS m",
]


def schema_of_version_0(table):
    import json
    from pathlib import Path

    for line in (Path(table) / "_delta_log" / "00000000000000000000.json").read_text().splitlines():
        action = json.loads(line)
        if "metaData" in action:
            return json.loads(action["metaData"]["schemaString"])
    raise AssertionError(f"no metaData in version 0 of {table}")


def test_a_new_tables_schema_is_as_nullable_as_delta_sparks(spark, silt, tmp_path):
    # Regression (issue #23, point 3): processed_at (current_timestamp()) was
    # NOT NULL in silt's new table, so a Spark append with a NULL failed
    # with DELTA_NOT_NULL_CONSTRAINT_VIOLATED. delta-spark creates a table
    # from a streaming query with schema.asNullable.
    import json

    from helpers import json_file_job, write_input_file, write_job

    inputs = tmp_path / "in"
    inputs.mkdir()
    write_input_file(inputs / "a.json", ['{"id": 1, "name": "one"}'])
    ours = tmp_path / "ours"
    job = write_job(tmp_path / "job.yaml", json_file_job(
        "nullable", inputs, ours, tmp_path / "checkpoint", schema="id BIGINT, name STRING",
        transform=[{"select": NULLABILITY_SELECT}]))
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)

    theirs = tmp_path / "theirs"
    query = (spark.readStream.schema("id BIGINT, name STRING").json(str(inputs))
             .selectExpr(*NULLABILITY_SELECT).writeStream.format("delta")
             .option("checkpointLocation", str(tmp_path / "spark-checkpoint"))
             .trigger(availableNow=True).start(str(theirs)))
    query.awaitTermination()
    assert schema_of_version_0(ours) == schema_of_version_0(theirs), (
        json.dumps(schema_of_version_0(ours)), json.dumps(schema_of_version_0(theirs)))

    # Spark appends a NULL to silt's table; silt appends its next batch
    # (non-null nested data into the nullable columns).
    spark.sql("SELECT 2L AS id, CAST(NULL AS TIMESTAMP) AS processed_at, "
              "named_struct('a', CAST(NULL AS BIGINT), 'b', CAST(NULL AS STRING)) AS s, "
              "array(CAST(NULL AS BIGINT)) AS arr, map('k', CAST(NULL AS INT)) AS m"
              ).write.format("delta").mode("append").save(str(ours))
    write_input_file(inputs / "b.json", ['{"id": 3, "name": "three"}'])
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    rows = {r["id"]: r for r in read_with_silt(silt, ours)}
    assert sorted(rows) == [1, 2, 3]
    assert "processed_at" not in rows[2] and "processed_at" in rows[3]


def test_not_null_columns_of_a_spark_table_are_still_enforced(spark, silt, tmp_path):
    from helpers import json_file_job, write_input_file, write_job

    table = tmp_path / "table"
    spark.sql(f"CREATE TABLE delta.`{table}` (id BIGINT NOT NULL, name STRING) USING delta")
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_input_file(inputs / "a.json", ['{"id": null, "name": "no id"}'])
    job = write_job(tmp_path / "job.yaml", json_file_job(
        "not-null", inputs, table, tmp_path / "checkpoint", schema="id BIGINT, name STRING"))
    proc = silt("run", job)
    assert proc.returncode != 0, describe(proc)
    assert "NOT NULL constraint violated for column 'id'" in proc.stderr, describe(proc)
    assert schema_of_version_0(table)["fields"][0]["nullable"] is False
