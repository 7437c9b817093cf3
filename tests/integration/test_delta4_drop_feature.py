"""ALTER TABLE ... DROP FEATURE for the features whose traces need more
than a property change (issue #21, decisions 121 and 136): checkConstraints,
rowTracking, domainMetadata, typeWidening with recorded type changes and
columnMapping.

Each case builds a table in Spark 4 (pyspark 4.2 + delta-spark 4.4), copies
its bytes, drops the feature in Spark on one copy and in silt on the other,
and compares the commits written after the copy (operation, parameters,
which actions each holds), the protocol, the properties, the schema, the
checkpoints and the rows Spark 4 and delta-rs read; Spark then appends to
silt's downgraded table. Refusals compare Spark's error class with silt's.
One Spark 4 worker for the module.
"""

import json
import re
import shutil

import pytest

from helpers import (
    assert_same_rows,
    commits,
    latest_action,
    log_dir,
    normalized_protocol,
    read_with_deltalake,
    silt_sql_ok,
    to_json_rows,
)


def live_domains(table):
    domains = {}
    for _, actions in sorted(commits(table).items()):
        for a in actions:
            if "domainMetadata" in a:
                d = a["domainMetadata"]
                if d.get("removed"):
                    domains.pop(d["domain"], None)
                else:
                    domains[d["domain"]] = d["configuration"]
    return domains


def commits_after(table, version):
    """(operation, operationParameters, action kinds with their count) of
    each commit after `version`; for adds also whether they carry row ids."""
    out = []
    for v, actions in sorted(commits(table).items()):
        if v <= version:
            continue
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        kinds = []
        for a in actions:
            kind = next(iter(a))
            if kind == "commitInfo":
                continue
            if kind == "add":
                kind += "+rowid" if "baseRowId" in a["add"] else ""
                kind += "+dataChange" if a["add"]["dataChange"] else ""
            if kind == "domainMetadata":
                kind += ":" + a[kind]["domain"] + (":removed" if a[kind]["removed"] else "")
            kinds.append(kind)
        if info["operation"] in ("REORG", "REMOVE COLUMN MAPPING"):
            # How many files a rewrite writes is the engine's task
            # planning (Spark packs input files into tasks), not Delta's.
            kinds = [k for k in kinds if not k.startswith("add")] + sorted(
                {k for k in kinds if k.startswith("add")})
        out.append((info["operation"], info.get("operationParameters"), sorted(kinds)))
    return out


def checkpoint_versions(table):
    return sorted(int(p.name[:20]) for p in log_dir(table).glob("*.checkpoint*.parquet"))


def spark_table(spark4, table, create, statements):
    t = f"delta.`{table}`"
    spark4.sql(create.format(t=t))
    for statement in statements:
        spark4.sql(statement.format(t=t))


DROP_CASES = {
    # name: (CREATE TABLE, statements run before, features dropped in order)
    "checkConstraints": (
        "CREATE TABLE {t} (id BIGINT, v STRING) USING delta",
        ["INSERT INTO {t} SELECT id, concat('v', id) FROM range(0, 5)",
         "ALTER TABLE {t} ADD CONSTRAINT positive CHECK (id >= 0)",
         "INSERT INTO {t} SELECT id, concat('v', id) FROM range(5, 10)",
         "ALTER TABLE {t} DROP CONSTRAINT positive"],
        ["checkConstraints"]),
    "columnMapping": (
        "CREATE TABLE {t} (id BIGINT, v STRING, s STRUCT<a: INT>, p STRING) USING delta "
        "PARTITIONED BY (p) TBLPROPERTIES ('delta.columnMapping.mode'='name')",
        ["INSERT INTO {t} SELECT id, concat('v', id), named_struct('a', id), "
         "if(id % 2 = 0, 'even', 'odd') FROM range(0, 5)",
         "ALTER TABLE {t} RENAME COLUMN v TO w",
         "ALTER TABLE {t} RENAME COLUMN s.a TO b",
         "INSERT INTO {t} SELECT id, concat('w', id), named_struct('b', id), "
         "if(id % 2 = 0, 'even', 'odd') FROM range(5, 10)"],
        ["columnMapping"]),
    # Column mapping dropped from a row-tracking table whose UPDATE
    # materialized row ids: the rewrite keeps every row's id and commit
    # version under the materialized columns' own names.
    "columnMappingRowTracking": (
        "CREATE TABLE {t} (id BIGINT, v STRING, p STRING) USING delta PARTITIONED BY (p) "
        "TBLPROPERTIES ('delta.columnMapping.mode'='name', 'delta.enableRowTracking'='true')",
        ["INSERT INTO {t} SELECT id, concat('v', id), if(id % 2 = 0, 'even', 'odd') "
         "FROM range(0, 5)",
         "ALTER TABLE {t} RENAME COLUMN v TO w",
         "INSERT INTO {t} SELECT id, concat('w', id), if(id % 2 = 0, 'even', 'odd') "
         "FROM range(5, 10)",
         "UPDATE {t} SET w = 'u' WHERE id IN (2, 7)"],
        ["columnMapping"]),
    "rowTracking": (
        "CREATE TABLE {t} (id BIGINT, v STRING) USING delta "
        "TBLPROPERTIES ('delta.enableRowTracking'='true')",
        ["INSERT INTO {t} SELECT id, concat('v', id) FROM range(0, 5)",
         "INSERT INTO {t} SELECT id, concat('v', id) FROM range(5, 10)",
         "UPDATE {t} SET v = 'u' WHERE id = 2"],
        ["rowTracking", "domainMetadata"]),
    "typeWidening": (
        "CREATE TABLE {t} (id BIGINT, s SMALLINT, st STRUCT<b: BYTE>) USING delta "
        "TBLPROPERTIES ('delta.enableTypeWidening'='true')",
        # One file before the widening: it is rewritten though no other
        # file could share its bin.
        ["INSERT INTO {t} SELECT /*+ COALESCE(1) */ * FROM VALUES "
         "(1, 1, named_struct('b', 1Y)), (2, 2, named_struct('b', 2Y)) AS v(id, s, st)",
         "ALTER TABLE {t} ALTER COLUMN s TYPE INT",
         "ALTER TABLE {t} ALTER COLUMN st.b TYPE SMALLINT",
         "INSERT INTO {t} VALUES (3, 100000, named_struct('b', 1000S))"],
        ["typeWidening"]),
}


@pytest.mark.parametrize("case", sorted(DROP_CASES))
def test_drop_feature_as_spark_does(spark4, silt, tmp_path, case):
    create, statements, features = DROP_CASES[case]
    theirs, ours = tmp_path / "spark", tmp_path / "silt"
    spark_table(spark4, theirs, create, statements)
    shutil.copytree(theirs, ours)
    start = max(commits(theirs))
    for feature in features:
        spark4.sql(f"ALTER TABLE delta.`{theirs}` DROP FEATURE {feature}")
        silt_sql_ok(silt, f"ALTER TABLE delta.`{ours}` DROP FEATURE {feature}")

    assert commits_after(ours, start) == commits_after(theirs, start)
    assert normalized_protocol(latest_action(ours, "protocol")) == normalized_protocol(
        latest_action(theirs, "protocol"))
    for feature in features:
        assert feature not in normalized_protocol(latest_action(ours, "protocol"))["writerFeatures"]
    ours_meta, theirs_meta = latest_action(ours, "metaData"), latest_action(theirs, "metaData")
    assert ours_meta["configuration"] == theirs_meta["configuration"]
    assert json.loads(ours_meta["schemaString"]) == json.loads(theirs_meta["schemaString"])
    assert live_domains(ours) == live_domains(theirs)
    assert checkpoint_versions(ours) == checkpoint_versions(theirs)
    detail_ours = spark4.sql(f"DESCRIBE DETAIL delta.`{ours}`")[0]
    detail_theirs = spark4.sql(f"DESCRIBE DETAIL delta.`{theirs}`")[0]
    for key in ("minReaderVersion", "minWriterVersion", "tableFeatures", "properties"):
        assert detail_ours[key] == detail_theirs[key], key

    expected = to_json_rows(spark4.read_delta(theirs))
    assert len(expected) == (3 if case == "typeWidening" else 10)
    assert_same_rows(to_json_rows(spark4.read_delta(ours)), expected, case, "id")
    assert_same_rows(to_json_rows(read_with_deltalake(ours)), expected, case, "id")
    if "RowTracking" in case:
        ids = "SELECT id, _metadata.row_id AS row_id, _metadata.row_commit_version AS v FROM {}"
        assert_same_rows(spark4.sql(ids.format(f"delta.`{ours}`")),
                         spark4.sql(ids.format(f"delta.`{theirs}`")), case + " row ids", "id")
    # Spark appends to silt's downgraded table and reads it back.
    columns = spark4.eval("spark.read.format('delta').load(p).columns", p=str(ours))
    values = ", ".join("100" if c == "id" else "NULL" for c in columns)
    spark4.sql(f"INSERT INTO delta.`{ours}` VALUES ({values})")
    ids = {r["id"] for r in to_json_rows(spark4.read_delta(ours))}
    assert ids == {r["id"] for r in expected} | {100}


def spark_condition(error):
    condition = getattr(error, "condition", None)
    if condition:
        return condition
    found = re.search(r"\[(DELTA_[A-Z_]+)\]", str(error))
    assert found, str(error)[:500]
    return found.group(1)


def test_drop_feature_refusals_as_spark(spark4, silt, tmp_path):
    """Both engines refuse, with the same error class and no commit: CHECK
    constraints still defined, domainMetadata while rowTracking needs it,
    columnMapping while a column name needs it."""
    table = tmp_path / "t"
    spark_table(spark4, table,
                "CREATE TABLE {t} (id BIGINT) USING delta "
                "TBLPROPERTIES ('delta.enableRowTracking'='true')",
                ["ALTER TABLE {t} ADD CONSTRAINT positive CHECK (id > 0)",
                 "ALTER TABLE {t} ADD CONSTRAINT small CHECK (id < 1000)"])
    before = sorted(commits(table))
    for statement in ["DROP FEATURE checkConstraints", "DROP FEATURE domainMetadata"]:
        with pytest.raises(Exception) as refused:
            spark4.sql(f"ALTER TABLE delta.`{table}` {statement}")
        condition = spark_condition(refused.value)
        proc = silt("sql", f"ALTER TABLE delta.`{table}` {statement}")
        assert proc.returncode != 0, statement
        assert f"[{condition}]" in proc.stderr, (statement, condition, proc.stderr)
        if statement.endswith("checkConstraints"):
            assert "`positive`" in proc.stderr and "`small`" in proc.stderr
    assert sorted(commits(table)) == before

    mapped = tmp_path / "mapped"
    spark_table(spark4, mapped,
                "CREATE TABLE {t} (id BIGINT, `a b` STRING) USING delta "
                "TBLPROPERTIES ('delta.columnMapping.mode'='name')", [])
    before = sorted(commits(mapped))
    with pytest.raises(Exception) as refused:
        spark4.sql(f"ALTER TABLE delta.`{mapped}` DROP FEATURE columnMapping")
    condition = spark_condition(refused.value)
    assert condition == "DELTA_INVALID_COLUMN_NAMES_WHEN_REMOVING_COLUMN_MAPPING"
    # Spark committed nothing either, so silt starts from the same log.
    assert sorted(commits(mapped)) == before
    proc = silt("sql", f"ALTER TABLE delta.`{mapped}` DROP FEATURE columnMapping")
    assert proc.returncode != 0
    assert f"[{condition}]" in proc.stderr and "a b" in proc.stderr, proc.stderr
    assert sorted(commits(mapped)) == before
