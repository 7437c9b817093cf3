"""Classic checkpoints of silt's streaming appender built from the previous
one (decision 161): the frozen row groups of add rows are copied byte for
byte into the next checkpoint, the rest (the tail of recent adds; protocol,
metaData, txns) is encoded anew. The tests check that every checkpoint
holds exactly the files of its version (the adds of the JSON commits up to
it), that a later checkpoint's first row group is the earlier one's bytes
(or, merged with later frozen groups, decision 193, starts every column
chunk with them), and that pyspark 3.5 + delta-spark, delta-rs and DuckDB read the table equal
to the rows written from the checkpoint alone (the commits before it
deleted); then Spark appends and checkpoints, and silt continues.
"""

import json

import pyarrow.parquet as pq

from helpers import (
    duckdb_delta_scan,
    json_file_job,
    log_versions,
    read_commit,
    read_with_deltalake,
    write_input_file,
    write_job,
)

SCHEMA = "id BIGINT, k INT"
# Rows per input file (one batch each), spread over as many partitions: a
# batch adds PARTITIONS files, so the tail of 2,048 adds (kClassicTailAdds)
# freezes at version 16 and checkpoint 20 copies it.
PARTITIONS = 150


def run_batches(silt, work, table, first_file, files):
    inbox = work / "in"
    inbox.mkdir(exist_ok=True)
    for n in range(first_file, first_file + files):
        first = n * PARTITIONS
        write_input_file(inbox / f"part-{n:04d}.json",
                         [json.dumps({"id": i, "k": i % PARTITIONS})
                          for i in range(first, first + PARTITIONS)])
    job = json_file_job("classic", inbox, table, work / "checkpoint", SCHEMA,
                        max_files_per_trigger=1, partition_by=["k"])
    job["sink"]["options"] = {"delta.checkpointInterval": 4}
    result = silt("run", write_job(work / "job.yaml", job), timeout=600)
    assert result.returncode == 0, result.stderr


def drop_commits_before(log, version):
    for path in log.glob("*.json"):
        if path.name[:20].isdigit() and len(path.name) == 25 and int(path.name[:20]) < version:
            path.unlink()


def live_files(table, since=-1, base=()):
    """{version: set of live paths} from the JSON commits after `since`,
    starting from the live paths `base`."""
    live, out = set(base), {}
    for version in log_versions(table):
        if version <= since:
            continue
        for action in read_commit(table, version):
            if "add" in action:
                live.add(action["add"]["path"])
            if "remove" in action:
                live.discard(action["remove"]["path"])
        out[version] = set(live)
    return out


def checkpoint_paths(path):
    rows = pq.read_table(path, columns=["add"]).column("add").to_pylist()
    paths = [r["path"] for r in rows if r is not None]
    assert len(paths) == len(set(paths)), f"{path}: an add twice"
    return set(paths)


def first_row_group_bytes(path):
    meta = pq.ParquetFile(path).metadata.row_group(0)
    start = min(meta.column(c).dictionary_page_offset or meta.column(c).data_page_offset
                for c in range(meta.num_columns))
    length = sum(meta.column(c).total_compressed_size for c in range(meta.num_columns))
    with open(path, "rb") as f:
        f.seek(start)
        return meta.num_rows, f.read(length)


def column_chunks(path, group=0):
    """The bytes of each column chunk of row group `group`."""
    meta = pq.ParquetFile(path).metadata.row_group(group)
    chunks = []
    with open(path, "rb") as f:
        for c in range(meta.num_columns):
            col = meta.column(c)
            assert not col.has_dictionary_page, f"{path}: {col.path_in_schema}"
            f.seek(col.data_page_offset)
            chunks.append(f.read(col.total_compressed_size))
    return meta.num_rows, chunks


def ids_all_readers(silt, spark, table):
    out = silt("read", table, "--format", "jsonl", timeout=120)
    assert out.returncode == 0, out.stderr
    by_silt = sorted(json.loads(line)["id"] for line in out.stdout.splitlines() if line)
    by_spark = sorted(r["id"] for r in spark.read.format("delta").load(str(table))
                      .select("id").collect())
    by_delta_rs = sorted(read_with_deltalake(table).column("id").to_pylist())
    by_duckdb = sorted(r[0] for r in duckdb_delta_scan(table, "SELECT id FROM {t}"))
    return by_silt, by_spark, by_delta_rs, by_duckdb


def test_incremental_classic_checkpoints_read_by_spark_delta_rs_duckdb(silt, spark, work):
    table = work / "table"
    log = table / "_delta_log"
    run_batches(silt, work, table, 0, 21)  # versions 0..20, checkpoints 4..20
    live = live_files(table)
    checkpoints = sorted(int(p.name[:20]) for p in log.glob("*.checkpoint.parquet"))
    assert checkpoints == [4, 8, 12, 16, 20]
    for version in checkpoints:
        path = log / f"{version:020d}.checkpoint.parquet"
        assert checkpoint_paths(path) == live[version], f"checkpoint {version}"
    last = json.loads((log / "_last_checkpoint").read_text())
    assert last["version"] == 20
    assert last["numOfAddFiles"] == 21 * PARTITIONS
    assert last["sizeInBytes"] == (log / f"{20:020d}.checkpoint.parquet").stat().st_size
    assert last["size"] == pq.ParquetFile(log / f"{20:020d}.checkpoint.parquet").metadata.num_rows
    # Checkpoint 16 froze its adds; 20 copied them byte for byte.
    rows16, bytes16 = first_row_group_bytes(log / f"{16:020d}.checkpoint.parquet")
    rows20, bytes20 = first_row_group_bytes(log / f"{20:020d}.checkpoint.parquet")
    assert rows16 == 17 * PARTITIONS and rows20 == rows16
    assert bytes20 == bytes16

    drop_commits_before(log, 20)
    expected = list(range(21 * PARTITIONS))
    for ids in ids_all_readers(silt, spark, table):
        assert ids == expected

    # Spark appends on top of silt's checkpoint and checkpoints at 24; silt
    # continues (a new process: the whole state, read from Spark's
    # checkpoint) and checkpoints at 28 in its layout.
    for n in range(4):
        spark.createDataFrame([(1_000_000 + n, 0)], SCHEMA) \
            .write.format("delta").mode("append").save(str(table))
    assert (log / f"{24:020d}.checkpoint.parquet").exists()
    run_batches(silt, work, table, 21, 4)  # versions 25..28
    live = live_files(table, since=20, base=live[20])
    assert checkpoint_paths(log / f"{28:020d}.checkpoint.parquet") == live[28]
    drop_commits_before(log, 28)
    expected = sorted(list(range(25 * PARTITIONS)) + [1_000_000 + n for n in range(4)])
    for ids in ids_all_readers(silt, spark, table):
        assert ids == expected


def test_staged_adds_read_by_spark_delta_rs_duckdb(silt, spark, work):
    """Decision 190: once a writer's state holds kClassicStageAdds (2,048)
    files added since its last checkpoint, they are encoded as a row group
    of add rows and dropped from the state; the next checkpoint copies that
    group. Decision 193: consecutive frozen groups are copied as one row
    group, each column chunk the pages of theirs in turn. With a checkpoint
    every 16 versions and 150 files a batch, checkpoint 16 freezes 2,048 of
    its 2,550 adds, version 30 stages the 2,100 files of versions 17..30,
    and checkpoint 32 is [frozen 2,048 + staged 2,100][tail: 502 + 300]
    [protocol, metaData, txn]; version 46 stages 2,100 more and checkpoint
    48 is [4,148 + 2,100][802 + 300][head]."""
    table = work / "table"
    log = table / "_delta_log"
    inbox = work / "in"
    inbox.mkdir()
    for n in range(49):
        write_input_file(inbox / f"part-{n:04d}.json",
                         [json.dumps({"id": i, "k": i % PARTITIONS})
                          for i in range(n * PARTITIONS, (n + 1) * PARTITIONS)])
    job = json_file_job("staged", inbox, table, work / "checkpoint", SCHEMA,
                        max_files_per_trigger=1, partition_by=["k"])
    job["sink"]["options"] = {"delta.checkpointInterval": 16}
    result = silt("run", write_job(work / "job.yaml", job), timeout=600)
    assert result.returncode == 0, result.stderr

    live = live_files(table)
    checkpoints = sorted(int(p.name[:20]) for p in log.glob("*.checkpoint.parquet"))
    assert checkpoints == [16, 32, 48]
    for version in checkpoints:
        assert checkpoint_paths(log / f"{version:020d}.checkpoint.parquet") == live[version]

    def add_groups(version):
        meta = pq.ParquetFile(log / f"{version:020d}.checkpoint.parquet").metadata
        return [meta.row_group(g).num_rows for g in range(meta.num_row_groups - 1)]

    assert add_groups(32) == [2048 + 14 * PARTITIONS, 17 * PARTITIONS - 2048 + 2 * PARTITIONS]
    assert add_groups(48) == [2048 + 28 * PARTITIONS, 17 * PARTITIONS - 2048 + 4 * PARTITIONS]
    rows, earlier = column_chunks(log / f"{16:020d}.checkpoint.parquet")
    assert rows == 2048
    for version in (32, 48):
        rows, chunks = column_chunks(log / f"{version:020d}.checkpoint.parquet")
        assert rows == add_groups(version)[0]
        assert len(chunks) == len(earlier)
        for before, after in zip(earlier, chunks):
            assert len(after) > len(before) and after[:len(before)] == before, version
        earlier = chunks

    drop_commits_before(log, 48)
    expected = list(range(49 * PARTITIONS))
    for ids in ids_all_readers(silt, spark, table):
        assert ids == expected
