"""A JSON-lines file job, run several times as files appear: the table reads
back the same in silt, deltalake and pyarrow, and the checkpoint and the
Delta log carry Spark's and Delta's exactly-once records."""

import json
import re

from helpers import (
    READING_SCHEMA,
    assert_same_rows,
    checkpoint_batches,
    checkpoint_query_id,
    describe,
    expected_reading_row,
    json_file_job,
    log_versions,
    read_commit,
    read_with_deltalake,
    read_with_pyarrow,
    read_with_silt,
    reading_record,
    to_json_rows,
    write_input_file,
    write_job,
)

LINES_PER_FILE = 40
KEY = ("id",)


def write_files(input_dir, first_file, count):
    for file_idx in range(first_file, first_file + count):
        ids = range(file_idx * LINES_PER_FILE, (file_idx + 1) * LINES_PER_FILE)
        write_input_file(input_dir / f"part-{file_idx:03d}.json",
                         [json.dumps(reading_record(i)) for i in ids])


def expected_rows(num_files, with_event_date):
    rows = [expected_reading_row(i) for i in range(num_files * LINES_PER_FILE)]
    if not with_event_date:
        for row in rows:
            del row["event_date"]
    return rows


def assert_readers_agree(silt, table, num_files, with_event_date=True):
    expected = expected_rows(num_files, with_event_date)
    assert_same_rows(read_with_silt(silt, table), expected, "silt read", *KEY)
    assert_same_rows(to_json_rows(read_with_deltalake(table)), expected, "deltalake", *KEY)
    assert_same_rows(to_json_rows(read_with_pyarrow(table)), expected, "pyarrow", *KEY)


def batch_lines(stdout):
    return [line for line in stdout.splitlines() if line.startswith("[silt] batch ")]


def test_json_job_picks_up_new_files_on_each_run_and_every_reader_agrees(silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    table, checkpoint = work / "table", work / "checkpoint"
    job = write_job(work / "job.yaml", json_file_job(
        "readings", input_dir, table, checkpoint,
        schema=READING_SCHEMA,
        max_files_per_trigger=2,
        transform=[{"withColumn": {"event_date": "to_date(event_time)"}}],
        partition_by=["event_date"],
    ))

    write_files(input_dir, 0, 3)
    first = silt("run", job)
    assert first.returncode == 0, describe(first)
    lines = batch_lines(first.stdout)
    assert len(lines) == 2, describe(first)
    assert re.fullmatch(r"\[silt\] batch 0: 80 rows in \d+ ms -> table version 0", lines[0])
    assert re.fullmatch(r"\[silt\] batch 1: 40 rows in \d+ ms -> table version 1", lines[1])
    assert_readers_agree(silt, table, 3)

    # Files that appear between runs are read by the next run, and only they.
    write_files(input_dir, 3, 3)
    second = silt("run", job)
    assert second.returncode == 0, describe(second)
    assert [line.split(":")[0] for line in batch_lines(second.stdout)] == [
        "[silt] batch 2", "[silt] batch 3"]
    assert_readers_agree(silt, table, 6)

    # Nothing new: no batch, no commit.
    versions_before = log_versions(table)
    third = silt("run", job)
    assert third.returncode == 0, describe(third)
    assert batch_lines(third.stdout) == []
    assert log_versions(table) == versions_before
    assert_readers_agree(silt, table, 6)


def test_checkpoint_and_log_use_spark_and_delta_formats(silt, work):
    input_dir = work / "in"
    input_dir.mkdir()
    table, checkpoint = work / "table", work / "checkpoint"
    job = write_job(work / "job.yaml", json_file_job(
        "readings", input_dir, table, checkpoint, schema=READING_SCHEMA,
        max_files_per_trigger=1))
    write_files(input_dir, 0, 3)
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)

    # metadata: {"id": "<query uuid>"}
    query_id = checkpoint_query_id(checkpoint)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", query_id)

    # offsets/N: "v1", batch metadata, one line per source; commits/N: "v1", {...}
    assert checkpoint_batches(checkpoint, "offsets") == [0, 1, 2]
    assert checkpoint_batches(checkpoint, "commits") == [0, 1, 2]
    for batch_id in range(3):
        offsets = (checkpoint / "offsets" / str(batch_id)).read_text().splitlines()
        assert offsets[0] == "v1"
        batch_meta = json.loads(offsets[1])
        assert {"batchWatermarkMs", "batchTimestampMs", "conf"} <= set(batch_meta)
        assert isinstance(batch_meta["conf"], dict)
        assert len(offsets) == 3, offsets  # one source
        json.loads(offsets[2])
        commit = (checkpoint / "commits" / str(batch_id)).read_text().splitlines()
        assert commit[0] == "v1"
        assert "nextBatchWatermarkMs" in json.loads(commit[1])

    # Each batch is one Delta commit carrying txn{appId = query id, version = batch id}.
    versions = log_versions(table)
    assert versions == [0, 1, 2]
    for version in versions:
        actions = read_commit(table, version)
        assert "commitInfo" in actions[0], "delta-spark writes commitInfo first"
        info = actions[0]["commitInfo"]
        assert info["operation"] == "STREAMING UPDATE"
        params = info["operationParameters"]
        assert params["outputMode"] == "Append"
        assert params["queryId"] == query_id
        assert params["epochId"] == str(version)
        txns = [a["txn"] for a in actions if "txn" in a]
        assert len(txns) == 1
        assert txns[0]["appId"] == query_id
        assert txns[0]["version"] == version
        adds = [a["add"] for a in actions if "add" in a]
        assert adds and all(a["dataChange"] for a in adds)
        assert sum(json.loads(a["stats"])["numRecords"] for a in adds) == LINES_PER_FILE
    first = read_commit(table, 0)
    protocol = next(a["protocol"] for a in first if "protocol" in a)
    assert (protocol["minReaderVersion"], protocol["minWriterVersion"]) == (1, 2)
    metadata = next(a["metaData"] for a in first if "metaData" in a)
    fields = [f["name"] for f in json.loads(metadata["schemaString"])["fields"]]
    assert fields == ["id", "device_id", "reading", "ok", "event_time"]
    assert_readers_agree(silt, table, 3, with_event_date=False)


# Spark's JSON reader options on the file source: top-level arrays give a
# row per element, parser switches and datetime patterns apply as in
# spark.read.json, and the table holds what Spark reads.
OPTION_LINES = [
    '[{"id": 1, "t": "02/01/2024 10:30"}, {"id": 2, "t": "03/01/2024 11:00"}]',
    '{"id": 3, "t": "2024-01-04 12:00:00"}',
    '[]',
    "{'id': 4, 't': '05/01/2024 09:15'}",
    '/* c */ {"id": 5, "t": "06/01/2024 08:00"}',
    '[{"id": 6, "t": "x"}, {"id": 7, "t": "07/01/2024 07:07"}]',
    '[{"id": 8}, 9]',
]
OPTION_SCHEMA = "id BIGINT, t TIMESTAMP, _corrupt_record STRING"
OPTIONS = {"timestampFormat": "dd/MM/yyyy HH:mm", "allowComments": "true",
           "timeZone": "Europe/Paris"}


def _micros(value):
    """Micros since the epoch of a datetime (pyspark's naive local time or
    deltalake's UTC)."""
    return None if value is None else round(value.timestamp() * 1_000_000)


def test_json_options_and_arrays_reach_the_table_as_spark_reads_them(silt, work, spark):
    input_dir = work / "in"
    input_dir.mkdir()
    path = write_input_file(input_dir / "a.json", OPTION_LINES)
    spark.conf.set("spark.sql.legacy.timeParserPolicy", "CORRECTED")
    try:
        want = [(r["id"], _micros(r["t"]), r["_corrupt_record"]) for r in
                spark.read.schema(OPTION_SCHEMA).options(**OPTIONS).json(str(path)).collect()]
    finally:
        spark.conf.unset("spark.sql.legacy.timeParserPolicy")
    job = json_file_job("options", input_dir, work / "table", work / "checkpoint",
                        schema=OPTION_SCHEMA)
    job["source"]["options"].update(OPTIONS)
    job["spark.sql.legacy.timeParserPolicy"] = "CORRECTED"
    proc = silt("run", write_job(work / "job.yaml", job))
    assert proc.returncode == 0, describe(proc)
    table = read_with_deltalake(work / "table").to_pylist()
    got = [(r["id"], _micros(r["t"]), r["_corrupt_record"]) for r in table]
    assert got == want
    assert len(got) == 8  # 2 + 1 + 0 + 1 + 1 + 2 + 1 rows


def test_datetime_text_spark_fails_on_stops_the_batch_with_exit_code_3(silt, work):
    # '2/1/2024' does not fit dd/MM/yyyy, but Spark 2 read it: Spark 3.5
    # fails the query (spark.sql.legacy.timeParserPolicy EXCEPTION).
    input_dir = work / "in"
    input_dir.mkdir()
    write_input_file(input_dir / "a.json", ['{"id": 1, "t": "02/01/2024 10:30"}',
                                            '{"id": 2, "t": "2/1/2024 10:30"}'])
    job = json_file_job("upgrade", input_dir, work / "table", work / "checkpoint",
                        schema=OPTION_SCHEMA, mode="DROPMALFORMED")
    job["source"]["options"]["timestampFormat"] = "dd/MM/yyyy HH:mm"
    proc = silt("run", write_job(work / "job.yaml", job))
    assert proc.returncode == 3, describe(proc)
    assert "INCONSISTENT_BEHAVIOR_CROSS_VERSION" in proc.stderr, describe(proc)
    assert "2/1/2024 10:30" in proc.stderr, describe(proc)
    assert not (work / "table" / "_delta_log").exists() or not any(
        (work / "table" / "_delta_log").glob("*.json"))
