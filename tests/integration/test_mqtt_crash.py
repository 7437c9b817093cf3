"""Mosquitto -> silt -> Delta, exactly once from the broker's acknowledgement
on (issue 19's first acceptance point): 50,000 messages published at QoS 1
while silt is killed -9 at least 20 times and the broker is restarted twice;
every message the broker acknowledged to the publisher is in the table
exactly once, and nothing else is.

The kills are aimed like test_crash.py's (reusing its probes): right after
the MQTT WAL grows (messages durable, PUBACKs maybe not yet written), right
after a new offsets/N, right after a new _delta_log version, or at a random
moment of a batch. The broker restarts are graceful (it saves its sessions),
with silt connected and messages in flight to it, so redeliveries of
messages whose PUBACK was lost are exercised as well. The table is read with
delta-rs (deltalake) and DuckDB's delta extension.
"""

import json
import random
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

import mosquitto_service
import torture
from helpers import (duckdb_delta_scan, kill, log_versions, start_silt, wait_for_change,
                     write_job)
from test_crash import count_entries

pytestmark = pytest.mark.skipif(not mosquitto_service.available(),
                                reason="mosquitto not installed (scripts/install-build-deps.sh)")

NUM_MESSAGES = torture.scaled(50_000)
MIN_KILLS = torture.scaled(20)
MAX_KILLS = torture.scaled(40)
# After this many kills (a series of them under `make torture`).
BROKER_RESTARTS_AT = (tuple(torture.restart_points(MIN_KILLS, torture.service_restarts()))
                      if torture.enabled() else (6, 13))
PUBLISH_BURST = 200
PUBLISH_INTERVAL_S = 0.08  # ~2,500 messages/s: publishing spans the kills
TOPICS = ["crash/dev1/events", "crash/other/dev2"]
FILTERS = "crash/+/events, crash/other/#"


class Publisher(threading.Thread):
    """Publishes ids 0..n-1 (JSON payloads) at QoS 1 with paho-mqtt. Around a
    broker restart the test pauses it: it stops publishing and waits for the
    PUBACKs of what it sent, so every attempt is either acknowledged or
    known not to be."""

    def __init__(self, port, n):
        super().__init__(daemon=True)
        import paho.mqtt.client as mqtt
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="silt-test-pub",
                                  clean_session=True)
        self.client.max_inflight_messages_set(100)
        self.client.reconnect_delay_set(0.05, 0.5)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        self.n = n
        self.infos = []  # (id, MQTTMessageInfo)
        self.resume_event = threading.Event()
        self.resume_event.set()
        self.paused = threading.Event()
        self.done = threading.Event()
        self.error = None

    def run(self):
        try:
            next_id = 0
            while next_id < self.n:
                if not self.resume_event.is_set():
                    self._drain()
                    self.paused.set()
                    self.resume_event.wait()
                    self.paused.clear()
                    deadline = time.monotonic() + 30
                    while not self.client.is_connected() and time.monotonic() < deadline:
                        time.sleep(0.05)
                for _ in range(min(PUBLISH_BURST, self.n - next_id)):
                    payload = json.dumps({"id": next_id, "pad": "x" * (next_id % 17)})
                    info = self.client.publish(TOPICS[next_id % 2], payload, qos=1)
                    self.infos.append((next_id, info))
                    next_id += 1
                time.sleep(PUBLISH_INTERVAL_S)
            self._drain()
        except BaseException as e:  # reported by the test
            self.error = e
        finally:
            self.done.set()

    def _drain(self):
        deadline = time.monotonic() + 60
        for _, info in self.infos:
            while not info.is_published() and time.monotonic() < deadline:
                time.sleep(0.01)

    def pause(self):
        self.resume_event.clear()
        assert self.paused.wait(90), "publisher did not drain"

    def resume(self):
        self.resume_event.set()

    def acknowledged(self):
        return {i for i, info in self.infos if info.is_published()}

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture
def broker():
    b = mosquitto_service.start()
    yield b
    b.stop()


def wal_bytes(checkpoint: Path):
    wal = checkpoint / "sources" / "0" / "wal"
    try:
        return sum(p.stat().st_size for p in wal.iterdir())
    except FileNotFoundError:
        return 0


def table_ids(table):
    import deltalake
    if not (Path(table) / "_delta_log").is_dir():
        return Counter()
    t = deltalake.DeltaTable(str(table)).to_pyarrow_table(columns=["id"])
    return Counter(t.column("id").to_pylist())


def test_mqtt_kill_9_and_broker_restarts_keep_every_acknowledged_message_once(
        silt_bin, work, broker):
    table, checkpoint = work / "table", work / "checkpoint"
    job = write_job(work / "job.yaml", {
        "name": "mqtt-crash",
        "source": {"format": "mqtt", "options": {
            "brokerUrl": broker.url, "topics": FILTERS, "clientId": "silt-crash",
            "QoS": 1, "maxMessagesPerTrigger": 3000, "keepAlive": 10}},
        "transform": [{"select": [
            "topic", "message_id", "timestamp",
            "CAST(get_json_object(CAST(payload AS STRING), '$.id') AS BIGINT) AS id"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(checkpoint),
        # Batches of a few hundred messages rather than thousands of tiny
        # ones, so that reading the table back stays quick.
        "trigger": {"processingTime": "250 milliseconds"},
    })
    probes = {
        "after WAL append": lambda: wal_bytes(checkpoint),
        "after offsets": lambda: count_entries(checkpoint / "offsets"),
        "after log version": lambda: count_entries(table / "_delta_log"),
    }
    modes = ["after WAL append", "after offsets", "after log version", "random"]
    rng = random.Random(20261202)
    kills = Counter()
    restarts = 0
    stderr_log = work / "silt-stderr.log"
    publisher = None
    with open(stderr_log, "w") as err:
        # The first run creates the persistent session; publishing starts
        # once silt has subscribed, so the broker queues everything for it.
        proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
        subscribed = checkpoint / "sources" / "0" / "subscriptions"
        deadline = time.monotonic() + 30
        while not subscribed.exists() and time.monotonic() < deadline:
            assert proc.poll() is None, f"silt exited; see {stderr_log}"
            time.sleep(0.02)
        assert subscribed.exists(), f"silt never subscribed; see {stderr_log}"
        publisher = Publisher(broker.port, NUM_MESSAGES)
        publisher.start()
        try:
            while sum(kills.values()) < MAX_KILLS:
                if proc is None:
                    proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL,
                                      stderr=err)
                mode = rng.choice(modes)
                deadline = time.monotonic() + 3
                if mode == "random":
                    time.sleep(rng.uniform(0.05, 1.0))
                    seen = True
                else:
                    seen = wait_for_change(proc, probes[mode], deadline, interval=0)
                assert proc.poll() is None, f"silt exited ({proc.returncode}); see {stderr_log}"
                kill(proc)
                proc = None
                kills[mode if seen else "timeout"] += 1
                total = sum(kills.values())
                if restarts < len(BROKER_RESTARTS_AT) and total == BROKER_RESTARTS_AT[restarts]:
                    # With silt running and the broker delivering to it.
                    proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL,
                                      stderr=err)
                    publisher.pause()
                    time.sleep(rng.uniform(0.2, 0.6))
                    broker.restart()
                    restarts += 1
                    publisher.resume()
                if total >= MIN_KILLS and publisher.done.is_set():
                    break
            assert publisher.done.wait(240), "publisher did not finish"
            assert publisher.error is None, f"publisher failed: {publisher.error!r}"
            acked = publisher.acknowledged()
            attempted = {i for i, _ in publisher.infos}
            # The last run drains what the broker still holds for silt.
            if proc is None:
                proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
            deadline = time.monotonic() + 180
            ids = Counter()
            while time.monotonic() < deadline:
                assert proc.poll() is None, f"silt exited ({proc.returncode}); see {stderr_log}"
                ids = table_ids(table)
                if acked <= ids.keys():
                    break
                time.sleep(1)
            kill(proc)
            proc = None
        finally:
            if proc is not None:
                kill(proc)
            if publisher is not None:
                publisher.stop()

    total_kills = sum(kills.values())
    torture.record("mqtt -> delta (QoS 1, write-ahead log)", kills, len(acked),
                   len(acked - ids.keys()), sum(c - 1 for c in ids.values() if c > 1),
                   restarts=restarts)
    redelivered = stderr_log.read_text().count("redelivered after a lost PUBACK")
    print(f"kills: {dict(kills)}; broker restarts: {restarts}; acknowledged: {len(acked)} of "
          f"{len(attempted)} attempted; table rows: {sum(ids.values())}; "
          f"table versions: {len(log_versions(table))}; connections that dropped a redelivery: "
          f"{redelivered}")
    assert total_kills >= MIN_KILLS, f"only {total_kills} kills ({dict(kills)})"
    assert restarts == len(BROKER_RESTARTS_AT)
    assert len(acked) == NUM_MESSAGES, "the broker did not acknowledge every publish"
    missing = sorted(acked - ids.keys())
    assert not missing, f"{len(missing)} acknowledged messages missing, e.g. {missing[:10]}"
    duplicated = sorted(i for i, c in ids.items() if c > 1)
    assert not duplicated, f"{len(duplicated)} messages twice, e.g. {duplicated[:10]}"
    assert ids.keys() <= attempted
    # DuckDB's own Delta reader sees the same rows.
    rows = duckdb_delta_scan(table, "SELECT count(*), count(DISTINCT id), min(id), max(id), "
                                    "count(DISTINCT topic) FROM {t}")
    assert rows == [(NUM_MESSAGES, NUM_MESSAGES, 0, NUM_MESSAGES - 1, 2)]
