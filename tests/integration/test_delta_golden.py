"""Delta's golden tables (<repo>/../shared/conformance/delta-golden) read by
`silt read`, compared with delta-rs (deltalake) and with pyspark + delta-spark
(the `spark` fixture) reading the same table.

The Spark comparison covers the latest version of every table and each
earlier commit of every table with more than one (`silt read --version N`
against Spark's versionAsOf N); the delta-rs one the earlier versions of the
time-travel tables (time-travel-*, snapshot-data*). Each version is read once
by silt and once by each reference.

Every table (or table@vN) gets one outcome, printed as a table at the end:
  ok            silt and the reference return the same rows
  ok-duckdb     Spark cannot read it (delta-spark 3.2 predates the feature),
                DuckDB's delta_scan (delta-kernel-rs) can, and silt returns
                the same rows as DuckDB
  ok-silt-only  silt reads it, the reference cannot (nothing to compare against)
  ok-ref-wrong  delta-rs returns wrong rows (REFERENCE_WRONG, DELTA_RS_NULL_ROWS),
                silt the right ones
  both-fail     neither reads it (the deliberately broken tables)
  refused       silt refuses with NotSupported naming a feature it does not
                implement yet, while the reference reads the table
  silt-fails    silt fails otherwise although the reference reads the table
  mismatch      both read it and the rows differ
  crash         silt died from a signal or timed out
The tests fail on mismatch, crash and silt-fails; the Spark one also on
refused.
"""

import json
import struct
import subprocess
from pathlib import Path

import pytest

from urllib.parse import unquote

from helpers import (_checkpoint_actions, duckdb_connect, golden_dir, normalize_silt_rows,
                     read_commit, require_golden,
                     read_with_deltalake, read_with_spark, to_json_rows)

REPO = Path(__file__).resolve().parents[2]
GOLDEN = golden_dir()

# Tables whose earlier versions are compared with delta-rs too (time
# travel). The Spark comparison reads every earlier version of every table
# with more than one commit.
TIME_TRAVEL_PREFIXES = ("time-travel-", "snapshot-data")

# How silt's errors name a capability it does not implement yet (the CLI
# prints the message of a NotSupported status).
REFUSAL_MARKERS = ("not supported", "reading nested parquet column", "the variant type")

# Tables delta-rs (deltalake 1.6) reads wrongly, with the evidence; silt's
# rows are checked against the expected rows given here instead.
REFERENCE_WRONG = {
    # Column mapping (reader version 2, no readerFeatures): delta-rs returns
    # the row with every column null. The add action's stats (minValues =
    # maxValues, one record) and the data file itself hold these values.
    "data-skipping-basic-stats-all-types-columnmapping-id": [{
        "as_int": 0, "as_long": 0, "as_byte": 0, "as_short": 0, "as_float": 0.0,
        "as_double": 0.0, "as_string": "0", "as_date": "2000-01-01",
        "as_timestamp": "2000-01-01T08:00:00.000Z", "as_big_decimal": 0}],
    "data-skipping-basic-stats-all-types-columnmapping-name": [{
        "as_int": 0, "as_long": 0, "as_byte": 0, "as_short": 0, "as_float": 0.0,
        "as_double": 0.0, "as_string": "0", "as_date": "2000-01-01",
        "as_timestamp": "2000-01-01T08:00:00.000Z", "as_big_decimal": 0}],
}


# Column-mapped tables with nested fields for which delta-rs returns the
# right number of rows with every column null (it resolves no physical name
# in them): not a reference here; the Spark comparison checks silt's rows.
DELTA_RS_NULL_ROWS = {
    "table-with-columnmapping-mode-id",
    "table-with-columnmapping-mode-name",
    "table-with-icebegCompatV2Enabled",
}


def _num(value):
    """Numbers compare at float32 precision: silt prints FLOAT columns the way
    Spark's to_json does (shortest text for the float, "0.234"), while
    delta-rs hands back the float widened to a double (0.23399999737739563)."""
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")) or value == int(value):
        return value
    return struct.unpack("f", struct.pack("f", value))[0]


def _canonical(row):
    out = {}
    for key, value in row.items():
        if isinstance(value, bool) or value is None:
            out[key] = value
        elif isinstance(value, (int, float)):
            out[key] = _num(value)
        elif isinstance(value, dict):
            out[key] = _canonical(value)
        elif isinstance(value, list):
            out[key] = [_canonical(v) if isinstance(v, dict) else
                        (_num(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
                        for v in value]
        else:
            out[key] = value
    return json.dumps(out, sort_keys=True)


# silt's answer per (binary, table, version): both reference comparisons
# of a run share one `silt read` of each version.
_SILT_RESULTS = {}


def _silt_rows(silt_bin, table, version=None):
    """(rows, None) or (None, (kind, message)) with kind crash/refused/error."""
    key = (str(silt_bin), str(table), version)
    if key not in _SILT_RESULTS:
        _SILT_RESULTS[key] = _run_silt_read(silt_bin, table, version)
    return _SILT_RESULTS[key]


def _run_silt_read(silt_bin, table, version):
    args = [str(silt_bin), "read", str(table), "--format", "jsonl", "--values", "spark"]
    if version is not None:
        args += ["--version", str(version)]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, ("crash", "timed out")
    if proc.returncode < 0:
        return None, ("crash", f"signal {-proc.returncode}: {proc.stderr.strip()[-300:]}")
    if proc.returncode != 0:
        message = " ".join(proc.stderr.split())
        if "runtime error" in message or "AddressSanitizer" in message:
            return None, ("crash", message[-300:])
        lowered = message.lower()
        kind = "refused" if any(m in lowered for m in REFUSAL_MARKERS) else "error"
        return None, (kind, message[:300])
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return normalize_silt_rows(rows), None


def _reference_rows(table, version=None):
    """(rows, None) or (None, message) from delta-rs."""
    try:
        return to_json_rows(read_with_deltalake(table, version)), None
    except BaseException as exc:  # delta-rs panics surface as PanicException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


def _dv_key(action):
    dv = action.get("deletionVector") or {}
    return (unquote(action["path"]), dv.get("storageType"), dv.get("pathOrInlineDv"),
            dv.get("offset"))


def _expected_rows_with_deletion_vectors(table):
    """For a table whose live files carry deletion vectors: the row count the
    stats and vectors imply (sum of numRecords - cardinality), from a replay
    keyed by (path, deletion vector) as PROTOCOL.md specifies; else None."""
    versions = _versions(table)
    actions, start = _checkpoint_actions(table, versions[-1])
    live = {}
    commits = [actions] + [read_commit(table, v) for v in versions if v > start]
    for commit in commits:
        for action in commit:
            if "remove" in action:
                live.pop(_dv_key(action["remove"]), None)
        for action in commit:
            if "add" in action:
                live[_dv_key(action["add"])] = action["add"]
    if not any(add.get("deletionVector") for add in live.values()):
        return None
    total = 0
    for add in live.values():
        total += json.loads(add["stats"])["numRecords"]
        total -= (add.get("deletionVector") or {}).get("cardinality", 0)
    return total


def _versions(table):
    out = []
    for path in (table / "_delta_log").glob("*.json"):
        stem = path.name[: -len(".json")]
        if stem.isdigit():
            out.append(int(stem))
    return sorted(out)


def _spark_reference(spark):
    """A reference reader over pyspark + delta-spark: (rows, None) or
    (None, message). Reads run one at a time on the shared session: Delta
    sets the Parquet field-id option for id-mode column mapping on the
    calling thread's session state, so concurrent reads from other Python
    threads fail on those tables."""

    def read(table, version=None):
        try:
            return to_json_rows(read_with_spark(spark, table, version=version)), None
        except Exception as exc:  # AnalysisException, Py4JJavaError, ...
            text = " ".join(str(exc).split())
            return None, f"{type(exc).__name__}: {text[:200]}"

    return read


def _duckdb_rows(table, version=None):
    """(rows, None) or (None, message) from DuckDB's delta extension
    (delta_scan, on delta-kernel-rs): the second reference for the latest
    version of tables this Spark (delta-spark 3.2) cannot read, such as the
    type widenings Delta 3.3 added."""
    if version is not None:
        return None, "duckdb: no time travel here"
    con = duckdb_connect("delta")
    try:
        result = con.execute(f"SELECT * FROM delta_scan('{table}')")
        return to_json_rows(result.to_arrow_table()), None
    except Exception as exc:  # duckdb.Error subclasses
        return None, f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    finally:
        con.close()


def _same_rows(silt_rows, ref_rows, ref_name):
    """(True, detail) or (False, detail naming the first difference)."""
    got = sorted(_canonical(r) for r in silt_rows)
    want = sorted(_canonical(r) for r in ref_rows)
    if got == want:
        return True, f"{len(got)} rows"
    if len(got) != len(want):
        return False, f"{len(got)} rows, {ref_name} has {len(want)}"
    for g, w in zip(got, want):
        if g != w:
            return False, f"silt {g[:150]} vs {ref_name} {w[:150]}"
    return False, "rows differ"


def _compare(silt_bin, table, version=None, reference=None, ref_name="delta-rs",
             fallback=None):
    silt_rows, silt_error = _silt_rows(silt_bin, table, version)
    ref_rows, ref_error = (reference or _reference_rows)(table, version)
    if silt_error and silt_error[0] == "crash":
        return "crash", silt_error[1]
    if silt_error and ref_error:
        return "both-fail", f"silt: {silt_error[1][:120]} | {ref_name}: {ref_error[:120]}"
    if silt_error:
        kind = "refused" if silt_error[0] == "refused" else "silt-fails"
        return kind, silt_error[1]
    if ref_error and fallback is not None:
        fb_rows, fb_error = fallback(table, version)
        if fb_rows is not None:
            same, detail = _same_rows(silt_rows, fb_rows, "duckdb")
            if same:
                return "ok-duckdb", f"{detail} = DuckDB's delta_scan; {ref_name}: {ref_error}"
            return "mismatch", f"{detail} ({ref_name}: {ref_error[:100]})"
    if ref_error:
        if version is None:
            expected = _expected_rows_with_deletion_vectors(table)
            if expected is not None:
                if expected != len(silt_rows):
                    return "mismatch", (f"{len(silt_rows)} rows, numRecords - deletion vector "
                                        f"cardinalities = {expected}")
                return "ok-silt-only", (f"{expected} rows = numRecords - deleted; "
                                        f"{ref_name}: {ref_error}")
        return "ok-silt-only", f"{ref_name}: {ref_error}"
    same, detail = _same_rows(silt_rows, ref_rows, ref_name)
    if same:
        return "ok", detail
    if (ref_name == "delta-rs" and table.name in DELTA_RS_NULL_ROWS
            and len(ref_rows) == len(silt_rows) and not any(ref_rows)):
        return "ok-ref-wrong", (f"delta-rs returns {len(ref_rows)} rows of nulls; "
                                "the Spark comparison checks silt's rows")
    if version is None and ref_name == "delta-rs" and table.name in REFERENCE_WRONG:
        got = sorted(_canonical(r) for r in silt_rows)
        expected = sorted(_canonical(r) for r in REFERENCE_WRONG[table.name])
        if got == expected:
            return "ok-ref-wrong", "delta-rs returns wrong rows; silt matches the data files"
    return "mismatch", detail


def _golden_tables():
    return sorted(p for p in GOLDEN.iterdir() if p.is_dir())


def _run_golden(silt_bin, reference=None, ref_name="delta-rs", every_version=False,
                fallback=None):
    """Compares the latest version of every golden table and, with
    `every_version`, each earlier commit of every table (silt read --version N
    against the reference at version N); otherwise only the earlier versions
    of the time-travel tables whose latest version matched."""
    results = []
    for table in _golden_tables():
        outcome, detail = _compare(silt_bin, table, None, reference, ref_name, fallback)
        results.append((table.name, outcome, detail))
        if every_version or (table.name.startswith(TIME_TRAVEL_PREFIXES) and outcome == "ok"):
            for version in _versions(table)[:-1]:
                v_outcome, v_detail = _compare(silt_bin, table, version, reference, ref_name)
                results.append((f"{table.name}@v{version}", v_outcome, v_detail))

    width = max(len(name) for name, _, _ in results)
    lines = [f"silt vs {ref_name}", f"{'table'.ljust(width)}  outcome       detail"]
    for name, outcome, detail in results:
        lines.append(f"{name.ljust(width)}  {outcome.ljust(12)}  {detail}")
    counts = {}
    for _, outcome, _ in results:
        counts[outcome] = counts.get(outcome, 0) + 1
    lines.append("counts: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    print("\n" + "\n".join(lines))
    return results


def test_golden_tables_read_like_delta_rs(silt_bin):
    require_golden()
    results = _run_golden(silt_bin)
    bad = [(n, o, d) for n, o, d in results if o in ("mismatch", "crash", "silt-fails")]
    assert not bad, "golden tables silt gets wrong:\n" + "\n".join(
        f"  {n}: {o}: {d}" for n, o, d in bad)


def test_golden_tables_read_like_spark(silt_bin, spark):
    """The acceptance check: every golden table through `silt read` yields
    the rows pyspark + delta-spark read, or both fail."""
    require_golden()
    results = _run_golden(silt_bin, _spark_reference(spark), "spark", every_version=True,
                          fallback=_duckdb_rows)
    bad = [(n, o, d) for n, o, d in results
           if o in ("mismatch", "crash", "silt-fails", "refused")]
    assert not bad, "golden tables silt reads differently from Spark:\n" + "\n".join(
        f"  {n}: {o}: {d}" for n, o, d in bad)
