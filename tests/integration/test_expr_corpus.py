"""Expression corpus: every case in data/expr/cases.jsonl evaluated by silt.

Each line is {"expr": <Spark SQL>, "expected": <value as spark-sql prints it,
or null for NULL>, "type": <Spark simpleString, or null when unchecked>}.
The expected values come from the examples in Spark 3.5's built-in function
documentation (`> SELECT ...` lines), so they are Spark's own answers; the
corpus is the seed of the differential test against pyspark (issue 7).

The evaluator is the test-only tool silt_expr_eval (src/silt/expr/
expr_eval_tool.cc, built with the unit tests), found in $SILT_BUILD_DIR
(default <repo>/build).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "data" / "expr" / "cases.jsonl"


def _eval_tool() -> Path:
    build = Path(os.environ.get("SILT_BUILD_DIR", REPO / "build"))
    return build / "src" / "silt" / "expr" / "silt_expr_eval"


def _load_cases():
    with CASES.open() as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def results():
    tool = _eval_tool()
    if not tool.is_file():
        pytest.fail(f"silt_expr_eval not found at {tool}: build it or set SILT_BUILD_DIR")
    cases = _load_cases()
    proc = subprocess.run(
        [str(tool)],
        input="".join(case["expr"] + "\n" for case in cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == len(cases), proc.stderr
    return cases, [json.loads(line) for line in lines]


def _mismatch(case, got):
    if "error" in got:
        return f"error: {got['error']}"
    if got["value"] != case["expected"]:
        return f"value {got['value']!r}, expected {case['expected']!r}"
    if case.get("type") is not None and got["type"] != case["type"]:
        return f"type {got['type']}, expected {case['type']}"
    return None


def test_corpus_is_well_formed():
    cases = _load_cases()
    assert len(cases) >= 100
    for case in cases:
        assert set(case) == {"expr", "expected", "type"}, case
        assert isinstance(case["expr"], str) and "\n" not in case["expr"], case
        assert case["expected"] is None or isinstance(case["expected"], str), case


def test_every_case_matches_spark(results):
    cases, got = results
    failures = []
    for case, result in zip(cases, got):
        problem = _mismatch(case, result)
        if problem is not None:
            failures.append(f"{case['expr']}: {problem}")
    passed = len(cases) - len(failures)
    print(f"\nexpression corpus: {passed}/{len(cases)} cases match Spark 3.5")
    assert not failures, "\n".join(failures)
