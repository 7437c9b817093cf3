"""A throwaway single-node Apache Kafka (KRaft: broker and controller in one
JVM) on 127.0.0.1 for the Kafka integration tests.

scripts/setup-kafka.sh downloads Kafka from Maven Central into
<repo>/.cache/kafka/<version>/libs ($SILT_KAFKA_LIBS overrides). `start()`
formats a temporary log directory with Kafka's StorageTool, runs kafka.Kafka
on random free loopback ports, waits until the broker answers and returns a
KafkaBroker; `stop()` kills it and removes the data.

Topics, record deletion and consumer-group descriptions use Kafka's own admin
tools from the same download (kafka-topics, kafka-delete-records,
kafka-consumer-groups), so the fixture does not depend on the code under test.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KAFKA_VERSION = os.environ.get("SILT_KAFKA_VERSION", "4.1.0")


def kafka_libs() -> Path:
    env = os.environ.get("SILT_KAFKA_LIBS")
    return Path(env) if env else REPO / ".cache" / "kafka" / KAFKA_VERSION / "libs"


def available() -> bool:
    return (kafka_libs() / f"kafka_2.13-{KAFKA_VERSION}.jar").is_file() and \
        shutil.which("java") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LOG4J2 = """\
Configuration:
  Appenders:
    File:
      name: file
      fileName: "{log}"
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: file
"""


@dataclass
class KafkaBroker:
    bootstrap: str
    process: subprocess.Popen
    data_dir: str
    log_path: Path

    def _tool(self, main_class: str, *args, timeout=120, check=True) -> str:
        cmd = ["java", "-Xmx256m", "-cp", str(kafka_libs() / "*"),
               f"-Dlog4j2.configurationFile={self.data_dir}/tools-log4j2.yaml",
               main_class, "--bootstrap-server", self.bootstrap, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{main_class} {' '.join(args)} failed ({proc.returncode}):\n"
                               f"{proc.stdout}\n{proc.stderr}")
        return proc.stdout

    def create_topic(self, name: str, partitions: int = 1, **config) -> None:
        args = ["--create", "--topic", name, "--partitions", str(partitions),
                "--replication-factor", "1"]
        for key, value in config.items():
            args += ["--config", f"{key.replace('_', '.')}={value}"]
        self._tool("org.apache.kafka.tools.TopicCommand", *args)

    def add_partitions(self, name: str, partitions: int) -> None:
        self._tool("org.apache.kafka.tools.TopicCommand", "--alter", "--topic", name,
                   "--partitions", str(partitions))

    def delete_records(self, topic: str, offsets: dict) -> None:
        """Deletes the records before offsets[partition] (moves the low watermark)."""
        spec = {"version": 1, "partitions": [
            {"topic": topic, "partition": p, "offset": o} for p, o in offsets.items()]}
        path = Path(self.data_dir) / f"delete-{uuid.uuid4().hex}.json"
        path.write_text(json.dumps(spec))
        self._tool("org.apache.kafka.tools.DeleteRecordsCommand", "--offset-json-file", str(path))

    def end_offsets(self, topic: str) -> dict:
        """{partition: high watermark} from Kafka's GetOffsetShell."""
        out = self._tool("org.apache.kafka.tools.GetOffsetShell", "--topic", topic)
        result = {}
        for line in out.splitlines():
            parts = line.strip().split(":")
            if len(parts) == 3 and parts[0] == topic:
                result[int(parts[1])] = int(parts[2])
        return result

    def group_lag(self, group: str) -> dict:
        """{(topic, partition): (current offset, log end offset, lag)} from
        kafka-consumer-groups --describe."""
        out = self._tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                         "--describe", "--group", group, check=False)
        result = {}
        header = None
        for line in out.splitlines():
            cols = line.split()
            if not cols:
                continue
            if cols[0] == "GROUP":
                header = cols
                continue
            if header and len(cols) >= len(header) - 3:
                row = dict(zip(header, cols))
                def num(v):
                    return int(v) if v.lstrip("-").isdigit() else None
                result[(row["TOPIC"], int(row["PARTITION"]))] = (
                    num(row["CURRENT-OFFSET"]), num(row["LOG-END-OFFSET"]), num(row["LAG"]))
        return result

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def start(timeout: float = 120.0) -> KafkaBroker:
    libs = kafka_libs()
    if not available():
        raise FileNotFoundError(f"Kafka not found at {libs}: run scripts/setup-kafka.sh")
    data_dir = tempfile.mkdtemp(prefix="silt-kafka-")
    port, controller_port = _free_port(), _free_port()
    log_path = Path(data_dir) / "server.log"
    (Path(data_dir) / "log4j2.yaml").write_text(LOG4J2.format(log=log_path))
    (Path(data_dir) / "tools-log4j2.yaml").write_text(
        LOG4J2.format(log=Path(data_dir) / "tools.log"))
    props = Path(data_dir) / "server.properties"
    props.write_text("\n".join([
        "process.roles=broker,controller",
        "node.id=1",
        f"controller.quorum.voters=1@127.0.0.1:{controller_port}",
        f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=PLAINTEXT",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        f"log.dirs={data_dir}/logs",
        "num.partitions=1",
        "auto.create.topics.enable=false",
        "offsets.topic.replication.factor=1",
        "offsets.topic.num.partitions=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "share.coordinator.state.topic.replication.factor=1",
        "share.coordinator.state.topic.min.isr=1",
        "group.initial.rebalance.delay.ms=0",
        # Seed events carry old event times as record timestamps: never age
        # them out unless a test asks for it.
        "log.retention.ms=-1",
        "log.retention.check.interval.ms=1000",
        "",
    ]))
    classpath = str(libs / "*")
    java = ["java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classpath,
            f"-Dlog4j2.configurationFile={data_dir}/log4j2.yaml"]
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    # An id starting with '-' would be read as an option by the storage tool.
    cluster_id = "A" + cluster_id[1:] if cluster_id.startswith("-") else cluster_id
    fmt = subprocess.run(java + ["kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}",
                                 "-c", str(props)],
                         capture_output=True, text=True, timeout=120)
    if fmt.returncode != 0:
        shutil.rmtree(data_dir, ignore_errors=True)
        raise RuntimeError(f"formatting Kafka storage failed:\n{fmt.stdout}\n{fmt.stderr}")
    out = open(Path(data_dir) / "stdout.log", "wb")
    process = subprocess.Popen(java + ["kafka.Kafka", str(props)], stdout=out,
                               stderr=subprocess.STDOUT)
    out.close()
    broker = KafkaBroker(f"127.0.0.1:{port}", process, data_dir, log_path)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            text = (Path(data_dir) / "stdout.log").read_text(errors="replace")
            text += log_path.read_text(errors="replace") if log_path.exists() else ""
            shutil.rmtree(data_dir, ignore_errors=True)
            raise RuntimeError(f"Kafka exited with {process.returncode}:\n{text[-5000:]}")
        if log_path.exists() and "Kafka Server started" in log_path.read_text(errors="replace"):
            break
        if time.monotonic() > deadline:
            broker.stop()
            raise TimeoutError(f"Kafka did not start on {broker.bootstrap} in {timeout} s")
        time.sleep(0.2)
    return broker
