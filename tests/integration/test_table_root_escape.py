"""No command deletes, overwrites or creates anything outside the table root,
whatever the log says (issue #23, point 2): a hostile commit adds files
outside the table through `../`, `%2E%2E/`, an absolute path and a `file:`
URI, and removes others (and a `_delta_log` file) through the same ways; then
OPTIMIZE, VACUUM LITE, VACUUM, RESTORE and the streaming sink run, and
everything outside the table is byte for byte as it was. VACUUM reports each
path it skipped."""

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from helpers import (
    describe,
    json_file_job,
    log_versions,
    read_with_silt,
    write_input_file,
    write_job,
)

SCHEMA = "id BIGINT, name STRING"


def tree_state(root: Path):
    """Every file and directory under `root`: size, mtime and content hash."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            state[os.path.join(dirpath, name)] = "dir"
        for name in filenames:
            p = Path(dirpath) / name
            st = p.stat()
            state[str(p)] = (st.st_size, st.st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
    return state


def outside_state(work: Path):
    """What is outside the table (and its checkpoint, which the sink owns)."""
    top = sorted(p.name for p in work.iterdir())
    return top, tree_state(work / "outside")


def test_no_command_touches_anything_outside_the_table_root(silt, work):
    table, checkpoint, inputs = work / "table", work / "checkpoint", work / "in"
    inputs.mkdir()
    job = write_job(work / "job.yaml", json_file_job(
        "escape", inputs, table, checkpoint, schema=SCHEMA))
    write_input_file(inputs / "a.json", ['{"id": 1, "name": "one"}'])
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    write_input_file(inputs / "b.json", ['{"id": 2, "name": "two"}'])
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    assert log_versions(table) == [0, 1]

    # Outside the table: Parquet copies of a data file (so OPTIMIZE can read
    # them) and plain files the hostile removes point at.
    outside = work / "outside"
    outside.mkdir()
    first_add = next(json.loads(line)["add"] for line in
                     (table / "_delta_log" / "00000000000000000000.json").read_text().splitlines()
                     if "add" in json.loads(line))
    data_file = table / first_add["path"]
    for name in ("added1", "added2", "added3", "added4"):
        shutil.copy(data_file, outside / f"{name}.parquet")
    for name in ("removed1", "removed2", "removed3", "removed4"):
        (outside / f"{name}.parquet").write_bytes(b"must survive")
    old = int(time.time() * 1000) - 30 * 86_400_000

    def add(path):
        entry = dict(first_add)
        entry.update(path=path, modificationTime=old, dataChange=True)
        return {"add": entry}

    def remove(path):
        return {"remove": {"path": path, "deletionTimestamp": old, "dataChange": True,
                           "extendedFileMetadata": True, "partitionValues": {}, "size": 12}}

    hostile = [
        {"commitInfo": {"timestamp": old, "operation": "WRITE", "operationParameters": {}}},
        add("../outside/added1.parquet"),
        add("%2E%2E/outside/added2.parquet"),
        add(str(outside / "added3.parquet")),
        add("file://" + str(outside / "added4.parquet")),
        remove("../outside/removed1.parquet"),
        remove("p=1/%2E%2E/%2E%2E/outside/removed2.parquet"),
        remove(str(outside / "removed3.parquet")),
        remove("file://" + str(outside / "removed4.parquet")),
        remove("_delta_log/00000000000000000000.json"),
    ]
    (table / "_delta_log" / "00000000000000000002.json").write_text(
        "".join(json.dumps(action) + "\n" for action in hostile))
    before = outside_state(work)
    log_before = sorted(p.name for p in (table / "_delta_log").iterdir())

    def assert_untouched(what):
        assert outside_state(work) == before, f"{what} touched something outside the table root"

    proc = silt("optimize", table)
    assert proc.returncode == 0, describe(proc)
    assert_untouched("optimize")
    assert len(read_with_silt(silt, table)) == 6  # 2 rows + 4 outside copies, compacted

    # RESTORE brings the outside files back into the table (it only checks
    # that they exist); the next OPTIMIZE removes them again.
    proc = silt("restore", table, "--version", "2")
    assert proc.returncode == 0, describe(proc)
    assert_untouched("restore")
    assert len(read_with_silt(silt, table)) == 6
    proc = silt("optimize", table)
    assert proc.returncode == 0, describe(proc)
    assert_untouched("optimize")

    proc = silt("vacuum", table, "--lite", "--retain", "0h", "--unsafe-ignore-retention-check")
    assert proc.returncode == 0, describe(proc)
    assert_untouched("vacuum --lite")
    report = proc.stdout + proc.stderr
    for hostile_path in ("../outside/added1.parquet", "%2E%2E/outside/added2.parquet",
                         str(outside / "added3.parquet"), "../outside/removed1.parquet",
                         "p=1/%2E%2E/%2E%2E/outside/removed2.parquet",
                         str(outside / "removed3.parquet"),
                         "file://" + str(outside / "removed4.parquet")):
        assert hostile_path in report, f"skip of {hostile_path} not reported:\n{report}"
    assert "outside the table root" in report, report
    # Not even a file inside the root that the log hides from VACUUM.
    assert log_before == sorted(p.name for p in (table / "_delta_log").iterdir()
                                if p.name in log_before)
    assert len(read_with_silt(silt, table)) == 6

    proc = silt("vacuum", table, "--retain", "0h", "--unsafe-ignore-retention-check")
    assert proc.returncode == 0, describe(proc)
    assert_untouched("vacuum")

    write_input_file(inputs / "c.json", ['{"id": 3, "name": "three"}'])
    proc = silt("run", job)
    assert proc.returncode == 0, describe(proc)
    assert_untouched("the streaming sink")
    assert sorted(r["id"] for r in read_with_silt(silt, table)) == [1, 1, 1, 1, 1, 2, 3]
