"""Transform steps of issue 7 end to end: a `sql` step, explode /
posexplode_outer select items, the job's `spark.sql.session.timeZone` and
`ansi` keys. The table silt writes reads back in deltalake with the rows
Spark's semantics give (each function is checked against Spark itself by
test_expr_corpus.py)."""

import json

from helpers import json_file_job, read_with_deltalake, write_input_file, write_job

SCHEMA = "id BIGINT, tags STRING, ts TIMESTAMP, n STRING"


def write_rows(input_dir):
    rows = [
        {"id": 1, "tags": "a,b", "ts": "2021-03-14T09:30:00Z", "n": "7"},
        {"id": 2, "tags": "", "ts": "2021-03-14T10:30:00Z", "n": "x"},
        {"id": 3, "tags": None, "ts": "2021-11-07T08:30:00Z", "n": "8"},
        {"id": 4, "tags": "skip", "ts": "2021-01-01T00:00:00Z", "n": "9"},
    ]
    write_input_file(input_dir / "part-000.json", [json.dumps(r) for r in rows])


def run_job(silt, work, transform, **top):
    input_dir = work / "in"
    input_dir.mkdir()
    write_rows(input_dir)
    table, checkpoint = work / "table", work / "checkpoint"
    job = json_file_job("expr-transform", input_dir, table, checkpoint, SCHEMA, transform=transform)
    job.update(top)
    proc = silt("run", write_job(work / "job.yaml", job))
    return proc, table


def test_sql_step_explode_and_session_time_zone(silt, work):
    transform = [
        {"sql": "SELECT id, split(tags, ',') AS parts, date_format(ts, 'yyyy-MM-dd HH:mm XXX') "
                "AS local, CAST(n AS INT) AS n FROM input WHERE id <> 4"},
        {"select": ["id", "posexplode_outer(parts)", "local", "n"]},
    ]
    proc, table = run_job(silt, work, transform,
                          **{"spark.sql.session.timeZone": "America/Los_Angeles"})
    assert proc.returncode == 0, proc.stderr
    rows = sorted(read_with_deltalake(table).to_pylist(), key=lambda r: (r["id"], r["pos"] or 0))
    assert [(r["id"], r["pos"], r["col"], r["local"], r["n"]) for r in rows] == [
        (1, 0, "a", "2021-03-14 01:30 -08:00", 7),
        (1, 1, "b", "2021-03-14 01:30 -08:00", 7),
        # split('', ',') is [''] in Spark: one empty element.
        (2, 0, "", "2021-03-14 03:30 -07:00", None),
        # A NULL array keeps one row of NULLs with posexplode_outer.
        (3, None, None, "2021-11-07 01:30 -07:00", 8),
    ]


def test_explode_drops_rows_without_elements(silt, work):
    transform = [{"select": ["id", "explode(split(tags, ',')) AS tag"]}]
    proc, table = run_job(silt, work, transform)
    assert proc.returncode == 0, proc.stderr
    got = sorted((r["id"], r["tag"]) for r in read_with_deltalake(table).to_pylist())
    assert got == [(1, "a"), (1, "b"), (2, ""), (4, "skip")]


def test_ansi_turns_a_failed_cast_into_an_error(silt, work):
    transform = [{"select": ["id", "CAST(n AS INT) AS n"]}]
    proc, _ = run_job(silt, work, transform, ansi=True)
    assert proc.returncode != 0
    assert "x" in proc.stderr and "transform[0].select" in proc.stderr, proc.stderr


def test_bad_sql_step_fails_at_start_naming_the_step_and_the_column(silt, work):
    transform = [{"sql": "SELECT idd FROM input"}]
    proc, table = run_job(silt, work, transform)
    assert proc.returncode != 0
    assert "transform[0].sql" in proc.stderr, proc.stderr
    assert "id" in proc.stderr
    assert not (table / "_delta_log").exists() or not any((table / "_delta_log").iterdir())


def test_unknown_session_time_zone_is_rejected(silt, work):
    proc, _ = run_job(silt, work, [{"select": ["id"]}],
                      **{"spark.sql.session.timeZone": "Mars/Olympus"})
    assert proc.returncode != 0
    assert "Mars/Olympus" in proc.stderr, proc.stderr
