#!/usr/bin/env bash
# Unpacks the arm64 -dev packages that cannot be installed next to their
# amd64 versions (not Multi-Arch: same; apt would remove the amd64 ones)
# under .cache/arm64-sysroot, for the cross build (cmake/aarch64-linux-gnu.cmake
# searches it after the multi-arch directories). Idempotent. Needs the arm64
# architecture known to dpkg: scripts/install-build-deps.sh --arm64 first.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=.cache/arm64-sysroot
PKGS=(libsimdjson-dev libyaml-cpp-dev libcctz-dev librocksdb-dev librocksdb7.8
      libgflags-dev libgflags2.2)
stamp="$ROOT/.done-$(printf '%s ' "${PKGS[@]}" | md5sum | cut -c1-8)"
[ -f "$stamp" ] && exit 0
rm -rf "$ROOT" && mkdir -p "$ROOT/debs"
(cd "$ROOT/debs" && apt-get download -qq $(printf '%s:arm64 ' "${PKGS[@]}"))
for deb in "$ROOT"/debs/*.deb; do dpkg-deb -x "$deb" "$ROOT"; done
# The .pc files say prefix=/usr; point them at the unpacked tree so that
# pkg-config's -L and -I name it.
abs="$(cd "$ROOT" && pwd -P)"
for pc in "$ROOT"/usr/lib/aarch64-linux-gnu/pkgconfig/*.pc; do
  sed -i -E "s|^prefix=\"?/usr\"?|prefix=$abs/usr|" "$pc"
done
# The -dev symlinks (libfoo.so -> libfoo.so.N) and CMake configs name the
# runtime libraries that apt installed under /usr/lib/aarch64-linux-gnu
# (Multi-Arch: same): link those in.
lib="$ROOT/usr/lib/aarch64-linux-gnu"
for link in "$lib"/*.so; do
  for f in /usr/lib/aarch64-linux-gnu/"$(basename "$link")".*; do
    [ -e "$f" ] && [ ! -e "$lib/$(basename "$f")" ] && ln -s "$f" "$lib/$(basename "$f")"
  done
done
touch "$stamp"
