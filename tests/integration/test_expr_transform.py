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


WINDOW_ROWS = [
    {"id": 1, "ts": "2021-03-14T09:30:00Z"},
    {"id": 2, "ts": "2021-03-14T10:07:30Z"},
    {"id": 3, "ts": None},
    {"id": 4, "ts": "1969-12-31T23:59:59Z"},
]


def _window_rows_silt(silt, work, select):
    input_dir = work / "in"
    input_dir.mkdir()
    write_input_file(input_dir / "part-000.json", [json.dumps(r) for r in WINDOW_ROWS])
    table, checkpoint = work / "table", work / "checkpoint"
    job = json_file_job("windows", input_dir, table, checkpoint, "id BIGINT, ts TIMESTAMP",
                        transform=[{"select": select}])
    proc = silt("run", write_job(work / "job.yaml", job))
    assert proc.returncode == 0, proc.stderr
    return input_dir, read_with_deltalake(table).to_pylist()


def _fmt(value):
    return value.strftime("%Y-%m-%d %H:%M:%S")


def test_sliding_and_tumbling_windows_expand_rows_as_spark_does(silt, work, spark):
    select = ["id", "window(ts, '1 hour', '20 minutes') AS w"]
    input_dir, rows = _window_rows_silt(silt, work, select)
    got = sorted((r["id"], _fmt(r["w"]["start"]), _fmt(r["w"]["end"])) for r in rows)
    expected = sorted(
        (r["id"], r["s"], r["e"])
        for r in spark.read.schema("id BIGINT, ts TIMESTAMP").json(str(input_dir))
        .selectExpr(*select)
        .selectExpr("id", "CAST(w.start AS STRING) AS s", "CAST(w.`end` AS STRING) AS e")
        .collect()
    )
    # Three windows per row with a time, none for the NULL time.
    assert len(expected) == 9
    assert got == expected


def test_tumbling_window_drops_rows_without_a_time_as_spark_does(silt, work, spark):
    select = ["id", "window(ts, '10 minutes')"]
    input_dir, rows = _window_rows_silt(silt, work, select)
    got = sorted((r["id"], _fmt(r["window"]["start"])) for r in rows)
    expected = sorted(
        (r["id"], r["s"])
        for r in spark.read.schema("id BIGINT, ts TIMESTAMP").json(str(input_dir))
        .selectExpr(*select)
        .selectExpr("id", "CAST(window.start AS STRING) AS s")
        .collect()
    )
    assert [row_id for row_id, _ in expected] == [1, 2, 4]
    assert got == expected


def test_window_inside_expressions_next_to_explode_expands_rows_as_spark_does(silt, work, spark):
    # window() inside an expression and a generator in the same select: the
    # rows expand per window first (the NULL time drops its row), then explode.
    select = ["id", "window(ts, '1 hour', '20 minutes').start AS s", "explode(array(id, id * 10)) AS e"]
    input_dir, rows = _window_rows_silt(silt, work, select)
    got = sorted((r["id"], _fmt(r["s"]), r["e"]) for r in rows)
    expected = sorted(
        (r["id"], r["s"], r["e"])
        for r in spark.read.schema("id BIGINT, ts TIMESTAMP").json(str(input_dir))
        .selectExpr(*select)
        .selectExpr("id", "CAST(s AS STRING) AS s", "e")
        .collect()
    )
    # Three windows per row with a time, two elements each; none for id 3.
    assert len(expected) == 18
    assert {row_id for row_id, _, _ in expected} == {1, 2, 4}
    assert got == expected


def test_two_different_windows_in_one_select_fail_at_start(silt, work):
    select = ["id", "window(ts, '10 minutes').start AS a", "window(ts, '5 minutes').end AS b"]
    input_dir = work / "in"
    input_dir.mkdir()
    write_input_file(input_dir / "part-000.json", [json.dumps(r) for r in WINDOW_ROWS])
    table, checkpoint = work / "table", work / "checkpoint"
    job = json_file_job("windows", input_dir, table, checkpoint, "id BIGINT, ts TIMESTAMP",
                        transform=[{"select": select}])
    proc = silt("run", write_job(work / "job.yaml", job))
    assert proc.returncode != 0
    assert "transform[0].select" in proc.stderr, proc.stderr
    assert "window(ts, '5 minutes')" in proc.stderr, proc.stderr
    assert not (table / "_delta_log").exists() or not any((table / "_delta_log").iterdir())


def test_input_file_name_is_the_file_uri_spark_gives(silt, work, spark):
    input_dir = work / "in dir"
    input_dir.mkdir()
    write_input_file(input_dir / "a.json", [json.dumps({"id": 1})])
    write_input_file(input_dir / "b c.json", [json.dumps({"id": 2}), json.dumps({"id": 3})])
    table, checkpoint = work / "table", work / "checkpoint"
    select = ["id", "input_file_name() AS f"]
    job = json_file_job("files", input_dir, table, checkpoint, "id BIGINT",
                        transform=[{"select": select}])
    proc = silt("run", write_job(work / "job.yaml", job))
    assert proc.returncode == 0, proc.stderr
    got = sorted((r["id"], r["f"]) for r in read_with_deltalake(table).to_pylist())

    query = (
        spark.readStream.schema("id BIGINT").json(str(input_dir))
        .selectExpr(*select)
        .writeStream.format("memory").queryName("silt_input_file_name")
        .option("checkpointLocation", str(work / "spark-checkpoint"))
        .trigger(availableNow=True).start()
    )
    query.awaitTermination()
    expected = sorted((r["id"], r["f"]) for r in spark.sql("SELECT * FROM silt_input_file_name").collect())
    assert expected[0][1].startswith("file:///")
    assert got == expected


def test_json_source_reads_zoneless_times_in_the_session_time_zone_as_spark(silt, work, spark):
    # Across both 2021 DST changes of Los Angeles, and one text with a zone.
    texts = ["2021-03-14 01:30:00", "2021-03-14 03:30:00", "2021-11-07 01:30:00",
             "2021-07-01 12:00:00", "2021-07-01T12:00:00Z"]
    input_dir = work / "in"
    input_dir.mkdir()
    write_input_file(input_dir / "part-000.json",
                     [json.dumps({"id": i, "ts": t}) for i, t in enumerate(texts)])
    table, checkpoint = work / "table", work / "checkpoint"
    select = ["id", "CAST(ts AS BIGINT) AS epoch"]
    job = json_file_job("zoned", input_dir, table, checkpoint, "id BIGINT, ts TIMESTAMP",
                        transform=[{"select": select}])
    job["spark.sql.session.timeZone"] = "America/Los_Angeles"
    proc = silt("run", write_job(work / "job.yaml", job))
    assert proc.returncode == 0, proc.stderr
    got = sorted((r["id"], r["epoch"]) for r in read_with_deltalake(table).to_pylist())
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        expected = sorted(
            (r["id"], r["epoch"])
            for r in spark.read.schema("id BIGINT, ts TIMESTAMP").json(str(input_dir))
            .selectExpr(*select).collect()
        )
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert got == expected
