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


def kafka_libs(version: str = "") -> Path:
    env = os.environ.get("SILT_KAFKA_LIBS")
    if env and not version:
        return Path(env)
    return REPO / ".cache" / "kafka" / (version or KAFKA_VERSION) / "libs"


def available(version: str = "") -> bool:
    version = version or KAFKA_VERSION
    return (kafka_libs(version) / f"kafka_2.13-{version}.jar").is_file() and \
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


# SASL users of the SASL_SSL listener (start(sasl_ssl=True)).
SASL_PLAIN_USER, SASL_PLAIN_PASSWORD = "alice", "alice-secret"
SASL_SCRAM_USER, SASL_SCRAM_PASSWORD = "bob", "bob-secret"
TLS_PASSWORD = "silt-test"


def tls_material() -> Path:
    """A throwaway CA and a broker certificate for 127.0.0.1/localhost
    (openssl), with the broker's PKCS12 keystore; generated once into
    <repo>/.cache/kafka-tls and reused. Returns the directory (ca.pem,
    broker.p12)."""
    out = REPO / ".cache" / "kafka-tls"
    if (out / "broker.p12").is_file() and (out / "ca.pem").is_file():
        return out
    tmp = Path(tempfile.mkdtemp(prefix="kafka-tls-", dir=REPO / ".cache"))

    def ssl(*args):
        subprocess.run(["openssl", *args], cwd=tmp, check=True, capture_output=True)

    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj",
        "/CN=silt-test-ca", "-keyout", "ca.key", "-out", "ca.pem")
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout",
        "broker.key", "-out", "broker.csr")
    (tmp / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    ssl("x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "3650", "-extfile", "san.ext", "-out", "broker.pem")
    ssl("pkcs12", "-export", "-in", "broker.pem", "-inkey", "broker.key", "-certfile", "ca.pem",
        "-name", "broker", "-passout", f"pass:{TLS_PASSWORD}", "-out", "broker.p12")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out


@dataclass
class KafkaBroker:
    bootstrap: str
    process: subprocess.Popen
    data_dir: str
    log_path: Path
    # With start(sasl_ssl=True): the SASL_SSL listener and the CA to trust.
    sasl_bootstrap: str = ""
    ca_path: str = ""
    libs: Path = None
    # With start(eventhubs_hub=...): the Event Hubs connection string that is
    # the password of the SASL_SSL listener's PLAIN user "$ConnectionString".
    eventhubs_connection_string: str = ""
    # The broker's command line, for restart().
    command: list = None
    # Set while the broker is shared by several test modules (conftest.py's
    # `kafka` fixture): halt() refuses then.
    shared: bool = False

    def _tool(self, main_class: str, *args, timeout=120, check=True) -> str:
        cmd = ["java", "-Xmx256m", "-cp", str((self.libs or kafka_libs()) / "*"),
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

    def console_produce(self, topic: str, lines, *properties, timeout=120) -> None:
        """Sends `lines` with Kafka's ConsoleProducer; `properties` such as
        "parse.key=true", "parse.headers=true" (then each line is
        "h1:v1,h2:v2<TAB>key<TAB>value")."""
        cmd = ["java", "-Xmx256m", "-cp", str((self.libs or kafka_libs()) / "*"),
               f"-Dlog4j2.configurationFile={self.data_dir}/tools-log4j2.yaml",
               "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", self.bootstrap,
               "--topic", topic]
        for prop in properties:
            cmd += ["--property", prop]
        text = "".join(line + "\n" for line in lines)
        proc = subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"ConsoleProducer failed ({proc.returncode}):\n{proc.stderr}")

    def console_consume(self, topic: str, max_messages: int, timeout_ms: int = 30000) -> list:
        """The first `max_messages` records of `topic` (all partitions) read by
        Kafka's ConsoleConsumer, as dicts with partition, offset, key, value
        and headers ({name: value}; "NO_HEADERS" gives {})."""
        out = self._tool("org.apache.kafka.tools.consumer.ConsoleConsumer", "--topic", topic,
                         "--from-beginning", "--max-messages", str(max_messages),
                         "--timeout-ms", str(timeout_ms),
                         "--property", "print.partition=true", "--property", "print.offset=true",
                         "--property", "print.key=true", "--property", "print.headers=true",
                         "--property", "key.separator=\t", "--property", "headers.separator=,",
                         "--property", "headers.key.separator=:",
                         check=False, timeout=timeout_ms / 1000 + 120)
        records = []
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) != 5 or not parts[0].startswith("Partition:"):
                continue
            headers = {}
            if parts[2] != "NO_HEADERS":
                for item in parts[2].split(","):
                    name, _, value = item.partition(":")
                    headers[name] = value
            records.append({"partition": int(parts[0].split(":")[1]),
                            "offset": int(parts[1].split(":")[1]),
                            "headers": headers, "key": parts[3], "value": parts[4]})
        return records

    def halt(self) -> None:
        """Kills the broker (SIGKILL, as a crash) and keeps its data, so that
        restart() brings it back on the same port with the same topics."""
        if self.shared:
            raise AssertionError(
                "halt() on the broker the test modules share: a module that stops its "
                "broker sets KAFKA_OWN_BROKER = True (conftest.py's `kafka` fixture)")
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self, timeout: float = 120.0) -> None:
        """Starts the broker halt() stopped again, and waits until it serves."""
        assert self.process.poll() is not None, "the broker is still running"
        stdout_log = Path(self.data_dir) / "stdout.log"
        logs = [self.log_path, stdout_log]
        started = sum(p.read_text(errors="replace").count("Kafka Server started")
                      for p in logs if p.exists())
        with open(stdout_log, "ab") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while sum(p.read_text(errors="replace").count("Kafka Server started")
                  for p in logs if p.exists()) <= started:
            if self.process.poll() is not None:
                raise RuntimeError(f"Kafka exited with {self.process.returncode} on restart:\n"
                                   + stdout_log.read_text(errors="replace")[-5000:])
            if time.monotonic() > deadline:
                raise TimeoutError(f"Kafka did not restart on {self.bootstrap} in {timeout} s")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def eventhubs_connection_string(port: int, hub: str, key: str) -> str:
    """An Event Hubs connection string whose namespace is this machine's
    SASL_SSL listener (localhost, for the test certificate's name)."""
    return (f"Endpoint=sb://localhost:{port}/;SharedAccessKeyName=RootManageSharedAccessKey;"
            f"SharedAccessKey={key};EntityPath={hub}")


def start(timeout: float = 120.0, sasl_ssl: bool = False, version: str = "",
          eventhubs_hub: str = "", eventhubs_key: str = "",
          extra_properties: tuple = ()) -> KafkaBroker:
    """With `sasl_ssl`, the broker also has a SASL_SSL listener on loopback
    accepting PLAIN (SASL_PLAIN_USER) and SCRAM-SHA-256/512
    (SASL_SCRAM_USER) with a certificate from tls_material(). With
    `eventhubs_hub` (implies sasl_ssl) that listener also takes Event Hubs'
    Kafka-endpoint login: PLAIN user "$ConnectionString" with
    broker.eventhubs_connection_string (key `eventhubs_key`) as password.
    `extra_properties`: more server.properties lines ("name=value")."""
    sasl_ssl = sasl_ssl or bool(eventhubs_hub)
    libs = kafka_libs(version)
    if not available(version):
        raise FileNotFoundError(f"Kafka not found at {libs}: run scripts/setup-kafka.sh")
    data_dir = tempfile.mkdtemp(prefix="silt-kafka-")
    port, controller_port = _free_port(), _free_port()
    sasl_port = _free_port() if sasl_ssl else 0
    listeners = f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}"
    advertised = f"PLAINTEXT://127.0.0.1:{port}"
    protocols = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
    secure = []
    tls = None
    if sasl_ssl:
        tls = tls_material()
        listeners += f",SASL_SSL://127.0.0.1:{sasl_port}"
        advertised += f",SASL_SSL://127.0.0.1:{sasl_port}"
        protocols += ",SASL_SSL:SASL_SSL"
        plain = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
                 f'user_{SASL_PLAIN_USER}="{SASL_PLAIN_PASSWORD}"')
        if eventhubs_hub:
            connection = eventhubs_connection_string(sasl_port, eventhubs_hub, eventhubs_key)
            plain += f' user_$ConnectionString="{connection}"'
        plain += ";"
        scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        secure = [
            "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            f"listener.name.sasl_ssl.plain.sasl.jaas.config={plain}",
            f"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config={scram}",
            f"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config={scram}",
            f"listener.name.sasl_ssl.ssl.keystore.location={tls / 'broker.p12'}",
            "listener.name.sasl_ssl.ssl.keystore.type=PKCS12",
            f"listener.name.sasl_ssl.ssl.keystore.password={TLS_PASSWORD}",
            f"listener.name.sasl_ssl.ssl.key.password={TLS_PASSWORD}",
        ]
    log_path = Path(data_dir) / "server.log"
    (Path(data_dir) / "log4j2.yaml").write_text(LOG4J2.format(log=log_path))
    # Kafka 3.x logs through log4j 1 (reload4j).
    (Path(data_dir) / "log4j.properties").write_text(
        "log4j.rootLogger=INFO, file\n"
        "log4j.appender.file=org.apache.log4j.FileAppender\n"
        f"log4j.appender.file.File={log_path}\n"
        "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n\n")
    (Path(data_dir) / "tools-log4j2.yaml").write_text(
        LOG4J2.format(log=Path(data_dir) / "tools.log"))
    props = Path(data_dir) / "server.properties"
    props.write_text("\n".join([
        "process.roles=broker,controller",
        "node.id=1",
        f"controller.quorum.voters=1@127.0.0.1:{controller_port}",
        f"listeners={listeners}",
        f"advertised.listeners={advertised}",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=PLAINTEXT",
        f"listener.security.protocol.map={protocols}",
        *secure,
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
        *extra_properties,
        "",
    ]))
    classpath = str(libs / "*")
    java = ["java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classpath,
            f"-Dlog4j2.configurationFile={data_dir}/log4j2.yaml",
            f"-Dlog4j.configuration=file:{data_dir}/log4j.properties"]
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
    command = java + ["kafka.Kafka", str(props)]
    process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    out.close()
    broker = KafkaBroker(f"127.0.0.1:{port}", process, data_dir, log_path,
                         f"127.0.0.1:{sasl_port}" if sasl_ssl else "",
                         str(tls / "ca.pem") if tls else "", libs,
                         eventhubs_connection_string(sasl_port, eventhubs_hub, eventhubs_key)
                         if eventhubs_hub else "", command)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            text = (Path(data_dir) / "stdout.log").read_text(errors="replace")
            text += log_path.read_text(errors="replace") if log_path.exists() else ""
            shutil.rmtree(data_dir, ignore_errors=True)
            raise RuntimeError(f"Kafka exited with {process.returncode}:\n{text[-5000:]}")
        # Kafka 3.x may log through log4j 1 to stdout instead of log4j2's file.
        logs = [log_path, Path(data_dir) / "stdout.log"]
        if any(p.exists() and "Kafka Server started" in p.read_text(errors="replace")
               for p in logs):
            break
        if time.monotonic() > deadline:
            broker.stop()
            raise TimeoutError(f"Kafka did not start on {broker.bootstrap} in {timeout} s")
        time.sleep(0.2)
    if sasl_ssl:
        # SCRAM credentials live in the cluster metadata: Kafka's ConfigCommand
        # over the plaintext listener (kafka-configs --alter --entity-type users).
        # One mechanism per request (Kafka refuses two for a user at once).
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            broker._tool("kafka.admin.ConfigCommand", "--alter", "--add-config",
                         f"{mechanism}=[password={SASL_SCRAM_PASSWORD}]",
                         "--entity-type", "users", "--entity-name", SASL_SCRAM_USER)
    return broker
