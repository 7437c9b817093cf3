#!/usr/bin/env python3
"""The light-weight Kafka -> Delta pipeline many users write today, as the
delta-rs peer of the end-to-end benchmark: a confluent-kafka consumer loop
that applies the seed's transformation with pyarrow and appends each batch
with deltalake.write_deltalake (delta-rs), then commits the Kafka offsets.

Transformation (the seed's select list): the value is parsed as the JSON
envelope {device_id, device_type, ingested_at, payload} (pyarrow.json with an
explicit schema), payload is parsed once more for linkquality, contact,
battery, power, voltage, current, energy, state; event_time =
to_timestamp(ingested_at) (UTC), event_date = its date, raw_payload = the
payload string, processed_at = the batch time; partitioned by device_type,
event_date. Offsets live in the Kafka consumer group, committed after the
Delta commit (at-least-once across a crash between the two, as most such
loops are).

  deltars_loop.py --bootstrap B --topic T --table DIR --group G \\
      --trigger availableNow|fastest|"1 second"|"60 seconds" --max-offsets N

availableNow: drains up to the end offsets seen at start, in batches of at
most N records, then exits. fastest: writes whatever has arrived as soon as
the previous commit is done. "<k> second(s)": one batch every k seconds.
"""

import argparse
import io
import re
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from deltalake import write_deltalake

ENVELOPE = pa.schema([("device_id", pa.string()), ("device_type", pa.string()),
                      ("ingested_at", pa.string()), ("payload", pa.string())])
PAYLOAD = pa.schema([("linkquality", pa.int32()), ("contact", pa.bool_()),
                     ("battery", pa.int32()), ("power", pa.float64()),
                     ("voltage", pa.float64()), ("current", pa.float64()),
                     ("energy", pa.float64()), ("state", pa.string())])
UTC_US = pa.timestamp("us", tz="UTC")


def read_json_lines(lines: bytes, schema: pa.Schema) -> pa.Table:
    return pajson.read_json(
        io.BytesIO(lines),
        read_options=pajson.ReadOptions(block_size=max(1 << 20, len(lines) + 1)),
        parse_options=pajson.ParseOptions(explicit_schema=schema,
                                          unexpected_field_behavior="ignore"))


def transform(values: list) -> pa.Table:
    env = read_json_lines(b"\n".join(values), ENVELOPE)
    payload = env.column("payload")
    filled = pc.fill_null(payload, "{}").to_pylist()
    fields = read_json_lines("\n".join(filled).encode(), PAYLOAD)
    event_time = pc.cast(env.column("ingested_at"), UTC_US, safe=False)
    now = pa.scalar(int(time.time() * 1_000_000), UTC_US)
    return pa.table({
        "device_id": env.column("device_id"),
        "device_type": env.column("device_type"),
        "event_time": event_time,
        "linkquality": fields.column("linkquality"),
        "contact": fields.column("contact"),
        "battery": fields.column("battery"),
        "power": fields.column("power"),
        "voltage": fields.column("voltage"),
        "current": fields.column("current"),
        "energy": fields.column("energy"),
        "plug_state": fields.column("state"),
        "raw_payload": payload,
        "processed_at": pa.array([now.value] * env.num_rows, UTC_US),
        "event_date": pc.cast(event_time, pa.date32()),
    })


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--trigger", default="fastest")
    ap.add_argument("--max-offsets", type=int, default=100000)
    args = ap.parse_args()

    interval = 0.0
    if args.trigger not in ("availableNow", "fastest"):
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*seconds?", args.trigger)
        if not m:
            raise SystemExit(f"--trigger '{args.trigger}': expected availableNow, fastest or "
                             "'<n> seconds'")
        interval = float(m.group(1))

    consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": args.group,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "fetch.wait.max.ms": 10})
    meta = consumer.list_topics(args.topic, timeout=30)
    partitions = sorted(meta.topics[args.topic].partitions)
    committed = consumer.committed([TopicPartition(args.topic, p) for p in partitions], timeout=30)
    assignment = [TopicPartition(args.topic, tp.partition,
                                 tp.offset if tp.offset >= 0 else OFFSET_BEGINNING)
                  for tp in committed]
    consumer.assign(assignment)
    position = {tp.partition: max(tp.offset, 0) for tp in committed}
    end = None
    if args.trigger == "availableNow":
        end = {p: consumer.get_watermark_offsets(TopicPartition(args.topic, p), timeout=30)[1]
               for p in partitions}

    def done() -> bool:
        return end is not None and all(position[p] >= end[p] for p in partitions)

    batch_id = 0
    next_trigger = time.monotonic()
    while not done():
        if interval:
            wait = next_trigger - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            next_trigger = max(next_trigger + interval, time.monotonic())
        values = []
        last = {}
        # Block for the first record (fastest / availableNow), then take what
        # is already buffered, up to the batch size.
        timeout = 0.0 if interval else 1.0
        while len(values) < args.max_offsets:
            msgs = consumer.consume(num_messages=min(10000, args.max_offsets - len(values)),
                                    timeout=timeout)
            if not msgs:
                break
            for m in msgs:
                if m.error():
                    raise SystemExit(f"kafka error: {m.error()}")
                if end is not None and m.offset() >= end[m.partition()]:
                    continue
                values.append(m.value())
                last[m.partition()] = m.offset()
            timeout = 0.0
            if end is not None:
                for p, o in last.items():
                    position[p] = o + 1
                if done():
                    break
        if not values:
            continue
        table = transform(values)
        write_deltalake(args.table, table, mode="append",
                        partition_by=["device_type", "event_date"])
        consumer.commit(offsets=[TopicPartition(args.topic, p, o + 1) for p, o in last.items()],
                        asynchronous=False)
        for p, o in last.items():
            position[p] = o + 1
        print(f"[deltars] batch {batch_id}: {len(values)} rows", flush=True)
        batch_id += 1
    consumer.close()


if __name__ == "__main__":
    main()
