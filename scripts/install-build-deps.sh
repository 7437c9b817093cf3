#!/usr/bin/env bash
# Installs the Debian packages silt needs to build. Idempotent; quiet when
# everything is already there. Run as root (or with sudo available).
#   --check   also the tools of `make check format-check` (clang-format 14,
#             python3), which `make test` runs
#   --clang   also clang and its sanitizer runtimes (`make tsan`, `make fuzz`)
#   --monitoring  also the services the tests start themselves: prometheus
#             and chromium (test_metrics.py), the mosquitto broker
#             (test_mqtt*.py); `make test` runs them
#   --profile also the memory and CPU profilers the benchmark notes use
#             (heaptrack, valgrind's massif, perf): bench/soak/README.md
#   --arm64   also the aarch64 cross toolchain, the arm64 (multi-arch)
#             -dev packages of every library silt links, and qemu-user-static
#             (`make dist`, `make test-arm64`)
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
# The libraries silt links, installed again for arm64 by --arm64: the -dev
# packages that are Multi-Arch: same (co-installable with the amd64 ones).
# libsimdjson-dev, libyaml-cpp-dev, libcctz-dev and librocksdb-dev are not:
# installing them for arm64 REMOVES the amd64 ones, so only their (M-A: same)
# runtime libraries come from apt here, and scripts/setup-arm64-sysroot.sh
# unpacks the four -dev packages (and librocksdb7.8, libgflags, not M-A:
# same either) under .cache/arm64-sysroot without installing them.
ARM64_LIBS=(
  libsnappy-dev libzstd-dev liblz4-dev zlib1g-dev libbz2-dev
  libfmt-dev librdkafka-dev libgtest-dev libgmock-dev
  libcurl4-openssl-dev libssl-dev libbrotli-dev libxxhash-dev
  libre2-dev libroaring-dev libcpp-httplib-dev libmosquitto-dev
  libsimdjson14 libyaml-cpp0.7 libcctz2
)
arm64=0
for arg in "$@"; do
  case "$arg" in
    --check) PKGS+=(clang-format python3 openssl) ;;
    --clang) PKGS+=(clang libclang-rt-14-dev) ;;
    # The monitoring tests' Prometheus (+ promtool) and headless Chromium,
    # and the MQTT tests' broker; the tests start them on loopback
    # themselves, on their own ports.
    --monitoring) PKGS+=(prometheus chromium mosquitto) ;;
    --profile) PKGS+=(heaptrack valgrind linux-perf) ;;
    --arm64)
      arm64=1
      PKGS+=(crossbuild-essential-arm64 qemu-user-static binutils-aarch64-linux-gnu)
      for p in "${ARM64_LIBS[@]}"; do PKGS+=("$p:arm64"); done ;;
    *) echo "usage: $0 [--check] [--clang] [--monitoring] [--profile] [--arm64]" >&2; exit 2 ;;
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
# arm64 packages come from the same Debian mirror once dpkg knows the
# architecture (multi-arch); apt-get update then fetches its package lists.
if [ "$arm64" -eq 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
echo "installing build dependencies: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
