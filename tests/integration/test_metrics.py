"""The monitoring endpoint of `silt run` (docs/metrics.md) against real tools:
a Prometheus server (Debian's `prometheus`) scrapes a running Kafka job and
PromQL over the scraped series gives the rows the Delta table holds (read
with delta-rs) and a lag that reaches 0; promtool lints the exposition;
headless Chromium renders the status page (DOM checked, screenshot saved);
/healthz fails while the broker is down (killed, then restarted on its
data) and recovers after, with the failed lag lookups in /status, the page,
silt_errors_total and one warning per failure streak;
the Grafana dashboard's structure and every PromQL expression are checked
against the same Prometheus; `--log-format json` lines are JSON and no
secret of the job reaches a log line, a metric or the status page.

One job runs for the whole module (a fresh broker of its own, since a test
stops it); the tests read it in order. `scripts/install-build-deps.sh --monitoring` installs
Prometheus and Chromium.
"""

import json
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

from helpers import describe, read_with_deltalake, start_silt, wait_for, write_job

REPO = Path(__file__).resolve().parents[2]
QUERY = "metrics-test"
# Its tests halt and restart the broker: not the shared one (conftest.py).
KAFKA_OWN_BROKER = True
FIRST_RECORDS = 1500
MORE_RECORDS = 400
# Appear in the job file; must never appear in any output.
S3_SECRET = "s3-secret-" + uuid.uuid4().hex
SASL_SECRET = "sasl-secret-" + uuid.uuid4().hex


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    """(status, body text); HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Prometheus:
    """A throwaway Prometheus on loopback scraping `target` every second."""

    def __init__(self, target, work: Path):
        self.dir = work
        self.port = free_port()
        config = work / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n  - job_name: silt\n    metrics_path: /metrics\n"
            f"    static_configs:\n      - targets: ['{target}']\n")
        self.log = open(work / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={work / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT)
        ok = wait_for(lambda: self._ready(), timeout=60, interval=0.2)
        if not ok:
            self.stop()
            raise RuntimeError("Prometheus did not become ready:\n" +
                               (work / "prometheus.log").read_text(errors="replace"))

    def _ready(self):
        if self.proc.poll() is not None:
            return False
        try:
            return http_get(f"http://127.0.0.1:{self.port}/-/ready", timeout=2)[0] == 200
        except OSError:
            return False

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        status, body = http_get(url)
        return status, json.loads(body)

    def query(self, expr):
        """The instant vector of `expr` as {labels-tuple: value}."""
        status, body = self.api("query", query=expr)
        assert status == 200 and body["status"] == "success", (expr, body)
        result = body["data"]["result"]
        if body["data"]["resultType"] == "scalar":
            return {(): float(result[1])}
        return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in result}

    def scalar(self, expr):
        values = list(self.query(expr).values())
        return values[0] if len(values) == 1 else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def produce(silt_bin, kafka, topic, count, start):
    proc = subprocess.run([str(silt_bin), "produce", "--bootstrap-servers", kafka.bootstrap,
                           "--topic", topic, "--count", str(count), "--from", str(start),
                           "--devices", "4"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, describe(proc)


class Job:
    pass


@pytest.fixture(scope="module")
def job(kafka, silt_bin, tmp_path_factory):
    for tool in ("prometheus", "promtool", "chromium"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed: run scripts/install-build-deps.sh --monitoring (make test-deps)")
    work = tmp_path_factory.mktemp("metrics")
    j = Job()
    j.work = work
    j.topic = f"m-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(j.topic, 3)
    produce(silt_bin, kafka, j.topic, FIRST_RECORDS, 0)
    j.table = work / "table"
    j.port = free_port()
    job_file = write_job(work / "job.yaml", {
        "name": QUERY,
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap,
            "subscribe": j.topic,
            "startingOffsets": "earliest",
            # Several batches for the backlog, so that Prometheus sees the
            # lag fall.
            "maxOffsetsPerTrigger": 250,
            # Wait out a stopped broker instead of failing the query.
            "fetchOffset.numRetries": 1000,
            "fetchOffset.retryIntervalMs": 200,
            # A secret the client holds (unused on a PLAINTEXT listener).
            "kafka.sasl.password": SASL_SECRET,
        }},
        "transform": [
            {"select": ["from_json(CAST(value AS STRING), 'device_id STRING, device_type "
                        "STRING, ingested_at STRING') AS e", "partition", "offset",
                        "timestamp AS event_time"]},
            {"select": ["e.device_id", "e.device_type", "partition", "offset", "event_time"]},
            # Every record must reach the table (the counts below are exact),
            # so no record may be late: the producer's devices advance in
            # event time at different rates across the partitions, and when
            # a produce lands over several triggers one batch can take one
            # partition minutes ahead of another (a make-test run dropped
            # 104 of 400 records as late with a 10-second delay).
            {"withWatermark": {"eventTime": "event_time", "delayThreshold": "1 day"}},
            # A stateful step whose keys are unique: every row passes, and the
            # state metrics have values.
            {"dropDuplicates": ["partition", "offset"]},
        ],
        "sink": {"format": "delta", "path": str(j.table)},
        "checkpointLocation": str(work / "checkpoint"),
        "trigger": {"processingTime": "1 second"},
        "storage": {"s3": {"accessKey": "metrics-test-key", "secretKey": S3_SECRET}},
        "metrics": {"port": j.port, "healthTimeout": "4 seconds", "lagInterval": "500 ms"},
    })
    j.stdout_path = work / "silt.stdout"
    j.stderr_path = work / "silt.stderr"
    stdout = open(j.stdout_path, "w")
    stderr = open(j.stderr_path, "w")
    j.proc = start_silt(silt_bin, "run", job_file, "--progress-json", "--log-format", "json",
                        stdout=stdout, stderr=stderr)
    j.base = f"http://127.0.0.1:{j.port}"

    def serving():
        assert j.proc.poll() is None, j.stderr_path.read_text()
        try:
            return http_get(j.base + "/healthz", timeout=2)[0] in (200, 503)
        except OSError:
            return False

    assert wait_for(serving, timeout=60, interval=0.1), "the metrics endpoint never answered"
    j.prometheus = Prometheus(f"127.0.0.1:{j.port}", work)
    j.kafka = kafka
    j.silt_bin = silt_bin
    yield j
    j.prometheus.stop()
    if j.proc.poll() is None:
        j.proc.send_signal(signal.SIGTERM)
        try:
            j.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            j.proc.kill()
            j.proc.wait()
    stdout.close()
    stderr.close()


def table_rows(table):
    try:
        return read_with_deltalake(table).num_rows
    except Exception:  # not created yet
        return 0


def caught_up(j, expected):
    """Prometheus' view equals the table's and the broker's: every record in
    the table, counted as read and written, and no lag left."""
    p = j.prometheus
    return (table_rows(j.table) == expected
            and p.scalar(f'sum(silt_sink_rows_total{{query="{QUERY}"}})') == expected
            and p.scalar(f'sum(silt_source_rows_total{{query="{QUERY}"}})') == expected
            and p.scalar(f'count(silt_kafka_lag_records{{query="{QUERY}"}})') == 3
            and p.scalar(f'max(silt_kafka_lag_records{{query="{QUERY}"}})') == 0)


def test_prometheus_counts_match_the_table_and_lag_reaches_zero(job):
    assert wait_for(lambda: caught_up(job, FIRST_RECORDS), timeout=120, interval=0.5), \
        job.stderr_path.read_text()[-3000:]
    p = job.prometheus
    # The committed offsets are the broker's end offsets.
    ends = job.kafka.end_offsets(job.topic)
    assert sum(ends.values()) == FIRST_RECORDS
    committed = p.query(f'silt_kafka_committed_offset{{query="{QUERY}"}}')
    assert {int(dict(k)["partition"]): v for k, v in committed.items()} == ends

    produce(job.silt_bin, job.kafka, job.topic, MORE_RECORDS, FIRST_RECORDS)
    total = FIRST_RECORDS + MORE_RECORDS
    assert wait_for(lambda: caught_up(job, total), timeout=120, interval=0.5)
    assert p.scalar(f'sum(silt_batches_total{{query="{QUERY}"}})') >= total / 250
    assert p.scalar(f'silt_state_rows{{query="{QUERY}"}}') == total
    assert p.scalar(f'sum(silt_batch_duration_seconds_count{{query="{QUERY}"}})') == \
        p.scalar(f'sum(silt_batches_total{{query="{QUERY}"}})')
    assert p.scalar("process_resident_memory_bytes{job='silt'}") > 0


def test_exposition_passes_promtool(job):
    status, text = http_get(job.base + "/metrics")
    assert status == 200
    lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                          text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    for name in ("silt_sink_rows_total", "silt_kafka_lag_records", "silt_batch_duration_seconds",
                 "silt_commit_duration_seconds", "silt_trigger_lateness_seconds",
                 "silt_watermark_delay_seconds", "silt_event_time_delay_seconds",
                 "silt_state_memory_bytes", "process_cpu_seconds_total",
                 "process_resident_memory_bytes"):
        assert f"\n# TYPE {name} " in text, name


def test_status_holds_the_recent_progress_records(job):
    status, body = http_get(job.base + "/status")
    assert status == 200
    doc = json.loads(body)
    assert doc["name"] == QUERY and doc["state"] == "running"
    assert doc["health"]["healthy"] is True
    assert set(doc["status"]) == {"message", "isDataAvailable", "isTriggerActive"}
    # recentProgress is what --progress-json printed, record for record
    # (read after /status, so stdout holds at least as much).
    printed = [json.loads(line) for line in job.stdout_path.read_text().splitlines()
               if line.startswith("{")]
    recent = doc["recentProgress"]
    assert recent
    first = [p["batchId"] for p in printed].index(recent[0]["batchId"])
    assert recent == printed[first:first + len(recent)]
    assert [row["lag"] for row in doc["kafkaLag"]] == [0, 0, 0]


def test_status_page_in_headless_chromium(job, tmp_path):
    chromium = ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(chromium + ["--dump-dom", job.base + "/"], capture_output=True,
                         text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr
    html = dom.stdout
    assert re.search(r'<p id="health" class="ok">healthy', html), html[:2000]
    batch_ids = [int(b) for b in re.findall(r'<tr class="batch"><td>(\d+)</td>', html)]
    progress = json.loads(http_get(job.base + "/status")[1])["recentProgress"]
    assert batch_ids[:3] == sorted(batch_ids, reverse=True)[:3]
    assert batch_ids[0] >= progress[-1]["batchId"] - 1
    lag_cells = re.findall(r'<td class="lag">(\d+)</td>', html)
    assert lag_cells == ["0", "0", "0"]
    assert '<b id="total-lag">0</b>' in html
    shot = tmp_path / "status-page.png"
    subprocess.run(chromium + ["--window-size=1280,1400", f"--screenshot={shot}",
                               job.base + "/"], capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 0
    print(f"status page screenshot: {shot}")


def lag_errors(job):
    """silt_errors_total{kind="kafka_lag"} summed over codes, from /metrics."""
    text = http_get(job.base + "/metrics")[1]
    return sum(float(m.group(1)) for m in re.finditer(
        r'^silt_errors_total\{[^}]*kind="kafka_lag"[^}]*\} (\S+)$', text, re.M))


def log_records(job):
    return [json.loads(line) for line in job.stderr_path.read_text().splitlines() if line]


LAG_WARNING = "looking up the Kafka end offsets: "
LAG_RECOVERED = "Kafka end offsets answer again"


def test_healthz_fails_while_the_broker_is_down_and_recovers(job):
    """The broker is killed (its data kept) and restarted on the same port:
    the failed lag lookups show in /status, on the page, in
    silt_errors_total and in one warning per failure streak; /healthz fails
    (no trigger completes while the source cannot answer) and recovers."""
    assert http_get(job.base + "/healthz")[0] == 200
    assert lag_errors(job) == 0
    job.kafka.halt()
    try:
        assert wait_for(lambda: http_get(job.base + "/healthz")[0] == 503, timeout=120,
                        interval=0.2)
        status, body = http_get(job.base + "/healthz")
        # Lookups keep failing while the broker is away: counted each time.
        assert wait_for(lambda: lag_errors(job) >= 2, timeout=120, interval=0.2)

        def lag_error_shown():
            doc = json.loads(http_get(job.base + "/status")[1])
            error = doc["lastError"]
            return error is not None and error["message"].startswith(LAG_WARNING)

        assert wait_for(lag_error_shown, timeout=60, interval=0.2)
        doc = json.loads(http_get(job.base + "/status")[1])
        page = http_get(job.base + "/")[1]
    finally:
        job.kafka.restart()
    assert status == 503 and body.startswith("unhealthy: no batch or trigger completed for "), body
    assert doc["health"]["healthy"] is False and doc["state"] == "running"
    assert 'class="bad">unhealthy' in page
    assert re.search(r'<pre id="last-error">[^<]*' + re.escape(LAG_WARNING), page), page
    # The lag shown is the last known one.
    assert [row["lag"] for row in doc["kafkaLag"]] == [0, 0, 0]

    assert wait_for(lambda: http_get(job.base + "/healthz")[0] == 200, timeout=180, interval=0.2)
    assert wait_for(lambda: any(r["message"] == LAG_RECOVERED for r in log_records(job)),
                    timeout=120, interval=0.5)
    assert job.proc.poll() is None
    # One warning per failure streak (each ended by an "answer again" line),
    # although more lookups than that failed.
    records = log_records(job)
    warnings = [r for r in records if r["level"] == "warn" and r["component"] == "metrics"
                and r["message"].startswith(LAG_WARNING)]
    recovered = [r for r in records if r["message"] == LAG_RECOVERED]
    assert warnings and len(warnings) == len(recovered), (warnings, recovered)
    print("lag lookup warnings:", [r["message"] for r in warnings])
    assert lag_errors(job) > len(warnings)
    # The query goes on where it was: new records still arrive exactly once.
    produce(job.silt_bin, job.kafka, job.topic, 100, FIRST_RECORDS + MORE_RECORDS)
    assert wait_for(lambda: caught_up(job, FIRST_RECORDS + MORE_RECORDS + 100), timeout=180,
                    interval=0.5)


def test_json_logs_and_no_secret_anywhere(job):
    outputs = {
        "/metrics": http_get(job.base + "/metrics")[1],
        "/status": http_get(job.base + "/status")[1],
        "/": http_get(job.base + "/")[1],
        "stdout": job.stdout_path.read_text(),
        "stderr": job.stderr_path.read_text(),
    }
    for where, text in outputs.items():
        for secret in (S3_SECRET, SASL_SECRET):
            assert secret not in text, f"a secret of the job appears in {where}"
    lines = outputs["stderr"].splitlines()
    assert lines
    query_id = json.loads((job.work / "checkpoint" / "metadata").read_text())["id"]
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    for record in records:
        assert {"time", "level", "component", "queryId", "batchId", "message"} <= set(record)
        assert record["level"] in ("debug", "info", "warn", "error")
    # From the opened checkpoint on, every line carries the query id (the
    # startup lines before the first batch too).
    first = next(i for i, r in enumerate(records) if r["queryId"] is not None)
    assert all(r["queryId"] == query_id for r in records[first:])
    assert any("starting at batch" in r["message"] and r["batchId"] is None
               for r in records[first:])


PANEL_TYPES = {"row", "timeseries", "stat", "gauge", "table", "bargauge", "text"}


def dashboard_exprs(dash):
    """Every target expression of the Grafana dashboard, checked against the
    dashboard JSON model as Grafana documents it (schemaVersion, uid, panel
    ids and grid positions, data source references, template variables)."""
    for key, kind in (("title", str), ("uid", str), ("schemaVersion", int), ("panels", list),
                      ("templating", dict), ("time", dict), ("tags", list)):
        assert isinstance(dash.get(key), kind), key
    assert dash["schemaVersion"] >= 36
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert variables["query"]["type"] == "query"
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    exprs = [variables["query"]["query"]["query"].replace("label_values(silt_query_info, query)",
                                                          "silt_query_info")]
    for panel in dash["panels"]:
        assert panel["type"] in PANEL_TYPES, panel["type"]
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24 and grid["h"] > 0
        if panel["type"] == "row":
            continue
        assert panel["title"] and panel["targets"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert len(ref_ids) == len(set(ref_ids))
        for target in panel["targets"]:
            exprs.append(target["expr"])
    return exprs


def test_grafana_dashboard_expressions_run_on_the_scraped_series(job):
    dash = json.loads((REPO / "examples" / "grafana" / "silt.json").read_text())
    exprs = dashboard_exprs(dash)
    names = set(job.prometheus.api("label/__name__/values")[1]["data"])
    for expr in exprs:
        # Grafana's variables as Grafana would put them in.
        promql = expr.replace("$__rate_interval", "1m").replace('=~"$query"', f'=~"{QUERY}"')
        assert "$" not in promql, promql
        # silt_errors_total has series only once an error happened.
        for name in re.findall(r"\b(silt_[a-z_]+|process_[a-z_]+)", promql):
            if name == "silt_errors_total":
                continue
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            assert name in names or base + "_bucket" in names, (name, expr)
        status, body = job.prometheus.api("query", query=promql)
        assert status == 200 and body["status"] == "success", (promql, body)
        # Every panel but the error ones draws something for this job.
        if "silt_errors_total" not in promql:
            assert body["data"]["result"], promql
