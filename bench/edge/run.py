#!/usr/bin/env python3
"""Edge benchmark: the seed's stack without Spark and without Kafka.

Mosquitto -> silt (examples/zigbee2mqtt.yaml, unchanged but for its trigger)
-> a Delta table on MinIO, the stack docs/raspberry-pi.md sets up, measured
as a whole: every process of the stack (silt, mosquitto, MinIO) is sampled
from /proc for resident memory and CPU time while a publisher plays the
seed's two Zigbee devices at QoS 1.

Scenarios (each on a fresh broker, bucket and checkpoint):

  seed    the seed's own rates: the smart plug reports every 10 s, the door
          sensor every 45 s; the example's 60-second trigger.
  busy    200 messages/s over the two devices (a house of many sensors'
          worth of traffic on two topics); a 10-second trigger.
  burst   2,000 messages/s; a 1-second trigger.

Each scenario publishes for --duration seconds (scaled per scenario below),
then waits until the table holds every message the broker acknowledged
(the check: equal counts per device, read back with delta-rs), then stops
silt with SIGTERM. Reported per process: peak RSS (largest VmRSS sample,
or VmHWM where larger), mean RSS over the second half of the run, CPU
seconds and CPU % of one core over the run.

The figures are from the machine the benchmark runs on. On amd64 they are
an upper bound for memory on arm64 (same code, same allocator; pointers are
the same size) and say nothing exact about a Pi's CPU: docs/raspberry-pi.md
says how to run this benchmark on the Pi itself (the script needs only
Python, paho-mqtt, psutil, deltalake, mosquitto and a MinIO binary).

  .venv/bin/python bench/edge/run.py --silt build/src/silt/cli/silt \
      [--scenarios seed,busy,burst] [--duration 300] [--out bench/results]

Writes <out>/<date>-<machine>-edge.md and .json. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "bench" / "e2e"))

import minio_service  # noqa: E402
import mosquitto_service  # noqa: E402
from measure import Monitored  # noqa: E402

EXAMPLE = REPO / "examples" / "zigbee2mqtt.yaml"
PLUG, DOOR = "smart-plug-01", "door-sensor-01"

# name: (messages per second or None for the seed's own rates, trigger,
#        share of --duration, maxMessagesPerTrigger). The example's ceiling
# (1,000 a trigger) suits the seed's rates; the busier scenarios raise it so
# that a trigger can take what arrived since the last one.
SCENARIOS = {
    "seed": (None, "60 seconds", 2.0, 1000),
    "busy": (200, "10 seconds", 1.0, 100000),
    "burst": (2000, "1 second", 0.5, 100000),
}


def plug_payload(rng: random.Random) -> str:
    power = round(rng.uniform(0, 2300), 1)
    return json.dumps({"current": round(power / 230, 3), "energy": round(rng.uniform(0, 500), 2),
                       "linkquality": rng.randint(20, 255), "power": power,
                       "state": rng.choice(["ON", "OFF"]), "voltage": round(rng.uniform(225, 240), 1)})


def door_payload(rng: random.Random) -> str:
    return json.dumps({"battery": rng.randint(1, 100), "contact": rng.random() < 0.8,
                       "linkquality": rng.randint(20, 255), "voltage": rng.randint(2800, 3100)})


class Publisher(threading.Thread):
    """Plays the two devices at QoS 1 for `seconds`; counts what the broker
    acknowledged per device."""

    def __init__(self, port: int, rate: float | None, seconds: float):
        super().__init__(daemon=True)
        import paho.mqtt.client as mqtt
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="edge-bench-pub")
        self.client.max_inflight_messages_set(1000)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        self.rate, self.seconds = rate, seconds
        self.infos = {PLUG: [], DOOR: []}
        self.rng = random.Random(7)
        self.error = None

    def publish(self, device: str):
        payload = plug_payload(self.rng) if device == PLUG else door_payload(self.rng)
        self.infos[device].append(
            self.client.publish(f"zigbee2mqtt/{device}", payload, qos=1))

    def run(self):
        try:
            start = time.monotonic()
            if self.rate is None:
                # The seed's devices: the plug every 10 s, the door sensor
                # every 45 s, both from the first second.
                next_plug = next_door = start
                while time.monotonic() - start < self.seconds:
                    now = time.monotonic()
                    if now >= next_plug:
                        self.publish(PLUG)
                        next_plug += 10
                    if now >= next_door:
                        self.publish(DOOR)
                        next_door += 45
                    time.sleep(0.2)
            else:
                sent = 0
                while time.monotonic() - start < self.seconds:
                    due = int((time.monotonic() - start) * self.rate)
                    while sent < due:
                        self.publish(PLUG if sent % 4 else DOOR)
                        sent += 1
                    time.sleep(0.01)
            for infos in self.infos.values():
                for info in infos:
                    info.wait_for_publish(timeout=60)
        except BaseException as e:  # reported by the caller
            self.error = e

    def acknowledged(self) -> dict:
        return {d: sum(1 for i in infos if i.is_published()) for d, infos in self.infos.items()}

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


class Sampler(threading.Thread):
    """Samples one already-running process (the broker, MinIO) every second."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.proc = psutil.Process(pid)
        self.samples = []  # (t, rss bytes, cpu seconds)
        self.t0 = time.time()
        self.cpu0 = self._cpu()
        self.halt = threading.Event()

    def _cpu(self) -> float:
        t = self.proc.cpu_times()
        return t.user + t.system

    def run(self):
        while not self.halt.is_set():
            try:
                self.samples.append((time.time() - self.t0, self.proc.memory_info().rss,
                                     self._cpu() - self.cpu0))
            except psutil.Error:
                return
            self.halt.wait(1.0)

    def result(self) -> dict:
        self.halt.set()
        self.join()
        return summarize(self.samples)


def summarize(samples) -> dict:
    if not samples:
        return {}
    wall = samples[-1][0] or 1.0
    second_half = [s[1] for s in samples if s[0] >= wall / 2] or [samples[-1][1]]
    return {"wall_s": round(wall, 1), "cpu_s": round(samples[-1][2], 3),
            "cpu_pct": round(100 * samples[-1][2] / wall, 2),
            "peak_rss_mb": round(max(s[1] for s in samples) / 2**20, 1),
            "mean_rss_2nd_half_mb": round(sum(second_half) / len(second_half) / 2**20, 1)}


def job_text(trigger: str, max_per_trigger: int) -> str:
    text = EXAMPLE.read_text()
    for old, new in (("trigger: { processingTime: 60 seconds }",
                      f"trigger: {{ processingTime: {trigger} }}"),
                     ("maxMessagesPerTrigger: 1000", f"maxMessagesPerTrigger: {max_per_trigger}")):
        assert old in text, f"{EXAMPLE} no longer has the line this benchmark replaces: {old}"
        text = text.replace(old, new)
    return text


def table_counts(minio, key: str) -> dict:
    from deltalake import DeltaTable
    try:
        table = DeltaTable(f"s3://{minio.bucket}/{key}", storage_options=minio.storage_options())
    except Exception:  # no commit yet
        return {}
    ids = table.to_pyarrow_table(columns=["device_id"]).column("device_id").to_pylist()
    return {d: ids.count(d) for d in (PLUG, DOOR)}


def run_scenario(name: str, silt: Path, duration: float, work: Path) -> dict:
    rate, trigger, share, max_per_trigger = SCENARIOS[name]
    seconds = duration * share
    broker = mosquitto_service.start()
    minio = minio_service.start(bucket="sensor-data")
    scenario_dir = work / name
    scenario_dir.mkdir(parents=True)
    job = scenario_dir / "zigbee2mqtt.yaml"
    job.write_text(job_text(trigger, max_per_trigger))
    key = f"delta/{name}/sensor_events"
    env = dict(os.environ)
    env.update({"MQTT_BROKER": broker.url, "MQTT_CLIENT_ID": f"silt-edge-{name}",
                "SENSOR_TABLE": f"s3a://{minio.bucket}/{key}",
                "ZIGBEE_CHECKPOINT": str(scenario_dir / "checkpoint"),
                "MINIO_ENDPOINT": minio.endpoint, "MINIO_ACCESS_KEY": minio.access_key,
                "MINIO_SECRET_KEY": minio.secret_key})
    samplers = {"mosquitto": Sampler(broker.process.pid), "minio": Sampler(minio.process.pid)}
    for s in samplers.values():
        s.start()
    silt_proc = Monitored([str(silt), "run", str(job)], env, scenario_dir / "silt.log", interval=0.5)
    try:
        # The persistent session exists once silt has subscribed; publish after.
        time.sleep(2)
        publisher = Publisher(broker.port, rate, seconds)
        publisher.start()
        publisher.join()
        if publisher.error:
            raise publisher.error
        acked = publisher.acknowledged()
        trigger_s = float(trigger.split()[0])
        deadline = time.monotonic() + 3 * trigger_s + 60
        counts = {}
        while time.monotonic() < deadline:
            counts = table_counts(minio, key)
            if counts == acked or silt_proc.poll() is not None:
                break
            time.sleep(min(5.0, trigger_s))
        silt_proc.stop()
        publisher.stop()
        out = {"scenario": name, "rate_per_s": rate, "trigger": trigger,
               "max_per_trigger": max_per_trigger, "publish_s": seconds,
               "acknowledged": acked, "in_table": counts, "complete": counts == acked,
               "silt": summarize(silt_proc.samples) | {
                   "peak_rss_mb": round(silt_proc.result()["peak_rss_mb"], 1),
                   "returncode": silt_proc.returncode}}
        for label, sampler in samplers.items():
            out[label] = sampler.result()
        if not out["complete"]:
            out["silt_log_tail"] = silt_proc.tail(2000)
        return out
    finally:
        silt_proc.stop()
        for s in samplers.values():
            s.halt.set()
        broker.stop()
        minio.stop()


def report(results: list, args, silt: Path) -> str:
    load = os.getloadavg()
    lines = [
        f"# Edge stack: Mosquitto -> silt -> MinIO ({dt.date.today()}, {platform.machine()})",
        "",
        f"`bench/edge/run.py` ([its docstring](../edge/run.py)), silt {silt_version(silt)}, "
        f"{platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.1f} at the end. "
        "The job is examples/zigbee2mqtt.yaml with only its trigger changed; the table "
        "is on MinIO (s3a://), the checkpoint and the MQTT write-ahead log on local disk. "
        "CPU % is of one core over the whole run; RSS is resident memory.",
        "",
        "| scenario | messages/s | trigger (max per trigger) | messages | all in table | silt peak RSS MB | "
        "silt mean RSS MB (2nd half) | silt CPU % | mosquitto RSS MB | mosquitto CPU % | "
        "MinIO RSS MB | MinIO CPU % |",
        "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rate = "seed (plug 1/10 s, door 1/45 s)" if r["rate_per_s"] is None else r["rate_per_s"]
        lines.append(
            f"| {r['scenario']} | {rate} | {r['trigger']} ({r['max_per_trigger']:,}) | "
            f"{sum(r['acknowledged'].values()):,} | "
            f"{'yes' if r['complete'] else 'NO'} | {r['silt']['peak_rss_mb']} | "
            f"{r['silt']['mean_rss_2nd_half_mb']} | {r['silt']['cpu_pct']} | "
            f"{r['mosquitto'].get('peak_rss_mb')} | {r['mosquitto'].get('cpu_pct')} | "
            f"{r['minio'].get('peak_rss_mb')} | {r['minio'].get('cpu_pct')} |")
    lines += ["", "Command:", "", "```sh",
              f".venv/bin/python bench/edge/run.py --silt {args.silt} --scenarios "
              f"{args.scenarios} --duration {args.duration:g}", "```", ""]
    return "\n".join(lines)


def silt_version(silt: Path) -> str:
    import subprocess
    out = subprocess.run([str(silt), "--version"], capture_output=True, text=True)
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 else "(unknown)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--silt", required=True)
    parser.add_argument("--scenarios", default="seed,busy,burst")
    parser.add_argument("--duration", type=float, default=300,
                        help="publishing seconds of the busy scenario (seed: 2x, burst: 0.5x)")
    parser.add_argument("--out", default=str(REPO / "bench" / "results"))
    args = parser.parse_args()
    silt = Path(args.silt).resolve()
    if not mosquitto_service.available():
        print("mosquitto is not installed (scripts/install-build-deps.sh --monitoring)")
        return 2
    results = []
    work = Path(tempfile.mkdtemp(prefix="silt-edge-"))
    try:
        for name in args.scenarios.split(","):
            print(f"[edge] scenario {name} ...", flush=True)
            results.append(run_scenario(name, silt, args.duration, work))
            print(json.dumps(results[-1]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    stem = f"{dt.date.today()}-{platform.node().split('.')[0] or 'host'}-edge"
    out = Path(args.out)
    (out / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / f"{stem}.md").write_text(report(results, args, silt))
    print(f"[edge] wrote {out / stem}.md")
    return 0 if all(r["complete"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
