#!/usr/bin/env bash
# Installs what the monitoring tests (tests/integration/test_metrics.py) run:
# Debian's Prometheus server and promtool (the `prometheus` package) and
# headless Chromium for the status-page test. The tests start them on
# loopback themselves; nothing here starts a service. Idempotent; quiet when
# both are there. Run as root (or with sudo available).
set -euo pipefail

PKGS=(prometheus chromium)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing monitoring test tools: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The package's own service (prometheus on :9090) is not what the tests use;
# where the package started it (a system with an init), it keeps running as
# the system's. The tests pick their own free ports.
