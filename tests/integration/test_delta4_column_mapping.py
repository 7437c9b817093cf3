"""Column-mapped Delta tables (delta.columnMapping.mode = name | id) written
by silt, against Spark 4 + delta-spark 4 (the module-scoped `spark4`
fixture: one Spark 4 JVM for the module) and delta-rs (`deltalake`, through
its DataFusion QueryBuilder, which applies column mapping).

Spark 4 creates name- and id-mode tables with nested columns (structs in
arrays and maps), partitioned, and in name mode renames one column and drops
another. silt's streaming sink appends to them (with mergeSchema adding a
top-level column and a nested field), `silt sql` rewrites files (UPDATE,
MERGE) and `silt optimize` compacts them. After each, Spark 4, delta-rs and
silt read the same rows; the data files silt wrote hold physical names and
Parquet field ids, partition values and statistics are keyed by physical
names, and the new fields got the next column ids with maxColumnId raised,
as Spark numbers them. Spark then appends to the table and everything reads
equal again.

silt's sink creates a name-mode table: its protocol, properties and column
numbering are what Spark 4 gives the same table; Spark 4 and delta-rs read
it, Spark appends to it and DESCRIBE DETAIL agrees. The merge sink creates
one the same way.

On byte copies of Spark 4's tables, statement for statement against Spark:
DML with the change data feed on (cdc actions and physical-name change
files; Spark's and silt's change feeds equal, and equally refused across a
RENAME or DROP COLUMN), RENAME/DROP COLUMN where CHECK constraints,
generated columns, clustering columns and delta.dataSkippingStatsColumns
name columns, and UPDATE/DELETE/OPTIMIZE of a row-tracking table keeping
its row ids and row commit versions.
"""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import (
    assert_same_rows,
    commits,
    describe,
    json_file_job,
    latest_action,
    normalize_silt_rows,
    read_with_silt,
    to_json_rows,
    write_input_file,
    write_job,
)


def adds_of(table, version):
    return [a["add"] for a in commits(table)[version] if "add" in a]


def schema_of(table):
    return json.loads(latest_action(table, "metaData")["schemaString"])


def mapping_of(schema):
    """{dotted logical path: (id, physical name)} of every field."""
    out = {}

    def walk(typ, prefix):
        if isinstance(typ, dict) and typ.get("type") == "struct":
            for f in typ["fields"]:
                md = f.get("metadata", {})
                path = prefix + f["name"]
                out[path] = (md.get("delta.columnMapping.id"),
                             md.get("delta.columnMapping.physicalName"))
                walk(f["type"], path + ".")
        elif isinstance(typ, dict) and typ.get("type") == "array":
            walk(typ["elementType"], prefix)
        elif isinstance(typ, dict) and typ.get("type") == "map":
            walk(typ["keyType"], prefix)
            walk(typ["valueType"], prefix)

    walk(schema, "")
    return out


def read_with_delta_rs(table):
    from deltalake import DeltaTable, QueryBuilder

    result = QueryBuilder().register("t", DeltaTable(str(table))).execute("SELECT * FROM t")
    return pa.table(result.read_all())


def assert_all_read_equal(spark4, silt, table, key, what):
    """Spark 4, delta-rs and silt read the same rows; returns them."""
    expected = to_json_rows(spark4.read_delta(table))
    assert_same_rows(to_json_rows(read_with_delta_rs(table)), expected,
                     f"{what}: delta-rs vs Spark 4", key)
    assert_same_rows(normalize_silt_rows(read_with_silt(silt, str(table))), expected,
                     f"{what}: silt vs Spark 4", key)
    return expected


def assert_physical_files(table, version, mapping, partition_path):
    """The data files a commit added hold physical names with field ids, and
    its partition values and stats are keyed by physical names."""
    physical = {name: fid for fid, name in mapping.values()}
    by_path = {path: (fid, name) for path, (fid, name) in mapping.items()}
    adds = adds_of(table, version)
    assert adds, f"version {version} added no files"
    for add in adds:
        assert set(add["partitionValues"]) == {by_path[partition_path][1]}, add
        stats = json.loads(add["stats"])
        assert set(stats["minValues"]) <= set(physical), stats
        assert set(stats["nullCount"]) <= set(physical), stats
        file_schema = pq.read_schema(str(table / add["path"]))
        for field in file_schema:
            assert field.name in physical, (add["path"], field.name)
            assert field.metadata[b"PARQUET:field_id"] == str(physical[field.name]).encode()
            if pa.types.is_struct(field.type):
                for child in field.type:
                    assert child.name in physical, (field.name, child.name)
                    assert child.metadata[b"PARQUET:field_id"] == \
                        str(physical[child.name]).encode()


def run_stream(silt, work, name, table, schema, batches, options, **sink):
    input_dir = work / f"in-{name}"
    input_dir.mkdir()
    for b, rows in enumerate(batches):
        write_input_file(input_dir / f"b{b:03d}.json", [json.dumps(r) for r in rows])
    job = json_file_job(name, input_dir, table, work / f"ckpt-{name}", schema,
                        max_files_per_trigger=1)
    job["sink"]["options"] = options
    job["sink"].update(sink)
    proc = silt("run", str(write_job(work / f"{name}.yaml", job)), timeout=300)
    assert proc.returncode == 0, describe(proc)


def silt_ok(silt, *args):
    proc = silt(*args)
    assert proc.returncode == 0, describe(proc)
    return proc


# --------------------------------------------------------------------------
# Spark 4's tables, appended to and rewritten by silt


@pytest.mark.parametrize("mode", ["name", "id"])
def test_silt_writes_spark_created_column_mapped_tables(spark4, silt, work, mode):
    table = work / f"spark-{mode}"
    t = f"delta.`{table}`"
    spark4.sql(f"CREATE TABLE {t} (id BIGINT, s STRUCT<a: INT, b: ARRAY<STRUCT<c: STRING>>>, "
               "m MAP<STRING, STRUCT<d: INT>>, x STRING, part STRING) USING delta "
               f"PARTITIONED BY (part) TBLPROPERTIES ('delta.columnMapping.mode'='{mode}')")
    spark4.sql(f"INSERT INTO {t} VALUES "
               "(1, named_struct('a', 10, 'b', array(named_struct('c', 'c1'))), "
               "map('k', named_struct('d', 1)), 'x1', 'p1'), "
               "(2, NULL, NULL, 'x2', 'p2')")
    key, xcol = "id", "x"
    schema = ("id BIGINT, s STRUCT<a: INT, b: ARRAY<STRUCT<c: STRING>>, e: STRING>, "
              "m MAP<STRING, STRUCT<d: INT>>, x STRING, part STRING, extra INT")
    if mode == "name":
        # Metadata-only in Spark: the files keep the old physical names.
        spark4.sql(f"ALTER TABLE {t} RENAME COLUMN id TO ident")
        spark4.sql(f"ALTER TABLE {t} RENAME COLUMN x TO y")
        spark4.sql(f"ALTER TABLE {t} DROP COLUMN m")
        key, xcol = "ident", "y"
        schema = ("ident BIGINT, s STRUCT<a: INT, b: ARRAY<STRUCT<c: STRING>>, e: STRING>, "
                  "y STRING, part STRING, extra INT")
    before = mapping_of(schema_of(table))
    max_before = int(latest_action(table, "metaData")["configuration"]
                     ["delta.columnMapping.maxColumnId"])

    # silt's sink appends two batches, the first growing the schema (a
    # top-level column and a nested field) through mergeSchema.
    rows = [
        {key: 10, "s": {"a": 11, "b": [{"c": "c10"}], "e": "e10"}, xcol: "x10", "part": "p1",
         "extra": 100},
        {key: 11, "s": {"a": 12, "b": []}, xcol: "x11", "part": "p3"},
    ]
    if mode == "id":
        rows[0]["m"] = {"q": {"d": 7}}
    run_stream(silt, work, f"append-{mode}", table, schema,
               [rows, [{key: 12, xcol: "x12", "part": "p2", "extra": 120}]],
               {"mergeSchema": True})
    versions = sorted(commits(table))
    first_silt, last_silt = versions[-2], versions[-1]
    after = mapping_of(schema_of(table))
    # Old fields keep their ids and names; the new ones get the next ids,
    # parent before child, and col-<uuid> physical names.
    for path, mapped in before.items():
        assert after[path] == mapped, path
    new = {path: mapped for path, mapped in after.items() if path not in before}
    assert sorted(new) == ["extra", "s.e"], new
    assert sorted(fid for fid, _ in new.values()) == [max_before + 1, max_before + 2]
    assert all(name.startswith("col-") for _, name in new.values())
    assert latest_action(table, "metaData")["configuration"]["delta.columnMapping.maxColumnId"] == \
        str(max_before + 2)
    assert_physical_files(table, first_silt, after, "part")
    assert_physical_files(table, last_silt, after, "part")
    assert_all_read_equal(spark4, silt, table, key, f"{mode}: after silt's sink")

    # silt sql rewrites files (copy-on-write UPDATE, MERGE inserting rows).
    silt_ok(silt, "sql", f"UPDATE {t} SET {xcol} = 'u', extra = 5 WHERE {key} IN (1, 10)")
    assert_physical_files(table, sorted(commits(table))[-1], after, "part")
    source = work / f"merge-{mode}.json"
    source.write_text('{"k": 20}\n{"k": 2}\n')
    silt_ok(silt, "sql", f"MERGE INTO {t} AS t USING json.`{source}` AS src ON t.{key} = src.k "
                         f"WHEN MATCHED THEN UPDATE SET {xcol} = 'matched' "
                         f"WHEN NOT MATCHED THEN INSERT ({key}, {xcol}, part) "
                         f"VALUES (src.k, 'merged', 'p2')")
    assert_physical_files(table, sorted(commits(table))[-1], after, "part")
    assert_all_read_equal(spark4, silt, table, key, f"{mode}: after silt sql")

    # silt optimize compacts partitions p1 and p2 (several files each).
    silt_ok(silt, "optimize", str(table))
    optimized = sorted(commits(table))[-1]
    assert any("remove" in a for a in commits(table)[optimized])
    assert_physical_files(table, optimized, after, "part")
    expected = assert_all_read_equal(spark4, silt, table, key, f"{mode}: after silt optimize")
    assert len(expected) == 6

    # Spark 4 appends to the table silt wrote and reads it with the rest.
    spark4.sql(f"INSERT INTO {t} ({key}, {xcol}, part, extra) VALUES (30, 'spark', 'p1', 3)")
    final = assert_all_read_equal(spark4, silt, table, key, f"{mode}: after Spark's append")
    assert len(final) == 7
    assert spark4.eval(f"spark.sql(\"SELECT count(*) AS n FROM {t} WHERE s.e = 'e10'\")"
                       ".collect()[0]['n']") == 1
    # Data skipping on silt's physical-name stats: the filter finds its row.
    proc = silt_ok(silt, "read", str(table), "--format", "jsonl", "--where", f"{key} = 12")
    assert [json.loads(line)[key] for line in proc.stdout.splitlines()] == [12]


# --------------------------------------------------------------------------
# silt's new column-mapped table, read and appended to by Spark 4


def test_silt_creates_name_mode_table_as_spark_does(spark4, silt, work):
    table = work / "silt-name"
    schema = "id BIGINT, s STRUCT<a: INT, b: ARRAY<STRUCT<c: STRING>>>, v DOUBLE, part STRING"
    run_stream(silt, work, "create", table, schema,
               [[{"id": 1, "s": {"a": 1, "b": [{"c": "x"}]}, "v": 1.5, "part": "p1"},
                 {"id": 2, "v": 2.5, "part": "p2"}],
                [{"id": 3, "s": {"a": 3, "b": []}, "part": "p1"}]],
               {"delta.columnMapping.mode": "name"}, partitionBy=["part"])
    reference = work / "spark-reference"
    spark4.sql(f"CREATE TABLE delta.`{reference}` ({schema.replace(': ', ' ')}) USING delta "
               "PARTITIONED BY (part) TBLPROPERTIES ('delta.columnMapping.mode'='name')")

    ours, theirs = latest_action(table, "protocol"), latest_action(reference, "protocol")
    assert ours["minReaderVersion"] == theirs["minReaderVersion"]
    assert ours["minWriterVersion"] == theirs["minWriterVersion"]
    assert sorted(ours.get("writerFeatures", [])) == sorted(theirs.get("writerFeatures", []))
    assert sorted(ours.get("readerFeatures", [])) == sorted(theirs.get("readerFeatures", []))
    assert latest_action(table, "metaData")["configuration"] == \
        latest_action(reference, "metaData")["configuration"]
    ids = {path: fid for path, (fid, _) in mapping_of(schema_of(table)).items()}
    assert ids == {path: fid for path, (fid, _) in mapping_of(schema_of(reference)).items()}
    mapping = mapping_of(schema_of(table))
    for version in sorted(commits(table)):
        assert_physical_files(table, version, mapping, "part")

    assert_all_read_equal(spark4, silt, table, "id", "silt's table")
    spark4.sql(f"INSERT INTO delta.`{table}` VALUES (4, named_struct('a', 4, 'b', "
               "array(named_struct('c', 'y'))), 4.5, 'p3')")
    spark4.sql(f"ALTER TABLE delta.`{table}` RENAME COLUMN v TO w")
    rows = assert_all_read_equal(spark4, silt, table, "id", "silt's table after Spark")
    assert len(rows) == 4 and sum(1 for r in rows if "w" in r) == 3
    detail = spark4.sql(f"DESCRIBE DETAIL delta.`{table}`")[0]
    assert detail["numFiles"] == len(spark4.eval(
        "spark.read.format('delta').load(p).inputFiles()", p=str(table)))
    assert detail["properties"]["delta.columnMapping.mode"] == "name"
    assert "columnMapping" in detail["tableFeatures"]
    # Spark's own consistency check over the log silt wrote.
    spark4.run("from delta.tables import DeltaTable\n"
               "result = DeltaTable.forPath(spark, p).detail().collect()[0]['numFiles']",
               p=str(table))

    # silt appends again after Spark's rename: to the renamed column.
    run_stream(silt, work, "after-rename", table, "id BIGINT, w DOUBLE, part STRING",
               [[{"id": 5, "w": 5.5, "part": "p1"}]], {})
    rows = assert_all_read_equal(spark4, silt, table, "id", "silt's append after the rename")
    assert {r["id"]: r.get("w") for r in rows}[5] == 5.5


# --------------------------------------------------------------------------
# ALTER TABLE ... RENAME COLUMN / DROP COLUMN[S], statement for statement


def last_commit(table):
    _, actions = max(commits(table).items())
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    metadata = next((a["metaData"] for a in actions if "metaData" in a), None)
    return info, metadata


@pytest.mark.parametrize("mode", ["name", "id"])
def test_alter_columns_as_spark_does(spark4, silt, work, mode):
    """Spark 4 runs each statement on its table, silt on a byte-identical
    copy: both succeed with the same metaData and commitInfo operation, or
    both refuse (with Spark's error class)."""
    import shutil

    spark_table = work / f"alter-spark-{mode}"
    spark4.sql(f"CREATE TABLE delta.`{spark_table}` (id BIGINT, s STRUCT<a: INT, b: STRING>, "
               "v STRING, part STRING) USING delta PARTITIONED BY (part) "
               f"TBLPROPERTIES ('delta.columnMapping.mode'='{mode}')")
    spark4.sql(f"INSERT INTO delta.`{spark_table}` VALUES (1, named_struct('a', 1, 'b', 'b1'), "
               "'v1', 'p1'), (2, NULL, 'v2', 'p2')")
    silt_table = work / f"alter-silt-{mode}"
    shutil.copytree(spark_table, silt_table)
    statements = [
        "ALTER TABLE {t} RENAME COLUMN v TO w",
        "ALTER TABLE {t} RENAME COLUMN s.a TO a2",
        "ALTER TABLE {t} RENAME COLUMN w TO id",
        "ALTER TABLE {t} RENAME COLUMN nope TO x",
        "ALTER TABLE {t} DROP COLUMN s.b",
        "ALTER TABLE {t} DROP COLUMN s.a2",
        "ALTER TABLE {t} DROP COLUMN part",
        "ALTER TABLE {t} DROP COLUMNS (id, w)",
    ]
    outcomes = []
    for statement in statements:
        spark_error = None
        try:
            spark4.sql(statement.format(t=f"delta.`{spark_table}`"))
        except Exception as e:  # Spark4Error
            spark_error = e
        proc = silt("sql", statement.format(t=f"delta.`{silt_table}`"))
        outcomes.append((statement, spark_error is None))
        if spark_error is not None:
            assert proc.returncode != 0, f"{statement}: Spark refused ({spark_error}), silt did not"
            condition = getattr(spark_error, "condition", None)
            if condition and condition.startswith("DELTA_UNSUPPORTED"):
                assert condition in proc.stderr, (statement, condition, proc.stderr)
            continue
        assert proc.returncode == 0, f"{statement}: Spark ran it, silt: {describe(proc)}"
        spark_info, spark_meta = last_commit(spark_table)
        silt_info, silt_meta = last_commit(silt_table)
        assert silt_info["operation"] == spark_info["operation"], statement
        assert silt_info["operationParameters"] == spark_info["operationParameters"], statement
        assert json.loads(silt_meta["schemaString"]) == json.loads(spark_meta["schemaString"])
        assert silt_meta["partitionColumns"] == spark_meta["partitionColumns"], statement
        assert silt_meta["configuration"] == spark_meta["configuration"], statement
    if mode == "name":
        # The renames and the drops of s.b and of id, w ran in both.
        assert [ok for _, ok in outcomes] == [True, True, False, False, True, False, False, True]
    expected = to_json_rows(spark4.read_delta(spark_table))
    assert_same_rows(to_json_rows(spark4.read_delta(silt_table)), expected, "Spark reads silt's",
                     "part")
    assert_same_rows(to_json_rows(read_with_delta_rs(silt_table)), expected, "delta-rs", "part")
    assert_same_rows(normalize_silt_rows(read_with_silt(silt, str(silt_table))), expected, "silt",
                     "part")


# --------------------------------------------------------------------------
# The merge sink creates a name-mode table as the append sink does


def test_merge_sink_creates_name_mode_table_as_spark_does(spark4, silt, work):
    table = work / "merge-name"
    schema = "id BIGINT, s STRUCT<a: INT, b: ARRAY<STRUCT<c: STRING>>>, v DOUBLE, part STRING"
    input_dir = work / "in-merge-create"
    input_dir.mkdir()
    batches = [[{"id": 1, "s": {"a": 1, "b": [{"c": "x"}]}, "v": 1.5, "part": "p1"},
                {"id": 2, "v": 2.5, "part": "p2"}],
               [{"id": 1, "s": {"a": 9, "b": []}, "v": 9.5, "part": "p1"},
                {"id": 3, "part": "p2"}]]
    for b, rows in enumerate(batches):
        write_input_file(input_dir / f"b{b:03d}.json", [json.dumps(r) for r in rows])
    job = json_file_job("merge-create", input_dir, table, work / "ckpt-merge-create", schema,
                        max_files_per_trigger=1, partition_by=["part"])
    job["sink"].update({
        "mode": "merge",
        "options": {"delta.columnMapping.mode": "name"},
        "merge": {"on": "t.id = s.id", "whenMatched": [{"action": "updateAll"}],
                  "whenNotMatched": [{"action": "insertAll"}]},
    })
    job["sink"].pop("outputMode", None)
    proc = silt("run", str(write_job(work / "merge-create.yaml", job)), timeout=300)
    assert proc.returncode == 0, describe(proc)

    reference = work / "merge-reference"
    spark4.sql(f"CREATE TABLE delta.`{reference}` ({schema.replace(': ', ' ')}) USING delta "
               "PARTITIONED BY (part) TBLPROPERTIES ('delta.columnMapping.mode'='name')")
    ours, theirs = latest_action(table, "protocol"), latest_action(reference, "protocol")
    for key in ("minReaderVersion", "minWriterVersion"):
        assert ours[key] == theirs[key], key
    for key in ("readerFeatures", "writerFeatures"):
        assert sorted(ours.get(key, [])) == sorted(theirs.get(key, [])), key
    assert latest_action(table, "metaData")["configuration"] == \
        latest_action(reference, "metaData")["configuration"]
    mapping = mapping_of(schema_of(table))
    assert {p: fid for p, (fid, _) in mapping.items()} == \
        {p: fid for p, (fid, _) in mapping_of(schema_of(reference)).items()}
    versions = sorted(commits(table))
    assert len(versions) == 3  # CREATE TABLE, then one MERGE per batch
    for version in versions[1:]:
        assert_physical_files(table, version, mapping, "part")
    rows = assert_all_read_equal(spark4, silt, table, "id", "merge sink's table")
    assert {r["id"]: r.get("v") for r in rows} == {1: 9.5, 2: 2.5, 3: None}
    spark4.sql(f"MERGE INTO delta.`{table}` t USING (SELECT 2 AS id, 7.5 AS v) s ON t.id = s.id "
               "WHEN MATCHED THEN UPDATE SET v = s.v")
    rows = assert_all_read_equal(spark4, silt, table, "id", "after Spark's MERGE")
    assert {r["id"]: r.get("v") for r in rows}[2] == 7.5


# --------------------------------------------------------------------------
# Change data files on column-mapped tables, written and read as Spark does


def spark_changes(spark4, table, start, end=None):
    """Spark 4's batch change feed (readChangeFeed), without timestamps."""
    reader = ("spark.read.format('delta').option('readChangeFeed', 'true')"
              ".option('startingVersion', s)")
    if end is not None:
        reader += ".option('endingVersion', e)"
    rows = to_json_rows(spark4.df(reader + ".load(p)", p=str(table), s=start, e=end))
    return [{k: v for k, v in r.items() if k != "_commit_timestamp"} for r in rows]


def silt_changes(silt, table, start, end=None):
    args = ["read", str(table), "--changes", "--format", "jsonl", "--values", "spark",
            "--starting-version", str(start)]
    if end is not None:
        args += ["--ending-version", str(end)]
    proc = silt(*args)
    return proc, [{k: v for k, v in r.items() if k != "_commit_timestamp"}
                  for r in normalize_silt_rows([json.loads(line)
                                                for line in proc.stdout.splitlines()
                                                if line.strip()])]


def assert_same_changes(spark4, silt, table, start, end=None, what=""):
    """Spark 4 and silt read the same change feed, or both refuse with
    Spark's error class; returns the rows (None when refused)."""
    spark_error = None
    try:
        expected = spark_changes(spark4, table, start, end)
    except Exception as e:  # Spark4Error
        spark_error = e
    proc, rows = silt_changes(silt, table, start, end)
    if spark_error is not None:
        condition = getattr(spark_error, "condition", None)
        assert proc.returncode != 0, f"{what}: Spark refused ({spark_error}), silt did not"
        assert condition and condition in proc.stderr, (what, condition, proc.stderr)
        return None
    assert proc.returncode == 0, f"{what}: {describe(proc)}"
    assert_same_rows(rows, expected, what, "_commit_version", "_change_type", "id")
    return expected


@pytest.mark.parametrize("mode", ["name", "id"])
def test_change_data_on_column_mapped_tables_as_spark(spark4, silt, work, mode):
    import shutil

    base = work / f"cdf-base-{mode}"
    t = f"delta.`{base}`"
    spark4.sql(f"CREATE TABLE {t} (id BIGINT, s STRUCT<a: INT>, v STRING, part STRING) "
               "USING delta PARTITIONED BY (part) TBLPROPERTIES "
               f"('delta.columnMapping.mode'='{mode}', 'delta.enableChangeDataFeed'='true')")
    spark4.sql(f"INSERT INTO {t} VALUES (1, named_struct('a', 1), 'a', 'p1'), "
               "(2, NULL, 'b', 'p2'), (3, named_struct('a', 3), 'c', 'p1'), (4, NULL, 'd', 'p2')")
    source = work / f"cdf-source-{mode}.json"
    source.write_text('{"k": 3, "x": "m3"}\n{"k": 9, "x": "m9"}\n')
    spark_table, silt_table = work / f"cdf-spark-{mode}", work / f"cdf-silt-{mode}"
    shutil.copytree(base, spark_table)
    shutil.copytree(base, silt_table)
    first = max(commits(base)) + 1
    statements = [
        "UPDATE {t} SET v = 'u' WHERE id = 1",
        "DELETE FROM {t} WHERE id = 2",
        "MERGE INTO {t} AS t USING json.`" + str(source) + "` AS src ON t.id = src.k "
        "WHEN MATCHED THEN UPDATE SET v = src.x "
        "WHEN NOT MATCHED THEN INSERT (id, v, part) VALUES (src.k, src.x, 'p3')",
    ]
    mapping = mapping_of(schema_of(base))
    physical = {name: fid for fid, name in mapping.values()}
    for statement in statements:
        spark_statement = statement.replace("json.`" + str(source) + "`",
                                            f"(SELECT * FROM json.`{source}`)")
        spark4.sql(spark_statement.format(t=f"delta.`{spark_table}`"))
        silt_ok(silt, "sql", statement.format(t=f"delta.`{silt_table}`"))
        theirs, ours = commits(spark_table), commits(silt_table)
        spark_cdc = [a["cdc"] for a in theirs[max(theirs)] if "cdc" in a]
        silt_cdc = [a["cdc"] for a in ours[max(ours)] if "cdc" in a]
        # Change data files where Spark writes them (a copy-on-write
        # rewrite), keyed by physical partition names.
        assert bool(silt_cdc) == bool(spark_cdc), (statement, spark_cdc, silt_cdc)
        assert sorted(tuple(c["partitionValues"].items()) for c in silt_cdc) == \
            sorted(tuple(c["partitionValues"].items()) for c in spark_cdc), statement
        for cdc in silt_cdc:
            assert cdc["dataChange"] is False
            fields = {f.name: f.metadata for f in pq.read_schema(str(silt_table / cdc["path"]))}
            assert fields.pop("_change_type") in (None, {}), fields
            for name, md in fields.items():
                assert name in physical, (cdc["path"], name)
                assert md[b"PARQUET:field_id"] == str(physical[name]).encode()
    # The table and its change feed read the same in Spark, silt and
    # (the table) delta-rs.
    assert_all_read_equal(spark4, silt, silt_table, "id", f"{mode}: silt's CDF table")
    expected = assert_same_changes(spark4, silt, spark_table, first, what="Spark's table")
    assert len(expected) >= 6
    on_silt = spark_changes(spark4, silt_table, first)
    assert_same_rows(on_silt, expected, f"{mode}: Spark's CDF of silt's table vs of its own",
                     "_commit_version", "_change_type", "id")
    assert_same_changes(spark4, silt, silt_table, first, what="silt's table")

    # Across schema changes (a rename, an added column, a dropped one):
    # each range reads the same in both, or both refuse with Spark's error
    # class. The check does not depend on the mode; name mode covers it.
    if mode != "name":
        return
    for target in (spark_table, silt_table):
        spark4.sql(f"ALTER TABLE delta.`{target}` RENAME COLUMN v TO w")
    renamed = max(commits(spark_table))
    spark4.sql(f"UPDATE delta.`{spark_table}` SET w = 'r' WHERE id = 3")
    silt_ok(silt, "sql", f"UPDATE delta.`{silt_table}` SET w = 'r' WHERE id = 3")
    for target in (spark_table, silt_table):
        spark4.sql(f"ALTER TABLE delta.`{target}` ADD COLUMNS (z INT)")
    spark4.sql(f"UPDATE delta.`{spark_table}` SET z = 7 WHERE id = 1")
    silt_ok(silt, "sql", f"UPDATE delta.`{silt_table}` SET z = 7 WHERE id = 1")
    for target in (spark_table, silt_table):
        spark4.sql(f"ALTER TABLE delta.`{target}` DROP COLUMN s")
    dropped = max(commits(spark_table))
    ranges = [(first, None), (first, renamed - 1), (first, renamed), (renamed, None),
              (renamed + 1, None), (renamed, dropped - 1), (dropped, None)]
    outcomes = []
    for start, end in ranges:
        for table in (spark_table, silt_table):
            got = assert_same_changes(spark4, silt, table, start, end,
                                      what=f"{mode}: {table.name} [{start}, {end}]")
        outcomes.append(got is not None)
    # Spark refuses the ranges across the rename or the drop (the ones to
    # the latest version cross the drop); an added column is read as NULL.
    assert outcomes == [False, True, False, False, False, True, True], outcomes


# --------------------------------------------------------------------------
# RENAME / DROP COLUMN where the table's metadata names columns


def clustering_domain(table):
    domain = None
    for _, actions in sorted(commits(table).items()):
        for a in actions:
            if "domainMetadata" in a and a["domainMetadata"]["domain"] == "delta.clustering":
                domain = a["domainMetadata"]
    return domain


NAMING_TABLES = {
    "generated_and_check": (
        "(id BIGINT, v INT, g INT GENERATED ALWAYS AS (v * 2), s STRUCT<a: INT, b: INT>) "
        "USING delta",
        ["INSERT INTO {t} (id, v, s) VALUES (1, 2, named_struct('a', 1, 'b', 2))",
         "ALTER TABLE {t} ADD CONSTRAINT positive CHECK (s.a > 0)"],
        ["RENAME COLUMN v TO v2", "DROP COLUMN v", "RENAME COLUMN s.a TO a2", "DROP COLUMN s",
         "RENAME COLUMN s.b TO b2", "RENAME COLUMN g TO g2", "DROP COLUMN id", "DROP COLUMN g2"]),
    "clustered_with_stats_columns": (
        "(id BIGINT, v INT, w INT, s STRUCT<a: INT, b: INT>) USING delta CLUSTER BY (v)",
        ["INSERT INTO {t} VALUES (1, 2, 3, named_struct('a', 1, 'b', 2))",
         "ALTER TABLE {t} SET TBLPROPERTIES "
         "('delta.dataSkippingStatsColumns' = 'v, s.a,id')"],
        # The quoted name comes last: delta-spark 4.4 writes
        # "`my s`.a" into the property and then fails every later ALTER
        # parsing it back (DELTA_COLUMN_NOT_FOUND_IN_SCHEMA "my").
        ["RENAME COLUMN v TO v2", "DROP COLUMN v2", "DROP COLUMN id", "DROP COLUMN s.b",
         "RENAME COLUMN w TO w2", "RENAME COLUMN s TO `my s`"]),
}


@pytest.mark.parametrize("name", list(NAMING_TABLES))
def test_alter_columns_named_by_metadata_as_spark_does(spark4, silt, work, name):
    """Spark 4 runs each ALTER on its table, silt on a byte-identical copy:
    both refuse with the same error class, or both commit the same
    metaData (schema, configuration) and clustering domain."""
    import shutil

    ddl, setup, statements = NAMING_TABLES[name]
    spark_table, silt_table = work / f"naming-spark-{name}", work / f"naming-silt-{name}"
    spark4.sql(f"CREATE TABLE delta.`{spark_table}` {ddl} "
               "TBLPROPERTIES ('delta.columnMapping.mode'='name')")
    for statement in setup:
        spark4.sql(statement.format(t=f"delta.`{spark_table}`"))
    shutil.copytree(spark_table, silt_table)
    outcomes = []
    for statement in statements:
        spark_error = None
        try:
            spark4.sql(f"ALTER TABLE delta.`{spark_table}` {statement}")
        except Exception as e:  # Spark4Error
            spark_error = e
        proc = silt("sql", f"ALTER TABLE delta.`{silt_table}` {statement}")
        outcomes.append(spark_error is None)
        if spark_error is not None:
            assert proc.returncode != 0, f"{statement}: Spark refused ({spark_error}), silt did not"
            condition = getattr(spark_error, "condition", None)
            assert condition and condition in proc.stderr, (statement, condition, proc.stderr)
            continue
        assert proc.returncode == 0, f"{statement}: Spark ran it, silt: {describe(proc)}"
        spark_info, spark_meta = last_commit(spark_table)
        silt_info, silt_meta = last_commit(silt_table)
        assert silt_info["operation"] == spark_info["operation"], statement
        assert silt_info["operationParameters"] == spark_info["operationParameters"], statement
        assert json.loads(silt_meta["schemaString"]) == json.loads(spark_meta["schemaString"]), \
            statement
        assert silt_meta["configuration"] == spark_meta["configuration"], statement
        assert clustering_domain(silt_table) == clustering_domain(spark_table), statement
    # Some of each: refused ones and committed ones.
    assert any(outcomes) and not all(outcomes), outcomes
    expected = to_json_rows(spark4.read_delta(spark_table))
    assert len(expected) == 1
    assert_same_rows(to_json_rows(spark4.read_delta(silt_table)), expected, name)
    assert_same_rows(normalize_silt_rows(read_with_silt(silt, str(silt_table))), expected, name)


# --------------------------------------------------------------------------
# Row tracking with column mapping: materialized row ids through rewrites


def rows_with_row_metadata(spark4, table):
    return to_json_rows(spark4.df(
        "spark.read.format('delta').load(p)"
        ".select('*', '_metadata.row_id', '_metadata.row_commit_version')", p=str(table)))


def test_row_tracking_rewrites_on_column_mapped_tables_as_spark(spark4, silt, work):
    import shutil

    base = work / "rt-base"
    t = f"delta.`{base}`"
    spark4.sql(f"CREATE TABLE {t} (id BIGINT, s STRUCT<a: INT>, v STRING) USING delta "
               "TBLPROPERTIES ('delta.columnMapping.mode'='name', "
               "'delta.enableRowTracking'='true', 'delta.enableDeletionVectors'='false')")
    spark4.sql(f"INSERT INTO {t} VALUES (1, named_struct('a', 1), 'a'), (2, NULL, 'b')")
    spark4.sql(f"INSERT INTO {t} VALUES (3, named_struct('a', 3), 'c'), (4, NULL, 'd')")
    configuration = latest_action(base, "metaData")["configuration"]
    hidden = {configuration["delta.rowTracking.materializedRowIdColumnName"],
              configuration["delta.rowTracking.materializedRowCommitVersionColumnName"]}
    mapping = mapping_of(schema_of(base))
    physical = {name: fid for fid, name in mapping.values()}
    spark_table, silt_table = work / "rt-spark", work / "rt-silt"
    shutil.copytree(base, spark_table)
    shutil.copytree(base, silt_table)

    def check_files(table, version):
        for add in adds_of(table, version):
            fields = {f.name: f.metadata for f in pq.read_schema(str(table / add["path"]))}
            for name, md in fields.items():
                if name in hidden:
                    assert not md or b"PARQUET:field_id" not in md, (name, md)
                else:
                    assert name in physical, (add["path"], name)
                    assert md[b"PARQUET:field_id"] == str(physical[name]).encode()
            assert hidden <= set(fields), (add["path"], sorted(fields))

    for statement, silt_args in [
            ("UPDATE {t} SET v = 'u' WHERE id IN (1, 3)",
             ["sql", "UPDATE {t} SET v = 'u' WHERE id IN (1, 3)"]),
            ("DELETE FROM {t} WHERE id = 2", ["sql", "DELETE FROM {t} WHERE id = 2"]),
            ("OPTIMIZE {t}", ["optimize", str(silt_table)])]:
        spark4.sql(statement.format(t=f"delta.`{spark_table}`"))
        silt_ok(silt, *[a.format(t=f"delta.`{silt_table}`") for a in silt_args])
        version = max(commits(silt_table))
        check_files(silt_table, version)
        expected = rows_with_row_metadata(spark4, spark_table)
        assert_same_rows(rows_with_row_metadata(spark4, silt_table), expected,
                         f"{statement}: row ids and commit versions", "id")
        assert_same_rows(to_json_rows(read_with_delta_rs(silt_table)),
                         to_json_rows(spark4.read_delta(spark_table)), statement, "id")
        proc = silt_ok(silt, "read", str(silt_table), "--format", "jsonl", "--select",
                       "id, _metadata.row_id AS row_id, "
                       "_metadata.row_commit_version AS row_commit_version")
        ours = {r["id"]: (r["row_id"], r["row_commit_version"])
                for r in map(json.loads, proc.stdout.splitlines())}
        assert ours == {r["id"]: (r["row_id"], r["row_commit_version"]) for r in expected}
