"""A Delta checkpoint large enough to span several Parquet row groups (the
writer closes a row group at 8 MB, decision 57) reads whole in delta-rs and
delta-spark.

The table's log is written here by hand: version 0 adds 200,000 files
(the data files need not exist: only the log is read), versions 1-9 are
empty commits, and a one-row silt append makes version 10, where silt
writes the checkpoint. The JSON of version 0 is then removed, so that the
reference readers can only learn of the 200,000 files from the checkpoint.
"""

import json
import uuid

import pyarrow.parquet as pq

from helpers import json_file_job, write_input_file, write_job

FILES = 200_000
FILE_SIZE = 1234


def write_hand_made_log(table):
    log = table / "_delta_log"
    log.mkdir(parents=True)
    schema = {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "payload", "type": "string", "nullable": True, "metadata": {}}]}
    with open(log / f"{0:020d}.json", "w") as out:
        out.write(json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}) + "\n")
        out.write(json.dumps({"metaData": {
            "id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
            "schemaString": json.dumps(schema), "partitionColumns": [], "configuration": {},
            "createdTime": 1}}) + "\n")
        for i in range(FILES):
            stats = {"numRecords": 10, "minValues": {"id": i * 10, "payload": f"a{i}"},
                     "maxValues": {"id": i * 10 + 9, "payload": f"z{i}"},
                     "nullCount": {"id": 0, "payload": 0}}
            out.write(json.dumps({"add": {
                "path": f"part-{i:06d}-{uuid.uuid4()}.snappy.parquet", "partitionValues": {},
                "size": FILE_SIZE, "modificationTime": 1, "dataChange": True,
                "stats": json.dumps(stats)}}) + "\n")
    for version in range(1, 10):
        with open(log / f"{version:020d}.json", "w") as out:
            out.write(json.dumps({"commitInfo": {"timestamp": version, "operation": "WRITE"}})
                      + "\n")
    return log


def test_a_checkpoint_of_several_row_groups_reads_whole_in_delta_rs_and_spark(
        silt, spark, work):
    table = work / "table"
    log = write_hand_made_log(table)
    input_dir = work / "in"
    input_dir.mkdir()
    write_input_file(input_dir / "one.json", [json.dumps({"id": -1, "payload": "silt"})])
    job = write_job(work / "job.yaml", json_file_job(
        "row-groups", input_dir, table, work / "checkpoint", schema="id BIGINT, payload STRING"))
    result = silt("run", job, timeout=300)
    assert result.returncode == 0, result.stderr

    checkpoint = log / f"{10:020d}.checkpoint.parquet"
    metadata = pq.ParquetFile(checkpoint).metadata
    assert metadata.num_row_groups >= 2, "the state did not span row groups; grow FILES"
    (log / f"{0:020d}.json").unlink()

    from deltalake import DeltaTable
    dt = DeltaTable(str(table))
    assert dt.version() == 10
    assert len(dt.file_uris()) == FILES + 1

    detail = spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]
    assert detail["numFiles"] == FILES + 1
    silt_file = [a["add"] for a in map(json.loads, (log / f"{10:020d}.json").read_text()
                                       .splitlines()) if "add" in a]
    assert detail["sizeInBytes"] == FILES * FILE_SIZE + sum(a["size"] for a in silt_file)
