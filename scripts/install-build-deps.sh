#!/usr/bin/env bash
# Installs the Debian packages silt needs to build. Idempotent; quiet when
# everything is already there. Run as root (or with sudo available).
#   --check   also the tools of `make check format-check` (clang-format 14,
#             python3), which `make test` runs
#   --clang   also clang and its sanitizer runtimes (`make tsan`, `make fuzz`)
#   --monitoring  also the services the tests start themselves: prometheus
#             and chromium (test_metrics.py), the mosquitto broker
#             (test_mqtt*.py); `make test` runs them
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config git
  libsimdjson-dev libsnappy-dev libzstd-dev liblz4-dev zlib1g-dev
  libyaml-cpp-dev libcli11-dev libfmt-dev librdkafka-dev
  libgtest-dev libgmock-dev
  libcurl4-openssl-dev libssl-dev libbrotli-dev libxxhash-dev ccache
  libre2-dev libcctz-dev librocksdb-dev libroaring-dev tzdata libcpp-httplib-dev
  libmosquitto-dev
)
for arg in "$@"; do
  case "$arg" in
    --check) PKGS+=(clang-format python3 openssl) ;;
    --clang) PKGS+=(clang libclang-rt-14-dev) ;;
    # The monitoring tests' Prometheus (+ promtool) and headless Chromium,
    # and the MQTT tests' broker; the tests start them on loopback
    # themselves, on their own ports.
    --monitoring) PKGS+=(prometheus chromium mosquitto) ;;
    *) echo "usage: $0 [--check] [--clang] [--monitoring]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing build dependencies: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
