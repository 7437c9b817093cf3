"""The streaming job of the table-tool tests (test_delta_tools.py,
test_auto_compact_readers.py): generator records (the seed's sensor events)
into a Delta table partitioned by device_type, in small micro-batches, so
both build the same tables; (kafka_partition, kafka_offset) identifies a
record."""

from collections import Counter

KEY = ("kafka_partition", "kafka_offset")


def stream_job(name, table, checkpoint, total_rows, rows_per_batch, trigger=None,
               sink_options=None):
    """The job dict (for helpers.write_job): `total_rows` records in batches
    of `rows_per_batch`, availableNow unless `trigger` says otherwise, with
    `sink_options` as the Delta sink's options."""
    job = {
        "name": name,
        "source": {
            "format": "generator",
            "options": {
                "numDevices": 2,
                "maxOffsetsPerTrigger": rows_per_batch,
                "totalRows": total_rows,
            },
        },
        "transform": [{
            "select": [
                "`partition` AS kafka_partition",
                "`offset` AS kafka_offset",
                "get_json_object(CAST(value AS STRING), '$.device_type') AS device_type",
                "get_json_object(CAST(value AS STRING), '$.device_id') AS device_id",
                "CAST(get_json_object(CAST(value AS STRING), '$.payload') AS STRING) AS payload",
                "timestamp AS event_time",
            ]
        }],
        "sink": {
            "format": "delta",
            "outputMode": "append",
            "path": str(table),
            "partitionBy": ["device_type"],
        },
        "checkpointLocation": str(checkpoint),
        "trigger": trigger if trigger is not None else {"availableNow": True},
    }
    if sink_options:
        job["sink"]["options"] = sink_options
    return job


def assert_each_key_once(arrow_table, expected_count, what="table"):
    """Every record (KEY) of the job read back exactly once, and
    `expected_count` of them; `what` names the read in a failure."""
    keys = list(zip(*(arrow_table.column(k).to_pylist() for k in KEY)))
    twice = [k for k, n in Counter(keys).items() if n > 1]
    assert not twice, f"{what}: records read twice: {twice[:5]}"
    assert len(keys) == expected_count, f"{what}: {len(keys)} rows, wanted {expected_count}"
