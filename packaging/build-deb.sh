#!/usr/bin/env bash
# Builds silt_<version>_<arch>.deb from a `make dist` output: the stripped
# executable, packaging/silt@.service, an empty /etc/silt for job files and
# the demo job as an example. Depends: the Debian packages of the shared
# libraries the executable still needs (its SHARED-LIBRARIES.txt).
#   packaging/build-deb.sh DIST_DIR ARCH    (ARCH: amd64 | arm64)
# Writes DIST_DIR/silt_<version>_<arch>.deb and prints its path.
set -euo pipefail
dist="$1"; arch="$2"
here="$(cd "$(dirname "$0")" && pwd)"
manifest="$(ls "$dist"/silt-*-linux-"$arch".SHARED-LIBRARIES.txt)"
binary="${manifest%.SHARED-LIBRARIES.txt}.silt"
# First line: "# silt 0.1.0 (commit ..., linux/amd64)".
version="$(sed -n '1s/^# silt \([^ ]*\) .*/\1/p' "$manifest")"
depends="$(grep -v '^#' "$manifest" | cut -f2 | grep -vx '?' | sort -u | paste -sd, | sed 's/,/, /g')"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/silt_${version}_$arch"
install -D -m 0755 "$binary" "$root/usr/bin/silt"
install -D -m 0644 "$here/silt@.service" "$root/lib/systemd/system/silt@.service"
install -d -m 0755 "$root/etc/silt"
install -D -m 0644 "$here/../examples/sensor-demo.yaml" \
  "$root/usr/share/doc/silt/examples/sensor-demo.yaml"
install -D -m 0644 "$manifest" "$root/usr/share/doc/silt/SHARED-LIBRARIES.txt"
install -D -m 0644 "$here/../docs/packaging.md" "$root/usr/share/doc/silt/packaging.md"
install -d "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: silt
Version: $version
Architecture: $arch
Maintainer: silt <silt@localhost>
Section: database
Priority: optional
Depends: adduser, $depends
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Description: stream events through Spark SQL expressions into Delta Lake tables
 silt reads Kafka, MQTT, files or a generator, transforms with Spark SQL
 expressions and writes Delta Lake tables exactly once. Jobs run as
 systemd units: put a job file at /etc/silt/<name>.yaml and
 "systemctl enable --now silt@<name>".
CONTROL
install -m 0755 "$here/postinst" "$here/prerm" "$here/postrm" "$root/DEBIAN/"
dpkg-deb --root-owner-group --build "$root" "$dist/silt_${version}_$arch.deb" >/dev/null
echo "$dist/silt_${version}_$arch.deb"
