#!/usr/bin/env python3
"""Builds one release archive of silt: dist/silt-<version>-linux-<arch>.tar.gz.

`make dist` runs it once per architecture on a configured and built build
directory (build/ for amd64, build-arm64/ for the cross build). It relinks
the `silt` executable from that directory's objects with every library that
Debian ships a static archive for (lib<name>.a next to the .so, from the
installed -dev packages) linked statically, libstdc++ and libgcc included;
glibc and the libraries without a static archive stay shared. The shared
libraries the result needs (readelf -d, NEEDED) are listed in the archive,
with the Debian package that provides each, so that `apt-get install` of
those packages on the target is all a machine needs. The binary is stripped.

Why a relink instead of CMake options: the library targets come from
pkg-config and from the packages' own CMake configs, which all name the .so;
the static archives also need the libraries their .so would have pulled in
(its NEEDED entries, which pkg-config's Libs.private does not always list,
e.g. rocksdb's), so the dependency closure is taken from the .so files.

Usage: scripts/dist.py --build-dir build --arch amd64 [--out dist]
                       [--triplet x86_64-linux-gnu] [--tool-prefix ""]
Prints one line per archive: its size and the executable's, each against the
15 MiB budget.
"""

import argparse
import io
import os
import re
import shlex
import subprocess
import sys
import tarfile

BUDGET_BYTES = 15 * 1024 * 1024

# glibc and the dynamic loader: always shared (a static glibc breaks NSS and
# dlopen). libstdc++ and libgcc are linked statically by the compiler flags.
ALWAYS_SHARED = {"c", "m", "dl", "pthread", "rt", "util", "resolv", "anl", "nsl", "crypt"}
COMPILER_RUNTIME = {"stdc++", "gcc_s", "gcc"}

TRIPLETS = {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def lib_name(path_or_soname):
    """'/usr/lib/x/libfoo.so.1.2' or 'libfoo.so.1' -> 'foo'."""
    base = os.path.basename(path_or_soname)
    m = re.match(r"^lib(.+?)\.(so(\.[0-9.]+)?|a)$", base)
    return m.group(1) if m else None


class Resolver:
    def __init__(self, libdirs, readelf, keep_shared):
        self.libdirs = libdirs
        self.readelf = readelf
        self.keep_shared = set(keep_shared)

    def static_archive(self, name):
        if name in ALWAYS_SHARED or name in COMPILER_RUNTIME or name in self.keep_shared:
            return None
        for d in self.libdirs:
            p = os.path.join(d, f"lib{name}.a")
            if os.path.exists(p):
                return p
        return None

    def shared_file(self, soname):
        for d in self.libdirs:
            p = os.path.join(d, soname)
            if os.path.exists(p):
                return os.path.realpath(p)
        return None

    def needed(self, elf):
        out = run([self.readelf, "-d", elf])
        return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def closure(resolver, shared_libs):
    """The static archives and shared sonames that replace `shared_libs`
    (paths of .so files the CMake link line names), following NEEDED."""
    static, shared, seen = [], [], set()
    todo = list(shared_libs)
    while todo:
        so = todo.pop(0)
        name = lib_name(so)
        if name is None or name in seen:
            continue
        seen.add(name)
        archive = resolver.static_archive(name)
        if archive is None:
            if name not in COMPILER_RUNTIME and name not in ALWAYS_SHARED:
                # A path from the link line, or a soname from NEEDED, which
                # ld finds in its search path as -l:<file>.
                shared.append(so if os.path.isabs(so) else f"-l:{so}")
            continue
        static.append(archive)
        real = so if os.path.isabs(so) else resolver.shared_file(so)
        if real is None:
            sys.exit(f"dist: {so}: static archive {archive} found but no shared library "
                     "to read its dependencies from")
        todo.extend(resolver.needed(real))
    return static, shared


def package_of(path):
    try:
        out = run(["dpkg-query", "-S", path])
        return out.split(":", 1)[0] if ":" in out else out.split(":")[0]
    except subprocess.CalledProcessError:
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--arch", required=True, choices=sorted(TRIPLETS))
    ap.add_argument("--out", default="dist")
    ap.add_argument("--tool-prefix", default=None,
                    help="binutils prefix (aarch64-linux-gnu- for the cross build)")
    ap.add_argument("--extra-libdir", action="append", default=[])
    ap.add_argument("--keep-shared", action="append", default=[], metavar="NAME",
                    help="link lib<NAME> shared although it has a static archive")
    ap.add_argument("--check-budget", action="store_true",
                    help="exit 1 when the archive is over the 15 MiB budget (make test)")
    args = ap.parse_args()

    triplet = TRIPLETS[args.arch]
    host = os.uname().machine
    tool_prefix = args.tool_prefix
    if tool_prefix is None:
        tool_prefix = "" if triplet.startswith(host) else f"{triplet}-"
    readelf, strip = f"{tool_prefix}readelf", f"{tool_prefix}strip"
    build = os.path.abspath(args.build_dir)
    out_dir = os.path.abspath(args.out)
    libdirs = [os.path.abspath(d) for d in args.extra_libdir] + [f"/usr/lib/{triplet}", f"/lib/{triplet}", f"/usr/{triplet}/lib"]
    resolver = Resolver(libdirs, readelf, args.keep_shared)

    # The link line CMake generated for the silt executable.
    cmd = run(["ninja", "-C", build, "-t", "commands", "src/silt/cli/silt"]).strip().splitlines()[-1]
    cmd = re.sub(r"^:\s*&&\s*", "", cmd)
    cmd = re.sub(r"\s*&&\s*:\s*$", "", cmd)
    argv = shlex.split(cmd)
    linked_shared = [a for a in argv if os.path.isabs(a) and re.search(r"\.so(\.[0-9.]+)?$", a)]
    static, shared = closure(resolver, linked_shared)

    binary = os.path.join(out_dir, f".silt-{args.arch}")
    os.makedirs(out_dir, exist_ok=True)
    new = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "-o":
            new += ["-o", binary]
            skip = True
        elif a in linked_shared:
            continue
        elif a.startswith("-Wl,-rpath,"):
            continue  # the build tree's run path; a release binary has none
        else:
            new.append(a)
    new += ["-static-libstdc++", "-static-libgcc", "-Wl,--as-needed", "-Wl,--gc-sections",
            "-Wl,--start-group"]
    new += static
    new += ["-Wl,--end-group"] + [f"-L{d}" for d in libdirs if os.path.isdir(d)] + shared
    subprocess.run(new, cwd=build, check=True)
    run([strip, "--strip-all", binary])

    needed = resolver.needed(binary)
    # The relinked binary itself must start: its --version names the build.
    commit_target = version_line(binary, args.arch)
    ver = commit_target.split()[1]
    stage_name = f"silt-{ver}-linux-{args.arch}"
    lines = [
        f"# {commit_target}",
        "# Shared libraries this silt executable needs (readelf -d, NEEDED), and",
        "# the Debian 12 package that provides each; everything else is linked in.",
        f"# On the target: apt-get install {' '.join(sorted({pkg_base(l, libdirs) for l in needed}))}",
    ]
    for so in needed:
        lines.append(f"{so}\t{pkg_base(so, libdirs)}")
    manifest = "\n".join(lines) + "\n"

    archive = os.path.join(out_dir, f"{stage_name}.tar.gz")
    with tarfile.open(archive, "w:gz") as tar:
        info = tar.gettarinfo(binary, arcname=f"{stage_name}/silt")
        info.mode = 0o755
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        with open(binary, "rb") as f:
            tar.addfile(info, f)
        data = manifest.encode()
        mi = tarfile.TarInfo(f"{stage_name}/SHARED-LIBRARIES.txt")
        mi.size = len(data)
        mi.mode = 0o644
        mi.mtime = info.mtime
        tar.addfile(mi, io.BytesIO(data))
    with open(os.path.join(out_dir, f"{stage_name}.SHARED-LIBRARIES.txt"), "w") as f:
        f.write(manifest)
    final = os.path.join(out_dir, f"{stage_name}.silt")
    os.replace(binary, final)

    size, asize = os.path.getsize(final), os.path.getsize(archive)
    print(f"{archive}: {asize / 2**20:.1f} MiB ({verdict(asize)}); silt {size / 2**20:.1f} MiB "
          f"stripped ({verdict(size)}); {len(needed)} shared libraries needed, "
          f"{len(static)} static archives linked in")
    if args.check_budget and asize > BUDGET_BYTES:
        sys.exit(f"{archive}: {verdict(asize)}")


def verdict(size):
    """Against the 15 MiB budget of issue 19."""
    if size <= BUDGET_BYTES:
        return "within the 15 MiB budget"
    return f"over the 15 MiB budget by {(size - BUDGET_BYTES) / 2**20:.1f} MiB"


def pkg_base(soname, libdirs):
    # Several names for one file (usrmerge: /lib -> /usr/lib); dpkg knows one.
    for d in libdirs + [f"/lib{os.sep}{d.split('/')[-1]}" for d in libdirs]:
        p = os.path.join(d, soname)
        if os.path.exists(p):
            pkg = package_of(p)
            if pkg != "?":
                return pkg.split(":")[0]
    return "?"


def version_line(silt, arch):
    """`silt --version` of a binary (run under qemu for arm64 on other hosts)."""
    cmd = [silt, "--version"]
    if arch == "arm64" and os.uname().machine != "aarch64":
        cmd = ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu"] + cmd
    return run(cmd).strip()


if __name__ == "__main__":
    main()
