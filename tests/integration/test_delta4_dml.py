"""silt's DML on Delta 4 tables against Spark 4 + delta-spark 4 (the
module-scoped `spark4` fixture: one Spark 4 JVM for the module).

Row tracking through UPDATE, DELETE and MERGE, copy-on-write and with
deletion vectors: before each statement silt's table is a copy of Spark's
(same files, same log), Spark runs the statement on its table and silt the
same statement on the copy. Then both tables hold the same rows, every row
that existed before has the same `_metadata.row_id` and
`_metadata.row_commit_version` in both (read by Spark 4 and by silt), the
rows MERGE inserts have the same row commit version and fresh row ids
above the old high-water mark (which rows land at which position of which
new file, and so their fresh ids, depends on each engine's file layout),
the high-water marks are equal, and both commits carry the
`delta.rowTracking.preserved` tag.

ALTER TABLE ... DROP FEATURE (deletionVectors with row tracking,
v2Checkpoint, inCommitTimestamp, vacuumProtocolCheck): Spark 4 and silt drop
the feature from identical tables; the commits after it (operations,
parameters, kinds of actions), the checkpoint versions, the protocol, the
properties and Spark's DESCRIBE DETAIL are equal, the rows (and row ids)
too, and each engine then writes and reads the other's table. Refusals
carry the error class Spark 4 gives for the same statement.
"""

import json
import shutil

import pytest

from helpers import (
    assert_same_rows,
    assert_silt_refuses_as_spark,
    commits,
    describe,
    last_commit_info,
    latest_action,
    log_dir,
    normalized_protocol,
    row_id_high_water_mark,
    silt_sql_ok,
    spark_refusal,
    to_json_rows,
)


def spark_row_ids(spark4, table):
    """{id: (row_id, row_commit_version)} as Spark 4 reads them."""
    rows = spark4.eval(
        "spark.read.format('delta').load(p)"
        ".selectExpr('id', '_metadata.row_id AS row_id', "
        "'_metadata.row_commit_version AS rcv').collect()", p=str(table))
    return {r["id"]: (r["row_id"], r["rcv"]) for r in rows}


def silt_row_ids(silt, table):
    proc = silt("read", str(table), "--format", "jsonl", "--select",
                "id, _metadata.row_id AS row_id, _metadata.row_commit_version AS rcv")
    assert proc.returncode == 0, describe(proc)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line]
    return {r["id"]: (r["row_id"], r["rcv"]) for r in rows}


# --------------------------------------------------------------------------
# Row ids kept through DML


@pytest.fixture(scope="module")
def merge_source(spark4, tmp_path_factory):
    """MERGE's source: updates of ids 2 and 16, a delete of 4, inserts of
    40..42."""
    source = tmp_path_factory.mktemp("source") / "s"
    spark4.sql(f"CREATE TABLE delta.`{source}` (id BIGINT, name STRING, v DOUBLE) USING delta")
    spark4.sql(f"INSERT INTO delta.`{source}` VALUES (2, 'm2', 2.5), (16, 'm16', 16.5), "
               "(4, 'gone', -1.0), (40, 'n40', 40.0), (41, 'n41', 41.0), (42, 'n42', 42.0)")
    return source


def row_tracking_table(spark4, table, deletion_vectors):
    """A Spark 4 table with row tracking, three files, and a Spark UPDATE
    whose rewritten rows carry materialized row ids."""
    t = f"delta.`{table}`"
    dv = "true" if deletion_vectors else "false"
    spark4.sql(f"CREATE TABLE {t} (id BIGINT, name STRING, v DOUBLE) USING delta "
               f"TBLPROPERTIES ('delta.enableRowTracking'='true', "
               f"'delta.enableDeletionVectors'='{dv}')")
    for b in range(3):
        spark4.sql(f"INSERT INTO {t} SELECT id, concat('n', id), id * 0.5 "
                   f"FROM range({b * 10}, {b * 10 + 10})")
    spark4.sql(f"UPDATE {t} SET v = v + 1000 WHERE id % 10 = 9")


@pytest.mark.parametrize("deletion_vectors", [False, True], ids=["copy_on_write", "dv"])
def test_dml_keeps_row_ids_as_spark_does(spark4, silt, tmp_path, merge_source,
                                         deletion_vectors):
    spark_table = tmp_path / "spark"
    silt_table = tmp_path / "silt"
    row_tracking_table(spark4, spark_table, deletion_vectors)
    statements = [
        "UPDATE {t} SET v = v + 100, name = 'u' WHERE id % 5 = 1",
        "DELETE FROM {t} WHERE id % 7 = 3",
        f"MERGE INTO {{t}} AS t USING delta.`{merge_source}` AS s ON t.id = s.id "
        "WHEN MATCHED AND s.v < 0 THEN DELETE WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *",
    ]
    for statement in statements:
        if silt_table.exists():
            shutil.rmtree(silt_table)
        shutil.copytree(spark_table, silt_table)
        before = spark_row_ids(spark4, spark_table)
        mark_before = row_id_high_water_mark(spark_table)
        spark4.sql(statement.format(t=f"delta.`{spark_table}`"))
        silt_sql_ok(silt, statement.format(t=f"delta.`{silt_table}`"))
        what = f"{statement.split()[0]} ({'dv' if deletion_vectors else 'copy-on-write'})"

        expected_rows = to_json_rows(spark4.read_delta(spark_table))
        assert_same_rows(to_json_rows(spark4.read_delta(silt_table)), expected_rows, what, "id")

        theirs = spark_row_ids(spark4, spark_table)
        ours = spark_row_ids(spark4, silt_table)
        assert ours == silt_row_ids(silt, silt_table), what
        assert set(ours) == set(theirs), what
        for row_id, (ids_ours, ids_theirs) in ((k, (ours[k], theirs[k])) for k in ours):
            if row_id in before:
                assert ids_ours == ids_theirs, f"{what}: id {row_id}"
            else:  # inserted: the same version, a fresh id
                assert ids_ours[1] == ids_theirs[1], f"{what}: id {row_id}"
                assert ids_ours[0] > mark_before, f"{what}: id {row_id}"
        assert len({ids[0] for ids in ours.values()}) == len(ours), f"{what}: duplicate row ids"
        assert row_id_high_water_mark(silt_table) == row_id_high_water_mark(spark_table), what
        assert max(ids[0] for ids in ours.values()) <= row_id_high_water_mark(silt_table)
        assert last_commit_info(silt_table).get("tags") == last_commit_info(spark_table).get(
            "tags") == {"delta.rowTracking.preserved": "true"}, what


# --------------------------------------------------------------------------
# ALTER TABLE ... DROP FEATURE


def commits_after(table, version):
    """(operation, operationParameters, sorted action kinds) of each commit
    after `version`."""
    out = []
    for v, actions in sorted(commits(table).items()):
        if v <= version:
            continue
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        kinds = sorted(next(iter(a)) for a in actions if "commitInfo" not in a)
        out.append((info["operation"], info.get("operationParameters"), kinds))
    return out


def checkpoint_versions(table):
    return sorted(int(p.name[:20]) for p in log_dir(table).glob("*.checkpoint*.parquet"))


DROP_CASES = {
    # feature: (table properties, statements run before the drop)
    "deletionVectors": ("'delta.enableDeletionVectors'='true', 'delta.enableRowTracking'='true'",
                        ["DELETE FROM {t} WHERE id % 4 = 1", "UPDATE {t} SET v = 'u' WHERE id = 2"]),
    "v2Checkpoint": ("'delta.checkpointPolicy'='v2', 'delta.checkpointInterval'='2'", []),
    "inCommitTimestamp": ("'delta.enableInCommitTimestamps'='true'", []),
    "vacuumProtocolCheck": ("'delta.feature.vacuumProtocolCheck'='supported'", []),
}


def feature_table(spark4, table, properties, statements):
    t = f"delta.`{table}`"
    spark4.sql(f"CREATE TABLE {t} (id BIGINT, v STRING) USING delta TBLPROPERTIES ({properties})")
    for b in range(2):
        spark4.sql(f"INSERT INTO {t} SELECT id, concat('v', id) FROM range({b * 5}, {b * 5 + 5})")
    for statement in statements:
        spark4.sql(statement.format(t=t))


@pytest.mark.parametrize("feature", sorted(DROP_CASES))
def test_drop_feature_as_spark_does(spark4, silt, tmp_path, feature):
    """silt's DROP FEATURE writes the commits, checkpoints, protocol and
    properties Spark 4's writes on an identical table; each engine reads and
    writes the other's result."""
    properties, statements = DROP_CASES[feature]
    spark_table, silt_table = tmp_path / "spark", tmp_path / "silt"
    feature_table(spark4, spark_table, properties, statements)
    shutil.copytree(spark_table, silt_table)
    start = max(commits(spark_table))
    spark4.sql(f"ALTER TABLE delta.`{spark_table}` DROP FEATURE {feature}")
    silt_sql_ok(silt, f"ALTER TABLE delta.`{silt_table}` DROP FEATURE {feature}")

    def comparable(table):
        # Row-count metrics and paths differ; operations, parameters and
        # which actions each commit holds must not.
        return [(op, params, kinds) for op, params, kinds in commits_after(table, start)]
    assert comparable(silt_table) == comparable(spark_table)
    assert comparable(silt_table)[-1][:2] == (
        "DROP FEATURE", {"featureName": feature, "truncateHistory": False})
    assert normalized_protocol(latest_action(silt_table, "protocol")) == normalized_protocol(
        latest_action(spark_table, "protocol"))
    assert latest_action(silt_table, "metaData")["configuration"] == \
        latest_action(spark_table, "metaData")["configuration"]
    assert checkpoint_versions(silt_table) == checkpoint_versions(spark_table)
    ours = spark4.sql(f"DESCRIBE DETAIL delta.`{silt_table}`")[0]
    theirs = spark4.sql(f"DESCRIBE DETAIL delta.`{spark_table}`")[0]
    for key in ("minReaderVersion", "minWriterVersion", "tableFeatures", "properties"):
        assert ours[key] == theirs[key], key
    assert feature not in ours["tableFeatures"]
    expected = to_json_rows(spark4.read_delta(spark_table))
    assert_same_rows(to_json_rows(spark4.read_delta(silt_table)), expected, feature, "id")
    if "enableRowTracking" in properties:
        assert spark_row_ids(spark4, silt_table) == spark_row_ids(spark4, spark_table)
        assert silt_row_ids(silt, silt_table) == spark_row_ids(spark4, silt_table)
    # Each engine writes the other's downgraded table (checkpointProtection
    # included) and reads it back.
    spark4.sql(f"INSERT INTO delta.`{silt_table}` VALUES (100, 'spark')")
    silt_sql_ok(silt, f"UPDATE delta.`{spark_table}` SET v = 'silt' WHERE id = 3")
    rows = {r["id"]: r["v"] for r in to_json_rows(spark4.read_delta(silt_table))}
    assert rows[100] == "spark"
    proc = silt("read", str(spark_table), "--format", "jsonl", "--where", "id = 3")
    assert proc.returncode == 0, describe(proc)
    assert json.loads(proc.stdout.splitlines()[0])["v"] == "silt"


def test_drop_feature_refusals_name_sparks_error_classes(spark4, silt, tmp_path):
    table = tmp_path / "t"
    spark4.sql(f"CREATE TABLE delta.`{table}` (id BIGINT) USING delta "
               "TBLPROPERTIES ('delta.enableInCommitTimestamps'='true')")
    before = sorted(commits(table))
    for statement in ["DROP FEATURE deletionVectors", "DROP FEATURE noSuchFeature",
                      "DROP FEATURE appendOnly", "DROP FEATURE inCommitTimestamp TRUNCATE HISTORY",
                      "DROP FEATURE `delta.appendOnly`"]:
        refusal = spark_refusal(spark4, f"ALTER TABLE delta.`{table}` {statement}")
        assert refusal is not None, statement
        assert_silt_refuses_as_spark(silt, f"ALTER TABLE delta.`{table}` {statement}", refusal[0])
    assert sorted(commits(table)) == before
