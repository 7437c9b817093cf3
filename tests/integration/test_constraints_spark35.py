"""silt's writers on Delta tables with CHECK constraints and column
invariants that the seed's engine created, against pyspark 3.5 +
delta-spark 3.2 (the session-scoped `spark` fixture; decision 122 measured
the same rules against Spark 4 in test_delta4_constraints.py).

Spark 3.5 creates each table and its rules; silt writes a byte copy of it
(the streaming Delta sink, `silt sql` UPDATE and MERGE) while Spark writes
the same rows to its own copy. Rows that satisfy the rules go in and both
copies then read equal in Spark 3.5; a row that violates one is refused by
both with `DELTA_VIOLATE_CONSTRAINT_WITH_VALUES` naming the same constraint
and the same `- column : value` lines, and silt commits nothing.
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
    read_with_spark,
    silt_sql_ok,
    spark_refusal,
    to_json_rows,
    violation_lines,
    write_input_file,
    write_job,
)

SCHEMA = "k INT, v INT, s STRUCT<a: INT, b: STRING>, note STRING"
STRUCT_COLUMNS = ("s", "p")


def without_invariant_name(lines):
    """violation_lines without the constraint's name: Spark 3.5 names an
    invariant EXPRESSION(<its unresolved Catalyst expression>), e.g.
    `EXPRESSION(('x > 0))`, silt `EXPRESSION(x > 0)` (see
    test_invariant_named_as_spark35)."""
    if lines and lines[0].startswith("CHECK constraint EXPRESSION("):
        shown = lines[0].rsplit(" violated by", 1)[0]
        depth, i = 0, len("CHECK constraint ")
        for i in range(len("CHECK constraint "), len(shown)):
            depth += {"(": 1, ")": -1}.get(shown[i], 0)
            if depth == 0 and shown[i] == ")":
                break
        lines = ["CHECK constraint <invariant>" + lines[0][i + 1:]] + lines[1:]
    return [struct_value_hidden(line) for line in lines]


def struct_value_hidden(line):
    """Spark 3.5 shows the value of a struct column a constraint reads as
    its internal UnsafeRow (`- s : [0,96,1800000001,71]`), silt as Spark 4
    does (`- s : {150, q}`); the line must be there, its value is not
    compared. The nested fields' own lines (`- s.a : 150`) are."""
    for column in STRUCT_COLUMNS:
        if line.startswith(f"- {column} : "):
            return f"- {column} : <struct>"
    return line


def rows(spark, table):
    return to_json_rows(read_with_spark(spark, table))


def spark_append(spark, table, batch, schema):
    """Spark 3.5 appends `batch` (JSON rows) with a DataFrame write; returns
    its refusal (error class, message) or None."""
    df = spark.read.schema(schema).json(spark.sparkContext.parallelize(
        [json.dumps(r) for r in batch], 1))
    try:
        df.write.format("delta").mode("append").save(str(table))
    except Exception as e:  # pyspark's AnalysisException / Py4JJavaError
        text = str(e)
        for condition in ("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES",
                          "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"):
            if f"[{condition}]" in text:
                return condition, text
        raise
    return None


def silt_append(silt, tmp_path, name, table, batch, schema):
    input_dir = tmp_path / f"in-{name}"
    input_dir.mkdir()
    write_input_file(input_dir / "b0.json", [json.dumps(r) for r in batch])
    job = json_file_job(name, input_dir, table, tmp_path / f"ckpt-{name}", schema)
    return silt("run", str(write_job(tmp_path / f"{name}.yaml", job)), timeout=300)


def append_both(spark, silt, tmp_path, origin, name, batch, schema):
    """Spark appends `batch` to a copy of `origin`, silt's streaming sink to
    another; asserts they agree. Returns (Spark's copy, silt's copy,
    refusal or None)."""
    spark_table, silt_table = tmp_path / f"spark-{name}", tmp_path / f"silt-{name}"
    shutil.copytree(origin, spark_table)
    shutil.copytree(origin, silt_table)
    versions = sorted(commits(silt_table))
    refusal = spark_append(spark, spark_table, batch, schema)
    proc = silt_append(silt, tmp_path, name, silt_table, batch, schema)
    if refusal is None:
        assert proc.returncode == 0, describe(proc)
        assert_same_rows(rows(spark, silt_table), rows(spark, spark_table), name, "k")
        assert len(commits(silt_table)) == len(versions) + 1
    else:
        assert proc.returncode != 0, (name, refusal)
        assert f"[{refusal[0]}]" in proc.stderr, (name, refusal[0], proc.stderr)
        assert without_invariant_name(violation_lines(proc.stderr)) == \
            without_invariant_name(violation_lines(refusal[1])), (name, proc.stderr, refusal[1])
        assert sorted(commits(silt_table)) == versions, name
        assert sorted(commits(spark_table)) == versions, name
    return spark_table, silt_table, refusal


def run_both(spark, silt, origin, tmp_path, name, statement):
    """`silt sql` and Spark 3.5 run `statement` ({t} = the table) on copies
    of `origin`; asserts they agree. Returns Spark's refusal or None."""
    spark_table, silt_table = tmp_path / f"spark-{name}", tmp_path / f"silt-{name}"
    shutil.copytree(origin, spark_table)
    shutil.copytree(origin, silt_table)
    versions = sorted(commits(silt_table))
    refusal = spark_refusal(spark, statement.format(t=f"delta.`{spark_table}`"))
    silt_statement = statement.format(t=f"delta.`{silt_table}`")
    if refusal is None:
        silt_sql_ok(silt, silt_statement)
        assert_same_rows(rows(spark, silt_table), rows(spark, spark_table), name, "k")
        return None
    proc = assert_silt_refuses_as_spark(silt, silt_statement, refusal[0])
    assert without_invariant_name(violation_lines(proc.stderr)) == \
        without_invariant_name(violation_lines(refusal[1])), (name, proc.stderr, refusal[1])
    assert sorted(commits(silt_table)) == versions, name
    return refusal


# --------------------------------------------------------------------------
# CHECK constraints (ALTER TABLE ... ADD CONSTRAINT in Spark 3.5)


@pytest.fixture(scope="module")
def checked(spark, tmp_path_factory):
    """A Spark 3.5 table with three CHECK constraints: `pos` (a NULL v
    violates it), `nested` on a nested field (a NULL struct passes, a NULL
    field of a non-NULL struct does not) and `short` (NULL-tolerant), and a
    MERGE source (JSON lines)."""
    base = tmp_path_factory.mktemp("checked")
    table = base / "t"
    t = f"delta.`{table}`"
    spark.sql(f"CREATE TABLE {t} ({SCHEMA}) USING delta")
    spark.sql(f"INSERT INTO {t} VALUES (1, 5, named_struct('a', 1, 'b', 'x'), 'ok'), "
              "(2, 6, named_struct('a', 2, 'b', NULL), NULL), "
              "(3, 7, named_struct('a', 3, 'b', 'c'), 'abc')")
    spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT pos CHECK (v > 0)")
    spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT nested CHECK (s IS NULL OR s.a < 100)")
    spark.sql(f"ALTER TABLE {t} ADD CONSTRAINT short CHECK (note IS NULL OR length(note) < 5)")
    source = base / "source.json"
    source.write_text("".join(json.dumps(r) + "\n" for r in [
        {"k": 2, "v": 60, "a": 20, "note": "n2"},
        {"k": 10, "v": 1, "a": 5, "note": "n10"},
        {"k": 11, "v": -1, "a": 5, "note": "n11"},
        {"k": 12, "v": 3, "a": 500, "note": None},
        {"k": 13, "v": 3, "a": 5, "note": "too long"},
    ]))
    return table, source


APPENDS = {
    "satisfy": [{"k": 10, "v": 1, "s": {"a": 99, "b": "y"}, "note": "abcd"},
                {"k": 11, "v": 2, "s": None, "note": None},
                {"k": 12, "v": 3, "s": None, "note": "z"}],
    "violate_plain": [{"k": 10, "v": 1, "note": "a"}, {"k": 11, "v": -4, "note": "b"}],
    "violate_null": [{"k": 10, "v": 1}, {"k": 11, "s": {"a": 1}}],
    "violate_nested": [{"k": 10, "v": 1, "s": {"a": 150, "b": "q"}}],
    "violate_nested_null": [{"k": 10, "v": 1, "s": {"b": "q"}}],
    "violate_null_sensitive": [{"k": 10, "v": 1, "note": "toolong"}],
}


@pytest.mark.parametrize("name", list(APPENDS))
def test_streaming_sink_honours_spark35_check_constraints(spark, silt, tmp_path, checked, name):
    batch = APPENDS[name]
    _, silt_table, refusal = append_both(spark, silt, tmp_path, checked[0], name, batch, SCHEMA)
    assert (refusal is None) == (name == "satisfy"), refusal
    if refusal is None:
        # Spark 3.5 goes on writing silt's table under its constraints.
        assert spark_append(spark, silt_table, [{"k": 20, "v": 1}], SCHEMA) is None
        assert spark_append(spark, silt_table, [{"k": 21, "v": 0}], SCHEMA)[0] == \
            "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"


DML = {
    "update": "UPDATE {t} SET v = v + 10, s.a = 50 WHERE k = 2",
    "update_violate_plain": "UPDATE {t} SET v = v - 5 WHERE k >= 1",
    "update_violate_null": "UPDATE {t} SET v = NULL WHERE k = 3",
    "update_violate_nested": "UPDATE {t} SET s.a = 100 WHERE k = 1",
    "update_violate_null_sensitive": "UPDATE {t} SET note = concat(note, 'defg') WHERE k = 3",
    "update_null_passes": "UPDATE {t} SET note = NULL, s = NULL WHERE k = 1",
    "merge": "MERGE INTO {t} AS t USING json.`{src}` AS s ON t.k = s.k "
             "WHEN MATCHED THEN UPDATE SET v = s.v, t.s.a = s.a "
             "WHEN NOT MATCHED AND s.k = 10 THEN INSERT (k, v, s, note) "
             "VALUES (s.k, s.v, named_struct('a', s.a, 'b', 'm'), s.note)",
    "merge_violate_plain": "MERGE INTO {t} AS t USING json.`{src}` AS s ON t.k = s.k "
                           "WHEN NOT MATCHED AND s.k IN (10, 11) THEN INSERT (k, v) "
                           "VALUES (s.k, s.v)",
    "merge_violate_nested": "MERGE INTO {t} AS t USING json.`{src}` AS s ON t.k = s.k "
                            "WHEN NOT MATCHED AND s.k = 12 THEN INSERT (k, v, s) "
                            "VALUES (s.k, s.v, named_struct('a', s.a, 'b', 'm'))",
    "merge_violate_null_sensitive": "MERGE INTO {t} AS t USING json.`{src}` AS s ON t.k = s.k "
                                    "WHEN NOT MATCHED AND s.k = 13 THEN INSERT (k, v, note) "
                                    "VALUES (s.k, s.v, s.note)",
}


@pytest.mark.parametrize("name", list(DML))
def test_sql_dml_honours_spark35_check_constraints(spark, silt, tmp_path, checked, name):
    statement = DML[name]
    table, source = checked
    spark_statement = statement.replace("json.`{src}`", f"json.`{source}`")
    refusal = run_both(spark, silt, table, tmp_path, name, spark_statement)
    assert (refusal is None) == ("violate" not in name), refusal
    if refusal is not None:
        assert refusal[0] == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", refusal


@pytest.mark.parametrize("name,statement", [
    ("add_violated", "ALTER TABLE {t} ADD CONSTRAINT nn CHECK (s.a < 3)"),
    ("add", "ALTER TABLE {t} ADD CONSTRAINT nn CHECK (s.a < 100 AND s.b IS NOT NULL OR k = 2)"),
])
def test_add_constraint_on_spark35_table(spark, silt, tmp_path, checked, name, statement):
    """ADD CONSTRAINT on a nested field of Spark 3.5's table: refused
    when a row violates it, else Spark enforces silt's constraint."""
    refusal = run_both(spark, silt, checked[0], tmp_path, name, statement)
    assert (refusal[0] if refusal else None) == \
        ("DELTA_NEW_CHECK_CONSTRAINT_VIOLATION" if "violated" in name else None)
    if refusal is None:
        assert spark_append(spark, tmp_path / f"silt-{name}", [{"k": 9, "v": 1, "s": {"a": 100}}],
                            SCHEMA)[0] == "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"


# --------------------------------------------------------------------------
# Column invariants (delta.invariants field metadata, writer version 2)


def invariant(expression):
    return {"delta.invariants": json.dumps({"expression": {"expression": expression}})}


@pytest.fixture(scope="module")
def invariant_table(spark, tmp_path_factory):
    """A table Spark 3.5 writes from a DataFrame whose schema carries
    delta.invariants on `x` (top level) and on `p.q` (a nested field)."""
    from pyspark.sql.types import IntegerType, StructField, StructType

    table = tmp_path_factory.mktemp("invariants") / "t"
    schema = StructType([
        StructField("k", IntegerType()),
        StructField("x", IntegerType(), True, invariant("x > 0")),
        StructField("p", StructType([
            StructField("q", IntegerType(), True, invariant("p.q < 10"))])),
    ])
    spark.createDataFrame([(1, 5, (1,)), (2, 6, (3,))], schema) \
        .write.format("delta").save(str(table))
    fields = {f["name"]: f for f in json.loads(
        next(json.loads(line)["metaData"] for line in (table / "_delta_log" / (
            "0" * 20 + ".json")).read_text().splitlines()
            if "metaData" in json.loads(line))["schemaString"])["fields"]}
    assert "delta.invariants" in fields["x"]["metadata"], fields
    return table


INVARIANT_SCHEMA = "k INT, x INT, p STRUCT<q: INT>"
INVARIANT_APPENDS = {
    "satisfy": [{"k": 10, "x": 1, "p": {"q": 9}}, {"k": 11, "x": 2, "p": {"q": -5}}],
    "violate_null_field": [{"k": 12, "x": 3, "p": {}}],
    "violate_null_struct": [{"k": 12, "x": 3}],
    "violate": [{"k": 10, "x": 1, "p": {"q": 1}}, {"k": 11, "x": -1, "p": {"q": 1}}],
    "violate_null": [{"k": 10, "p": {"q": 1}}],
    "violate_nested": [{"k": 10, "x": 1, "p": {"q": 10}}],
}


@pytest.mark.parametrize("name", list(INVARIANT_APPENDS))
def test_streaming_sink_honours_spark35_invariants(spark, silt, tmp_path, invariant_table, name):
    _, _, refusal = append_both(spark, silt, tmp_path, invariant_table, name,
                                INVARIANT_APPENDS[name], INVARIANT_SCHEMA)
    assert (refusal is None) == (name == "satisfy"), refusal


@pytest.mark.parametrize("name,statement", [
    ("update", "UPDATE {t} SET x = x + 1, p.q = 3"),
    ("update_violate", "UPDATE {t} SET x = 0 WHERE k = 2"),
    ("update_violate_nested", "UPDATE {t} SET p.q = 20 WHERE k = 1"),
])
def test_sql_update_honours_spark35_invariants(spark, silt, tmp_path, invariant_table, name,
                                               statement):
    refusal = run_both(spark, silt, invariant_table, tmp_path, name, statement)
    assert (refusal is None) == ("violate" not in name), refusal


@pytest.mark.xfail(strict=True, reason="Spark 3.5 names an invariant EXPRESSION(<Catalyst's "
                   "toString of the unresolved expression>), `EXPRESSION(('x > 0))`, "
                   "`EXPRESSION(('p.q < 10))`; silt prints EXPRESSION(x > 0)")
def test_invariant_named_as_spark35(spark, silt, tmp_path, invariant_table):
    batch = [{"k": 11, "x": -1, "p": {"q": 1}}]
    table = tmp_path / "t"
    shutil.copytree(invariant_table, table)
    refusal = spark_append(spark, table, batch, INVARIANT_SCHEMA)
    proc = silt_append(silt, tmp_path, "named", table, batch, INVARIANT_SCHEMA)
    assert violation_lines(proc.stderr) == violation_lines(refusal[1])


def test_first_violating_row_reported_as_spark35(spark, silt, tmp_path, checked):
    """Several rows violate different constraints: both engines report the
    first row (one input file, so one order), naming the rule it violates.
    Row 10 violates `nested` (the second constraint), row 11 `pos` (the
    first)."""
    batch = [{"k": 10, "v": 1, "s": {"a": 150}}, {"k": 11, "v": -1}]
    _, _, refusal = append_both(spark, silt, tmp_path, checked[0], "order", batch, SCHEMA)
    assert violation_lines(refusal[1])[0].startswith("CHECK constraint nested "), refusal
