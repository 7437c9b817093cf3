"""Fixtures for the integration tests: they drive the real `silt` binary.

The binary comes from $SILT_BIN (set by `make test`), else
<repo>/build/src/silt/cli/silt. Reference readers (deltalake, pyarrow, duckdb)
and the helpers that use them live in helpers.py.
"""

import os
import sys
from pathlib import Path

import pytest

import helpers
import kafka_service

REPO = Path(__file__).resolve().parents[2]


def _silt_path() -> Path:
    env = os.environ.get("SILT_BIN")
    return Path(env) if env else REPO / "build" / "src" / "silt" / "cli" / "silt"


@pytest.fixture(scope="session")
def silt_bin() -> Path:
    path = _silt_path()
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(f"silt binary not found at {path}: build it (make build) or set SILT_BIN")
    return path


@pytest.fixture
def silt(silt_bin):
    """A runner: silt(*args, timeout=..., env=..., cwd=...) -> CompletedProcess."""

    def run(*args, **kwargs):
        return helpers.run_silt(silt_bin, *args, **kwargs)

    return run


@pytest.fixture
def work(tmp_path) -> Path:
    """A fresh directory for one test's input files, tables and checkpoints."""
    return tmp_path


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def _spark_jars() -> list:
    """The Delta jars and Spark's Kafka connector fetched by
    scripts/setup-spark.sh (cached in .cache); empty without Delta's."""
    jars_dir = REPO / ".cache" / "spark-jars"
    delta = sorted(str(p) for p in jars_dir.glob("delta-*/*.jar"))
    kafka = sorted(str(p) for p in jars_dir.glob("kafka-connector-*/*.jar"))
    return delta + kafka if delta else []


@pytest.fixture(scope="session")
def spark():
    """A local pyspark 3.5 session with delta-spark, as the seed job runs it.

    Loopback only (driver bound to 127.0.0.1, no UI), UTC session time zone,
    two cores. Shared by every test of the run: starting Spark takes seconds.
    Tests use spark.read.format("delta").load(path) and may create tables.
    """
    jars = _spark_jars()
    if not jars:
        pytest.fail("Delta jars for Spark are missing: run scripts/setup-spark.sh (make test-deps)")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("silt-integration-tests")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.sql.warehouse.dir", str(REPO / ".cache" / "spark-warehouse"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


class _SharedSpark4:
    """The one Spark 4 worker of the run, lent to one module at a time."""

    def __init__(self):
        self.worker = None

    def lend(self, module: str):
        import spark4 as spark4_module

        if self.worker is not None and not self.worker.alive():
            self.worker.close()  # died (or timed out) serving the previous module
            self.worker = None
        if self.worker is None:
            self.worker = spark4_module.Spark4(owner=module)
        self.worker.owner = module
        return self.worker

    def take_back(self, module: str):
        worker, self.worker = self.worker, None
        if worker is None or not worker.alive():
            if worker is not None:
                worker.close()
            return
        try:
            worker.reset()
        except Exception as e:
            worker.close()
            raise RuntimeError(f"resetting the shared Spark 4 worker after {module} failed "
                               f"(the next module gets a fresh one): {e}") from e
        worker.owner = ""
        self.worker = worker

    def close(self):
        if self.worker is not None:
            self.worker.close()
            self.worker = None


@pytest.fixture(scope="session")
def _spark4_shared():
    shared = _SharedSpark4()
    yield shared
    shared.close()


@pytest.fixture(scope="module")
def spark4(_spark4_shared, request):
    """Spark 4 + delta-spark 4 (from .venv-spark4): a worker process holding
    one local session, driven through spark4.Spark4 (run/eval/sql/read_delta;
    see spark4.py). One worker serves the whole run, started when the first
    module asks for it; after each module it is reset (spark4_worker.py
    reset(): streaming queries, cache, temporary views, tables, databases,
    temporary functions and session confs back to the start, snippet
    variables gone), so a module sees what a fresh worker would show. A
    worker that died, timed out or failed to reset is replaced for the next
    module; errors name the module it was serving. Fails when
    scripts/setup-spark4.sh has not run."""
    import spark4 as spark4_module

    missing = spark4_module.available()
    if missing:
        pytest.fail(missing)
    module = request.node.nodeid
    yield _spark4_shared.lend(module)
    _spark4_shared.take_back(module)


class _SharedKafka:
    """The plain broker the Kafka test modules share, started on first use."""

    def __init__(self):
        self.broker = None

    def lend(self):
        if self.broker is not None and self.broker.process.poll() is not None:
            self.broker.stop()  # died: the next module gets a fresh one
            self.broker = None
        if self.broker is None:
            self.broker = kafka_service.start()
            self.broker.shared = True
        return self.broker

    def close(self):
        if self.broker is not None:
            self.broker.stop()
            self.broker = None


@pytest.fixture(scope="session")
def _kafka_shared():
    shared = _SharedKafka()
    yield shared
    shared.close()


@pytest.fixture(scope="module")
def kafka(_kafka_shared, request):
    """A Kafka broker on loopback (kafka_service.start()). One broker serves
    every module of the run, started when the first asks for it: its tests
    create their own topics (unique names) and consumer groups. A module
    whose tests stop or restart the broker (halt(), which refuses on the
    shared one) sets `KAFKA_OWN_BROKER = True` and gets a broker of its own,
    stopped after it. A shared broker that died is replaced for the next
    module."""
    if not kafka_service.available():
        pytest.skip(f"Kafka not downloaded to {kafka_service.kafka_libs()}: "
                    "run scripts/setup-kafka.sh")
    if getattr(request.module, "KAFKA_OWN_BROKER", False):
        broker = kafka_service.start()
        yield broker
        broker.stop()
        return
    yield _kafka_shared.lend()


@pytest.fixture(scope="module")
def secure_kafka():
    """A Kafka broker for one test module with its SASL_SSL listener too
    (kafka_service.start(sasl_ssl=True): SASL users and a test CA)."""
    if not kafka_service.available():
        pytest.skip(f"Kafka not downloaded to {kafka_service.kafka_libs()}: "
                    "run scripts/setup-kafka.sh")
    broker = kafka_service.start(sasl_ssl=True)
    yield broker
    broker.stop()
