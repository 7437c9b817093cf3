"""Differential JSON corpus: silt's JSON functions vs Spark 3.5's Jackson parser.

data/json/inputs.txt holds odd and malformed JSON inputs (trailing text,
single quotes, unquoted names, comments, leading zeros, NaN/Infinity, control
characters, escapes and surrogates, invalid UTF-8, deep nesting, duplicate
and case-variant keys, numbers out of range, type mismatches, ...);
data/json/queries.txt the queries run over them: from_json with every schema
family, mode and parser option Spark 3.5 gives from_json, get_json_object,
json_tuple, to_json and schema_of_json. data/json/generate_expected.py
recorded Spark's answers in data/json/expected.jsonl.

test_every_query_matches_spark evaluates the same queries with silt's test
tool silt_expr_eval over the same inputs (each input's bytes as a STRING
column, as Spark's CAST(binary AS STRING) holds them) and requires the same
type and text per input; where Spark reports an error silt must too.
Differences listed in data/json/known_differences.tsv (query, input index or
"*", reason) are reported but do not fail.

test_recording_matches_live_spark re-runs every query in Spark (the
session's `spark` fixture) over every 8th input and requires the recording
to be Spark's answer, so a stale or hand-edited recording fails; the whole
corpus is re-recorded with data/json/generate_expected.py.
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
DATA = Path(__file__).resolve().parent / "data" / "json"
EXPECTED = DATA / "expected.jsonl"
KNOWN = DATA / "known_differences.tsv"


@functools.cache
def _generator():
    spec = importlib.util.spec_from_file_location("json_corpus", DATA / "generate_expected.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _eval_tool() -> Path:
    build = Path(os.environ.get("SILT_BUILD_DIR", REPO / "build"))
    return build / "src" / "silt" / "expr" / "silt_expr_eval"


def _expected():
    with EXPECTED.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().split("\n") if line.strip()]


def _known():
    """{(query, index or "*"): reason}."""
    known = {}
    if KNOWN.exists():
        for line in KNOWN.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                query, index, reason = line.split("\t", 2)
                known[(query, index)] = reason
    return known


def _java_decode(data: bytes) -> str:
    """`data` decoded as Java's UTF-8 decoder reads it (how Spark's strings
    print): each malformed unit becomes one U+FFFD, where a surrogate's
    three-byte encoding is one unit and a sequence cut short by the end is
    one (Python's own decoder replaces these byte by byte)."""
    out = []
    pos = 0
    n = len(data)

    def cont(i):
        return i < n and 0x80 <= data[i] <= 0xBF

    while pos < n:
        b1 = data[pos]
        if b1 < 0x80:
            out.append(chr(b1))
            pos += 1
            continue
        bad = 1
        length = 0
        if 0xC2 <= b1 <= 0xDF:
            if cont(pos + 1):
                length = 2
        elif 0xE0 <= b1 <= 0xEF:
            left = n - pos
            b2_bad = pos + 1 < n and (
                (b1 == 0xE0 and data[pos + 1] & 0xE0 == 0x80) or not cont(pos + 1))
            if left < 3:
                bad = 1 if (left > 1 and b2_bad) else left
            elif b2_bad:
                bad = 1
            elif not cont(pos + 2):
                bad = 2
            elif b1 == 0xED and data[pos + 1] >= 0xA0:
                bad = 3
            else:
                length = 3
        elif 0xF0 <= b1 <= 0xF7:
            left = n - pos

            def b2_bad():
                b2 = data[pos + 1]
                return (b1 > 0xF4 or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                        or (b1 == 0xF4 and b2 & 0xF0 != 0x80) or not cont(pos + 1))

            if left < 4:
                if b1 > 0xF4 or (left > 1 and b2_bad()):
                    bad = 1
                elif left > 2 and not cont(pos + 2):
                    bad = 2
                else:
                    bad = left
            elif b2_bad():
                bad = 1
            elif not cont(pos + 2):
                bad = 2
            elif not cont(pos + 3):
                bad = 3
            else:
                length = 4
        if length:
            out.append(data[pos : pos + length].decode("utf-8"))
            pos += length
        else:
            out.append("\ufffd")
            pos += bad
    return "".join(out)


def _run_silt(tmp_path, inputs, queries):
    """silt's records, in the shape of expected.jsonl."""
    gen = _generator()
    table = tmp_path / "inputs.tsv"
    table.write_text(
        "j STRING\n" + "".join(gen.constant(data) + "\n" for data in inputs), encoding="ascii"
    )
    lines = []
    for query, per_row in queries:
        if per_row:
            lines.extend(gen.with_input(query, data) for data in inputs)
        else:
            lines.append("T\t" + query)
    proc = subprocess.run(
        [str(_eval_tool()), "--table", str(table)],
        input="".join(line + "\n" for line in lines).encode("utf-8"),
        capture_output=True,
        timeout=600,
        check=True,
    )
    # Invalid UTF-8 in a value prints as Java's String shows it. Not
    # splitlines(): values may hold U+2028 and other line separators.
    out = [json.loads(_java_decode(line)) for line in proc.stdout.split(b"\n") if line]
    assert len(out) == len(lines), proc.stderr.decode("utf-8", "replace")
    records = []
    pos = 0
    for query, per_row in queries:
        record = {"query": query, "row": per_row}
        if per_row:
            values = []
            dtype = None
            for got in out[pos : pos + len(inputs)]:
                if "error" in got:
                    values.append({"error": got["error"]})
                else:
                    dtype = dtype or got["type"]
                    values.append(got["value"])
            pos += len(inputs)
            record["type"] = dtype
            record["values"] = values
        else:
            got = out[pos]
            pos += 1
            if "error" in got:
                record["error"] = got["error"]
            else:
                record["type"] = got["type"]
                record["values"] = got["values"]
        records.append(record)
    return records


def _differences(expected, got):
    """[(index or "*", text)] where `got` differs from `expected`."""
    if "error" in expected or "error" in got:
        if ("error" in expected) == ("error" in got):
            return []
        if "error" in expected:
            return [("*", f"Spark fails ({expected['error']}) but silt gives a result")]
        return [("*", f"silt fails: {got['error']}")]
    out = []
    if expected["type"] is not None and got["type"] is not None and expected["type"] != got["type"]:
        out.append(("*", f"type {got['type']}, Spark {expected['type']}"))
    for index, (want, have) in enumerate(zip(expected["values"], got["values"])):
        want_error = isinstance(want, dict)
        have_error = isinstance(have, dict)
        if want_error or have_error:
            if want_error != have_error:
                out.append((str(index), f"silt {have!r}, Spark {want!r}"))
        elif want != have:
            out.append((str(index), f"silt {have!r}, Spark {want!r}"))
    return out


@pytest.fixture(scope="module")
def corpus():
    gen = _generator()
    return gen.load_inputs(), gen.load_queries()


def test_corpus_is_well_formed(corpus):
    inputs, queries = corpus
    expected = _expected()
    assert len(inputs) >= 200
    assert [(r["query"], r["row"]) for r in expected] == queries, "re-run generate_expected.py"
    for record in expected:
        if "error" not in record:
            assert len(record["values"]) == len(inputs), record["query"]


def test_every_query_matches_spark(tmp_path, corpus):
    if not _eval_tool().is_file():
        pytest.fail(f"silt_expr_eval not found at {_eval_tool()}: build it or set SILT_BUILD_DIR")
    inputs, queries = corpus
    known = _known()
    failures = []
    noted = []
    compared = 0
    for want, got in zip(_expected(), _run_silt(tmp_path, inputs, queries)):
        compared += 1 if "error" in want else len(want["values"])
        for index, text in _differences(want, got):
            reason = known.get((want["query"], index)) or known.get((want["query"], "*"))
            line = f"{want['query']} [input {index}]: {text}"
            if reason is None:
                failures.append(line)
            else:
                noted.append(f"{line} -- known: {reason}")
    print(
        f"\nJSON corpus: {len(inputs)} inputs x {len(queries)} queries, {compared} answers"
        f" compared with Spark 3.5; {len(failures)} differ, {len(noted)} known differences"
    )
    for line in noted:
        print("  " + line)
    assert not failures, f"{len(failures)} answers differ from Spark:\n" + "\n".join(failures)


def _spark_available():
    return importlib.util.find_spec("pyspark") is not None and shutil.which("java") is not None


# Every query over all inputs takes the test's Spark minutes (a per-input
# query is one Spark job per input, or per failing input); every 8th input
# keeps the check of the recording under a minute.
LIVE_STRIDE = 8


@pytest.mark.skipif(not _spark_available(), reason="pyspark or Java not installed")
def test_recording_matches_live_spark(request, corpus):
    spark = request.getfixturevalue("spark")
    inputs, queries = corpus
    gen = _generator()
    sample = list(range(0, len(inputs), LIVE_STRIDE))
    live = gen.evaluate_all(spark, [inputs[i] for i in sample], queries)
    mismatches = []
    for recorded, now in zip(_expected(), live):
        if "values" in recorded:
            recorded = dict(recorded, values=[recorded["values"][i] for i in sample])
        for index, text in _differences(recorded, now):
            mismatches.append(f"{recorded['query']} [sampled input {index}]: {text}")
    print(
        f"\nlive Spark: {len(live)} queries re-run over {len(sample)} of {len(inputs)} inputs,"
        f" {len(mismatches)} answers differ from the record"
    )
    assert not mismatches, "\n".join(mismatches[:50])
