"""Differential expression corpus: silt vs Spark 3.5.

data/expr/exprs.txt lists the expressions (every function and operator of
issue 7 and edge cases: NULLs, empty strings, overflow, NaN, -0.0, leap
days, DST changes, malformed dates and JSON). Lines starting "T " run over
the input table data/expr/table.tsv (8 rows of edge values), the others as
`SELECT <expr>`; a case may carry settings: "ansi": true
(spark.sql.ansi.enabled, silt's `ansi: true`) and "tz": <zone> (the
session time zone). data/expr/generate_expected.py evaluated each one with
pyspark 3.5 and recorded Spark's type and value (as spark-sql prints it) in
data/expr/cases.jsonl. This test evaluates the same expressions with silt's
test tool silt_expr_eval (src/silt/expr/expr_eval_tool.cc) and requires the
same type and value for every case; where Spark reports an error silt must
too. Cases marked "known_difference" (data/expr/known_differences.tsv, with
the reason) count as not passing but do not fail the test.

When pyspark and Java are present, a sample of the cases is re-evaluated
live in Spark (the session `spark` fixture) to check the recorded answers.
"""

import functools
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data" / "expr"
CASES = DATA / "cases.jsonl"
TABLE = DATA / "table.tsv"


def _eval_tool() -> Path:
    build = Path(os.environ.get("SILT_BUILD_DIR", REPO / "build"))
    return build / "src" / "silt" / "expr" / "silt_expr_eval"


def _load_cases():
    with CASES.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@functools.cache
def _generator():
    spec = importlib.util.spec_from_file_location("generate_expected", DATA / "generate_expected.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tool_line(case):
    """One silt_expr_eval input line: settings, table marker, expression."""
    prefix = ("@ansi\t" if case.get("ansi") else "") + (f"@tz={case['tz']}\t" if "tz" in case else "")
    return prefix + ("T\t" if case.get("table") else "") + case["expr"] + "\n"


@pytest.fixture(scope="module")
def results():
    tool = _eval_tool()
    if not tool.is_file():
        pytest.fail(f"silt_expr_eval not found at {tool}: build it or set SILT_BUILD_DIR")
    cases = _load_cases()
    lines = "".join(_tool_line(case) for case in cases)
    proc = subprocess.run(
        [str(tool), "--table", str(TABLE)],
        input=lines,
        capture_output=True,
        encoding="utf-8",
        # BINARY values print as their bytes read as UTF-8 (Spark: new
        # String(bytes, UTF_8), invalid bytes become U+FFFD).
        errors="replace",
        timeout=300,
        check=True,
    )
    out = proc.stdout.splitlines()
    assert len(out) == len(cases), proc.stderr
    return cases, [json.loads(line) for line in out]


def _mismatch(case, got):
    if "spark_error" in case:
        if "error" in got:
            return None
        return f"Spark reports an error ({case['spark_error']}) but silt gives {got}"
    if "error" in got:
        return f"error: {got['error']}"
    value = got["values"] if case.get("table") else got["value"]
    if value != case["expected"]:
        return f"value {value!r}, expected {case['expected']!r}"
    if case.get("type") is not None and got["type"] != case["type"]:
        return f"type {got['type']}, expected {case['type']}"
    return None


def test_corpus_is_well_formed():
    cases = _load_cases()
    assert len(cases) >= 500
    allowed = {"expr", "expected", "type", "table", "spark_error", "known_difference", "ansi", "tz"}
    for case in cases:
        assert {"expr", "expected", "type"} <= set(case) <= allowed, case
        assert isinstance(case["expr"], str) and "\n" not in case["expr"], case
        if case.get("table"):
            assert case["expected"] is None or isinstance(case["expected"], list), case
        else:
            assert case["expected"] is None or isinstance(case["expected"], str), case


def _label(case):
    return _generator().case_key(case)


def test_every_case_matches_spark(results):
    cases, got = results
    failures = []
    known = []
    for case, result in zip(cases, got):
        problem = _mismatch(case, result)
        if "known_difference" in case:
            known.append(f"{_label(case)}: {case['known_difference']}")
            continue
        if problem is not None:
            failures.append(f"{_label(case)}: {problem}")
    passed = len(cases) - len(failures) - len(known)
    ansi = sum(1 for case in cases if case.get("ansi"))
    zoned = sum(1 for case in cases if "tz" in case)
    print(
        f"\nexpression corpus: {passed}/{len(cases)} cases match Spark 3.5"
        f" ({len(known)} known differences, {len(failures)} failures;"
        f" {ansi} with ANSI on, {zoned} in a non-UTC session time zone)"
    )
    for line in known:
        print(f"  known difference: {line}")
    assert not failures, "\n".join(failures)


def _spark_available():
    return importlib.util.find_spec("pyspark") is not None and shutil.which("java") is not None


@pytest.mark.skipif(not _spark_available(), reason="pyspark or Java not installed")
def test_recorded_answers_match_live_spark(request):
    """Re-evaluates every 8th case in Spark and compares with the record."""
    spark = request.getfixturevalue("spark")
    gen = _generator()
    gen.register_table(spark)
    mismatches = []
    sample = _load_cases()[::8]
    for case in sample:
        if "known_difference" in case or "uuid" in case["expr"] or "monotonically" in case["expr"]:
            continue
        conf = {key: case[key] for key in ("ansi", "tz") if key in case}
        live = gen.case_for(spark, case["expr"], case.get("table", False), {}, conf)
        if "spark_error" in case or "spark_error" in live:
            if ("spark_error" in case) != ("spark_error" in live):
                mismatches.append(f"{case['expr']}: recorded {case}, live {live}")
            continue
        if live["expected"] != case["expected"] or live["type"] != case["type"]:
            mismatches.append(f"{case['expr']}: recorded {case}, live {live}")
    print(f"\nlive Spark re-check: {len(sample) - len(mismatches)}/{len(sample)} sampled cases agree")
    assert not mismatches, "\n".join(mismatches)
