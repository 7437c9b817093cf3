"""A table a stream wrote with the Delta sink's autoCompact, read by the
reference readers: pyspark 3.5 + delta-spark and delta-rs (deltalake; not
for V2 checkpoints, which it refuses) must read exactly the rows the stream
wrote, after several generations of
compactions (decision 146) and classic or V2 checkpoints that hold their
remove tombstones, with every commit before the newest checkpoint deleted
(so the readers start from the checkpoint, not from the JSON log)."""

import pytest

from generator_stream import KEY, assert_each_key_once, stream_job
from helpers import (
    assert_same_rows,
    describe,
    log_dir,
    log_versions,
    read_commit,
    read_with_deltalake,
    read_with_spark,
    to_json_rows,
    write_job,
)

TOTAL = 2400
ROWS_PER_BATCH = 8


def job_for(table, checkpoint, policy):
    options = {
        "autoCompact": "true",
        "autoCompact.everyNCommits": "5",
        "autoCompact.minNumFiles": "4",
        "delta.checkpointInterval": "10",
    }
    if policy is not None:
        options["delta.checkpointPolicy"] = policy
    return stream_job("auto-readers", table, checkpoint, TOTAL, ROWS_PER_BATCH,
                      sink_options=options)


@pytest.mark.parametrize("policy", [None, "v2"])
def test_readers_see_every_row_once_after_compactions_and_checkpoints(silt, spark, work, policy):
    table, checkpoint = work / "auto", work / "auto-checkpoint"
    proc = silt("run", write_job(work / "job.yaml", job_for(table, checkpoint, policy)),
                timeout=600)
    assert proc.returncode == 0, describe(proc)

    compactions = 0
    removed_at = {}  # version -> removes committed by it
    generations = set()
    outputs = set()
    for version in log_versions(table):
        actions = read_commit(table, version)
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        if info["operation"] != "OPTIMIZE":
            continue
        compactions += 1
        gone = {a["remove"]["path"] for a in actions if "remove" in a}
        removed_at[version] = len(gone)
        generations.add(bool(gone & outputs))  # True: an output compacted again
        outputs |= {a["add"]["path"] for a in actions if "add" in a}
    assert compactions >= 10, f"only {compactions} compactions"
    assert True in generations, "no second-generation compaction"

    # The newest checkpoint must carry the compactions' remove tombstones.
    log = log_dir(table)
    # Classic: N.checkpoint.parquet; V2: N.checkpoint.<uuid>.json|parquet.
    checkpoints = sorted(p for p in log.iterdir() if ".checkpoint." in p.name
                         and p.name.endswith((".parquet", ".json")))
    assert checkpoints, "no checkpoint written"
    newest = max(int(p.name.split(".")[0]) for p in checkpoints)
    for version in log_versions(table):
        if version < newest:
            (log / f"{version:020d}.json").unlink()
    # Readers now start from the checkpoint at `newest` (plus later commits).

    theirs_spark = read_with_spark(spark, table)
    readers = [("Spark", theirs_spark)]
    # deltalake (delta-rs 1.x) refuses the v2Checkpoint reader feature.
    theirs_rs = read_with_deltalake(table) if policy is None else None
    if theirs_rs is not None:
        readers.append(("deltalake", theirs_rs))
    for name, arrow in readers:
        assert_each_key_once(arrow, TOTAL, name)
    if theirs_rs is not None:
        assert_same_rows(to_json_rows(theirs_spark), to_json_rows(theirs_rs),
                         "Spark against deltalake", *KEY)

    # The classic checkpoint holds every remove tombstone committed up to
    # its version (none expires within the 7-day retention), as Spark reads
    # the checkpoint file itself.
    if policy is None:
        expected = sum(n for v, n in removed_at.items() if v <= newest)
        found = spark.sql(
            f"SELECT count(*) AS n FROM parquet.`{log}/{newest:020d}.checkpoint.parquet` "
            "WHERE remove IS NOT NULL").collect()[0]["n"]
        assert found == expected
