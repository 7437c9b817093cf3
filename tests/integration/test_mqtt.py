"""The MQTT source against a scripted broker and against Mosquitto.

A scripted MQTT 3.1.1 broker (a socket speaking the few packets needed)
observes what silt sends and when: that a PUBACK arrives only once the
message is in the write-ahead log on disk, that a message redelivered
after a lost PUBACK is acknowledged without a second copy in the table,
that a resumed session is not re-subscribed (which would make a broker
resend its retained messages) while a new one is, and that in a new session
a message with a reused packet id is a new message.

examples/zigbee2mqtt.yaml runs against Mosquitto with the seed's two
devices; pyspark computes the expected rows by running the seed's
transformation on the same (topic, payload) records.
"""

import datetime as dt
import json
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

import mosquitto_service
from helpers import kill, start_silt, write_job

REPO = Path(__file__).resolve().parents[2]

CONNECT, CONNACK, PUBLISH, PUBACK, SUBSCRIBE, SUBACK = 1, 2, 3, 4, 8, 9
PINGREQ, PINGRESP, DISCONNECT = 12, 13, 14


def _remaining_length(n):
    out = bytearray()
    while True:
        b = n % 128
        n //= 128
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


class ScriptedBroker:
    """One client connection at a time; the test drives every packet."""

    def __init__(self):
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(4)
        self.server.settimeout(30)
        self.port = self.server.getsockname()[1]
        self.conn = None

    def accept(self, session_present):
        """Waits for a client, answers its CONNECT; returns the client id."""
        self.conn, _ = self.server.accept()
        self.conn.settimeout(30)
        kind, _, body = self.read()
        assert kind == CONNECT
        # Variable header: protocol name, level, flags, keep alive; then the
        # client id.
        name_len = int.from_bytes(body[0:2], "big")
        pos = 2 + name_len + 4
        id_len = int.from_bytes(body[pos:pos + 2], "big")
        client_id = body[pos + 2:pos + 2 + id_len].decode()
        clean = bool(body[2 + name_len + 1] & 0x02)
        self.send(bytes([CONNACK << 4, 2, 1 if session_present else 0, 0]))
        return client_id, clean

    def _recv_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.conn.recv(n - len(data))
            if not chunk:
                raise ConnectionError("client closed the connection")
            data += chunk
        return data

    def read(self):
        """The next packet other than PINGREQ (answered here)."""
        while True:
            first = self._recv_exact(1)[0]
            n, mult = 0, 1
            while True:
                b = self._recv_exact(1)[0]
                n += (b & 0x7F) * mult
                mult *= 128
                if not b & 0x80:
                    break
            body = self._recv_exact(n)
            kind = first >> 4
            if kind == PINGREQ:
                self.send(bytes([PINGRESP << 4, 0]))
                continue
            return kind, first & 0x0F, body

    def poll(self, timeout):
        """The next packet, or None when none comes within `timeout`."""
        self.conn.settimeout(timeout)
        try:
            return self.read()
        except socket.timeout:
            return None
        finally:
            self.conn.settimeout(30)

    def send(self, data):
        self.conn.sendall(data)

    def expect_subscribe(self):
        kind, _, body = self.read()
        assert kind == SUBSCRIBE, f"expected SUBSCRIBE, got packet type {kind}"
        pid = body[0:2]
        filters, pos = [], 2
        while pos < len(body):
            n = int.from_bytes(body[pos:pos + 2], "big")
            filters.append((body[pos + 2:pos + 2 + n].decode(), body[pos + 2 + n]))
            pos += 3 + n
        self.send(bytes([SUBACK << 4]) + _remaining_length(2 + len(filters)) + pid +
                  bytes(1 for _ in filters))
        return filters

    def publish(self, topic, payload, mid, dup=False, retain=False):
        t = topic.encode()
        body = len(t).to_bytes(2, "big") + t + mid.to_bytes(2, "big") + payload
        first = (PUBLISH << 4) | (0x08 if dup else 0) | 0x02 | (0x01 if retain else 0)
        self.send(bytes([first]) + _remaining_length(len(body)) + body)

    def expect_puback(self, mid):
        kind, _, body = self.read()
        assert kind == PUBACK and int.from_bytes(body[0:2], "big") == mid, (kind, body)

    def drop(self):
        self.conn.close()
        self.conn = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
        self.server.close()


def wal_bytes(checkpoint):
    wal = Path(checkpoint) / "sources" / "0" / "wal"
    return b"".join(p.read_bytes() for p in sorted(wal.iterdir()))


def table_rows(table):
    import deltalake
    if not (Path(table) / "_delta_log").is_dir():
        return []
    return deltalake.DeltaTable(str(table)).to_pyarrow_table().to_pylist()


def wait_for_rows(proc, table, n, stderr_log, timeout=60):
    deadline = time.monotonic() + timeout
    rows = []
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"silt exited; see {stderr_log.read_text()[-3000:]}"
        rows = table_rows(table)
        if len(rows) >= n:
            return rows
        time.sleep(0.2)
    raise AssertionError(f"table has {len(rows)} rows, expected {n}")


def mqtt_job(work, broker_url, topics="sensors/#", trigger=None, **options):
    job = {
        "name": "mqtt",
        "source": {"format": "mqtt", "options": {
            "brokerUrl": broker_url, "topics": topics, "clientId": "silt-scripted", **options}},
        "transform": [{"select": ["topic", "CAST(payload AS STRING) AS body", "qos",
                                  "retained", "timestamp", "message_id"]}],
        "sink": {"format": "delta", "outputMode": "append", "path": str(work / "table")},
        "checkpointLocation": str(work / "checkpoint"),
    }
    if trigger:
        job["trigger"] = trigger
    return write_job(work / "job.yaml", job)


def test_puback_follows_the_wal_and_redeliveries_are_not_duplicated(silt_bin, work):
    broker = ScriptedBroker()
    stderr_log = work / "silt-stderr.log"
    job = mqtt_job(work, f"tcp://127.0.0.1:{broker.port}", topics="sensors/+/temp, sensors/x/#")
    table, checkpoint = work / "table", work / "checkpoint"
    with open(stderr_log, "w") as err:
        proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
        try:
            client_id, clean = broker.accept(session_present=False)
            assert client_id == "silt-scripted" and not clean
            assert broker.expect_subscribe() == [("sensors/+/temp", 1), ("sensors/x/#", 1)]

            # Every PUBACK finds its message in the WAL file already.
            for mid in range(1, 201):
                payload = f"reading-{mid:05d}".encode()
                broker.publish(f"sensors/d{mid % 3}/temp", payload, mid, retain=mid == 1)
                broker.expect_puback(mid)
                assert payload in wal_bytes(checkpoint), f"PUBACK {mid} before the WAL write"

            # A PUBACK lost with the connection: the broker resends the
            # message (same id, DUP) in the resumed session.
            broker.publish("sensors/x/lost", b"lost-ack", 201)
            broker.expect_puback(201)
            broker.drop()
            client_id, _ = broker.accept(session_present=True)
            # A resumed session keeps its subscriptions: no SUBSCRIBE (which
            # would make a real broker resend every retained message).
            broker.publish("sensors/x/lost", b"lost-ack", 201, dup=True)
            broker.expect_puback(201)
            broker.publish("sensors/x/lost", b"after-redelivery", 202)
            broker.expect_puback(202)
            assert broker.poll(0.5) is None, "silt sent more than the PUBACKs"

            # A new session (the broker lost its state): silt subscribes again
            # and a message reusing an old id is a new message.
            broker.drop()
            broker.accept(session_present=False)
            assert len(broker.expect_subscribe()) == 2
            broker.publish("sensors/x/lost", b"lost-ack", 201)
            broker.expect_puback(201)

            rows = wait_for_rows(proc, table, 203, stderr_log)
        finally:
            kill(proc)
            broker.close()
    bodies = sorted(r["body"] for r in rows)
    assert len(rows) == 203, len(rows)
    assert bodies.count("lost-ack") == 2  # once per session, not per delivery
    assert bodies.count("after-redelivery") == 1
    assert [b for b in bodies if b.startswith("reading-")] == \
        [f"reading-{m:05d}" for m in range(1, 201)]
    first = next(r for r in rows if r["body"] == "reading-00001")
    assert first["retained"] is True and first["qos"] == 1 and first["message_id"] == 1
    assert first["topic"] == "sensors/d1/temp"
    assert all(not r["retained"] for r in rows if r["body"] != "reading-00001")
    assert "redelivered after a lost PUBACK" in stderr_log.read_text()


def test_a_packet_id_seen_long_ago_is_a_new_message(silt_bin, work):
    """Packet ids come round: the same id, topic and payload again after
    more than the redelivery window (16,384 records) is a new message, as
    when a sensor repeats its reading 65,535 messages later."""
    broker = ScriptedBroker()
    stderr_log = work / "silt-stderr.log"
    job = mqtt_job(work, f"tcp://127.0.0.1:{broker.port}", topics="sensors/#")
    filler = 17_000
    with open(stderr_log, "w") as err:
        proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
        try:
            broker.accept(session_present=False)
            broker.expect_subscribe()
            broker.publish("sensors/door", b'{"contact":true}', 1)
            broker.expect_puback(1)

            def send():
                for i in range(filler):
                    broker.publish("sensors/plug", b"%d" % i, 2 + i % 60000)
            sender = threading.Thread(target=send, daemon=True)
            sender.start()
            for i in range(filler):
                broker.expect_puback(2 + i % 60000)
            sender.join(60)
            broker.publish("sensors/door", b'{"contact":true}', 1)
            broker.expect_puback(1)
            rows = wait_for_rows(proc, work / "table", filler + 2, stderr_log)
        finally:
            kill(proc)
            broker.close()
    assert sum(r["body"] == '{"contact":true}' for r in rows) == 2
    assert "redelivered after a lost PUBACK" not in stderr_log.read_text()


def test_bad_mqtt_options_fail_before_connecting(silt, work):
    job = mqtt_job(work, "tcp://127.0.0.1:1", topics="a/#/b")
    proc = silt("run", job)
    assert proc.returncode == 2, proc.stderr
    assert "source.options.topics: '#' must be the whole last level in 'a/#/b'" in proc.stderr
    assert not (work / "checkpoint").exists()
    job = mqtt_job(work, "tcp://127.0.0.1:1", QoS=2)
    proc = silt("run", job)
    assert proc.returncode == 2, proc.stderr
    assert "source.options.QoS: must be 0 or 1" in proc.stderr


def test_full_wal_stops_acknowledging_until_batches_commit(silt_bin, work):
    """maxWalBytes is back-pressure: with the WAL full and no batch to drain
    it, silt stops reading (so stops acknowledging); a later run drains the
    WAL, takes the rest, and the table has every message once."""
    broker = ScriptedBroker()
    url = f"tcp://127.0.0.1:{broker.port}"
    wal_limit = 1 << 20
    count, size = 6000, 1024
    payloads = [f"{i:06d}".encode() + b"." * (size - 6) for i in range(count)]
    stderr_log = work / "silt-stderr.log"
    table = work / "table"

    def send_from(first, dup):
        def run():
            try:
                for i in range(first, count):
                    broker.publish("bulk/data", payloads[i], i + 1, dup=dup)
            except OSError:
                pass  # silt was killed with the socket full
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def read_pubacks(expected, quiet_s):
        acked = set()
        while len(acked) < expected:
            packet = broker.poll(quiet_s)
            if packet is None:
                break
            kind, _, body = packet
            assert kind == PUBACK
            acked.add(int.from_bytes(body[0:2], "big"))
        return acked

    with open(stderr_log, "w") as err:
        # A trigger that never comes back after the first (empty) batch: the
        # WAL is never trimmed in this run.
        job = mqtt_job(work, url, topics="bulk/#", trigger={"processingTime": "1 hour"},
                       maxWalBytes=wal_limit)
        proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
        try:
            broker.accept(session_present=False)
            broker.expect_subscribe()
            send_from(0, dup=False)
            acked = read_pubacks(count, quiet_s=3.0)
            assert proc.poll() is None, stderr_log.read_text()[-3000:]
        finally:
            kill(proc)
        # Acknowledged: what fits in the WAL, and not one message more.
        assert 0 < len(acked) <= wal_limit // size + 1, len(acked)
        assert acked == set(range(1, len(acked) + 1))
        assert "not reading from the broker until batches commit" in stderr_log.read_text()

        # A run whose batches commit drains the WAL, and the broker resends
        # what was not acknowledged.
        broker.drop()
        job = mqtt_job(work, url, topics="bulk/#", maxWalBytes=wal_limit,
                       maxMessagesPerTrigger=300)
        proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
        try:
            broker.accept(session_present=True)
            sender = send_from(len(acked), dup=True)
            acked |= read_pubacks(count - len(acked), quiet_s=60)
            sender.join(60)
            rows = wait_for_rows(proc, table, count, stderr_log)
        finally:
            kill(proc)
            broker.close()
    assert acked == set(range(1, count + 1))
    bodies = sorted(r["body"][:6] for r in rows)
    assert bodies == [f"{i:06d}" for i in range(count)]
    wal = work / "checkpoint" / "sources" / "0" / "wal"
    assert sum(p.stat().st_size for p in wal.iterdir()) <= wal_limit + 2 * size + (wal_limit // 8)


@pytest.mark.skipif(not mosquitto_service.available(), reason="mosquitto not installed")
def test_tls_with_client_certificate_and_password(silt_bin, work):
    import paho.mqtt.client as mqtt

    broker = mosquitto_service.start(tls=True)
    stderr_log = work / "silt-stderr.log"
    secure = {
        "username": mosquitto_service.USERNAME,
        "ssl.ca.file": str(broker.tls_dir / "ca.pem"),
        "ssl.cert.file": str(broker.data_dir / "client.pem"),
        "ssl.key.file": str(broker.data_dir / "client.key"),
        "ssl.protocol": "TLSv1.2",
    }
    try:
        # A wrong password: the broker's refusal ends the query, naming it.
        job = mqtt_job(work, broker.url, topics="secure/#", password="wrong", **secure)
        with open(stderr_log, "w") as err:
            proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
            try:
                proc.wait(60)
            finally:
                kill(proc)
        text = stderr_log.read_text()
        assert proc.returncode != 0, text
        assert "source.options: the broker refused the connection" in text, text

        job = mqtt_job(work, broker.url, topics="secure/#",
                       password=mosquitto_service.PASSWORD, **secure)
        with open(stderr_log, "w") as err:
            proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
            try:
                deadline = time.monotonic() + 30
                while not (work / "checkpoint/sources/0/subscriptions").exists():
                    assert proc.poll() is None and time.monotonic() < deadline, \
                        stderr_log.read_text()
                    time.sleep(0.05)
                pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="secure-pub")
                pub.tls_set(ca_certs=str(broker.tls_dir / "ca.pem"),
                            certfile=str(broker.data_dir / "client.pem"),
                            keyfile=str(broker.data_dir / "client.key"))
                pub.username_pw_set(mosquitto_service.USERNAME, mosquitto_service.PASSWORD)
                pub.connect("127.0.0.1", broker.port)
                pub.loop_start()
                for info in [pub.publish(f"secure/{i % 4}", f"m{i}", qos=1) for i in range(100)]:
                    info.wait_for_publish(30)
                pub.loop_stop()
                pub.disconnect()
                rows = wait_for_rows(proc, work / "table", 100, stderr_log)
            finally:
                kill(proc)
    finally:
        broker.stop()
    assert sorted(r["body"] for r in rows) == sorted(f"m{i}" for i in range(100))
    assert {r["topic"] for r in rows} == {f"secure/{i}" for i in range(4)}


# ---------------------------------------------------------------- the example

DEVICES = {
    # Zigbee2MQTT state messages of the seed's devices (S60ZBTPF plug,
    # SNZB-04P door sensor).
    "smart-plug-01": lambda i: {"power": round(80 + i * 0.7, 1), "voltage": 230.1 + i % 3,
                                "current": 0.37, "energy": 12.5 + i, "state": "ON",
                                "linkquality": 231 + i % 20},
    "door-sensor-01": lambda i: {"contact": i % 2 == 0, "battery": 97, "linkquality": 159 + i,
                                 "voltage": 3000, "tamper": False},
}


def example_job(work, broker_url):
    text = (REPO / "examples" / "zigbee2mqtt.yaml").read_text()
    for old, new in [
        ("${MQTT_BROKER:-tcp://localhost:1883}", broker_url),
        ("${SENSOR_TABLE:-data/delta/sensor_events}", str(work / "table")),
        ("${ZIGBEE_CHECKPOINT:-data/checkpoints/zigbee2mqtt}", str(work / "checkpoint")),
        ("trigger: { processingTime: 60 seconds }", "trigger: { processingTime: 200 milliseconds }"),
    ]:
        assert old in text, f"examples/zigbee2mqtt.yaml no longer contains {old!r}"
        text = text.replace(old, new)
    path = work / "zigbee2mqtt.yaml"
    path.write_text(text)
    return path


@pytest.mark.skipif(not mosquitto_service.available(), reason="mosquitto not installed")
def test_zigbee2mqtt_example_matches_spark_on_the_seed_transformation(silt_bin, work, spark):
    import paho.mqtt.client as mqtt
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType, TimestampType

    broker = mosquitto_service.start()
    stderr_log = work / "silt-stderr.log"
    job = example_job(work, broker.url)
    checkpoint, table = work / "checkpoint", work / "table"
    messages = []
    for i in range(30):
        for name, make in DEVICES.items():
            messages.append((f"zigbee2mqtt/{name}", json.dumps(make(i))))
    # Not the seed's devices, and not device state: left out by the job.
    others = [("zigbee2mqtt/bridge/state", '{"state":"online"}'),
              ("zigbee2mqtt/smart-plug-01/availability", '{"state":"online"}'),
              ("zigbee2mqtt/kitchen-bulb", '{"state":"OFF","linkquality":80}')]
    try:
        with open(stderr_log, "w") as err:
            proc = start_silt(silt_bin, "run", job, stdout=subprocess.DEVNULL, stderr=err)
            try:
                deadline = time.monotonic() + 30
                while not (checkpoint / "sources/0/subscriptions").exists():
                    assert proc.poll() is None and time.monotonic() < deadline, \
                        stderr_log.read_text()
                    time.sleep(0.05)
                pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="z2m")
                pub.connect("127.0.0.1", broker.port)
                pub.loop_start()
                infos = [pub.publish(t, p, qos=1) for t, p in messages + others]
                for info in infos:
                    info.wait_for_publish(30)
                pub.loop_stop()
                pub.disconnect()
                rows = wait_for_rows(proc, table, len(messages), stderr_log)
                time.sleep(1)  # nothing else arrives
                rows = table_rows(table)
            finally:
                kill(proc)
    finally:
        broker.stop()
    assert len(rows) == len(messages)

    # Spark's reference: the example's transformation (from the file, so the
    # two cannot drift) on the same topic/payload records, with silt's
    # arrival times standing in for the MQTT timestamp column.
    import yaml
    steps = yaml.safe_load((REPO / "examples" / "zigbee2mqtt.yaml").read_text())["transform"]
    arrival = {r["raw_payload"]: r["event_time"] for r in rows}
    schema = StructType([StructField("topic", StringType()), StructField("payload", StringType()),
                         StructField("timestamp", TimestampType())])
    df = spark.createDataFrame(
        [(t, p, arrival.get(p, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)))
         for t, p in messages + others], schema)
    df = df.withColumn("payload", F.col("payload").cast("binary"))
    for step in steps:
        if "select" in step:
            df = df.selectExpr(*step["select"])
        elif "where" in step:
            df = df.where(step["where"])
        elif "withWatermark" in step:
            df = df.withWatermark(step["withWatermark"]["eventTime"],
                                  step["withWatermark"]["delayThreshold"])
        elif "withColumn" in step:
            for name, expr in step["withColumn"].items():
                df = df.withColumn(name, F.expr(expr))
    expected = [r.asDict() for r in df.drop("processed_at").collect()]
    got = [{k: v for k, v in r.items() if k != "processed_at"} for r in rows]

    def key(r):
        return (r["device_id"], r["raw_payload"])

    def norm(r):
        out = dict(r)
        t = out["event_time"]
        out["event_time"] = t.astimezone(dt.timezone.utc).replace(tzinfo=None) if t.tzinfo else t
        out["event_date"] = str(out["event_date"])
        return out

    assert sorted(map(norm, got), key=key) == sorted(map(norm, expected), key=key)
    assert {r["device_type"] for r in rows} == {"smart_plug", "door_window"}
    assert all(r["processed_at"] is not None for r in rows)
    assert re.search(r"connected \(new session\)", stderr_log.read_text())
