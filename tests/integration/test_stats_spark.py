"""add.stats of float and double columns holding NaN and the infinities are
the ones delta-spark writes for the same rows ("NaN", "Infinity",
"-Infinity" as JSON strings; NaN sorts above every number), and Spark's
data skipping over silt's stats returns the rows Spark's own table does."""

import json

from helpers import describe, json_file_job, log_versions, read_commit, write_input_file, \
    write_job

FILES = [["1.5", "NaN"], ["NaN"], ["Infinity", "-2"], ["-Infinity", None], ["3", "-0.0"]]


def stats_per_file(table):
    out = []
    for version in log_versions(table):
        for line in (table / "_delta_log" / f"{version:020d}.json").read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                stats = json.loads(action["add"]["stats"])
                out.append({k: stats.get(k) for k in ("numRecords", "minValues", "maxValues",
                                                      "nullCount")})
    return out


def test_non_finite_bounds_equal_delta_sparks(spark, silt, tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i, values in enumerate(FILES):
        write_input_file(inputs / f"part-{i}.json", [json.dumps({"v": v}) for v in values])
    ours = tmp_path / "silt"
    job = json_file_job("stats", inputs, ours, tmp_path / "checkpoint", "v STRING",
                        max_files_per_trigger=1,
                        transform=[{"select": ["CAST(v AS DOUBLE) AS d", "CAST(v AS FLOAT) AS f"]}])
    proc = silt("run", write_job(tmp_path / "job.yaml", job))
    assert proc.returncode == 0, describe(proc)

    theirs = tmp_path / "spark"
    for values in FILES:
        (spark.createDataFrame([(v,) for v in values], "v STRING").coalesce(1)
         .selectExpr("CAST(v AS DOUBLE) AS d", "CAST(v AS FLOAT) AS f")
         .write.format("delta").mode("append").save(str(theirs)))
    assert stats_per_file(ours) == stats_per_file(theirs)

    # Spark skips files by silt's bounds and still finds every row.
    for predicate in ["d > 2", "isnan(d)", "d = double('Infinity')", "f < -1", "d < 0"]:
        got = spark.read.format("delta").load(str(ours)).where(predicate).count()
        want = spark.read.format("delta").load(str(theirs)).where(predicate).count()
        assert got == want, predicate
