#!/usr/bin/env python3
"""Publishes seed-shaped sensor events at a steady rate, each stamped with its
produce time, for the latency and footprint workloads (B, D) of bench/e2e.

The envelope is the seed producer's ({"device_id","device_type",
"ingested_at","payload"} with payload a JSON string, as `silt produce` and the
generator source emit), but `ingested_at` is the wall-clock time of the
produce() call with microseconds, so after the pipeline `event_time` of every
row is its produce time and the harness can compute produce -> commit
latency from the table alone. Ten smart-plug events per door-sensor event, as
in the seed; records are spread round-robin over the topic's partitions.

  producer.py --bootstrap 127.0.0.1:9092 --topic t --rate 10000 --seconds 60
  producer.py ... --count 100          # a burst of 100 events, then exit

Prints one JSON line {"produced": n, "seconds": s, "first": t0, "last": t1}.
"""

import argparse
import json
import time
from datetime import datetime, timezone

from confluent_kafka import Producer


def iso(now: float) -> str:
    return datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event(i: int, now: float) -> tuple:
    if i % 11 == 10:
        device, kind = "door-sensor-01", "door_window"
        payload = {"contact": i % 2 == 0, "battery": 100 - (i // 1000) % 10,
                   "linkquality": 150 + i % 106}
    else:
        device, kind = "smart-plug-01", "smart_plug"
        payload = {"power": round(80 + (i % 97) / 10, 1), "voltage": round(228 + (i % 41) / 10, 1),
                   "current": round(0.3 + (i % 89) / 1000, 3),
                   "energy": round(1 + i / 100000, 2), "state": "ON" if i % 13 else "OFF",
                   "linkquality": 150 + i % 106}
    value = json.dumps({"device_id": device, "device_type": kind, "ingested_at": iso(now),
                        "payload": json.dumps(payload, separators=(",", ":"))},
                       separators=(",", ":"))
    return device.encode(), value.encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--rate", type=float, default=10000.0, help="events per second")
    ap.add_argument("--seconds", type=float, default=0.0, help="produce for this long")
    ap.add_argument("--count", type=int, default=0, help="or: this many events, unpaced")
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--start-index", type=int, default=0)
    args = ap.parse_args()

    producer = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 1,
                         "enable.idempotence": True, "queue.buffering.max.messages": 1000000})
    sent = 0
    first = last = time.time()
    started = time.monotonic()
    if args.count:
        for i in range(args.count):
            key, value = event(args.start_index + i, time.time())
            producer.produce(args.topic, value, key, partition=i % args.partitions)
            producer.poll(0)
        sent = args.count
    else:
        total = int(args.rate * args.seconds)
        while True:
            elapsed = time.monotonic() - started
            if elapsed >= args.seconds and sent >= total:
                break
            allowed = min(total, int(elapsed * args.rate) + 1)
            if sent >= allowed:
                wake = sent / args.rate if sent < total else args.seconds
                time.sleep(min(0.5, max(0.0005, wake - elapsed)))
                continue
            while sent < allowed:
                now = time.time()
                key, value = event(args.start_index + sent, now)
                producer.produce(args.topic, value, key, partition=sent % args.partitions)
                sent += 1
            last = now
            producer.poll(0)
    remaining = producer.flush(60)
    print(json.dumps({"produced": sent - remaining, "seconds": time.monotonic() - started,
                      "first": first, "last": last}), flush=True)


if __name__ == "__main__":
    main()
