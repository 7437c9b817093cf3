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
    describe,
    json_file_job,
    log_dir,
    normalize_silt_rows,
    read_with_silt,
    to_json_rows,
    write_input_file,
    write_job,
)


def commits(table):
    """Each commit file's actions: {version: [action dicts]}."""
    out = {}
    for path in sorted(log_dir(table).glob("*.json")):
        if path.stem.isdigit():
            out[int(path.stem)] = [json.loads(line) for line in path.read_text().splitlines()
                                   if line.strip()]
    return out


def latest(table, action):
    """The last `action` (metaData, protocol) of the table's commits."""
    found = None
    for _, actions in sorted(commits(table).items()):
        for a in actions:
            if action in a:
                found = a[action]
    return found


def schema_of(table):
    return json.loads(latest(table, "metaData")["schemaString"])


def assert_same_at_every_version(spark4, silt, table, key):
    versions = sorted(commits(table))
    for version in versions:
        expected = to_json_rows(spark4.read_delta(table, version=version))
        actual = normalize_silt_rows(read_with_silt(silt, table, "--version", str(version)))
        assert_same_rows(actual, expected, f"{table} version {version}", key)
    return versions


def run_stream(silt, work, name, table, schema, batches, options, **sink):
    """Runs a JSON-file job over `batches` (lists of row dicts), one batch
    per file, into `table`."""
    input_dir = work / f"in-{name}"
    input_dir.mkdir()
    for b, rows in enumerate(batches):
        write_input_file(input_dir / f"b{b:03d}.json", [json.dumps(r) for r in rows])
    job = json_file_job(name, input_dir, table, work / f"ckpt-{name}", schema,
                        max_files_per_trigger=1)
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
    protocol = latest(ours, "protocol")
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
