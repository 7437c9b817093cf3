"""The monitoring endpoint after the query stopped (docs/metrics.md,
"/healthz"): with `metrics.stopGrace` the server keeps answering once the
query finished or failed by itself, with /healthz failing and the status
saying why, until the grace ends or a stop signal arrives. The rows are
checked with delta-rs; the query id of the JSON log lines against the
checkpoint's metadata.
"""

import json
import re
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.request

import pytest

from helpers import read_with_deltalake, start_silt, wait_for, write_job

ROWS = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=10):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def answers(proc, url):
    assert proc.poll() is None, "silt exited before its grace period"
    try:
        http_get(url, timeout=2)
        return True
    except OSError:
        return False


def generator_job(tmp_path, name, port, checkpoint):
    return write_job(tmp_path / "job.yaml", {
        "name": name,
        "source": {"format": "generator", "options": {"totalRows": ROWS, "numDevices": 4}},
        "sink": {"format": "delta", "path": str(tmp_path / "table")},
        "checkpointLocation": str(checkpoint),
        "trigger": {"availableNow": True},
        # Ended by SIGTERM in the tests, long before.
        "metrics": {"port": port, "stopGrace": "10 minutes"},
    })


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def series(text, name, **labels):
    for line in text.splitlines():
        m = re.match(rf"^{name}\{{(.*)\}} (\S+)$", line)
        if m and all(f'{k}="{v}"' in m.group(1) for k, v in labels.items()):
            return float(m.group(2))
    return None


@pytest.fixture
def run(silt_bin, tmp_path):
    procs = []

    def start(job_file):
        out = open(tmp_path / "silt.stdout", "w")
        err = open(tmp_path / "silt.stderr", "w")
        proc = start_silt(silt_bin, "run", job_file, "--log-format", "json", stdout=out,
                          stderr=err)
        procs.append((proc, out, err))
        return proc

    yield start
    for proc, out, err in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out.close()
        err.close()


def test_a_finished_query_serves_failing_health_until_stopped(run, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    checkpoint = tmp_path / "checkpoint"
    proc = run(generator_job(tmp_path, "finishes", port, checkpoint))
    assert wait_for(lambda: answers(proc, base + "/healthz"), timeout=60, interval=0.1)

    def stopped():
        assert proc.poll() is None, (tmp_path / "silt.stderr").read_text()
        return json.loads(http_get(base + "/status")[1])["state"] == "stopped"

    assert wait_for(stopped, timeout=120, interval=0.2)
    status, body = http_get(base + "/healthz")
    assert (status, body) == (503, "unhealthy: the query has stopped\n")
    doc = json.loads(http_get(base + "/status")[1])
    assert doc["health"] == {"healthy": False, "reason": "the query has stopped"}
    assert doc["lastError"] is None
    assert sum(p["numInputRows"] for p in doc["recentProgress"]) == ROWS
    metrics = http_get(base + "/metrics")[1]
    assert series(metrics, "silt_query_up", query="finishes") == 0
    assert series(metrics, "silt_sink_rows_total", query="finishes") == ROWS
    assert 'class="bad">unhealthy: the query has stopped' in http_get(base + "/")[1]
    assert read_with_deltalake(tmp_path / "table").num_rows == ROWS
    # A stop signal ends the grace period; the run succeeded.
    assert stop(proc) == 0

    # Every log line from the opened checkpoint on carries the query id,
    # the startup lines before the first batch included.
    query_id = json.loads((checkpoint / "metadata").read_text())["id"]
    records = [json.loads(line) for line in (tmp_path / "silt.stderr").read_text().splitlines()]
    first = next(i for i, r in enumerate(records) if r["queryId"] is not None)
    assert all(r["queryId"] == query_id for r in records[first:]), records
    starting = [r for r in records if "starting at batch" in r["message"]]
    assert len(starting) == 1 and starting[0]["batchId"] is None
    assert starting[0]["queryId"] == query_id


def test_a_failed_query_serves_failing_health_and_its_error(run, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # A checkpoint location that is a file: the query fails as it opens it.
    checkpoint = tmp_path / "not-a-directory"
    checkpoint.write_text("x")
    proc = run(generator_job(tmp_path, "fails", port, checkpoint))
    assert wait_for(lambda: answers(proc, base + "/healthz"), timeout=60, interval=0.1)

    def failed():
        assert proc.poll() is None, (tmp_path / "silt.stderr").read_text()
        return json.loads(http_get(base + "/status")[1])["state"] == "failed"

    assert wait_for(failed, timeout=120, interval=0.2)
    status, body = http_get(base + "/healthz")
    assert (status, body) == (503, "unhealthy: the query has failed\n")
    doc = json.loads(http_get(base + "/status")[1])
    assert str(checkpoint) in doc["lastError"]["message"], doc
    assert doc["status"]["message"].startswith("Terminated with exception: ")
    metrics = http_get(base + "/metrics")[1]
    assert series(metrics, "silt_errors_total", query="fails", kind="query") == 1
    assert series(metrics, "silt_query_up", query="fails") == 0
    assert '<pre id="last-error">' in http_get(base + "/")[1]
    # The run's exit status is the query's error, also after the grace.
    assert stop(proc) != 0


def test_the_final_error_line_carries_the_query_id(silt_bin, tmp_path):
    """A query that fails in its first batch (an ANSI cast error): the
    error line silt ends with names the query like every line before it."""
    job_file = write_job(tmp_path / "job.yaml", {
        "source": {"format": "generator", "options": {"totalRows": 10}},
        "transform": [{"select": ["CAST(CAST(value AS STRING) AS INT) AS n"]}],
        "sink": {"format": "delta", "path": str(tmp_path / "table")},
        "checkpointLocation": str(tmp_path / "checkpoint"),
        "trigger": {"availableNow": True},
        "ansi": True,
    })
    proc = subprocess.run([str(silt_bin), "run", str(job_file), "--log-format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    query_id = json.loads((tmp_path / "checkpoint" / "metadata").read_text())["id"]
    records = [json.loads(line) for line in proc.stderr.splitlines()]
    assert records[-1]["level"] == "error" and "Cannot cast" in records[-1]["message"], records
    first = next(i for i, r in enumerate(records) if r["queryId"] is not None)
    assert all(r["queryId"] == query_id for r in records[first:]), records


def test_scrapes_under_load_while_batches_run(run, tmp_path):
    """Several clients scrape every path while the query runs batches and
    stops (`make tsan` runs this with a ThreadSanitizer build: a race makes
    silt exit 66). Every request is answered and the end state is exact."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    total = 20000
    job_file = write_job(tmp_path / "job.yaml", {
        "name": "load",
        "source": {"format": "generator", "options": {
            "totalRows": total, "numDevices": 8, "maxOffsetsPerTrigger": 200}},
        "transform": [{"select": ["CAST(value AS STRING) AS v", "partition", "offset"]}],
        "sink": {"format": "delta", "path": str(tmp_path / "table")},
        "checkpointLocation": str(tmp_path / "checkpoint"),
        "trigger": {"availableNow": True},
        "metrics": {"port": port, "stopGrace": "10 minutes"},
    })
    proc = run(job_file)
    assert wait_for(lambda: answers(proc, base + "/healthz"), timeout=120, interval=0.05)
    done = threading.Event()
    answered, failures = [], []

    def scrape(path):
        while not done.is_set():
            try:
                status, body = http_get(base + path, timeout=30)
            except OSError as e:
                failures.append((path, repr(e)))
                return
            if status not in (200, 503) or not body:
                failures.append((path, status, body[:200]))
            answered.append(path)

    threads = [threading.Thread(target=scrape, args=(p,))
               for p in ("/metrics", "/status", "/healthz", "/", "/metrics", "/status")]
    for t in threads:
        t.start()
    try:
        assert wait_for(lambda: json.loads(http_get(base + "/status")[1])["state"] != "running"
                        and proc.poll() is None, timeout=600, interval=0.2), \
            (tmp_path / "silt.stderr").read_text()[-3000:]
    finally:
        done.set()
        for t in threads:
            t.join(timeout=120)
    assert not failures, failures[:5]
    assert len(set(answered)) == 4
    doc = json.loads(http_get(base + "/status")[1])
    assert doc["state"] == "stopped", doc["lastError"]
    metrics = http_get(base + "/metrics")[1]
    assert series(metrics, "silt_sink_rows_total", query="load") == total
    assert series(metrics, "silt_batches_total", query="load") == total / 200
    assert read_with_deltalake(tmp_path / "table").num_rows == total
    assert stop(proc) == 0, (tmp_path / "silt.stderr").read_text()[-5000:]
