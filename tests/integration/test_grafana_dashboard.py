"""examples/grafana/silt.json against Grafana's own dashboard schema (issue
#18: "the dashboard JSON loads, validated against Grafana's dashboard
schema").

Grafana generates TypeScript types from the CUE definition of its dashboard
kind and publishes them on npm as @grafana/schema
(scripts/setup-grafana-schema.sh installs them with the TypeScript
compiler). The test writes the dashboard as a TypeScript object literal
typed as that schema's `Dashboard` and runs `tsc --strict`: a missing
required field, a field of the wrong type, a value outside an enumeration
or a field the schema does not know (TypeScript's excess-property check
on object literals) is an error. Two adjustments, both about how JSON
spells what the types say:

- the export wrapper's `__inputs` / `__requires` (Grafana's "export for
  sharing externally" form, resolved on import) are not part of the
  dashboard model and are left out;
- the schema's enums are TypeScript enums, which a JSON string cannot be
  assigned to, so each enum type is checked as the union of its values.

A second case feeds the same check a dashboard with one wrong field, so the
check is known to reject what it should (it is not a check that cannot
fail). test_metrics.py runs every panel's PromQL on series a real
Prometheus scraped from silt.
"""

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "examples" / "grafana" / "silt.json"
SCHEMA_DIR = REPO / ".cache" / "grafana-schema"
TSC = SCHEMA_DIR / "node_modules" / ".bin" / "tsc"

PRELUDE = """\
import type { Dashboard } from "@grafana/schema/dist/esm/raw/dashboard/x/Dashboard_types.gen";
// The schema's enums as the values JSON holds (strings or numbers).
type Json<T> = T extends string ? (string extends T ? string : `${T}`)
  : T extends number ? number
  : T extends boolean ? boolean
  : T extends Array<infer U> ? Array<Json<U>>
  : T extends object ? { [K in keyof T]: Json<T[K]> }
  : T;
export const dashboard: Json<Dashboard> = """

TSCONFIG = {"compilerOptions": {"strict": True, "noEmit": True, "module": "nodenext",
                                "moduleResolution": "nodenext", "target": "es2022",
                                "skipLibCheck": True},
            "files": ["dashboard.ts"]}


@pytest.fixture(scope="module")
def tsc():
    if not TSC.is_file():
        pytest.fail(f"TypeScript and @grafana/schema are missing at {SCHEMA_DIR}: "
                    "run scripts/setup-grafana-schema.sh (make test-deps)")
    return TSC


def type_check(tsc, dashboard: dict) -> subprocess.CompletedProcess:
    """tsc's verdict on `dashboard` (the wrapper's __ keys left out). The
    file sits in SCHEMA_DIR so that its node_modules resolve."""
    model = {k: v for k, v in dashboard.items() if not k.startswith("__")}
    work = SCHEMA_DIR / "check"
    work.mkdir(exist_ok=True)
    (work / "dashboard.ts").write_text(PRELUDE + json.dumps(model, indent=1) + ";\n")
    (work / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    return subprocess.run([str(tsc), "-p", str(work)], capture_output=True, text=True,
                          timeout=300)


def test_dashboard_matches_grafanas_schema(tsc):
    result = type_check(tsc, json.loads(DASHBOARD.read_text()))
    assert result.returncode == 0, f"{DASHBOARD} against @grafana/schema:\n{result.stdout}"


@pytest.mark.parametrize("mutation,error", [
    ("wrong_type", "'string' is not assignable to type 'number'"),
    ("unknown_field", "'\"refreshEvery\"' does not exist"),
    ("bad_enum", "Type '\"sometimes\"' is not assignable"),
])
def test_the_check_rejects_a_wrong_dashboard(tsc, mutation, error):
    dashboard = json.loads(DASHBOARD.read_text())
    panel = next(p for p in dashboard["panels"] if p["type"] != "row")
    if mutation == "wrong_type":
        panel["gridPos"]["w"] = "wide"  # a number in the schema
    elif mutation == "unknown_field":
        dashboard["refreshEvery"] = "5s"  # not a dashboard field
    else:
        dashboard["panels"].insert(0, {"type": "row", "id": 99, "collapsed": False, "title": "r",
                                       "panels": [], "gridPos": {"x": 0, "y": 0, "w": 24, "h": 1},
                                       "repeatDirection": "sometimes"})
    result = type_check(tsc, dashboard)
    assert result.returncode != 0
    assert error in result.stdout, result.stdout
