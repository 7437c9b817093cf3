"""silt's writers on Delta tables with generated columns, identity columns,
CHECK constraints and column invariants, against Spark 4 + delta-spark 4
(the module-scoped `spark4` fixture: one Spark 4 JVM for the module).

Each case starts from a table Spark 4 created with the feature; before each
statement silt's table is a byte copy of Spark's, Spark runs the statement
on its table and silt on the copy. Then both hold the same rows (identity
values MERGE generates compared by uniqueness and high-water mark: which
value lands on which row is each engine's choice), the same identity
high-water marks and table properties; a statement Spark refuses, silt
refuses with the same error class (and, for a violated constraint, the same
constraint and values), committing nothing. Afterwards Spark 4 writes silt's
tables without error and its own checks still hold.
"""

import json
import shutil

import pytest

from helpers import (
    assert_same_rows,
    assert_silt_refuses_as_spark,
    commits,
    describe,
    json_file_job,
    last_commit_info,
    latest_action,
    normalized_protocol,
    silt_sql_ok,
    spark_refusal,
    to_json_rows,
    violation_lines,
    write_input_file,
    write_job,
)


def schema_fields(table):
    return {f["name"]: f for f in json.loads(latest_action(table, "metaData")["schemaString"])["fields"]}


def high_water_marks(table):
    return {name: f["metadata"].get("delta.identity.highWaterMark")
            for name, f in schema_fields(table).items() if "delta.identity.start" in f["metadata"]}


def run_both(spark4, silt, spark_table, silt_table, statement):
    """Runs `statement` ({t} = the table) on Spark's table and on a fresh
    copy for silt. Returns Spark's refusal or None; asserts silt agrees."""
    if silt_table.exists():
        shutil.rmtree(silt_table)
    shutil.copytree(spark_table, silt_table)
    versions = sorted(commits(silt_table))
    refusal = spark_refusal(spark4, statement.format(t=f"delta.`{spark_table}`"))
    silt_statement = statement.format(t=f"delta.`{silt_table}`")
    if refusal is None:
        silt_sql_ok(silt, silt_statement)
        return None
    condition, text = refusal
    proc = assert_silt_refuses_as_spark(silt, silt_statement, condition)
    if condition == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES":
        assert violation_lines(proc.stderr) == violation_lines(text), (statement, proc.stderr)
    assert sorted(commits(silt_table)) == versions, statement
    return refusal


def rows(spark4, table, drop=()):
    return [{k: v for k, v in r.items() if k not in drop}
            for r in to_json_rows(spark4.read_delta(table))]


# --------------------------------------------------------------------------
# Generated and identity columns through UPDATE and MERGE


@pytest.fixture(scope="module")
def merge_source(spark4, tmp_path_factory):
    source = tmp_path_factory.mktemp("source") / "s"
    spark4.sql(f"CREATE TABLE delta.`{source}` (k INT, v INT, d INT, id BIGINT) USING delta")
    spark4.sql(f"INSERT INTO delta.`{source}` VALUES (2, 50, 100, 7), (3, 60, 1, 8), "
               "(40, 4, 8, 9), (41, 5, 10, 900), (42, 6, 12, 901)")
    return source


GENERATED_STATEMENTS = [
    # recomputed: d follows v
    "UPDATE {t} SET v = v + 1 WHERE k % 2 = 1",
    # given and right / given and wrong
    "UPDATE {t} SET v = 7, d = 14 WHERE k = 1",
    "UPDATE {t} SET d = 3 WHERE k = 1",
    # identity columns cannot be updated
    "UPDATE {t} SET id = 3 WHERE k = 1",
    # MERGE: updates recompute d, inserts get d and fresh ids
    "MERGE INTO {t} AS t USING delta.`{s}` AS s ON t.k = s.k "
    "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v)",
    # an inserted d that is wrong (row k = 3: 1 <> 120)
    "MERGE INTO {t} AS t USING delta.`{s}` AS s ON t.k = s.k "
    "WHEN NOT MATCHED AND s.k = 40 THEN INSERT (k, v, d) VALUES (s.k, s.v, s.d) "
    "WHEN NOT MATCHED AND s.k = 3 THEN INSERT (k, v, d) VALUES (s.k, s.v, s.d)",
    # an explicit id for a GENERATED ALWAYS identity column
    "MERGE INTO {t} AS t USING delta.`{s}` AS s ON t.k = s.k "
    "WHEN NOT MATCHED THEN INSERT (id, k, v) VALUES (s.id, s.k, s.v)",
    "DELETE FROM {t} WHERE k = 2",
]


@pytest.fixture(scope="module")
def identity_tables(spark4, tmp_path_factory):
    """Spark 4 tables with an identity column (GENERATED ALWAYS and BY
    DEFAULT) and a generated column, 12 rows each."""
    out = {}
    for always in (True, False):
        table = tmp_path_factory.mktemp("identity") / "t"
        t = f"delta.`{table}`"
        kind = "ALWAYS" if always else "BY DEFAULT"
        spark4.sql(f"CREATE TABLE {t} (id BIGINT GENERATED {kind} AS IDENTITY "
                   "(START WITH 10 INCREMENT BY 5), k INT, v INT, "
                   "d INT GENERATED ALWAYS AS (v * 2)) USING delta")
        spark4.sql(f"INSERT INTO {t} (k, v) SELECT id, id * 10 FROM range(0, 12)")
        out[always] = table
    return out


def identity_table(identity_tables, table, always):
    shutil.copytree(identity_tables[always], table)


def check_inserted_ids(spark4, spark_table, silt_table, before, what):
    """Rows equal; ids of rows that existed before equal; new ids unique,
    above the old high-water mark, at most the new one, and the marks
    equal."""
    theirs = rows(spark4, spark_table)
    ours = rows(spark4, silt_table)
    assert_same_rows([{k: v for k, v in r.items() if k != "id"} for r in ours],
                     [{k: v for k, v in r.items() if k != "id"} for r in theirs], what, "k")
    old_ids = {r["k"]: r["id"] for r in before}
    mark_before = high_water_marks(spark_table.parent / "before")["id"] or 0
    for r in ours:
        if r["k"] in old_ids and r["id"] == old_ids[r["k"]]:
            continue
        assert r["id"] > mark_before, (what, r)
        assert (r["id"] - 10) % 5 == 0, (what, r)
    ids = [r["id"] for r in ours]
    assert len(set(ids)) == len(ids), what
    assert high_water_marks(silt_table) == high_water_marks(spark_table), what
    assert max(ids) <= high_water_marks(silt_table)["id"], what


@pytest.mark.parametrize("statement", GENERATED_STATEMENTS,
                         ids=["update", "update_given", "update_wrong", "update_identity",
                              "merge", "merge_wrong", "merge_explicit_id", "delete"])
def test_dml_on_generated_and_identity_columns_as_spark(spark4, silt, tmp_path, merge_source,
                                                        identity_tables, statement):
    spark_table, silt_table = tmp_path / "spark", tmp_path / "silt"
    identity_table(identity_tables, spark_table, always=True)
    shutil.copytree(spark_table, tmp_path / "before")
    before = rows(spark4, spark_table)
    statement = statement.replace("{s}", str(merge_source))
    refusal = run_both(spark4, silt, spark_table, silt_table, statement)
    what = statement.split()[0]
    if refusal is not None:
        return
    check_inserted_ids(spark4, spark_table, silt_table, before, what)
    if statement.startswith("MERGE"):
        assert last_commit_info(silt_table).get("tags") == last_commit_info(spark_table).get("tags")
    if statement.startswith("DELETE"):
        return
    # Spark 4 writes silt's table as its own afterwards: its generated
    # column check passes, its identity values continue after silt's mark.
    spark4.sql(f"INSERT INTO delta.`{silt_table}` (k, v) VALUES (100, 1)")
    spark4.sql(f"UPDATE delta.`{silt_table}` SET v = v + 1")
    after = rows(spark4, silt_table)
    assert all(r["d"] == r["v"] * 2 for r in after)
    assert len({r["id"] for r in after}) == len(after)


def test_merge_by_default_identity_keeps_explicit_values_as_spark(spark4, silt, tmp_path,
                                                                  merge_source, identity_tables):
    spark_table, silt_table = tmp_path / "spark", tmp_path / "silt"
    identity_table(identity_tables, spark_table, always=False)
    shutil.copytree(spark_table, tmp_path / "before")
    before = rows(spark4, spark_table)
    statement = (f"MERGE INTO {{t}} AS t USING delta.`{merge_source}` AS s ON t.k = s.k "
                 "WHEN NOT MATCHED AND s.k = 41 THEN INSERT (id, k, v) VALUES (s.id, s.k, s.v) "
                 "WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v)")
    assert run_both(spark4, silt, spark_table, silt_table, statement) is None
    ours = {r["k"]: r for r in rows(spark4, silt_table)}
    assert ours[41]["id"] == 900  # explicit, kept, not a high-water mark
    check_inserted_ids(spark4, spark_table, silt_table, before, "MERGE BY DEFAULT")


# --------------------------------------------------------------------------
# CHECK constraints: ALTER TABLE ADD / DROP CONSTRAINT, and every writer


@pytest.mark.parametrize("features", [False, True], ids=["legacy_protocol", "table_features"])
def test_add_and_drop_constraint_as_spark(spark4, silt, tmp_path, features):
    spark_table, silt_table = tmp_path / "spark", tmp_path / "silt"
    props = " TBLPROPERTIES ('delta.enableDeletionVectors'='true')" if features else ""
    spark4.sql(f"CREATE TABLE delta.`{spark_table}` (id BIGINT, v INT) USING delta{props}")
    spark4.sql(f"INSERT INTO delta.`{spark_table}` VALUES (1, 5), (2, -1), (3, NULL)")
    statements = [
        ("ADD CONSTRAINT pos CHECK (v > 0)", "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION"),
        ("ADD CONSTRAINT vset CHECK (v IS NULL OR v <> 0)", None),
        ("ADD CONSTRAINT IdPos CHECK (id > 0 AND id < 1000)", None),
        ("ADD CONSTRAINT IDPOS CHECK (id > 1)", "DELTA_CONSTRAINT_ALREADY_EXISTS"),
        ("DROP CONSTRAINT nope", "DELTA_CONSTRAINT_DOES_NOT_EXIST"),
        ("DROP CONSTRAINT IF EXISTS nope", None),
        ("DROP CONSTRAINT VSET", None),
    ]
    for statement, refused in statements:
        full = "ALTER TABLE {t} " + statement
        refusal = run_both(spark4, silt, spark_table, silt_table, full)
        assert (refusal[0] if refusal else None) == refused, (statement, refusal)
        if refused:
            continue
        ours, theirs = last_commit_info(silt_table), last_commit_info(spark_table)
        for key in ("operation", "operationParameters", "isBlindAppend"):
            assert ours[key] == theirs[key], (statement, key, ours[key], theirs[key])
        assert latest_action(silt_table, "metaData")["configuration"] == \
            latest_action(spark_table, "metaData")["configuration"], statement
        assert normalized_protocol(latest_action(silt_table, "protocol")) == \
            normalized_protocol(latest_action(spark_table, "protocol")), statement
    # Spark 4 enforces silt's constraint: a violating insert is refused.
    shutil.rmtree(silt_table)
    shutil.copytree(spark_table, silt_table)
    silt_sql_ok(silt, f"ALTER TABLE delta.`{silt_table}` ADD CONSTRAINT big CHECK (id < 100)")
    assert spark_refusal(spark4, f"INSERT INTO delta.`{silt_table}` VALUES (500, 1)")[0] == \
        "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
    spark4.sql(f"INSERT INTO delta.`{silt_table}` VALUES (50, 1)")
    detail = spark4.sql(f"DESCRIBE DETAIL delta.`{silt_table}`")[0]
    assert "checkConstraints" in detail["tableFeatures"]


@pytest.fixture(scope="module")
def constrained_table(spark4, tmp_path_factory):
    """A Spark 4 table with a generated column and two CHECK constraints."""
    table = tmp_path_factory.mktemp("constrained") / "t"
    t = f"delta.`{table}`"
    spark4.sql(f"CREATE TABLE {t} (k INT, v INT, d INT GENERATED ALWAYS AS (v * 2)) USING delta")
    spark4.sql(f"INSERT INTO {t} (k, v) SELECT id, id + 1 FROM range(0, 10)")
    spark4.sql(f"ALTER TABLE {t} ADD CONSTRAINT pos CHECK (v > 0)")
    spark4.sql(f"ALTER TABLE {t} ADD CONSTRAINT small CHECK (d < 1000 AND k < 100)")
    source = tmp_path_factory.mktemp("constrained") / "s"
    spark4.sql(f"CREATE TABLE delta.`{source}` (k INT, v INT) USING delta")
    spark4.sql(f"INSERT INTO delta.`{source}` VALUES (4, 7), (20, 1), (200, 1)")
    return table, source


CONSTRAINED_STATEMENTS = [
    "UPDATE {t} SET v = v * 10 WHERE k > 5",
    "UPDATE {t} SET v = -v WHERE k = 3",
    "UPDATE {t} SET v = 600 WHERE k = 3",
    "MERGE INTO {t} AS t USING {s} AS s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v "
    "WHEN NOT MATCHED AND s.k < 100 THEN INSERT (k, v) VALUES (s.k, s.v)",
    "MERGE INTO {t} AS t USING {s} AS s "
    "ON t.k = s.k WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v)",
    "DELETE FROM {t} WHERE k < 3",
]


@pytest.mark.parametrize("statement", CONSTRAINED_STATEMENTS,
                         ids=["update", "update_violates", "update_violates_generated_check",
                              "merge", "merge_violates", "delete"])
def test_dml_honours_check_constraints_as_spark(spark4, silt, tmp_path, constrained_table,
                                                statement):
    spark_table, silt_table = tmp_path / "spark", tmp_path / "silt"
    shutil.copytree(constrained_table[0], spark_table)
    statement = statement.replace("{s}", f"delta.`{constrained_table[1]}`")
    refusal = run_both(spark4, silt, spark_table, silt_table, statement)
    if refusal is not None:
        assert refusal[0] == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", refusal
        return
    assert_same_rows(rows(spark4, silt_table), rows(spark4, spark_table), statement, "k")


def test_streaming_sink_honours_check_constraints(spark4, silt, tmp_path, constrained_table):
    table = tmp_path / "t"
    shutil.copytree(constrained_table[0], table)
    versions = sorted(commits(table))
    schema = "k INT, v INT"

    def run(name, batch):
        input_dir = tmp_path / f"in-{name}"
        input_dir.mkdir()
        write_input_file(input_dir / "b0.json", [json.dumps(r) for r in batch])
        job = json_file_job(name, input_dir, table, tmp_path / f"ckpt-{name}", schema)
        return silt("run", str(write_job(tmp_path / f"{name}.yaml", job)), timeout=300)

    proc = run("bad", [{"k": 50, "v": 3}, {"k": 51, "v": -4}])
    assert proc.returncode != 0
    assert "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint pos (v > 0) violated by " \
           "row with values:\n - v : -4" in proc.stderr, proc.stderr
    assert sorted(commits(table)) == versions
    proc = run("good", [{"k": 50, "v": 3}, {"k": 51, "v": 4}])
    assert proc.returncode == 0, describe(proc)
    got = {r["k"]: r for r in rows(spark4, table)}
    assert got[51] == {"k": 51, "v": 4, "d": 8}
    # Spark 4 goes on writing the table under its constraints.
    spark4.sql(f"INSERT INTO delta.`{table}` (k, v) VALUES (60, 1)")
    assert spark_refusal(spark4, f"INSERT INTO delta.`{table}` (k, v) VALUES (61, 0)")[0] == \
        "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"


def test_merge_sink_honours_identity_generated_and_constraints(spark4, silt, tmp_path,
                                                               constrained_table, identity_tables):
    """The streaming merge sink (mode: merge, through the same MERGE):
    identity values and generated columns filled, a constraint violation
    fails the batch without a commit."""
    def run(name, table, batch, whens):
        input_dir = tmp_path / f"in-{name}"
        input_dir.mkdir()
        write_input_file(input_dir / "b0.json", [json.dumps(r) for r in batch])
        job = json_file_job(name, input_dir, table, tmp_path / f"ckpt-{name}", "k INT, v INT")
        job["sink"]["mode"] = "merge"
        job["sink"].pop("outputMode", None)
        job["sink"]["merge"] = dict({"on": "t.k = s.k"}, **whens)
        return silt("run", str(write_job(tmp_path / f"{name}.yaml", job)), timeout=300)

    whens = {"whenMatched": [{"action": "update", "set": {"v": "s.v"}}],
             "whenNotMatched": [{"action": "insert", "values": {"k": "s.k", "v": "s.v"}}]}
    table = tmp_path / "identity"
    shutil.copytree(identity_tables[True], table)
    mark = high_water_marks(table)["id"]
    proc = run("ident", table, [{"k": 1, "v": 5}, {"k": 70, "v": 7}, {"k": 71, "v": 8}], whens)
    assert proc.returncode == 0, describe(proc)
    got = {r["k"]: r for r in rows(spark4, table)}
    assert got[1]["v"] == 5 and got[1]["d"] == 10
    assert got[70]["d"] == 14 and got[71]["d"] == 16
    new_ids = sorted([got[70]["id"], got[71]["id"]])
    assert new_ids == [mark + 5, mark + 10]
    assert high_water_marks(table)["id"] == mark + 10
    assert len({r["id"] for r in got.values()}) == len(got)

    table = tmp_path / "constrained"
    shutil.copytree(constrained_table[0], table)
    versions = sorted(commits(table))
    proc = run("bad", table, [{"k": 2, "v": -3}], whens)
    assert proc.returncode != 0
    assert "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint pos (v > 0)" in proc.stderr
    assert sorted(commits(table)) == versions
