"""kill -9 a windowed aggregation over Kafka (withWatermark, groupBy
window(ts, '10 seconds') and device, append mode, 200 batches) at random
moments and at the moment between the state commit and commits/N, restart
until a run drains the topic by itself, and check that the table equals the
uninterrupted run's, with no window twice: once with the checkpoint and
table on local disk, once with both on MinIO (s3://), and once locally with
two stateful operators (a dropDuplicates before the aggregation, over the
events with some of them sent twice). About half the kills
are random (a quarter of those during the restart itself: loading the
state, re-running the unfinished batch), half aimed; both are a few batches
apart, so they spread over the whole topic.

The events go into a one-partition topic once; the uninterrupted run and
the crashed run read the same topic with their own checkpoints and tables.
Event times grow with the offset and are out of order by less than the
watermark delay, so no event is ever late and the final table does not
depend on where batches end: it is also computed here from the events.

Aimed kills watch the checkpoint, without a hook in silt: batch N writes
state/0/0/<N+1>.changelog before its Delta commit and commits/N after it,
so a changelog newer than any at the run's start whose commits/<V-1> does
not exist yet is the moment to SIGKILL. On MinIO the poll reads the
server's data directory (an object is a directory with xl.meta, renamed
into place when the PUT completes), which is much faster than a listing;
whether a kill landed in the window is then checked through the S3 API.
"""

import datetime as dt
import json
import os
import random
import shutil
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

import minio_service
import torture
from helpers import describe, kill, log_versions, read_commit, run_silt, start_silt, write_job

NUM_EVENTS = torture.scaled(12_000)
MAX_OFFSETS_PER_TRIGGER = 40  # 300 batches (360 with the duplicates): 200 ran out before the 40th kill under load
DEVICES = 4
STEP_MS = 50  # event i happens at BASE + i * STEP_MS - jitter
JITTER_MS = 2_000  # below the delay: no event is late
DELAY = "5 seconds"
DELAY_MS = 5_000
WINDOW_MS = 10_000
BASE_MS = 1_782_116_160_000  # 2026-06-22T08:16:00Z
MIN_KILLS = torture.scaled(40)
MAX_KILLS = torture.scaled(150)  # then the rest is drained without kills
MIN_AIMED_HITS = torture.scaled(5)  # of about 30 aimed kills; aiming is best effort
RUN_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def events():
    rng = random.Random(1515)
    out = []
    for i in range(NUM_EVENTS):
        ms = BASE_MS + i * STEP_MS - rng.randrange(JITTER_MS)
        ts = dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)
        out.append({"id": i, "device": f"d{i % DEVICES}", "temp": rng.randrange(-20, 40),
                    "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z", "ms": ms})
    return out


@pytest.fixture(scope="module")
def topic(kafka, events):
    name = f"stateful-crash-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(name, 1)
    kafka.console_produce(name, [json.dumps({k: e[k] for k in ("id", "device", "temp", "ts")})
                                 for e in events])
    assert kafka.end_offsets(name) == {0: NUM_EVENTS}
    return name


@pytest.fixture(scope="module")
def topic_with_duplicates(kafka, events):
    """The events with every 5th one sent again three events later (within
    the delay: a duplicate is never late), for the two-operator job."""
    name = f"stateful-crash-dupes-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(name, 1)
    records = []
    for i, e in enumerate(events):
        records.append(json.dumps({k: e[k] for k in ("id", "device", "temp", "ts")}))
        if i >= 3 and i % 5 == 0:
            records.append(json.dumps({k: events[i - 3][k] for k in ("id", "device", "temp", "ts")}))
    kafka.console_produce(name, records)
    assert kafka.end_offsets(name) == {0: len(records)}
    return name


def expected_windows(events):
    """The append-mode result: every 10 s window of a device that the final
    watermark (max event time - delay) has passed."""
    watermark = max(e["ms"] for e in events) - DELAY_MS
    groups = {}
    for e in events:
        start = e["ms"] - e["ms"] % WINDOW_MS
        if start + WINDOW_MS > watermark:
            continue
        g = groups.setdefault((start, e["device"]), [0, 0.0, e["id"], e["id"]])
        g[0] += 1
        g[1] += e["temp"]
        g[2] = min(g[2], e["id"])
        g[3] = max(g[3], e["id"])
    return Counter((start, start + WINDOW_MS, device, n, total, lo, hi)
                   for (start, device), (n, total, lo, hi) in groups.items())


def windowed_job(path, kafka, topic, table, checkpoint, storage=None, dedupe=False):
    job = {
        "name": "stateful-crash",
        "source": {"format": "kafka", "options": {
            "kafka.bootstrap.servers": kafka.bootstrap, "subscribe": topic,
            "startingOffsets": "earliest", "maxOffsetsPerTrigger": MAX_OFFSETS_PER_TRIGGER}},
        "transform": [
            {"select": ["from_json(CAST(value AS STRING), "
                        "'id BIGINT, device STRING, temp DOUBLE, ts STRING') AS e"]},
            {"select": ["e.id", "e.device", "e.temp", "to_timestamp(e.ts) AS ts"]},
            {"withWatermark": {"eventTime": "ts", "delayThreshold": DELAY}},
            *([{"dropDuplicates": ["id"]}] if dedupe else []),
            {"groupBy": {"keys": [f"window(ts, '{WINDOW_MS // 1000} seconds')", "device"],
                         "agg": ["count(*) AS n", "sum(temp) AS total", "min(id) AS first_id",
                                 "max(id) AS last_id"]}},
        ],
        "sink": {"format": "delta", "outputMode": "append", "path": str(table)},
        "checkpointLocation": str(checkpoint),
        "trigger": {"availableNow": True},
    }
    if storage:
        job["storage"] = storage
    return write_job(path, job)


def table_windows(arrow_table):
    """The table's rows as a multiset of (start ms, end ms, device, n, total,
    first_id, last_id)."""
    def ms(t):
        return int(t.timestamp() * 1000)
    return Counter((ms(r["window"]["start"]), ms(r["window"]["end"]), r["device"], r["n"],
                    r["total"], r["first_id"], r["last_id"])
                   for r in arrow_table.to_pylist())


class LocalCheckpoint:
    def __init__(self, table, checkpoint):
        self.table, self.checkpoint = Path(table), Path(checkpoint)
        self.state_dir = self.checkpoint / "state" / "0" / "0"

    def changelogs(self):
        """State versions with a changelog (fast; used while polling)."""
        try:
            names = os.listdir(self.state_dir)
        except FileNotFoundError:
            return set()
        return {int(n[:-10]) for n in names if n.endswith(".changelog") and n[:-10].isdigit()}

    def has_commit(self, batch):
        return (self.checkpoint / "commits" / str(batch)).exists()

    def offsets(self):
        try:
            return sum(1 for n in os.listdir(self.checkpoint / "offsets") if n.isdigit())
        except FileNotFoundError:
            return 0

    # The checks after a kill, through the same file system here.
    verified_changelogs = changelogs
    verified_has_commit = has_commit

    def newest_table_batch(self):
        """The batch id (txn version) of the table's newest commit, or None."""
        versions = log_versions(self.table)
        if not versions:
            return None
        txns = [a["txn"]["version"] for a in read_commit(self.table, versions[-1]) if "txn" in a]
        return txns[0] if txns else None

    def table_batches(self):
        """Batch ids (txn versions) of every commit of the table, in order."""
        return [a["txn"]["version"] for v in log_versions(self.table)
                for a in read_commit(self.table, v) if "txn" in a]

    def read(self):
        from deltalake import DeltaTable
        return DeltaTable(str(self.table)).to_pyarrow_table()

    def commit_batches(self):
        return sorted(int(p.name) for p in (self.checkpoint / "commits").iterdir()
                      if p.name.isdigit())


class MinioCheckpoint:
    def __init__(self, minio, table_key, checkpoint_key):
        self.minio, self.table_key, self.checkpoint_key = minio, table_key, checkpoint_key
        # MinIO's single-drive layout: <data>/<bucket>/<key>/xl.meta.
        root = Path(minio.data_dir) / "data" / minio.bucket
        self.state_dir = root / checkpoint_key / "state" / "0" / "0"
        self.commits_dir = root / checkpoint_key / "commits"
        self.offsets_dir = root / checkpoint_key / "offsets"

    def changelogs(self):
        try:
            names = os.listdir(self.state_dir)
        except FileNotFoundError:
            return set()
        return {int(n[:-10]) for n in names if n.endswith(".changelog") and n[:-10].isdigit()
                and (self.state_dir / n / "xl.meta").exists()}

    def has_commit(self, batch):
        return (self.commits_dir / str(batch) / "xl.meta").exists()

    def offsets(self):
        try:
            return sum(1 for n in os.listdir(self.offsets_dir) if n.isdigit())
        except FileNotFoundError:
            return 0

    def verified_changelogs(self):
        keys = self.minio.list_keys(f"{self.checkpoint_key}/state/0/0/")
        names = [k.rsplit("/", 1)[1] for k in keys]
        return {int(n[:-10]) for n in names if n.endswith(".changelog") and n[:-10].isdigit()}

    def verified_has_commit(self, batch):
        return bool(self.minio.list_keys(f"{self.checkpoint_key}/commits/{batch}").keys()
                    & {f"{self.checkpoint_key}/commits/{batch}"})

    def newest_table_batch(self):
        keys = [k for k in self.minio.list_keys(f"{self.table_key}/_delta_log/")
                if k.endswith(".json")]
        if not keys:
            return None
        text = self.minio.get_object(max(keys)).decode()
        txns = [a["txn"]["version"] for a in map(json.loads, text.splitlines()) if "txn" in a]
        return txns[0] if txns else None

    def table_batches(self):
        return [a["txn"]["version"]
                for actions in minio_service.delta_commits(self.minio, self.table_key).values()
                for a in actions if "txn" in a]

    def read(self):
        from deltalake import DeltaTable
        return DeltaTable(f"s3://{self.minio.bucket}/{self.table_key}",
                          storage_options=self.minio.storage_options()).to_pyarrow_table()

    def commit_batches(self):
        return minio_service.checkpoint_batches(self.minio, self.checkpoint_key, "commits")


def run_to_end(silt_bin, job, env):
    """Runs the job until a run plans no batch; returns the number of runs."""
    for runs in range(1, 20):
        proc = run_silt(silt_bin, "run", job, env=env, timeout=600)
        assert proc.returncode == 0, describe(proc)
        if "[silt] batch " not in proc.stdout:
            return runs
    pytest.fail("the job never drained the topic")


def wait_for_aimed_moment(proc, ckpt, skip, deadline):
    """Polls until the `skip`+1-th changelog newer than those present at the
    start exists while its batch's commits/N does not. True when seen while
    the process ran."""
    known = ckpt.changelogs()
    newest = max(known, default=0)
    seen_new = 0
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        for v in sorted(ckpt.changelogs()):
            if v <= newest:
                continue
            newest = v
            seen_new += 1
            if seen_new > skip and not ckpt.has_commit(v - 1):
                return True
    return False


def wait_for_random_moment(proc, ckpt, rng, startup_s, batch_s):
    """Sleeps to a random moment of the run: a quarter of the time within the
    start (recovery: loading the state, re-running the unfinished batch),
    else within the 6 batch durations after the first new offsets/N. Returns the
    time from the start to the first new offsets/N, when it was seen."""
    started = time.monotonic()
    if rng.random() < 0.25:
        end = started + rng.uniform(0.0, startup_s)
        while time.monotonic() < end and proc.poll() is None:
            time.sleep(0.001)
        return None
    known = ckpt.offsets()
    while proc.poll() is None and time.monotonic() < started + RUN_TIMEOUT_S:
        # (The checkpoint keeps 100 batches' files: the count may also drop.)
        if ckpt.offsets() != known:
            first = time.monotonic()
            end = first + rng.uniform(0.0, 6 * batch_s)
            while time.monotonic() < end and proc.poll() is None:
                time.sleep(0.001)
            return first - started
    return None


def crash_until_drained(silt_bin, job, ckpt, env, log_dir, seed, batch_s):
    """kill -9 and restart until a run ends by itself (availableNow: it has
    drained the topic), about half the kills aimed, a few batches apart so
    that they spread over the whole topic; returns the kill statistics.
    `batch_s` is a batch's duration in the uninterrupted run."""
    rng = random.Random(seed)
    kills = Counter()
    hits = Counter()
    landed_at = []
    stderr_log = log_dir / "silt-stderr.log"
    startup_s = 0.3  # a first guess at a restart's length; then the longest seen
    with open(stderr_log, "w") as err:
        while sum(kills.values()) < MAX_KILLS:
            out_path = log_dir / "silt-stdout.log"
            with open(out_path, "w") as out:
                started = time.monotonic()
                proc = start_silt(silt_bin, "run", job, env=env, stdout=out, stderr=err)
                deadline = started + RUN_TIMEOUT_S
                aimed = rng.random() < 0.5
                if aimed:
                    seen = wait_for_aimed_moment(proc, ckpt, rng.randrange(5), deadline)
                else:
                    startup = wait_for_random_moment(proc, ckpt, rng, startup_s, batch_s)
                    startup_s = max(startup_s, startup or 0.0)
                    seen = True
                if proc.poll() is not None:
                    proc.wait()
                    assert proc.returncode == 0, f"silt failed on restart; see {stderr_log}"
                    break
                kill(proc)
            # Evidence for a failure: what the checkpoint held at each kill.
            versions = ckpt.changelogs()
            newest = max(versions, default=0)
            with open(log_dir / "kills.log", "a") as record:
                record.write(f"kill {sum(kills.values())} {'aimed' if aimed else 'random'} "
                             f"after {time.monotonic() - started:.3f} s: newest changelog "
                             f"{newest}, commits/{newest - 1} "
                             f"{'exists' if ckpt.has_commit(newest - 1) else 'missing'}\n")
            kills["aimed" if aimed and seen else "random" if not aimed else "aim timed out"] += 1
            if aimed and seen:
                # Did the kill land between the state commit and commits/N?
                # (The process may have moved on between the poll and the kill.)
                newest = max(ckpt.verified_changelogs(), default=0)
                if newest and not ckpt.verified_has_commit(newest - 1):
                    batch = newest - 1
                    where = ("after the table commit" if ckpt.newest_table_batch() == batch
                             else "before the table commit")
                    hits[where] += 1
                    landed_at.append(batch)
    return kills, hits, landed_at


def check_crashed_table(crashed, expected, ckpt, kills, hits, landed_at, log_dir, what):
    total_kills = sum(kills.values())
    assert total_kills >= MIN_KILLS, (
        f"{what}: only {total_kills} kills before the topic was drained ({dict(kills)}); "
        "the kill schedule needs retuning")
    got = table_windows(crashed)
    keys = Counter((start, device) for start, _, device, *_ in got.elements())
    twice = [k for k, n in keys.items() if n > 1]
    assert not twice, f"{what}: {len(twice)} windows written more than once, e.g. {twice[:5]}"
    missing = expected - got
    extra = got - expected
    torture.record(f"kafka -> windowed aggregation -> delta ({what})", kills,
                   sum(expected.values()), sum(missing.values()), sum(extra.values()),
                   aimed_hits=dict(hits))
    assert not missing and not extra, (
        f"{what}: the crashed run's table differs from the uninterrupted run's: "
        f"{sum(missing.values())} rows missing (e.g. {sorted(missing)[:3]}), "
        f"{sum(extra.values())} rows extra (e.g. {sorted(extra)[:3]}); kills {dict(kills)}, "
        f"aimed kills that landed between the state commit and commits/N: {dict(hits)} "
        f"at batches {landed_at}; each kill is in {log_dir / 'kills.log'}")
    assert sum(hits.values()) >= MIN_AIMED_HITS, (
        f"{what}: only {dict(hits)} aimed kills landed between the state commit and commits/N "
        f"({dict(kills)})")
    txns = ckpt.table_batches()
    assert len(txns) == len(set(txns)), f"{what}: a batch was committed to the table twice"
    batches = ckpt.commit_batches()
    assert sorted(txns)[-1] == batches[-1]
    # Reported, not asserted: the state store's working copy is a mkdtemp
    # directory that only a clean exit removes.
    left = len(list((log_dir / "tmp").glob("silt-state-*")))
    shutil.rmtree(log_dir / "tmp")  # 4 MB each
    print(f"{what}: kills {dict(kills)}; landed between state commit and commits/N: "
          f"{dict(hits)} (batches {landed_at}); {len(got)} windows; last batch {batches[-1]}; "
          f"state working copies left in TMPDIR: {left}")


def state_tmpdir(work):
    """TMPDIR for silt: the state store's working copies (RocksDB) go there,
    so that the ones a kill -9 leaves behind stay in the test's directory."""
    tmp = work / "tmp"
    tmp.mkdir()
    return {"TMPDIR": str(tmp)}


@pytest.fixture(scope="module")
def uninterrupted(silt_bin, kafka, topic, events, tmp_path_factory):
    """The uninterrupted run's table (local disk), as a multiset of rows
    (which must equal what the events give), and its time per batch."""
    work = tmp_path_factory.mktemp("uninterrupted")
    whole = LocalCheckpoint(work / "table", work / "checkpoint")
    job = windowed_job(work / "job.yaml", kafka, topic, whole.table, whole.checkpoint)
    started = time.monotonic()
    run_to_end(silt_bin, job, {})
    elapsed = time.monotonic() - started
    rows = table_windows(whole.read())
    assert rows == expected_windows(events)
    assert len(rows) > 150
    batches = whole.commit_batches()[-1] + 1
    assert batches >= NUM_EVENTS // MAX_OFFSETS_PER_TRIGGER
    return rows, elapsed / batches


def test_kill_9_a_windowed_aggregation_over_kafka_gives_the_uninterrupted_table(
        silt_bin, kafka, topic, uninterrupted, work):
    ckpt = LocalCheckpoint(work / "table", work / "checkpoint")
    job = windowed_job(work / "job.yaml", kafka, topic, ckpt.table, ckpt.checkpoint)
    expected, batch_s = uninterrupted
    env = state_tmpdir(work)
    kills, hits, landed_at = crash_until_drained(silt_bin, job, ckpt, env, work, 15, batch_s)
    run_to_end(silt_bin, job, env)
    check_crashed_table(ckpt.read(), expected, ckpt, kills, hits, landed_at, work, "local")


@pytest.fixture(scope="module")
def minio():
    yield from minio_service.server_fixture()


def test_kill_9_a_windowed_aggregation_on_s3_gives_the_uninterrupted_table(
        silt_bin, kafka, topic, uninterrupted, minio, work):
    prefix = f"stateful-crash-{uuid.uuid4().hex[:8]}"
    ckpt = MinioCheckpoint(minio, f"{prefix}/table", f"{prefix}/checkpoint")
    job = windowed_job(work / "job.yaml", kafka, topic,
                       f"s3://{minio.bucket}/{ckpt.table_key}",
                       f"s3://{minio.bucket}/{ckpt.checkpoint_key}", minio_service.job_storage(minio))
    env = minio_service.clean_env() | state_tmpdir(work)
    expected, batch_s = uninterrupted
    kills, hits, landed_at = crash_until_drained(silt_bin, job, ckpt, env, work, 16, batch_s)
    run_to_end(silt_bin, job, env)
    check_crashed_table(ckpt.read(), expected, ckpt, kills, hits, landed_at, work, "MinIO")


def test_kill_9_a_deduplication_then_aggregation_gives_the_uninterrupted_table(
        silt_bin, kafka, topic_with_duplicates, events, uninterrupted, work):
    """Two stateful operators (dropDuplicates, operator 1, then the windowed
    aggregation, operator 0) under the same kills, locally: both states of
    batch N are committed before the table commit, so the table equals the
    events' windows, each duplicate dropped once."""
    ckpt = LocalCheckpoint(work / "table", work / "checkpoint")
    job = windowed_job(work / "job.yaml", kafka, topic_with_duplicates, ckpt.table,
                       ckpt.checkpoint, dedupe=True)
    expected, batch_s = uninterrupted
    env = state_tmpdir(work)
    kills, hits, landed_at = crash_until_drained(silt_bin, job, ckpt, env, work, 17, batch_s)
    run_to_end(silt_bin, job, env)
    assert (ckpt.checkpoint / "state" / "1" / "0").is_dir()
    check_crashed_table(ckpt.read(), expected, ckpt, kills, hits, landed_at, work,
                        "local, two operators")
