"""Spark 4 + Delta 4 from pytest: one long-lived worker process shared by
the test modules that use it.

pytest runs in .venv (pyspark 3.5, the seed's stack); Spark 4 and delta-spark
4 live in .venv-spark4 (scripts/setup-spark4.sh, `make test-deps`). Spark4
starts `.venv-spark4/bin/python spark4_worker.py`, which holds one local
Spark 4 session with Delta, and sends it snippets of Python to run there.
The `spark4` fixture in conftest.py hands every module the same worker
(started when the first module asks for it), so the run pays the JVM start
and Spark's and Delta's warm-up once, and reset() puts the session back as
it started between modules. A worker that died or timed out is replaced by a
fresh one for the next module; its errors name the module it was serving.

    def test_x(spark4, work):
        spark4.run("spark.range(5).write.format('delta').save(path)", path=str(work / "t"))
        table = spark4.read_delta(work / "t", version=0)   # pyarrow.Table
        rows = spark4.sql("DESCRIBE DETAIL delta.`{}`".format(work / "t"))  # list of dicts
        n = spark4.eval("spark.read.format('delta').load(path).count()", path=str(work / "t"))

Snippets see `spark` (the session), the keyword arguments passed as
variables, and whatever earlier snippets of the same module defined. Values
come back as plain Python (DataFrames as pyarrow Tables, Rows as dicts). A
failure in the worker raises Spark4Error carrying the Python error text and
the Java exception's class name.

Not thread-safe: one request at a time per worker.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import tempfile
from pathlib import Path

import pyarrow as pa

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-spark4"
WORKER = Path(__file__).resolve().parent / "spark4_worker.py"

# The worker's answer to one request; generous because a request may be a
# whole Spark job (OPTIMIZE, a checkpoint) on a shared, busy 2-core machine.
REQUEST_TIMEOUT_S = int(os.environ.get("SILT_SPARK4_TIMEOUT", "1800"))
START_TIMEOUT_S = 600


class Spark4Error(Exception):
    """A snippet failed in the Spark 4 worker. `java_class` names the Java
    exception (e.g. org.apache.spark.sql.delta.DeltaAnalysisException) and
    `condition` Spark's error condition (e.g. DELTA_FEATURE_DROP_...), each
    None when not known (a Python error)."""

    def __init__(self, message: str, java_class: str | None, condition: str | None = None):
        super().__init__(message)
        self.java_class = java_class
        self.condition = condition


def jars() -> list[str]:
    """The Delta 4 jars fetched by scripts/setup-spark4.sh; empty if missing."""
    root = REPO / ".cache" / "spark4-jars"
    found = sorted(root.glob("delta-*/.complete"))
    if not found:
        return []
    return sorted(str(p) for p in found[-1].parent.glob("*.jar"))


def available() -> str | None:
    """None when the Spark 4 environment is set up, else what is missing."""
    if not (VENV / "bin" / "python").exists():
        return f"{VENV} is missing: run scripts/setup-spark4.sh (make test-deps)"
    if not jars():
        return "the Delta 4 jars are missing under .cache/spark4-jars: run scripts/setup-spark4.sh"
    return None


class Spark4:
    """One Spark 4 worker process; close() (or the fixture) stops it."""

    def __init__(self, log_path: Path | None = None, owner: str = ""):
        # The test module being served, named in errors.
        self.owner = owner
        missing = available()
        if missing:
            raise RuntimeError(missing)
        self._tmp = tempfile.TemporaryDirectory(prefix="silt-spark4-")
        self.log_path = Path(log_path) if log_path else Path(self._tmp.name) / "worker.log"
        request_r, self._request_w = os.pipe()
        self._response_r, response_w = os.pipe()
        env = {k: v for k, v in os.environ.items()
               if k not in ("SPARK_HOME", "PYTHONPATH", "PYSPARK_SUBMIT_ARGS",
                            "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
        python = str(VENV / "bin" / "python")
        env.update(PYSPARK_PYTHON=python, SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_LOCAL_DIRS=self._tmp.name)
        warehouse = Path(self._tmp.name) / "warehouse"
        self._log = open(self.log_path, "wb")
        self._proc = subprocess.Popen(
            [python, str(WORKER), str(request_r), str(response_w), ",".join(jars()),
             str(warehouse)],
            pass_fds=(request_r, response_w), stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=self._tmp.name)
        os.close(request_r)
        os.close(response_w)
        self.versions = self._answer(START_TIMEOUT_S, "starting Spark 4")

    def alive(self) -> bool:
        """The worker process runs and close() was not called."""
        return not self._log.closed and self._proc.poll() is None

    def reset(self) -> dict:
        """Puts the session back as the worker started it (spark4_worker.py
        reset(): streaming queries, cache, views, tables, databases,
        temporary functions, session confs, the snippet namespace); returns
        what it undid, by kind."""
        return self._request("reset", "", {})

    # -- requests ---------------------------------------------------------

    def run(self, code: str, **variables):
        """Executes `code` in the worker; returns its `result` variable."""
        return self._request("exec", code, variables)

    def eval(self, expression: str, **variables):
        """The value of a Python expression evaluated in the worker."""
        return self._request("eval", expression, variables)

    def sql(self, query: str) -> list[dict]:
        """Rows of a Spark SQL statement as dicts (Rows converted)."""
        return self.run("result = spark.sql(query).collect()", query=query)

    def df(self, expression: str, **variables) -> pa.Table:
        """A DataFrame expression's rows as a pyarrow Table."""
        return self.eval(expression, **variables)

    def read_delta(self, path, version=None, timestamp=None) -> pa.Table:
        """The Delta table's rows as Spark 4 reads them (time travel by
        version or timestamp), as a pyarrow Table."""
        options = {}
        if version is not None:
            options["versionAsOf"] = str(version)
        if timestamp is not None:
            options["timestampAsOf"] = str(timestamp)
        return self.eval("spark.read.format('delta').options(**options).load(path)",
                         path=str(path), options=options)

    # -- plumbing ---------------------------------------------------------

    def _request(self, op, code, variables):
        if self._proc.poll() is not None:
            raise RuntimeError(f"the Spark 4 worker{self._serving()} has exited "
                               f"({self._proc.returncode}); log tail:\n{self._log_tail()}")
        body = pickle.dumps({"op": op, "code": code, "vars": variables}, protocol=4)
        data = memoryview(struct.pack(">Q", len(body)) + body)
        while data:
            written = os.write(self._request_w, data)
            data = data[written:]
        return self._answer(REQUEST_TIMEOUT_S, code)

    def _answer(self, timeout_s, what):
        header = self._read(8, timeout_s, what)
        (size,) = struct.unpack(">Q", header)
        answer = pickle.loads(self._read(size, timeout_s, what))
        if "error" in answer:
            raise Spark4Error(answer["error"], answer.get("java_class"), answer.get("condition"))
        return _from_plain(answer["ok"])

    def _read(self, size, timeout_s, what):
        chunks = []
        while size > 0:
            ready, _, _ = select.select([self._response_r], [], [], timeout_s)
            if not ready:
                tail = self._log_tail()
                self.close()
                raise TimeoutError(f"Spark 4{self._serving()} gave no answer in {timeout_s} s "
                                   f"to: {what[:200]}\n"
                                   f"log tail:\n{tail}")
            chunk = os.read(self._response_r, min(size, 1 << 20))
            if not chunk:
                code = self._proc.wait(timeout=30)
                raise RuntimeError(f"the Spark 4 worker{self._serving()} exited ({code}) "
                                   f"during: {what[:200]}\n"
                                   f"log tail:\n{self._log_tail()}")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def _serving(self):
        return f" (serving {self.owner})" if self.owner else ""

    def _log_tail(self, lines=40):
        if self._log.closed:
            return "(the worker was stopped)"
        try:
            self._log.flush()
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def close(self):
        if self._proc.poll() is None:
            os.close(self._request_w)  # the worker stops its session and exits
            try:
                self._proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        else:
            try:
                os.close(self._request_w)
            except OSError:
                pass
        try:
            os.close(self._response_r)
        except OSError:
            pass
        self._log.close()
        self._tmp.cleanup()


def _from_plain(value):
    if isinstance(value, dict):
        if set(value) == {"arrow"} and isinstance(value["arrow"], bytes):
            return pa.ipc.open_stream(value["arrow"]).read_all()
        return {k: _from_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_plain(v) for v in value]
    return value
