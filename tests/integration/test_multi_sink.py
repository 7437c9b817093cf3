"""`sinks:` (issue #16): several sinks fed from one read of the source, one
checkpoint — routing rows by event type into Delta tables (with their own
where/select) beside a merge table of the latest value per key.

The expected tables are computed by DuckDB from the same input files (the
where/select and a row_number() dedup written in SQL), and the tables are
read with delta-rs. A crash between two tables' commits is staged by
removing the last batch's commit from one table and the batch's commits/N
from the checkpoint (what a kill -9 after the first table's commit leaves):
the re-run commits only to that table, and the others skip the batch
(test_kafka_sinks_crash.py kills real processes).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import (checkpoint_batches, checkpoint_query_id, describe, log_versions, read_commit,
                     run_silt, write_input_file)

SCHEMA = "id BIGINT, type STRING, k STRING, v BIGINT, ts BIGINT"
TYPES = ["click", "view", "buy"]


def batches():
    out = []
    n = 0
    for b in range(6):
        rows = []
        for i in range(25):
            n += 1
            rows.append({"id": n, "type": TYPES[(n * 7 + b) % 3], "k": f"k{(n * 13) % 11}",
                         "v": (n * 37) % 101, "ts": n})
        out.append(rows)
    return out


SINKS = [
    {"name": "clicks", "where": "type = 'click'", "select": ["id", "k", "v * 2 AS v2"],
     "format": "delta", "path": "{work}/clicks"},
    {"name": "views_and_buys", "where": "type <> 'click'", "format": "delta",
     "path": "{work}/other", "partitionBy": ["type"]},
    {"name": "latest", "format": "delta", "path": "{work}/latest", "mode": "merge",
     "merge": {"on": "t.k = s.k", "whenMatched": [{"action": "updateAll"}],
               "whenNotMatched": [{"action": "insertAll"}]},
     "dedupBy": {"keys": ["k"], "orderBy": ["ts"]}},
]

EXPECTED_SQL = {
    "clicks": "SELECT id, k, v * 2 AS v2 FROM input WHERE type = 'click'",
    "other": "SELECT * FROM input WHERE type <> 'click'",
    "latest": "SELECT id, type, k, v, ts FROM (SELECT *, row_number() OVER "
              "(PARTITION BY k ORDER BY ts DESC) AS rn FROM input) WHERE rn = 1",
}


def write_job(work: Path, sinks=None) -> Path:
    text = json.dumps(sinks if sinks is not None else SINKS).replace("{work}", str(work))
    job = {
        "name": "routing",
        "source": {"format": "json", "schema": SCHEMA,
                   "options": {"path": str(work / "in"), "maxFilesPerTrigger": 1}},
        "sinks": json.loads(text),
        "checkpointLocation": str(work / "checkpoint"),
        "trigger": {"availableNow": True},
    }
    path = work / "job.yaml"
    path.write_text(json.dumps(job, indent=2) + "\n")
    return path


def expected(work: Path, table: str):
    import duckdb

    con = duckdb.connect()
    con.execute(f"CREATE VIEW input AS SELECT * FROM read_json('{work}/in/*.json', columns = "
                "{id: 'BIGINT', type: 'VARCHAR', k: 'VARCHAR', v: 'BIGINT', ts: 'BIGINT'})")
    cur = con.execute(EXPECTED_SQL[table])
    names = [d[0] for d in cur.description]
    return sorted((dict(zip(names, row)) for row in cur.fetchall()),
                  key=lambda x: json.dumps(x, sort_keys=True))


def actual(work: Path, table: str):
    from deltalake import DeltaTable

    rows = DeltaTable(str(work / table)).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda x: json.dumps(x, sort_keys=True))


def assert_tables(work: Path):
    for table in EXPECTED_SQL:
        got, want = actual(work, table), expected(work, table)
        assert len(got) == len(want), table
        # Same columns in any order: compare as sorted items.
        assert [sorted(r.items()) for r in got] == [sorted(r.items()) for r in want], table


@pytest.fixture
def routed(work, silt_bin):
    (work / "in").mkdir()
    for i, rows in enumerate(batches()):
        write_input_file(work / "in" / f"b{i}.json", [json.dumps(r) for r in rows])
    job = write_job(work)
    proc = run_silt(silt_bin, "run", job, "--progress-json")
    assert proc.returncode == 0, describe(proc)
    return work, job, proc


def txn_versions(table: Path, query_id: str):
    out = {}
    for version in log_versions(table):
        for action in read_commit(table, version):
            if "txn" in action and action["txn"]["appId"] == query_id:
                assert action["txn"]["version"] not in out
                out[action["txn"]["version"]] = version
    return out


def test_routes_rows_to_every_table_once(routed):
    work, _, proc = routed
    assert_tables(work)
    query_id = checkpoint_query_id(work / "checkpoint")
    for table in EXPECTED_SQL:
        # One commit per batch in every table, each with the batch's txn.
        assert sorted(txn_versions(work / table, query_id)) == list(range(6)), table


def test_progress_names_each_sink(routed):
    work, _, proc = routed
    progress = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [p["batchId"] for p in progress] == list(range(6))
    for p, rows in zip(progress, batches()):
        sink = p["sink"]
        assert sink["description"].startswith("MultiSink[clicks=DeltaSink[")
        assert [s["name"] for s in sink["sinks"]] == ["clicks", "views_and_buys", "latest"]
        clicks = sum(r["type"] == "click" for r in rows)
        assert [s["numOutputRows"] for s in sink["sinks"]] == [clicks, len(rows) - clicks,
                                                                len(rows)]
        assert sink["numOutputRows"] == len(rows)


@pytest.mark.parametrize("missing", ["clicks", "other", "latest"])
def test_crash_between_tables_commits_only_the_missing_one(routed, silt_bin, missing):
    work, job, _ = routed
    query_id = checkpoint_query_id(work / "checkpoint")
    last = checkpoint_batches(work / "checkpoint", "commits")[-1]
    # What a crash after the other tables committed batch `last` leaves.
    table = work / missing
    version = txn_versions(table, query_id)[last]
    assert version == log_versions(table)[-1]
    (table / "_delta_log" / f"{version:020d}.json").unlink()
    (work / "checkpoint" / "commits" / str(last)).unlink()
    before = {t: log_versions(work / t) for t in EXPECTED_SQL}
    again = run_silt(silt_bin, "run", job)
    assert again.returncode == 0, describe(again)
    for t in EXPECTED_SQL:
        if t == missing:
            assert log_versions(work / t) == before[t] + [version], t
        else:
            assert log_versions(work / t) == before[t], t
    assert (work / "checkpoint" / "commits" / str(last)).exists()
    assert_tables(work)


def test_bad_routes_are_refused_before_anything_runs(work, silt_bin):
    (work / "in").mkdir()
    bad = json.loads(json.dumps(SINKS))
    bad[1]["where"] = "nope = 1"
    proc = run_silt(silt_bin, "run", write_job(work, bad))
    assert proc.returncode != 0
    assert "sinks[1].where" in proc.stderr and "nope" in proc.stderr, describe(proc)
    assert not (work / "checkpoint").exists()
    modes = json.loads(json.dumps(SINKS))
    modes[2]["outputMode"] = "update"
    proc = run_silt(silt_bin, "run", write_job(work, modes))
    assert proc.returncode != 0
    assert "sinks[2].outputMode" in proc.stderr, describe(proc)
    names = json.loads(json.dumps(SINKS))
    names[1]["name"] = "clicks"
    proc = run_silt(silt_bin, "run", write_job(work, names))
    assert "'clicks' names two sinks" in proc.stderr, describe(proc)
