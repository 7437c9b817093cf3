"""Delta 4 writer features silt's streaming sink writes, against Spark 4 +
delta-spark 4 (the module-scoped `spark4` fixture: one Spark 4 JVM for the
module).

Type widening (`delta.enableTypeWidening` + mergeSchema): silt widens
columns at every depth across batches, recording `delta.typeChanges` as
Spark 4 records the same widening; Spark 4 reads silt's table equal at
every version and appends to it; silt reads Spark 4's widened table equal
at every version and appends narrower values to it.
"""

import json

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


def schema_of(table):
    return json.loads(latest_action(table, "metaData")["schemaString"])


def assert_same_at_every_version(spark4, silt, table, key):
    versions = sorted(commits(table))
    for version in versions:
        expected = to_json_rows(spark4.read_delta(table, version=version))
        actual = normalize_silt_rows(read_with_silt(silt, table, "--version", str(version)))
        assert_same_rows(actual, expected, f"{table} version {version}", key)
    return versions


def run_stream(silt, work, name, table, schema, batches, options, transform=None, **sink):
    """Runs a JSON-file job over `batches` (lists of row dicts), one batch
    per file, into `table`; `sink` holds extra sink keys."""
    input_dir = work / f"in-{name}"
    input_dir.mkdir()
    for b, rows in enumerate(batches):
        write_input_file(input_dir / f"b{b:03d}.json", [json.dumps(r) for r in rows])
    job = json_file_job(name, input_dir, table, work / f"ckpt-{name}", schema,
                        max_files_per_trigger=1, transform=transform)
    job["sink"]["options"] = options
    job["sink"].update(sink)
    return silt("run", str(write_job(work / f"{name}.yaml", job)), timeout=300)


# --------------------------------------------------------------------------
# Type widening

NARROW = "id INT, d DATE, x DECIMAL(5,2), f FLOAT, s STRUCT<b: SMALLINT>, arr ARRAY<INT>"
WIDE = ("id BIGINT, d TIMESTAMP_NTZ, x DECIMAL(8,3), f DOUBLE, s STRUCT<b: INT>, "
        "arr ARRAY<BIGINT>")


def narrow_rows(first, n):
    return [[{"id": i, "d": f"2024-01-{i % 28 + 1:02d}", "x": round(i * 1.25, 2), "f": i * 0.5,
              "s": {"b": i}, "arr": [i, -i]} for i in range(first + b * n, first + b * n + n)]
            for b in range(2)]


def wide_rows(first, n):
    return [[{"id": 5_000_000_000 + i, "d": f"2024-02-03T04:05:{i % 60:02d}",
              "x": round(i * 1.125 + 0.001, 3), "f": i * 0.1, "s": {"b": 70_000 + i},
              "arr": [5_000_000_000, i]} for i in range(first + b * n, first + b * n + n)]
            for b in range(2)]


def field_metadata(schema):
    """{dotted field path: metadata} for every struct field, at every depth."""
    out = {}

    def walk(fields, prefix):
        for f in fields:
            path = prefix + f["name"]
            out[path] = f.get("metadata", {})
            t = f["type"]
            if isinstance(t, dict) and t.get("type") == "struct":
                walk(t["fields"], path + ".")

    walk(schema["fields"], "")
    return out


@pytest.fixture(scope="module")
def widened(spark4, tmp_path_factory, silt_bin):
    """silt's table widened across batches, and Spark 4's table widened by
    the same data through mergeSchema (the reference)."""
    import helpers

    work = tmp_path_factory.mktemp("widen")

    def silt(*args, **kwargs):
        return helpers.run_silt(silt_bin, *args, **kwargs)

    ours = work / "ours"
    options = {"delta.enableTypeWidening": "true", "mergeSchema": "true"}
    proc = run_stream(silt, work, "narrow", ours, NARROW, narrow_rows(0, 3), options)
    assert proc.returncode == 0, describe(proc)
    proc = run_stream(silt, work, "wide", ours, WIDE, wide_rows(10, 3), {"mergeSchema": "true"})
    assert proc.returncode == 0, describe(proc)

    theirs = work / "theirs"
    spark4.sql(f"CREATE TABLE delta.`{theirs}` ({NARROW}) USING delta TBLPROPERTIES "
               "('delta.enableTypeWidening'='true', 'delta.feature.timestampNtz'='supported')")
    for name, schema, batches in (("narrow", NARROW, narrow_rows(0, 3)),
                                  ("wide", WIDE, wide_rows(10, 3))):
        spark4.run("""
df = spark.read.schema(schema).json(spark.sparkContext.parallelize(lines))
df.write.format('delta').mode('append').option('mergeSchema', 'true').save(p)
""", p=str(theirs), schema=schema, lines=[json.dumps(r) for b in batches for r in b])
    return work, ours, theirs


def test_silt_records_the_type_changes_spark4_records(widened):
    _, ours, theirs = widened
    assert schema_of(ours)["fields"] == schema_of(theirs)["fields"]
    changes = field_metadata(schema_of(ours))
    assert changes["id"]["delta.typeChanges"] == [{"toType": "long", "fromType": "integer"}]
    assert changes["s.b"]["delta.typeChanges"] == [{"toType": "integer", "fromType": "short"}]
    protocol = latest_action(ours, "protocol")
    assert {"typeWidening", "timestampNtz"} <= set(protocol["readerFeatures"])
    assert {"typeWidening", "timestampNtz"} <= set(protocol["writerFeatures"])
    # The widening is one metaData in the commit of the first wide batch.
    metadata_commits = [v for v, actions in commits(ours).items()
                        if any("metaData" in a for a in actions)]
    assert metadata_commits == [0, 2]


def test_spark4_reads_silts_widened_table_and_appends_to_it(spark4, silt, widened):
    _, ours, _ = widened
    assert len(assert_same_at_every_version(spark4, silt, ours, "id")) == 4
    detail = spark4.sql(f"DESCRIBE DETAIL delta.`{ours}`")[0]
    assert "typeWidening" in detail["tableFeatures"]
    spark4.sql(f"INSERT INTO delta.`{ours}` VALUES (7000000000, TIMESTAMP_NTZ'2025-01-01 00:00:00', "
               "12345.678, 0.25D, named_struct('b', 99999), array(1L))")
    assert_same_at_every_version(spark4, silt, ours, "id")


def test_silt_reads_spark4s_widened_table_and_appends_to_it(spark4, silt, widened):
    work, _, theirs = widened
    assert len(assert_same_at_every_version(spark4, silt, theirs, "id")) == 3
    # Narrower values go into the widened columns as they are.
    proc = run_stream(silt, work, "late", theirs, NARROW, narrow_rows(100, 2), {})
    assert proc.returncode == 0, describe(proc)
    assert_same_at_every_version(spark4, silt, theirs, "id")
    assert spark4.eval(f"spark.read.format('delta').load('{theirs}').count()") == 16


def test_widening_without_the_table_property_is_refused(silt, tmp_path):
    table = tmp_path / "t"
    proc = run_stream(silt, tmp_path, "a", table, "id INT", [[{"id": 1}]], {})
    assert proc.returncode == 0, describe(proc)
    proc = run_stream(silt, tmp_path, "b", table, "id BIGINT", [[{"id": 1}]],
                      {"mergeSchema": "true"})
    assert proc.returncode != 0
    assert "'id' is INT in the table but BIGINT" in proc.stderr
    assert "delta.enableTypeWidening" in proc.stderr


# --------------------------------------------------------------------------
# Generated columns

EVENTS = "id BIGINT, name STRING, event_time TIMESTAMP"
GENERATED = {"event_date": "CAST(event_time AS DATE)", "up": "upper(concat(name, '-', id))"}


def event_rows(first, n, batches=2):
    return [[{"id": i, "name": f"n{i}", "event_time": f"2024-03-{i % 28 + 1:02d}T{i % 24:02d}:30:00Z"}
             for i in range(first + b * n, first + b * n + n)] for b in range(batches)]


def assert_generation_holds(spark4, table):
    """Spark 4 evaluates each generation expression over the table's rows:
    every stored value equals it."""
    expressions = {f["name"]: f["metadata"]["delta.generationExpression"]
                   for f in schema_of(table)["fields"]
                   if "delta.generationExpression" in f.get("metadata", {})}
    assert expressions
    for column, expression in expressions.items():
        bad = spark4.eval("spark.read.format('delta').load(p).where(c).count()", p=str(table),
                          c=f"NOT (`{column}` <=> ({expression}))")
        assert bad == 0, f"{column}: {bad} rows differ from {expression}"
    return expressions


def test_silt_creates_generated_columns_spark4_keeps(spark4, silt, tmp_path):
    table = tmp_path / "gen"
    # The seed's layout: partitioned by the date generated from the time.
    proc = run_stream(silt, tmp_path, "gen", table, EVENTS, event_rows(0, 4), {},
                      generatedColumns=GENERATED, partitionBy=["event_date"])
    assert proc.returncode == 0, describe(proc)
    assert assert_generation_holds(spark4, table) == GENERATED
    detail = spark4.sql(f"DESCRIBE DETAIL delta.`{table}`")[0]
    assert "generatedColumns" in detail["tableFeatures"]
    assert detail["partitionColumns"] == ["event_date"]
    assert (detail["minReaderVersion"], detail["minWriterVersion"]) == (1, 7)
    assert_same_at_every_version(spark4, silt, table, "id")
    # Spark 4 computes the columns on its appends and refuses a wrong value:
    # the constraint is intact.
    spark4.sql(f"INSERT INTO delta.`{table}` (id, name, event_time) "
               "VALUES (100, 'x', TIMESTAMP'2024-05-06 07:08:09')")
    with pytest.raises(Exception) as refused:
        spark4.sql(f"INSERT INTO delta.`{table}` VALUES "
                   "(101, 'y', TIMESTAMP'2024-05-06 07:08:09', DATE'2000-01-01', 'Y-101')")
    assert "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in str(refused.value)
    proc = run_stream(silt, tmp_path, "gen2", table, EVENTS, event_rows(200, 2), {})
    assert proc.returncode == 0, describe(proc)
    assert_generation_holds(spark4, table)
    assert_same_at_every_version(spark4, silt, table, "id")


def test_silt_appends_to_spark4s_generated_columns(spark4, silt, tmp_path):
    table = tmp_path / "theirs"
    spark4.sql(f"CREATE TABLE delta.`{table}` (id BIGINT, name STRING, event_time TIMESTAMP, "
               "event_date DATE GENERATED ALWAYS AS (CAST(event_time AS DATE)), "
               "up STRING GENERATED ALWAYS AS (upper(concat(name, '-', id)))) USING delta")
    spark4.sql(f"INSERT INTO delta.`{table}` (id, name, event_time) "
               "VALUES (1, 'a', TIMESTAMP'2024-01-02 03:04:05')")
    proc = run_stream(silt, tmp_path, "ours", table, EVENTS, event_rows(10, 3), {})
    assert proc.returncode == 0, describe(proc)
    assert_generation_holds(spark4, table)
    assert_same_at_every_version(spark4, silt, table, "id")
    # A query that provides a generated column: right values pass, a wrong
    # one is refused as Spark refuses it, and nothing of the batch lands.
    right = [{"select": ["*", "to_date(event_time) AS event_date"]}]
    proc = run_stream(silt, tmp_path, "right", table, EVENTS, event_rows(50, 2), {},
                      transform=right)
    wrong = [{"select": ["*", "date_add(to_date(event_time), 1) AS event_date"]}]
    assert proc.returncode == 0, describe(proc)
    versions = len(commits(table))
    proc = run_stream(silt, tmp_path, "wrong", table, EVENTS, event_rows(70, 2), {},
                      transform=wrong)
    assert proc.returncode != 0
    assert "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in proc.stderr, describe(proc)
    assert "event_date" in proc.stderr
    assert len(commits(table)) == versions
    assert_generation_holds(spark4, table)
    assert_same_at_every_version(spark4, silt, table, "id")


# --------------------------------------------------------------------------
# Identity columns

IDENTITY = {"id": "GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 5)",
            "k": "generated by default as identity"}


def identity_of(table):
    """{column: identity metadata} from the table's latest schema."""
    return {f["name"]: {k[len("delta.identity."):]: v for k, v in f["metadata"].items()
                        if k.startswith("delta.identity.")}
            for f in schema_of(table)["fields"]
            if any(k.startswith("delta.identity.") for k in f.get("metadata", {}))}


def assert_identity_invariants(spark4, silt, table, key):
    """GENERATED ALWAYS values unique, of the form start + n * step, none
    beyond the high-water mark; silt reads the table as Spark 4 does."""
    assert_same_at_every_version(spark4, silt, table, key)
    rows = to_json_rows(spark4.read_delta(table))
    for column, identity in identity_of(table).items():
        if identity["allowExplicitInsert"]:
            continue
        values = [r[column] for r in rows]
        assert all((v - identity["start"]) % identity["step"] == 0 for v in values)
        assert len(set(values)) == len(values), f"duplicate {column} values"
        extreme = max(values) if identity["step"] > 0 else min(values)
        assert extreme == identity["highWaterMark"]
    return rows


def test_silt_creates_identity_columns_spark4_continues(spark4, silt, tmp_path):
    table = tmp_path / "ident"
    rows = [[{"v": f"b{b}r{r}"} for r in range(4)] for b in range(3)]
    proc = run_stream(silt, tmp_path, "ident", table, "v STRING", rows, {},
                      identityColumns=IDENTITY)
    assert proc.returncode == 0, describe(proc)
    assert identity_of(table) == {
        "id": {"start": 10, "step": 5, "allowExplicitInsert": False, "highWaterMark": 65},
        "k": {"start": 1, "step": 1, "allowExplicitInsert": True, "highWaterMark": 12}}
    detail = spark4.sql(f"DESCRIBE DETAIL delta.`{table}`")[0]
    assert "identityColumns" in detail["tableFeatures"]
    ours = assert_identity_invariants(spark4, silt, table, "v")
    assert sorted(r["id"] for r in ours) == list(range(10, 70, 5))
    # Spark 4 appends beyond silt's high-water mark, silt beyond Spark's.
    spark4.sql(f"INSERT INTO delta.`{table}` (v) VALUES ('s1'), ('s2')")
    proc = run_stream(silt, tmp_path, "ident2", table, "v STRING", [[{"v": "t1"}, {"v": "t2"}]],
                      {})
    assert proc.returncode == 0, describe(proc)
    spark4.sql(f"INSERT INTO delta.`{table}` (v) VALUES ('s3')")
    rows = assert_identity_invariants(spark4, silt, table, "v")
    assert len(rows) == 17
    # OPTIMIZE keeps the values and the mark; Spark continues after it.
    proc = silt("optimize", str(table))
    assert proc.returncode == 0, describe(proc)
    spark4.sql(f"INSERT INTO delta.`{table}` (v) VALUES ('s4')")
    assert len(assert_identity_invariants(spark4, silt, table, "v")) == 18


def test_silt_appends_to_spark4s_identity_columns(spark4, silt, tmp_path):
    table = tmp_path / "theirs"
    spark4.sql(f"CREATE TABLE delta.`{table}` (id BIGINT GENERATED ALWAYS AS IDENTITY "
               "(START WITH -1 INCREMENT BY -3), k BIGINT GENERATED BY DEFAULT AS IDENTITY, "
               "v STRING) USING delta")
    spark4.sql(f"INSERT INTO delta.`{table}` (v) VALUES ('a'), ('b'), ('c')")
    # k given (BY DEFAULT: kept as given), id generated.
    rows = [[{"k": 1000 + b * 10 + r, "v": f"silt{b}.{r}"} for r in range(3)] for b in range(2)]
    proc = run_stream(silt, tmp_path, "ours", table, "k BIGINT, v STRING", rows, {})
    assert proc.returncode == 0, describe(proc)
    spark4.sql(f"INSERT INTO delta.`{table}` (v) VALUES ('d')")
    got = assert_identity_invariants(spark4, silt, table, "v")
    assert sorted(r["k"] for r in got if r["v"].startswith("silt")) == [1000, 1001, 1002, 1010,
                                                                      1011, 1012]
    assert identity_of(table)["id"]["highWaterMark"] == min(r["id"] for r in got)
    # A value for a GENERATED ALWAYS column is refused, as Spark refuses it.
    versions = len(commits(table))
    proc = run_stream(silt, tmp_path, "explicit", table, "id BIGINT, v STRING",
                      [[{"id": 1, "v": "x"}]], {})
    assert proc.returncode != 0
    assert "DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED" in proc.stderr, describe(proc)
    assert len(commits(table)) == versions
