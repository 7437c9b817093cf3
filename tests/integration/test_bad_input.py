"""Bad records never stop a PERMISSIVE query nor disappear; FAILFAST stops
naming the file and line; bad job files fail before any work with exit code
2 and a message that names what is wrong; bad data met while a batch runs
exits 3 (docs/cli.md) with the batch left to re-run."""

import json

import pytest

from helpers import (
    checkpoint_batches,
    describe,
    json_file_job,
    read_with_deltalake,
    read_with_silt,
    write_input_file,
    write_job,
)

SCHEMA = "id BIGINT, name STRING, score DOUBLE, _corrupt_record STRING"

GOOD = [
    '{"id": 1, "name": "one", "score": 1.5}',
    '{"id": 6, "name": "six", "score": 6}',
    '{"id": 8, "name": null}',
]
MALFORMED = [
    '{"id": 2, "name": "truncated"',
    "this is not json",
    "42",
    '{"id": 5, "name": "bad escape \\q"}',
]
WRONG_TYPED = [
    '{"id": "three", "name": "string id", "score": 3.0}',
    '{"id": 4, "name": "text score", "score": "high"}',
]


def permissive_job(work, input_dir):
    return write_job(work / "job.yaml", json_file_job(
        "bad-records", input_dir, work / "table", work / "checkpoint", schema=SCHEMA,
        mode="PERMISSIVE", corrupt_column="_corrupt_record"))


def test_permissive_keeps_every_line_and_marks_corrupt_ones(silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    lines = GOOD[:2] + MALFORMED[:2] + WRONG_TYPED + MALFORMED[2:] + GOOD[2:]
    write_input_file(input_dir / "a.json", lines[:5])
    write_input_file(input_dir / "b.json", lines[5:])
    proc = silt("run", permissive_job(work, input_dir))
    assert proc.returncode == 0, describe(proc)

    rows = read_with_silt(silt, work / "table")
    assert len(rows) == len(lines), "every input line must become exactly one row"
    assert read_with_deltalake(work / "table").num_rows == len(lines)

    by_raw = {r["_corrupt_record"]: r for r in rows if "_corrupt_record" in r}
    for line in MALFORMED:
        assert line in by_raw, f"malformed line not kept in _corrupt_record: {line}"
        assert set(by_raw[line]) == {"_corrupt_record"}, by_raw[line]
    good = {r["id"]: r for r in rows if "_corrupt_record" not in r}
    assert good[1] == {"id": 1, "name": "one", "score": 1.5}
    assert good[6] == {"id": 6, "name": "six", "score": 6.0}
    assert good[8] == {"id": 8}

    # A field of the wrong type is NULL; the rest of the record is kept and,
    # as in Spark 3.5 (partial results), the raw line is in _corrupt_record.
    string_id = by_raw.get(WRONG_TYPED[0])
    assert string_id is not None, rows
    assert "id" not in string_id and string_id["name"] == "string id"
    assert string_id["score"] == 3.0
    text_score = by_raw.get(WRONG_TYPED[1])
    assert text_score is not None, rows
    assert text_score["id"] == 4 and "score" not in text_score


def test_failfast_stops_at_the_first_malformed_line_naming_file_and_line(silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    bad_file = write_input_file(input_dir / "events.json", GOOD[:2] + [MALFORMED[0]] + GOOD[2:])
    job = write_job(work / "job.yaml", json_file_job(
        "failfast", input_dir, work / "table", work / "checkpoint",
        schema="id BIGINT, name STRING, score DOUBLE", mode="FAILFAST"))
    proc = silt("run", job)
    assert proc.returncode == 3, describe(proc)  # a data error, not a bad job
    errors = [line for line in proc.stderr.splitlines() if line.startswith("silt: error:")]
    assert len(errors) == 1, describe(proc)
    assert str(bad_file) in errors[0]
    assert "line 3" in errors[0]
    # Nothing of the failed batch was committed.
    log = work / "table" / "_delta_log"
    assert not log.exists() or not any(log.glob("*.json"))


# Lines Spark's JSON parser fails on besides malformed ones: a field of the
# wrong type or out of its type's range.
MODE_LINES = [
    '{"id": 1, "n": 5, "s": "a"}',
    '{"id": "three", "n": 5, "s": "b"}',
    '{"id": 4, "n": 3000000000, "s": "c"}',
    '{"id": 5, "n": 1.5, "s": "d"}',
    '{"id": 6, "n": "7", "s": "e"}',
    '{"id": 7, "n": true, "s": 8}',
    '{"id": 8, "n": null, "s": {"x": 1}}',
    '{"id": 9, "n": 2, "s": "f", "extra": 1}',
    'not json',
    '{"id": 10, "n": "", "s": "g"}',
]
MODE_SCHEMA = "id BIGINT, n INT, s STRING, _corrupt_record STRING"


def spark_rows_or_error(spark, path, mode):
    try:
        rows = spark.read.schema(MODE_SCHEMA).option("mode", mode).json(str(path)).collect()
    except Exception as e:  # noqa: BLE001 - pyspark wraps the JVM error
        return "error", str(e)
    return "rows", sorted(json.dumps({k: v for k, v in r.asDict().items() if v is not None},
                                     sort_keys=True) for r in rows)


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED", "FAILFAST"])
def test_parse_modes_treat_wrong_typed_fields_as_pyspark_does(silt, work, spark, mode):
    input_dir = work / "in"
    input_dir.mkdir()
    bad_file = write_input_file(input_dir / "events.json", MODE_LINES)
    want_kind, want = spark_rows_or_error(spark, bad_file, mode)
    job = write_job(work / "job.yaml", json_file_job(
        "modes", input_dir, work / "table", work / "checkpoint", schema=MODE_SCHEMA, mode=mode,
        corrupt_column="_corrupt_record"))
    proc = silt("run", job)
    if want_kind == "error":
        assert "FAILFAST" in want, want
        assert proc.returncode != 0, describe(proc)
        # The first line Spark fails on is line 2: "three" for a BIGINT.
        assert f"{bad_file}' at line 2" in proc.stderr, describe(proc)
        return
    assert proc.returncode == 0, describe(proc)
    got = sorted(json.dumps(r, sort_keys=True) for r in read_with_silt(silt, work / "table"))
    assert got == want


def valid_job(work, input_dir):
    return json_file_job("valid", input_dir, work / "table", work / "checkpoint",
                         schema="id BIGINT, name STRING")


def with_unknown_sink_key(job):
    job["sink"]["partitonBy"] = ["name"]
    return job, ["sink.partitonBy"]


def with_unknown_top_level_key(job):
    job["triger"] = {"availableNow": True}
    return job, ["triger"]


def with_bad_expression(job):
    job["transform"] = [{"select": ["id", "CAST(name AS INT AS n"]}]
    return job, ["CAST(name AS INT AS n", "position", "transform[0].select[1]"]


def with_unknown_column(job):
    job["transform"] = [{"select": ["id", "upper(no_such_column) AS u"]}]
    return job, ["no_such_column"]


def with_bad_ddl_type(job):
    job["source"]["schema"] = "id BIGINT, name STRNG"
    return job, ["STRNG"]


def with_misspelled_source_option(job):
    # Spark ignores the typo and silently reads everything at once.
    job["source"]["options"]["maxFilesPerTriger"] = 1
    return job, ["source.options.maxFilesPerTriger", "did you mean maxFilesPerTrigger?"]


def with_unimplemented_spark_option(job):
    job["source"]["options"]["multiLine"] = True
    return job, ["source.options.multiLine", "not supported"]


def with_misspelled_sink_option(job):
    job["sink"]["options"] = {"mergeSchem": True}
    return job, ["sink.options.mergeSchem", "did you mean mergeSchema?"]


def with_bad_output_mode(job):
    job["sink"]["outputMode"] = "upsert"
    return job, ["sink.outputMode", "upsert"]


def with_unknown_partition_column(job):
    job["sink"]["partitionBy"] = ["nmae"]
    return job, ["sink.partitionBy", "nmae"]


def with_bad_compression(job):
    job["sink"]["options"] = {"compression": "snapy"}
    return job, ["sink.options.compression", "snapy"]


def with_complete_mode_without_aggregation(job):
    job["sink"]["outputMode"] = "complete"
    return job, ["sink.outputMode", "Complete output mode not supported"]


def with_bad_watermark_column(job):
    job["transform"] = [{"withWatermark": {"eventTime": "nope", "delayThreshold": "1 minute"}}]
    return job, ["transform[0].withWatermark.eventTime", "nope"]


def with_bad_trigger(job):
    job["trigger"] = {"processingTime": "soon"}
    return job, ["trigger", "soon"]


@pytest.mark.parametrize("mutate", [
    with_misspelled_source_option,
    with_unimplemented_spark_option,
    with_misspelled_sink_option,
    with_unknown_sink_key,
    with_bad_output_mode,
    with_unknown_partition_column,
    with_bad_compression,
    with_complete_mode_without_aggregation,
    with_bad_watermark_column,
    with_bad_trigger,
    with_unknown_top_level_key,
    with_bad_expression,
    with_unknown_column,
    with_bad_ddl_type,
], ids=lambda f: f.__name__)
def test_bad_job_file_fails_before_any_work_with_exit_code_2(silt, work, mutate):
    input_dir = work / "in"
    input_dir.mkdir()
    write_input_file(input_dir / "a.json", [json.dumps({"id": 1, "name": "x"})])
    job, expected_parts = mutate(valid_job(work, input_dir))
    path = write_job(work / "bad.yaml", job)
    proc = silt("run", path)
    assert proc.returncode == 2, describe(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("silt: error:")]
    assert len(errors) == 1, describe(proc)
    for part in expected_parts:
        assert part in errors[0], f"{part!r} not named in: {errors[0]}"
    assert not (work / "table").exists(), "the table was created before the job was validated"
    assert not (work / "checkpoint").exists(), "the checkpoint was created before validation"


def test_duplicate_yaml_key_fails_naming_both_lines(silt, work):
    path = work / "dup.yaml"
    path.write_text(f"""source:
  format: json
  schema: 'id BIGINT'
  options:
    path: {work / 'in'}
    maxFilesPerTrigger: 1
    maxFilesPerTrigger: 5
sink: {{format: delta, path: {work / 'table'}}}
checkpointLocation: {work / 'checkpoint'}
""")
    proc = silt("run", path)
    assert proc.returncode == 2, describe(proc)
    assert f"{path}:7: source.options.maxFilesPerTrigger: duplicate key (first set at line 6)" \
        in proc.stderr, describe(proc)
    assert not (work / "checkpoint").exists()


def test_job_file_that_is_not_yaml_names_the_file(silt, work):
    path = work / "broken.yaml"
    path.write_text("name: x\nsource: [unclosed\n")
    proc = silt("run", path)
    assert proc.returncode == 2, describe(proc)
    assert str(path) in proc.stderr


def test_missing_job_file_is_reported(silt, work):
    proc = silt("run", work / "nope.yaml")
    assert proc.returncode != 0
    assert proc.stderr.startswith("silt: error:")
    assert "nope.yaml" in proc.stderr



@pytest.mark.parametrize("change, expected_parts", [
    ({"schema": "id STRING, name STRING"}, ["id", "STRING", "BIGINT"]),
    ({"partition_by": ["id"]}, ["sink.partitionBy", "differs from the partition columns"]),
], ids=["column-type", "partitioning"])
def test_job_that_does_not_fit_the_existing_table_fails_before_any_work(
        silt, work, change, expected_parts):
    # The table check is a job check: it runs before the checkpoint exists
    # (it used to run in the first batch, after offsets/0 was written).
    input_dir = work / "in"
    input_dir.mkdir()
    write_input_file(input_dir / "a.json", [json.dumps({"id": 1, "name": "x"})])
    first = json_file_job("first", input_dir, work / "table", work / "cp-first",
                          schema="id BIGINT, name STRING", partition_by=["name"])
    assert silt("run", write_job(work / "first.yaml", first)).returncode == 0
    args = {"schema": "id BIGINT, name STRING", "partition_by": ["name"], **change}
    job = json_file_job("second", input_dir, work / "table", work / "cp-second", **args)
    proc = silt("run", write_job(work / "second.yaml", job))
    assert proc.returncode == 2, describe(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("silt: error:")]
    assert len(errors) == 1, describe(proc)
    for part in expected_parts:
        assert part in errors[0], f"{part!r} not named in: {errors[0]}"
    assert not (work / "cp-second").exists(), "the checkpoint was created before validation"


def with_ansi_cast_failure(work, input_dir):
    write_input_file(input_dir / "a.json", [json.dumps({"id": 1, "name": "12"}),
                                            json.dumps({"id": 2, "name": "twelve"})])
    job = json_file_job("ansi", input_dir, work / "table", work / "checkpoint",
                        schema="id BIGINT, name STRING",
                        transform=[{"select": ["id", "CAST(name AS INT) AS n"]}])
    job["ansi"] = True
    return job, ["twelve", "CAST"]


def with_not_null_violation(work, input_dir):
    import deltalake  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
    deltalake.write_deltalake(str(work / "table"), pa.table({"id": [0], "name": ["z"]},
                                                            schema=schema))
    write_input_file(input_dir / "a.json", [json.dumps({"name": "no id"})])
    job = json_file_job("notnull", input_dir, work / "table", work / "checkpoint",
                        schema="id BIGINT, name STRING")
    return job, ["NOT NULL constraint violated for column 'id'"]


def with_nul_in_partition_value(work, input_dir):
    write_input_file(input_dir / "a.json", [json.dumps({"id": 1, "name": "ok"}),
                                            json.dumps({"id": 2, "name": "a\u0000b"})])
    job = json_file_job("nul", input_dir, work / "table", work / "checkpoint",
                        schema="id BIGINT, name STRING", partition_by=["name"])
    return job, ["partition column 'name'", "row 1", "NUL byte"]


def with_over_long_partition_value(work, input_dir):
    write_input_file(input_dir / "a.json", [json.dumps({"id": 1, "name": "n" * 300})])
    job = json_file_job("long", input_dir, work / "table", work / "checkpoint",
                        schema="id BIGINT, name STRING", partition_by=["name"])
    return job, ["partition column 'name'", "row 0", "305 bytes", "at most 255"]


@pytest.mark.parametrize("make", [
    with_ansi_cast_failure,
    with_not_null_violation,
    with_nul_in_partition_value,
    with_over_long_partition_value,
], ids=lambda f: f.__name__)
def test_bad_data_in_a_batch_exits_3_and_leaves_the_batch_to_rerun(silt, work, make):
    input_dir = work / "in"
    input_dir.mkdir()
    job, expected_parts = make(work, input_dir)
    path = write_job(work / "job.yaml", job)
    versions_before = sorted((work / "table" / "_delta_log").glob("*.json")) \
        if (work / "table" / "_delta_log").exists() else []
    proc = silt("run", path, timeout=120)
    assert proc.returncode == 3, describe(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("silt: error:")]
    assert len(errors) == 1, describe(proc)
    assert "batch 0" in errors[0], errors[0]
    for part in expected_parts:
        assert part in errors[0], f"{part!r} not named in: {errors[0]}"
    # Planned, not committed: the next run meets the same batch again.
    assert checkpoint_batches(work / "checkpoint", "offsets") == [0]
    assert checkpoint_batches(work / "checkpoint", "commits") == []
    log = work / "table" / "_delta_log"
    assert (sorted(log.glob("*.json")) if log.exists() else []) == versions_before
    again = silt("run", path, timeout=120)
    assert again.returncode == 3, describe(again)
