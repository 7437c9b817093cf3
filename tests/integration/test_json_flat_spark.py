"""Differential: silt's flat-object fast path of from_json and get_json_object
against live Spark 3.5 (decision 145).

silt reads an event-shaped JSON object (scalar members only) with a
single-pass scanner instead of simdjson's DOM when from_json's schema is all
STRING fields or every get_json_object path over a column is `$.name`; any
text outside the scanner's strict subset goes to the DOM path. These inputs
sit on both sides of that edge (numbers at the limits of the exact double
fast path and of int64, escapes and surrogates, duplicate and null members,
non-ASCII and control bytes, trailing text, nesting, the seed's envelope with
its escaped payload), and the queries are the seed job's shapes. Each query
runs over all inputs in silt's silt_expr_eval and in the session's Spark;
every answer must be the same (no known differences).

The machinery (input encoding, Spark evaluation, comparison) is the JSON
corpus's: test_json_corpus_spark.py and data/json/generate_expected.py.
"""

import shutil
import importlib.util

import pytest

from test_json_corpus_spark import _differences, _eval_tool, _generator, _run_silt

INPUTS = [
    b'{"a":"x","b":1,"c":true}',
    b'{"a":84.3,"b":230.1,"c":0.1}',
    b'{"a":1e22,"b":1e23,"c":-0.0}',
    b'{"a":9007199254740993.0,"b":1234567890.1234567,"c":4.9e-324}',
    b'{"a":-0,"b":0,"c":-12}',
    b'{"a":123456789012345678,"b":1234567890123456789,"c":12345678901234567890}',
    b'{"a":1.5e300,"b":1e400,"c":-1e-400}',
    b'{"a":1E5,"b":1e-5,"c":12.50}',
    b'{"a":0.30000000000000004,"b":100.0,"c":1.0E10}',
    b'{"a":7e-22,"b":7e-23,"c":-12.5E+3}',
    b'{"a":true,"b":false,"c":null}',
    b'{"a":null,"a":"second","b":null}',
    b'{"a":"first","a":"second","b":1,"b":null}',
    b'{"A":"upper","a":"lower"}',
    b'{"a":"q\\"uote\\\\back\\/slash\\n\\u00e9\\u20ac","b":"\\u0000","c":"\\t"}',
    b'{"a":"\\ud83d\\ude00","b":"\\ud800"}',
    b'{"a":"caf\xc3\xa9"}',
    b'{"a":"bad\xff"}',
    b'{"a":"del\x7f"}',
    b'{"a":"tab\there"}',
    b'{"a":1} trailing',
    b'  {"a" : 1 , "b" : "x" }  \n',
    b'{"a":1,}',
    b'{"a":{"x":1},"b":[1,2]}',
    b'{"a":"1.5","b":"true","c":" 7 "}',
    b'{"a":"","b":"ON"}',
    b"{'a':'single'}",
    b'{"a":01}',
    b'{}',
    b'[{"a":1}]',
    b'',
    b'{"device_id":"plug-01","device_type":"smart_plug","ingested_at":"2026-06-22T08:16:00.000Z",'
    b'"payload":"{\\"power\\":84.3,\\"voltage\\":230.1,\\"current\\":0.37,\\"energy\\":12.5,'
    b'\\"state\\":\\"ON\\",\\"linkquality\\":248}"}',
    b'{"device_id":"door-01","device_type":"door_sensor","ingested_at":"2026-06-22T08:16:00Z",'
    b'"payload":"{\\"contact\\":true,\\"battery\\":97,\\"linkquality\\":159}"}',
    b'{"device_id":"x","payload":null}',
    b'{"device_id":7,"payload":"{}"}',
    b'{"payload":"{\\"power\\":1}","payload":"{\\"power\\":2}"}',
    b'{"payload":"{\\"power\\":null,\\"power\\":3.5,\\"state\\":{\\"on\\":1}}"}',
    b'{"payload":"{\\"battery\\":\\"97\\",\\"contact\\":\\"true\\",\\"linkquality\\":1.9}"}',
    # Payloads whose members are escaped twice (quotes and a unicode escape
    # inside a payload string), written with envelope-level unicode escapes,
    # not JSON at all, nested, or repeating a member.
    b'{"payload":"{\\"state\\":\\"a\\\\\\"b\\\\u00e9\\",\\"power\\":1}"}',
    b'{"payload":"{\\u0022power\\u0022:2.5,\\u0022state\\u0022:\\u0022\\u00e9t\\u00e9\\u0022}"}',
    b'{"payload":"{\\"power\\":1,"}',
    b'{"payload":"not json"}',
    b'{"payload":"{\\"state\\":{\\"a\\":[1,2.50,\\"x\\"]},\\"power\\":1e2,\\"battery\\":[]}"}',
    b'{"payload":"{\\"state\\":\\"ON\\",\\"state\\":\\"OFF\\",\\"power\\":1,\\"power\\":2}"}',
]

ENVELOPE = "'device_id STRING, device_type STRING, ingested_at STRING, payload STRING'"
PAYLOAD = f"from_json(j, {ENVELOPE}).payload"

QUERIES = [
    (f"from_json(j, {ENVELOPE})", False),
    ("from_json(j, 'a STRING, b STRING, c STRING')", False),
    ("from_json(j, 'a STRING, b STRING, _corrupt_record STRING')", False),
    ("get_json_object(j, '$.a')", False),
    ("get_json_object(j, '$.b')", False),
    ("get_json_object(j, '$.c')", False),
    ("CAST(get_json_object(j, '$.a') AS DOUBLE)", False),
    ("CAST(get_json_object(j, '$.b') AS DOUBLE)", False),
    ("CAST(get_json_object(j, '$.c') AS INT)", False),
    ("CAST(get_json_object(j, '$.a') AS BOOLEAN)", False),
    ("concat_ws('|', get_json_object(j, '$.a'), CAST(get_json_object(j, '$.b') AS DOUBLE), "
     "CAST(get_json_object(j, '$.c') AS BIGINT), get_json_object(j, '$.missing'))", False),
    (f"get_json_object({PAYLOAD}, '$.power')", False),
    (f"CAST(get_json_object({PAYLOAD}, '$.power') AS DOUBLE)", False),
    (f"CAST(get_json_object({PAYLOAD}, '$.linkquality') AS INT)", False),
    (f"CAST(get_json_object({PAYLOAD}, '$.contact') AS BOOLEAN)", False),
    (f"CAST(get_json_object({PAYLOAD}, '$.battery') AS INT)", False),
    (f"get_json_object({PAYLOAD}, '$.state')", False),
    (f"concat_ws('|', {PAYLOAD}, get_json_object({PAYLOAD}, '$.state'), "
     f"CAST(get_json_object({PAYLOAD}, '$.power') AS DOUBLE), "
     f"CAST(get_json_object({PAYLOAD}, '$.battery') AS INT))", False),
]


def _spark_available():
    return importlib.util.find_spec("pyspark") is not None and shutil.which("java") is not None


@pytest.mark.skipif(not _spark_available(), reason="pyspark or Java not installed")
def test_flat_objects_match_live_spark(request, tmp_path):
    if not _eval_tool().is_file():
        pytest.fail(f"{_eval_tool()} not built")
    spark = request.getfixturevalue("spark")
    silt = _run_silt(tmp_path, INPUTS, QUERIES)
    live = _generator().evaluate_all(spark, INPUTS, QUERIES)
    failures = []
    for want, have in zip(live, silt):
        for index, text in _differences(want, have):
            failures.append(f"{want['query']} [input {index}]: {text}")
    print(f"\n{len(QUERIES)} queries over {len(INPUTS)} inputs, {len(failures)} differ from Spark")
    assert not failures, "\n".join(failures)
