"""The engines of the end-to-end benchmark and how each is started.

An engine turns a RunSpec (broker, topic, table, checkpoint, trigger, batch
size) into a command line. Built in: silt (`silt run` on
examples/sensor_stream.yaml with the spec's values), spark (the seed's PySpark
job, bench/e2e/spark_job.py) and deltars (bench/e2e/deltars_loop.py).

Peers that exist only as source repositories (kafka-delta-ingest) are not
built here; run one by hand in the same harness with
  run.py --engine NAME='COMMAND TEMPLATE'
where the template is a shell command with the placeholders {bootstrap}
{topic} {table} {checkpoint} {group} {trigger} {trigger_seconds}
{max_offsets} {available_now}; see bench/e2e/README.md.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
VENV_PY = REPO / ".venv" / "bin" / "python"


@dataclass
class RunSpec:
    bootstrap: str
    topic: str
    table: Path
    checkpoint: Path
    group: str
    trigger: str  # "availableNow", "fastest" or "<n> seconds"
    max_offsets: int


def trigger_seconds(trigger: str) -> float:
    if trigger in ("availableNow", "fastest"):
        return 0.0
    return float(trigger.split()[0])


class Engine:
    name = ""

    def command(self, spec: RunSpec, work: Path) -> tuple[list, dict]:
        raise NotImplementedError


class SiltEngine(Engine):
    name = "silt"

    def __init__(self, binary: str, source_options: list = (), settings: str = ""):
        self.binary = str(Path(binary).resolve())
        # Extra `source.options` entries (KEY=VALUE) for experiments; the
        # engine is then reported as "silt+<keys>".
        self.source_options = [o.split("=", 1) for o in source_options]
        if self.source_options:
            self.name = "silt+" + ",".join(k for k, _ in self.source_options)
        # `--engine silt+KEY=VALUE,...`: `delta.*` and autoCompact keys go to
        # the sink's options, the others (parallelism, ...) to the job's top
        # level; the engine is reported under that name.
        self.sink_options, self.job_options = [], []
        for item in filter(None, settings.split(",")):
            key, _, value = item.partition("=")
            target = self.sink_options if key.startswith(("delta.", "autoCompact")) \
                else self.job_options
            target.append((key, value))
        if settings:
            self.name = f"silt+{settings}"

    def command(self, spec, work):
        text = (REPO / "examples" / "sensor_stream.yaml").read_text()
        replacements = {
            "  path: ${SENSOR_TABLE:-data/delta/sensor_events}\n": f"  path: {spec.table}\n",
            "checkpointLocation: ${SENSOR_CHECKPOINT:-data/checkpoints/sensor_stream}\n":
                f"checkpointLocation: {spec.checkpoint}\n",
            "    subscribe: sensor-events\n": f"    subscribe: {spec.topic}\n",
            "    maxOffsetsPerTrigger: 1000\n": f"    maxOffsetsPerTrigger: {spec.max_offsets}\n"
                + "".join(f"    {k}: {v}\n" for k, v in self.source_options),
        }
        trigger_line = "trigger: { processingTime: 60 seconds }\n"
        if spec.trigger == "availableNow":
            replacements[trigger_line] = "trigger: { availableNow: true }\n"
        elif spec.trigger == "fastest":
            replacements[trigger_line] = ""
        else:
            replacements[trigger_line] = f"trigger: {{ processingTime: {spec.trigger} }}\n"
        if self.sink_options:
            line = "  partitionBy: [device_type, event_date]\n"
            replacements[line] = line + "  options:\n" + "".join(
                f"    {k}: \"{v}\"\n" for k, v in self.sink_options)
        for old, new in replacements.items():
            if old not in text:
                raise RuntimeError(f"examples/sensor_stream.yaml no longer contains {old!r}")
            text = text.replace(old, new)
        text += "".join(f"\n{k}: {v}\n" for k, v in self.job_options)
        job = work / f"silt-{spec.topic}-{spec.table.name}.yaml"
        job.write_text(text)
        # BENCH_SILT_ARGS: extra `silt run` arguments for a diagnosis run
        # (e.g. --progress-json: per-phase durations of every batch in the log).
        extra = os.environ.get("BENCH_SILT_ARGS", "").split()
        return [self.binary, "run", *extra, str(job)], {"KAFKA_BOOTSTRAP": spec.bootstrap}


class SparkEngine(Engine):
    name = "spark"

    def __init__(self, jars: list):
        self.jars = ",".join(str(j) for j in jars)

    def command(self, spec, work):
        return [str(VENV_PY), str(HERE / "spark_job.py"), "--bootstrap", spec.bootstrap,
                "--topic", spec.topic, "--group", spec.group, "--table", str(spec.table),
                "--checkpoint", str(spec.checkpoint), "--trigger", spec.trigger,
                "--max-offsets", str(spec.max_offsets), "--jars", self.jars,
                "--local-dir", str(work / "spark-local")], {}


class DeltaRsEngine(Engine):
    name = "deltars"

    def command(self, spec, work):
        return [str(VENV_PY), str(HERE / "deltars_loop.py"), "--bootstrap", spec.bootstrap,
                "--topic", spec.topic, "--group", spec.group, "--table", str(spec.table),
                "--trigger", spec.trigger, "--max-offsets", str(spec.max_offsets)], {}


class CommandEngine(Engine):
    """A peer run by hand: NAME='shell command template'."""

    def __init__(self, name: str, template: str):
        self.name = name
        self.template = template

    def command(self, spec, work):
        values = {
            "bootstrap": spec.bootstrap, "topic": spec.topic, "table": str(spec.table),
            "checkpoint": str(spec.checkpoint), "group": spec.group, "trigger": spec.trigger,
            "trigger_seconds": f"{trigger_seconds(spec.trigger):g}",
            "max_offsets": str(spec.max_offsets),
            "available_now": "1" if spec.trigger == "availableNow" else "0",
        }
        quoted = {k: shlex.quote(v) for k, v in values.items()}
        return ["/bin/sh", "-c", "exec " + self.template.format(**quoted)], {}


def spark_jars() -> list:
    import pyspark
    cache = REPO / ".cache" / "spark-jars"
    jars = sorted(cache.glob("delta-*/*.jar")) + \
        sorted((cache / f"kafka-{pyspark.__version__}").glob("*.jar"))
    if not any("spark-sql-kafka" in j.name for j in jars):
        sys.exit("Spark's Kafka connector is missing: run scripts/setup-bench.sh")
    return jars


def parse_engine_arg(arg: str, silt_binary: str, silt_options: list = ()) -> Engine:
    if arg.startswith(("silt+", "silt@")) and "+" in arg:
        # silt[@BINARY]+KEY=VALUE,...: job settings for one engine.
        base, _, settings = arg.partition("+")
        binary = base[len("silt@"):] if base.startswith("silt@") else silt_binary
        engine = SiltEngine(binary, silt_options, settings)
        if base.startswith("silt@"):
            engine.name = f"silt@{Path(engine.binary).parent.name}+{settings}"
        return engine
    if "=" in arg:
        name, template = arg.split("=", 1)
        return CommandEngine(name, template)
    if arg == "silt":
        return SiltEngine(silt_binary, silt_options)
    if arg.startswith("silt@"):
        # Another silt build side by side (e.g. the previous commit's):
        # reported as silt@<the binary's folder name>.
        other = SiltEngine(arg[len("silt@"):], silt_options)
        other.name = "silt@" + Path(other.binary).parent.name
        return other
    if arg == "spark":
        return SparkEngine(spark_jars())
    if arg == "deltars":
        return DeltaRsEngine()
    raise SystemExit(f"--engine {arg!r}: expected silt, silt@BINARY, spark, deltars or "
                     "NAME='command'")


def engine_env(extra: dict) -> dict:
    env = dict(os.environ)
    env.update(extra)
    env["TZ"] = "UTC"
    env.setdefault("PYSPARK_PYTHON", str(VENV_PY))
    return env
