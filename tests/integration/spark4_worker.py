"""The Spark 4 side of tests/integration/spark4.py: runs in .venv-spark4
(pyspark 4 + delta-spark 4), never imported by pytest.

    .venv-spark4/bin/python spark4_worker.py REQUEST_FD RESPONSE_FD JARS WAREHOUSE

Starts one local Spark 4 session with Delta, sends a "ready" frame, then
serves requests until the request pipe closes. Frames on both pipes are an
8-byte big-endian length followed by a pickle. A request is
{"op": "exec" | "eval" | "reset", "code": str, "vars": dict}; "exec" runs
the code in a namespace holding `spark`, the request's vars and what earlier
requests defined, and answers with the namespace's `result` (None if unset);
"eval" answers with the value of the expression; "reset" (between test
modules sharing the worker) puts the session back as it was when it
started: see reset(). Answers are {"ok": value} or
{"error": text, "java_class": name-or-None, "condition": Spark error
condition-or-None}. Values cross as plain Python:
a DataFrame becomes {"arrow": IPC stream bytes}, a Row a dict, tuples lists.

The pipes are not stdout: the JVM and log4j write there (the parent sends
stdout/stderr to a log file).
"""

import datetime
import decimal
import os
import pickle
import struct
import sys
import traceback


def read_frame(fd):
    header = _read_exactly(fd, 8)
    if header is None:
        return None
    (size,) = struct.unpack(">Q", header)
    body = _read_exactly(fd, size)
    if body is None:
        raise EOFError("request pipe closed inside a frame")
    return pickle.loads(body)


def _read_exactly(fd, size):
    chunks = []
    while size > 0:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def write_frame(fd, value):
    body = pickle.dumps(value, protocol=4)
    data = struct.pack(">Q", len(body)) + body
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def to_plain(value):
    """Spark's result objects as values the pytest side can unpickle without
    pyspark 4 (DataFrames as Arrow IPC streams)."""
    from pyspark.sql import DataFrame, Row

    if isinstance(value, DataFrame):
        import pyarrow as pa

        table = value.toArrow()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return {"arrow": sink.getvalue().to_pybytes()}
    if isinstance(value, Row):
        return {k: to_plain(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return {to_plain(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str, bytes, bytearray,
                                            decimal.Decimal, datetime.date,
                                            datetime.datetime)):
        return value
    return repr(value)


def java_class(exc):
    """The Java exception class behind a Py4J or captured Spark error."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    if java is not None:
        try:
            return java.getClass().getName()
        except Exception:  # noqa: BLE001 (the gateway may be gone)
            return None
    return None


def make_session(jars, warehouse):
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("silt-integration-tests-spark4")
        .config("spark.jars", jars)
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.sql.warehouse.dir", warehouse)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def session_confs(spark):
    return {row.key: row.value for row in spark.sql("SET").collect()}


def user_functions(spark):
    """Names of the functions not built into Spark (Delta's table_changes
    among them)."""
    return {name for (name,) in spark.sql("SHOW USER FUNCTIONS").collect()}


def baseline_of(spark):
    """What reset() restores: the session confs and the user functions a
    fresh session has."""
    return {"confs": session_confs(spark), "functions": user_functions(spark)}


def reset(spark, namespace, baseline):
    """The session as a fresh worker's: active streaming queries stopped,
    cached data and Delta's log cache dropped, current catalog and database
    the defaults, every temporary view (local and global), table,
    non-default database and function a fresh session lacks dropped,
    session confs back to the fresh session's (`baseline`: the ones set
    since unset, changed ones restored), and the snippet namespace emptied. Answers what it undid (a dict of lists)."""
    undone = {"queries": [], "views": [], "tables": [], "databases": [], "functions": [],
              "confs": []}
    for query in spark.streams.active:
        undone["queries"].append(query.name or str(query.id))
        query.stop()
    spark.catalog.clearCache()
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
    spark.catalog.setCurrentCatalog("spark_catalog")
    spark.catalog.setCurrentDatabase("default")
    for db in spark.catalog.listDatabases():
        if db.name != "default":
            undone["databases"].append(db.name)
            spark.sql(f"DROP DATABASE `{db.name}` CASCADE")
    for table in spark.catalog.listTables("default"):
        if table.isTemporary:
            undone["views"].append(table.name)
            spark.catalog.dropTempView(table.name)
        else:
            undone["tables"].append(table.name)
            spark.sql(f"DROP TABLE IF EXISTS default.`{table.name}`")
    global_temp = spark.conf.get("spark.sql.globalTempDatabase", "global_temp")
    for table in spark.catalog.listTables(global_temp):
        if table.database == global_temp:
            undone["views"].append(f"{global_temp}.{table.name}")
            spark.catalog.dropGlobalTempView(table.name)
    for name in user_functions(spark) - baseline["functions"]:
        undone["functions"].append(name)
        if "." in name:  # a persistent function, catalog.database.name
            spark.sql(f"DROP FUNCTION IF EXISTS {name}")
        else:
            spark.sql(f"DROP TEMPORARY FUNCTION IF EXISTS `{name}`")
    confs = baseline["confs"]
    now = session_confs(spark)
    for key, value in now.items():
        if confs.get(key) != value:
            undone["confs"].append(key)
            if key in confs:
                spark.conf.set(key, confs[key])
            else:
                spark.conf.unset(key)
    for key, value in confs.items():
        if key not in now:
            undone["confs"].append(key)
            spark.conf.set(key, value)
    namespace.clear()
    namespace["spark"] = spark
    return {k: v for k, v in undone.items() if v}


def main():
    request_fd, response_fd = int(sys.argv[1]), int(sys.argv[2])
    jars, warehouse = sys.argv[3], sys.argv[4]
    try:
        spark = make_session(jars, warehouse)
        from importlib.metadata import version

        write_frame(response_fd, {"ok": {"spark": spark.version,
                                         "delta_spark": version("delta-spark")}})
    except Exception as exc:  # noqa: BLE001 (reported to the parent)
        write_frame(response_fd, {"error": traceback.format_exc(), "java_class": java_class(exc)})
        return 1
    baseline = baseline_of(spark)
    namespace = {"spark": spark}
    while True:
        request = read_frame(request_fd)
        if request is None:
            break
        try:
            namespace.update(request.get("vars") or {})
            if request["op"] == "reset":
                value = reset(spark, namespace, baseline)
            elif request["op"] == "eval":
                value = eval(request["code"], namespace)  # noqa: S307 (test code)
            else:
                namespace.pop("result", None)
                exec(request["code"], namespace)  # noqa: S102 (test code)
                value = namespace.get("result")
            write_frame(response_fd, {"ok": to_plain(value)})
        except Exception as exc:  # noqa: BLE001 (reported to the parent)
            condition = getattr(exc, "getCondition", None)
            write_frame(response_fd, {"error": "".join(traceback.format_exception_only(exc)),
                                      "java_class": java_class(exc),
                                      "condition": condition() if condition else None})
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
