"""Helpers for the integration tests: running silt, writing job files and
input data, and reading Delta tables back with independent readers.

Readers:
  * silt itself (`silt read --format jsonl`),
  * deltalake (delta-rs): DeltaTable(path).to_pyarrow_table(),
  * pyarrow over the snapshot's files: the log is replayed here (JSON commits,
    plus Parquet checkpoints if present), each live file is read with
    pyarrow.parquet and the partition values from the log are appended,
  * duckdb: read_parquet over the same files with hive_partitioning.

Rows are compared in silt's jsonl form (Spark's to_json): NULL fields
omitted, timestamps as millisecond ISO-8601 UTC strings, dates as
yyyy-MM-dd, NaN/Infinity as strings.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

# --------------------------------------------------------------------------
# Delta's golden tables


def golden_dir() -> Path:
    """<conformance>/delta-golden: $SILT_CONFORMANCE_DIR, else ../shared/conformance
    beside the repo (the unit tests use the same rule)."""
    repo = Path(__file__).resolve().parents[2]
    base = os.environ.get("SILT_CONFORMANCE_DIR") or repo.parent / "shared" / "conformance"
    return Path(base) / "delta-golden"


def require_golden():
    """Fails the calling test when the golden tables are missing (a skip hid
    that a checkout ran none of them); SILT_ALLOW_MISSING_CONFORMANCE=1 skips
    instead."""
    golden = golden_dir()
    if golden.is_dir():
        return
    if os.environ.get("SILT_ALLOW_MISSING_CONFORMANCE") == "1":
        pytest.skip(f"golden tables not found at {golden} (SILT_ALLOW_MISSING_CONFORMANCE=1)")
    pytest.fail(f"golden tables not found at {golden}: check out the shared folder beside the "
                "repo, set SILT_CONFORMANCE_DIR, or SILT_ALLOW_MISSING_CONFORMANCE=1 to skip")


# --------------------------------------------------------------------------
# Running silt


def run_silt(silt_bin, *args, timeout=120, env=None, cwd=None):
    """Runs silt to completion; returns the CompletedProcess (text output)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [str(silt_bin), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=cwd,
    )


def start_silt(silt_bin, *args, env=None, cwd=None, stdout=subprocess.PIPE,
               stderr=subprocess.PIPE):
    """Starts silt in the background (output to pipes unless redirected)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.Popen(
        [str(silt_bin), *map(str, args)],
        stdout=stdout,
        stderr=stderr,
        text=True,
        env=full_env,
        cwd=cwd,
    )


def describe(proc) -> str:
    """Exit code and output of a finished process, for assertion messages."""
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


# --------------------------------------------------------------------------
# Job files and input data


# SILT_TEST_PARALLELISM=N runs every job written by write_job (and the
# Kafka seed jobs) with `parallelism: N` unless the test sets it: the crash
# tests then kill queries whose batches run in parts on several threads.
TEST_PARALLELISM = int(os.environ.get("SILT_TEST_PARALLELISM", "0") or 0)


def write_job(path: Path, job: dict) -> Path:
    """Writes `job` as a job file. JSON is YAML, so json.dumps is enough."""
    if TEST_PARALLELISM and "parallelism" not in job and \
            str(job.get("type", "stream")).lower() != "maintenance":
        job = dict(job, parallelism=TEST_PARALLELISM)
    path.write_text(json.dumps(job, indent=2) + "\n")
    return path


def json_file_job(
    name,
    input_dir,
    table,
    checkpoint,
    schema,
    max_files_per_trigger=None,
    mode=None,
    corrupt_column=None,
    partition_by=None,
    transform=None,
    trigger=None,
):
    """A job dict for the JSON-lines file source into a Delta table."""
    options = {"path": str(input_dir)}
    if max_files_per_trigger is not None:
        options["maxFilesPerTrigger"] = max_files_per_trigger
    if mode is not None:
        options["mode"] = mode
    if corrupt_column is not None:
        options["columnNameOfCorruptRecord"] = corrupt_column
    job = {
        "name": name,
        "source": {"format": "json", "schema": schema, "options": options},
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(checkpoint),
        "trigger": trigger if trigger is not None else {"availableNow": True},
    }
    if partition_by:
        job["sink"]["partitionBy"] = list(partition_by)
    if transform:
        job["transform"] = transform
    return job


_file_clock = [1_750_000_000.0]


def write_input_file(path: Path, lines) -> Path:
    """Writes a JSON-lines file atomically (temp + rename, as file sources
    expect) with a modification time later than every file written before,
    so that the source's file order is the order of writing."""
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in lines))
    _file_clock[0] += 1.0
    os.utime(tmp, (_file_clock[0], _file_clock[0]))
    os.rename(tmp, path)
    return path


READING_SCHEMA = "id BIGINT, device_id STRING, reading DOUBLE, ok BOOLEAN, event_time TIMESTAMP"
BASE_EVENT_MICROS = 1_782_116_160_000_000  # 2026-06-22T08:16:00Z


def reading_record(record_id: int) -> dict:
    """A deterministic input record for READING_SCHEMA."""
    micros = BASE_EVENT_MICROS + record_id * 1_234_567  # spans several days for 100k ids
    ts = dt.datetime.fromtimestamp(micros // 1_000_000, tz=dt.timezone.utc).replace(
        microsecond=micros % 1_000_000
    )
    rec = {
        "id": record_id,
        "device_id": f"dev-{record_id % 7}",
        "reading": round(record_id * 0.25 + 0.1, 2),
        "ok": record_id % 3 != 0,
        "event_time": ts.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z",
    }
    if record_id % 11 == 0:
        del rec["reading"]  # some NULLs
    return rec


def expected_reading_row(record_id: int) -> dict:
    """reading_record(record_id) as silt's jsonl would print the table row
    (with event_date = to_date(event_time))."""
    rec = reading_record(record_id)
    ts = dt.datetime.strptime(rec["event_time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    row = dict(rec)
    row["event_time"] = format_json_timestamp(ts)
    row["event_date"] = ts.date().isoformat()
    return row


# --------------------------------------------------------------------------
# Delta log replay (independent of silt and of delta-rs)


@dataclass
class Snapshot:
    version: int
    protocol: dict
    metadata: dict
    files: dict  # path (as in the log) -> add action
    txns: dict  # appId -> version
    schema: dict = field(default_factory=dict)

    @property
    def partition_columns(self):
        return list(self.metadata.get("partitionColumns", []))

    @property
    def fields(self):
        return self.schema.get("fields", [])


def log_dir(table) -> Path:
    return Path(table) / "_delta_log"


def log_versions(table):
    """Commit versions present in _delta_log, ascending."""
    out = []
    for p in log_dir(table).glob("*.json"):
        m = re.fullmatch(r"(\d{20})\.json", p.name)
        if m:
            out.append(int(m.group(1)))
    return sorted(out)


def read_commit(table, version):
    """The actions of one commit file, in file order."""
    text = (log_dir(table) / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]



def commits(table):
    """Each commit file's actions: {version: [action dicts]}."""
    out = {}
    for path in sorted(log_dir(table).glob("*.json")):
        if path.stem.isdigit():
            out[int(path.stem)] = [json.loads(line) for line in path.read_text().splitlines()
                                   if line.strip()]
    return out


def latest_action(table, action):
    """The last `action` (metaData, protocol, ...) of the table's commits."""
    found = None
    for _, actions in sorted(commits(table).items()):
        for a in actions:
            if action in a:
                found = a[action]
    return found


def last_commit_info(table):
    """The commitInfo of the table's newest commit."""
    _, actions = max(commits(table).items())
    return next(a["commitInfo"] for a in actions if "commitInfo" in a)


def row_id_high_water_mark(table):
    """The delta.rowTracking domain's rowIdHighWaterMark (-1: none)."""
    mark = -1
    for _, actions in sorted(commits(table).items()):
        for a in actions:
            d = a.get("domainMetadata")
            if d and d["domain"] == "delta.rowTracking" and not d.get("removed"):
                mark = json.loads(d["configuration"])["rowIdHighWaterMark"]
    return mark


def normalized_protocol(protocol):
    """A protocol action as two engines' tables are compared: the versions
    and the feature lists, sorted."""
    return {"minReaderVersion": protocol["minReaderVersion"],
            "minWriterVersion": protocol["minWriterVersion"],
            "readerFeatures": sorted(protocol.get("readerFeatures") or []),
            "writerFeatures": sorted(protocol.get("writerFeatures") or [])}


def _checkpoint_actions(table, version):
    """Actions of the newest Parquet checkpoint at or below `version`, and
    its version; ([], -1) when there is none."""
    best = -1
    for p in log_dir(table).glob("*.checkpoint*.parquet"):
        v = int(p.name[:20])
        if best < v <= version:
            best = v
    if best < 0:
        return [], -1
    actions = []
    for p in sorted(log_dir(table).glob(f"{best:020d}.checkpoint*.parquet")):
        for row in pq.ParquetFile(p).read().to_pylist():
            for key, value in row.items():
                if value is None or key not in ("add", "remove", "metaData", "protocol", "txn"):
                    continue
                value = dict(value)
                if key in ("add", "remove") and isinstance(value.get("partitionValues"), list):
                    value["partitionValues"] = dict(value["partitionValues"])
                actions.append({key: value})
    return actions, best


def snapshot(table, version=None) -> Snapshot:
    versions = log_versions(table)
    assert versions, f"{table} has no Delta commits"
    if version is None:
        version = versions[-1]
    actions, start = _checkpoint_actions(table, version)
    for v in versions:
        if start < v <= version:
            actions.extend(read_commit(table, v))
    snap = Snapshot(version=version, protocol={}, metadata={}, files={}, txns={})
    for action in actions:
        if "protocol" in action:
            snap.protocol = action["protocol"]
        elif "metaData" in action:
            snap.metadata = action["metaData"]
            snap.schema = json.loads(snap.metadata["schemaString"])
        elif "txn" in action:
            snap.txns[action["txn"]["appId"]] = action["txn"]["version"]
        elif "add" in action:
            snap.files[unquote(action["add"]["path"])] = action["add"]
        elif "remove" in action:
            snap.files.pop(unquote(action["remove"]["path"]), None)
    return snap


# --------------------------------------------------------------------------
# Readers


_PRIMITIVES = {
    "string": pa.string(),
    "long": pa.int64(),
    "integer": pa.int32(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "float": pa.float32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
}


def arrow_type(delta_type):
    if isinstance(delta_type, str):
        m = re.fullmatch(r"decimal\((\d+),\s*(\d+)\)", delta_type)
        if m:
            return pa.decimal128(int(m.group(1)), int(m.group(2)))
        return _PRIMITIVES[delta_type]
    kind = delta_type["type"]
    if kind == "struct":
        return pa.struct([(f["name"], arrow_type(f["type"])) for f in delta_type["fields"]])
    if kind == "array":
        return pa.list_(arrow_type(delta_type["elementType"]))
    if kind == "map":
        return pa.map_(arrow_type(delta_type["keyType"]), arrow_type(delta_type["valueType"]))
    raise ValueError(f"unknown Delta type {delta_type!r}")


def parse_partition_value(text, delta_type):
    if text is None or text == "":
        return None
    if delta_type == "string":
        return text
    if delta_type in ("long", "integer", "short", "byte"):
        return int(text)
    if delta_type in ("double", "float"):
        return float(text)
    if delta_type == "boolean":
        return text == "true"
    if delta_type == "date":
        return dt.date.fromisoformat(text)
    if delta_type == "timestamp":
        t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)
    raise ValueError(f"partition type {delta_type} not handled by the test reader")


def snapshot_file_paths(table, snap: Snapshot):
    return [str(Path(table) / p) for p in sorted(snap.files)]


def read_with_pyarrow(table, version=None) -> pa.Table:
    """The snapshot's rows: each live file read with pyarrow.parquet, plus the
    partition columns from the log, columns in table-schema order."""
    snap = snapshot(table, version)
    schema = pa.schema([(f["name"], arrow_type(f["type"])) for f in snap.fields])
    types = {f["name"]: f["type"] for f in snap.fields}
    parts = []
    for rel in sorted(snap.files):
        add = snap.files[rel]
        data = pq.ParquetFile(Path(table) / rel).read()
        columns = []
        for f in schema:
            if f.name in snap.partition_columns:
                value = parse_partition_value(add["partitionValues"].get(f.name), types[f.name])
                columns.append(pa.array([value] * data.num_rows, type=f.type))
            elif f.name in data.column_names:
                columns.append(data.column(f.name).cast(f.type))
            else:
                columns.append(pa.nulls(data.num_rows, type=f.type))
        parts.append(pa.Table.from_arrays(columns, schema=schema))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)


def read_with_deltalake(table, version=None) -> pa.Table:
    from deltalake import DeltaTable

    if version is None:
        return DeltaTable(str(table)).to_pyarrow_table()
    return DeltaTable(str(table), version=version).to_pyarrow_table()


def read_with_spark(spark, table, version=None, timestamp=None) -> pa.Table:
    """The table's rows as pyspark + delta-spark read them (the `spark`
    fixture), as an Arrow table (timestamps in UTC)."""
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    if timestamp is not None:
        reader = reader.option("timestampAsOf", timestamp)
    return spark_to_arrow(reader.load(str(table)))


def spark_to_arrow(df) -> pa.Table:
    """A Spark DataFrame's rows as an Arrow table, through Spark's own Arrow
    serializer (no pandas)."""
    batches = df._collect_as_arrow()
    if not batches:
        return pa.Table.from_batches([], schema=_spark_arrow_schema(df))
    return pa.Table.from_batches(batches)


def _spark_arrow_schema(df) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema)


def duckdb_connect(*extensions):
    """A DuckDB connection with the named extensions (httpfs, delta) loaded
    from their PyPI packages (duckdb-extension-<name>, pinned with duckdb in
    requirements.txt): DuckDB would otherwise download them on first use."""
    import glob
    import importlib

    import duckdb

    con = duckdb.connect()
    for name in extensions:
        package = importlib.import_module(f"duckdb_extension_{name}")
        found = glob.glob(str(Path(package.__file__).parent / "extensions" / "*" /
                              f"{name}.duckdb_extension"))
        assert found, f"duckdb-extension-{name} ships no {name}.duckdb_extension"
        con.execute(f"LOAD '{found[0]}'")
    return con


def duckdb_delta_scan(table, sql_template):
    """Runs sql_template with {t} replaced by DuckDB's own Delta reader
    (the delta extension's delta_scan) over the table. Returns fetchall()."""
    con = duckdb_connect("delta")
    try:
        return con.execute(sql_template.format(t=f"delta_scan('{table}')")).fetchall()
    finally:
        con.close()


def duckdb_query(table, sql_template, version=None):
    """Runs sql_template with {t} replaced by read_parquet over the snapshot's
    files (hive partitioning from the directory names). Returns fetchall()."""
    import duckdb

    files = snapshot_file_paths(table, snapshot(table, version))
    source = f"read_parquet({json.dumps(files)}, hive_partitioning=true)".replace('"', "'")
    con = duckdb.connect()
    try:
        return con.execute(sql_template.format(t=source)).fetchall()
    finally:
        con.close()


def read_with_silt(silt, table, *extra):
    """Rows printed by `silt read --format jsonl --values spark`, parsed: the
    Spark to_json forms that to_json_rows normalizes to (millisecond
    timestamps); `silt read`'s default, exact forms are tested in
    test_read_exact.py."""
    proc = silt("read", table, "--format", "jsonl", "--values", "spark", *extra)
    assert proc.returncode == 0, describe(proc)
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


# --------------------------------------------------------------------------
# Normalization to silt's jsonl form


def format_json_timestamp(t: dt.datetime) -> str:
    if t.tzinfo is not None:
        t = t.astimezone(dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{t.microsecond // 1000:03d}Z"


def is_variant_struct(typ) -> bool:
    """A VARIANT column as Arrow readers without the type give it: a struct
    of exactly the binaries `metadata` and `value`."""
    return (pa.types.is_struct(typ) and typ.num_fields == 2
            and {typ.field(i).name for i in range(2)} == {"metadata", "value"}
            and all(pa.types.is_binary(typ.field(i).type) for i in range(2)))


def decode_variant(metadata: bytes, value: bytes, pos: int = 0):
    """A variant (Parquet's Variant binary encoding) as the Python value of
    its JSON text as silt and Spark print it: objects as dicts, arrays as
    lists, numbers as int/float (decimals as float), NaN/Infinity, dates,
    timestamps and binary as strings (timestamps in UTC)."""
    def uint(b, at, n):
        return int.from_bytes(b[at:at + n], "little")

    def key(i):
        size = ((metadata[0] >> 6) & 3) + 1
        start = 1 + size
        n = uint(metadata, 1, size)
        strings = start + (n + 1) * size
        a = uint(metadata, start + i * size, size)
        b = uint(metadata, start + (i + 1) * size, size)
        return metadata[strings + a:strings + b].decode("utf-8", "replace")

    header = value[pos]
    basic, info = header & 3, header >> 2
    if basic == 1:
        return value[pos + 1:pos + 1 + info].decode("utf-8", "replace")
    if basic in (2, 3):
        large = (info >> (4 if basic == 2 else 2)) & 1
        id_size = ((info >> 2) & 3) + 1 if basic == 2 else 0
        off_size = (info & 3) + 1
        n_bytes = 4 if large else 1
        n = uint(value, pos + 1, n_bytes)
        ids = pos + 1 + n_bytes
        offs = ids + n * id_size
        data = offs + (n + 1) * off_size
        items = [(uint(value, ids + i * id_size, id_size) if basic == 2 else None,
                  data + uint(value, offs + i * off_size, off_size)) for i in range(n)]
        if basic == 2:
            return {key(k): decode_variant(metadata, value, at) for k, at in items}
        return [decode_variant(metadata, value, at) for _, at in items]
    body = value[pos + 1:]
    if info == 0:
        return None
    if info in (1, 2):
        return info == 1
    if info in (3, 4, 5, 6):
        n = {3: 1, 4: 2, 5: 4, 6: 8}[info]
        return int.from_bytes(body[:n], "little", signed=True)
    if info in (7, 14):
        import struct as _struct
        v = _struct.unpack("<d" if info == 7 else "<f", body[:8 if info == 7 else 4])[0]
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return float(v)
    if info in (8, 9, 10):
        n = {8: 4, 9: 8, 10: 16}[info]
        return int.from_bytes(body[1:1 + n], "little", signed=True) / (10 ** body[0])
    if info == 11:
        return (dt.date(1970, 1, 1) + dt.timedelta(days=int.from_bytes(body[:4], "little",
                                                                       signed=True))).isoformat()
    if info in (12, 13):
        micros = int.from_bytes(body[:8], "little", signed=True)
        t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)
        text = t.strftime("%Y-%m-%d %H:%M:%S")
        if t.microsecond:
            text += ("." + f"{t.microsecond:06d}").rstrip("0")
        return text + ("+00:00" if info == 12 else "")
    if info in (15, 16):
        n = uint(body, 0, 4)
        raw = body[4:4 + n]
        return base64.b64encode(raw).decode() if info == 15 else raw.decode("utf-8", "replace")
    if info == 20:
        h = body[:16].hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    raise ValueError(f"variant type id {info} not decoded here")


def _json_value(value, typ):
    if value is None:
        return None
    if is_variant_struct(typ):
        return decode_variant(value["metadata"], value["value"])
    if pa.types.is_timestamp(typ):
        if typ.tz is None:
            return value.strftime("%Y-%m-%dT%H:%M:%S") + f".{value.microsecond // 1000:03d}"
        return format_json_timestamp(value)
    if pa.types.is_date(typ):
        return value.isoformat()
    if pa.types.is_floating(typ):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return float(value)
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        return base64.b64encode(value).decode()
    if pa.types.is_decimal(typ):
        return float(value)
    if pa.types.is_struct(typ):
        out = {}
        for i in range(typ.num_fields):
            f = typ.field(i)
            v = _json_value(value.get(f.name), f.type)
            if v is not None:
                out[f.name] = v
        return out
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return [_json_value(v, typ.value_type) for v in value]
    if pa.types.is_map(typ):
        return {str(k): _json_value(v, typ.item_type) for k, v in value}
    return value


def to_json_rows(table: pa.Table):
    """Rows of an Arrow table in silt's jsonl form (dicts, NULLs omitted)."""
    columns = [(f.name, f.type, table.column(f.name).to_pylist()) for f in table.schema]
    rows = []
    for row_idx in range(table.num_rows):
        row = {}
        for name, typ, values in columns:
            v = _json_value(values[row_idx], typ)
            if v is not None:
                row[name] = v
        rows.append(row)
    return rows


def normalize_silt_rows(rows):
    """Parsed silt jsonl rows with decimals/doubles as floats (JSON ints in
    double columns parse as int in Python; compare them as floats)."""
    out = []
    for row in rows:
        out.append({k: (float(v) if isinstance(v, int) and not isinstance(v, bool) else v)
                    for k, v in row.items()})
    return out


def sort_rows(rows, *keys):
    return sorted(rows, key=lambda r: tuple(str(r.get(k, "")) for k in keys))


def assert_same_rows(actual, expected, what, *keys):
    """Equal multisets of rows, with a readable diff of the first mismatch."""
    a = sort_rows(actual, *keys)
    e = sort_rows(expected, *keys)
    assert len(a) == len(e), f"{what}: {len(a)} rows, expected {len(e)}"
    for i, (x, y) in enumerate(zip(a, e)):
        assert _comparable(x) == _comparable(y), f"{what}: row {i} differs:\n  got      {x}\n  expected {y}"


def _comparable(row):
    return {k: (float(v) if isinstance(v, int) and not isinstance(v, bool) else v) for k, v in row.items()}


# --------------------------------------------------------------------------
# Streaming checkpoint


def checkpoint_query_id(checkpoint) -> str:
    return json.loads((Path(checkpoint) / "metadata").read_text().splitlines()[0])["id"]


def checkpoint_batches(checkpoint, kind):
    """Batch ids with a file in offsets/ or commits/ (ignoring temp files)."""
    d = Path(checkpoint) / kind
    if not d.is_dir():
        return []
    return sorted(int(p.name) for p in d.iterdir() if p.name.isdigit())


def kill(proc):
    """SIGKILL and reap a background silt."""
    try:
        proc.send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def wait_for(predicate, timeout=30.0, interval=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


# --------------------------------------------------------------------------
# Crash tests: kill -9 a running query at a moment aimed by watching its
# table and checkpoint directories (test_*crash*.py, test_dead_letter.py)


def wait_for_change(proc, probe, deadline, interval=0.002):
    """Polls `probe()` (every `interval` seconds; 0 polls without pausing)
    until it differs from its first value or the process exits. True when
    the change was seen while the process ran."""
    start = probe()
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if probe() != start:
            return True
        if interval:
            time.sleep(interval)
    return False


def kill_at_probed_moment(proc, probes, mode, rng, deadline, jitter_s, log_path,
                          interval=0.002):
    """Kills `proc` at the moment `mode` names: a key of `probes` (name ->
    probe function), right after that probe's value changes, or "random", a
    random instant up to `jitter_s` seconds after the "after offsets" probe
    changes (bounded by a batch's start, so a fast build still gets its
    kills in). Returns what to count the kill as: `mode`, or "timeout" when
    the moment did not come by `deadline`; None when silt exited by itself
    first (it drained its input), after asserting it exited 0."""
    if mode == "random":
        seen = wait_for_change(proc, probes["after offsets"], deadline, interval)
        time.sleep(rng.uniform(0.0, jitter_s))
        seen = seen and proc.poll() is None
    else:
        seen = wait_for_change(proc, probes[mode], deadline, interval)
    if proc.poll() is not None:
        assert proc.returncode == 0, f"silt failed on restart; see {log_path}"
        return None
    kill(proc)
    return mode if seen else "timeout"


def kill_after_commit_or_at_random(proc, rng, table, timeout_s, log_path):
    """Kills `proc`, half the time (by `rng`) right after a new version of
    `table`'s log appears (aimed between that table's commit and the next
    table's), otherwise 0.05-0.6 s after the start. Returns "aimed" or
    "random", or None when silt exited by itself first (it drained the
    topic), after asserting it exited 0."""
    started = time.monotonic()
    aimed = rng.random() < 0.5
    if aimed:
        first = Path(table) / "_delta_log"
        known = set(first.glob("*.json")) if first.exists() else set()
        while proc.poll() is None and time.monotonic() < started + timeout_s:
            if first.exists() and set(first.glob("*.json")) - known:
                break
    else:
        end = started + rng.uniform(0.05, 0.6)
        while proc.poll() is None and time.monotonic() < end:
            time.sleep(0.002)
    if proc.poll() is not None:
        proc.wait()
        assert proc.returncode == 0, f"silt failed; see {log_path}"
        return None
    kill(proc)
    return "aimed" if aimed else "random"


def txn_batches(table, query_id):
    """batch -> version of each commit carrying the query's txn (each once)."""
    out = {}
    for version in log_versions(table):
        for action in read_commit(table, version):
            if "txn" in action and action["txn"]["appId"] == query_id:
                assert action["txn"]["version"] not in out, f"{table}: batch committed twice"
                out[action["txn"]["version"]] = version
    return out


def newest_batch(table, query_id):
    """The query's newest batch committed to `table`; -1 for none yet."""
    try:
        return max(txn_batches(table, query_id), default=-1)
    except FileNotFoundError:
        return -1


def landed_between_commits(checkpoint, first, last):
    """Whether the query has committed a batch to table `first` that table
    `last` does not hold yet (a kill landed between the two tables'
    commits); False before the checkpoint names its query."""
    if not (Path(checkpoint) / "metadata").exists():
        return False
    query_id = checkpoint_query_id(checkpoint)
    return newest_batch(first, query_id) > newest_batch(last, query_id)


# --------------------------------------------------------------------------
# One statement in Spark 4 and in silt (the test_delta4*.py modules)


def silt_sql_ok(silt, statement):
    """Runs `silt sql statement` (the `silt` fixture); asserts it succeeds."""
    proc = silt("sql", statement)
    assert proc.returncode == 0, describe(proc)
    return proc


def spark_refusal(spark4, statement):
    """(error class, message) of Spark 4's refusal of `statement` (the
    `spark4` fixture), or None when Spark runs it."""
    try:
        spark4.sql(statement)
    except Exception as e:  # Spark4Error
        text = str(e)
        found = re.search(r"\[([A-Z_]+)\]", text)
        condition = getattr(e, "condition", None) or (found.group(1) if found else None)
        assert condition, text[:800]
        return condition, text
    return None


def assert_silt_refuses_as_spark(silt, statement, condition):
    """Runs `silt sql statement`; asserts it fails naming Spark's error
    class `condition` ("[DELTA_...]" on stderr). Returns the process."""
    proc = silt("sql", statement)
    assert proc.returncode != 0, (statement, condition)
    assert f"[{condition}]" in proc.stderr, (statement, condition, proc.stderr)
    return proc


def violation_lines(text):
    """The constraint and the `- col : value` lines of a
    DELTA_VIOLATE_CONSTRAINT_WITH_VALUES message."""
    lines = text.replace("|", "\n").splitlines()
    out = []
    for i, line in enumerate(lines):
        if "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES" in line:
            out.append(line[line.index("CHECK constraint"):].strip())
            for more in lines[i + 1:]:
                if not more.strip().startswith("- "):
                    break
                out.append(more.strip())
            break
    return out
