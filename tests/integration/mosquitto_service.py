"""A throwaway Mosquitto broker (Debian's `mosquitto` package, installed by
scripts/install-build-deps.sh) on a free 127.0.0.1 port for the MQTT tests.

`start()` writes a config into a temporary directory (loopback listener,
anonymous access, persistence on, no limit on what a disconnected persistent
session may queue) and returns a MosquittoBroker once the port accepts
connections. `restart()` stops the broker gracefully (SIGTERM, so it writes
its persistence file) and starts it again on the same port with the same
data; `stop()` ends it and removes the directory.

`start(tls=True)` listens with TLS only (a test CA and broker certificate
from kafka_service.tls_material(), a client certificate signed by the same
CA, client certificates required) and refuses anonymous clients:
USERNAME/PASSWORD are in its password file (mosquitto_passwd).
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def available() -> bool:
    return os.access(MOSQUITTO, os.X_OK)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


USERNAME, PASSWORD = "zigbee", "zigbee-secret"


def _client_certificate(out: Path, ca_dir: Path):
    """client.pem / client.key signed by the test CA (CN=silt-client)."""
    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=out, check=True, capture_output=True)

    ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=silt-client", "-keyout",
        "client.key", "-out", "client.csr")
    ssl("x509", "-req", "-in", "client.csr", "-CA", str(ca_dir / "ca.pem"), "-CAkey",
        str(ca_dir / "ca.key"), "-CAcreateserial", "-CAserial", str(out / "ca.srl"),
        "-days", "3650", "-out", "client.pem")


def _config(port: int, data_dir: Path, tls_dir: Path | None) -> str:
    if tls_dir is None:
        access = ["allow_anonymous true"]
    else:
        access = [
            f"cafile {tls_dir / 'ca.pem'}",
            f"certfile {tls_dir / 'broker.pem'}",
            f"keyfile {tls_dir / 'broker.key'}",
            "require_certificate true",
            "allow_anonymous false",
            f"password_file {data_dir / 'passwd'}",
        ]
    return "\n".join([
        f"listener {port} 127.0.0.1",
        *access,
        "persistence true",
        f"persistence_location {data_dir}/",
        "persistence_file mosquitto.db",
        # A persistent session keeps every QoS 1 message while its client is
        # away (the default, 1000, would drop the rest, which no consumer can
        # make up for).
        "max_queued_messages 0",
        "max_queued_bytes 0",
        f"log_dest file {data_dir}/mosquitto.log",
        "log_type error",
        "log_type warning",
        "log_type notice",
        "log_type information",
        # Running as root, mosquitto would switch to the `mosquitto` user,
        # which cannot write the temporary directory.
        f"user {getpass.getuser()}",
        "",
    ])


@dataclass
class MosquittoBroker:
    port: int
    data_dir: Path
    process: subprocess.Popen | None = None
    tls_dir: Path | None = None  # ca.pem (to trust); client.pem/key in data_dir

    @property
    def url(self) -> str:
        return f"{'ssl' if self.tls_dir else 'tcp'}://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "mosquitto.log"

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def _launch(self):
        conf = self.data_dir / "mosquitto.conf"
        conf.write_text(_config(self.port, self.data_dir, self.tls_dir))
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(conf)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited ({self.process.returncode}): "
                                   f"{self.process.stderr.read().decode(errors='replace')}\n"
                                   f"{self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on {self.port}:\n{self.log()}")

    def _terminate(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process.stderr:
            self.process.stderr.close()
        self.process = None

    def restart(self):
        """Graceful stop (the broker saves its sessions and queued messages)
        and start on the same port."""
        self._terminate()
        self._launch()

    def stop(self):
        self._terminate()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def start(tls: bool = False) -> MosquittoBroker:
    broker = MosquittoBroker(port=_free_port(),
                             data_dir=Path(tempfile.mkdtemp(prefix="silt-mosquitto-")))
    try:
        if tls:
            import kafka_service
            broker.tls_dir = kafka_service.tls_material()
            _client_certificate(broker.data_dir, broker.tls_dir)
            subprocess.run(["mosquitto_passwd", "-b", "-c", str(broker.data_dir / "passwd"),
                            USERNAME, PASSWORD], check=True, capture_output=True)
        broker._launch()
    except BaseException:
        broker.stop()
        raise
    return broker
