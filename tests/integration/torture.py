"""The crash tests' two sizes: the one `make test` runs, and `make torture`.

Every kill -9 test takes its kill budget, its input size and its service
restarts from here. Under `make test` (no SILT_TORTURE_SCALE) they are the
tests' own numbers. `make torture` (scripts/torture.py) sets
SILT_TORTURE_SCALE=K: each test kills K times as often over K times the
input, and restarts its broker or object store while the query runs, as
often as `service_restarts()` says; each test then appends its tally (kills,
restarts, rows expected, lost, doubled) to the JSON-lines file named by
SILT_TORTURE_RESULTS, which the script turns into the committed results.
The invariant checks are the same in both sizes.
"""

from __future__ import annotations

import json
import os
from collections import Counter

SCALE = float(os.environ.get("SILT_TORTURE_SCALE", "1") or "1")
RESULTS = os.environ.get("SILT_TORTURE_RESULTS", "")


def enabled() -> bool:
    return SCALE > 1


def scaled(n: int) -> int:
    """A test's count (kills, input files, events) at the current size."""
    return max(1, int(round(n * SCALE)))


def service_restarts(default: int = 0) -> int:
    """How many times a test restarts its service (broker, MinIO) while the
    query runs: its own default under `make test`, about one per 25 kills
    under `make torture`."""
    if not enabled():
        return default
    return max(default, int(SCALE * 2))


def restart_points(total_kills: int, restarts: int) -> list[int]:
    """Kill counts after which to restart the service, spread evenly."""
    if restarts <= 0:
        return []
    step = max(1, total_kills // (restarts + 1))
    return [step * (i + 1) for i in range(restarts)]


def lost_and_doubled(expected, got) -> tuple[int, int]:
    """How many expected items are missing from `got`, and how many extra
    copies of items it holds (both multisets)."""
    want, have = Counter(expected), Counter(got)
    lost = sum((want - have).values())
    doubled = sum((have - want).values())
    return lost, doubled


def record(test: str, kills: Counter | dict | int, rows: int, lost: int, doubled: int,
           restarts: int = 0, **extra) -> None:
    """Appends one test's tally to the torture results (no-op otherwise)."""
    if not RESULTS:
        return
    kill_counts = {"total": kills} if isinstance(kills, int) else dict(kills)
    entry = {"test": test, "scale": SCALE,
             "kills": sum(v for k, v in kill_counts.items() if k != "total")
             if "total" not in kill_counts else kill_counts["total"],
             "kill_kinds": kill_counts, "restarts": restarts, "rows": rows,
             "lost": lost, "doubled": doubled}
    entry.update(extra)
    with open(RESULTS, "a") as out:
        out.write(json.dumps(entry) + "\n")
