# Cross-compiling silt for linux/arm64 (Raspberry Pi 4 and the like) on a
# Debian 12 amd64 host: gcc from crossbuild-essential-arm64, libraries from
# the arm64 multi-arch -dev packages (scripts/install-build-deps.sh --arm64)
# plus the four that are not co-installable, unpacked under
# .cache/arm64-sysroot (scripts/setup-arm64-sysroot.sh).
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

get_filename_component(_silt_src "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(SILT_ARM64_SYSROOT "${_silt_src}/.cache/arm64-sysroot" CACHE PATH
    "arm64 -dev packages unpacked by scripts/setup-arm64-sysroot.sh")

# Libraries and CMake package configs: the multi-arch directories under /usr
# (find_* appends lib/aarch64-linux-gnu via CMAKE_LIBRARY_ARCHITECTURE), then
# the unpacked tree. Headers of multi-arch packages are shared with amd64.
set(CMAKE_FIND_ROOT_PATH /usr "${SILT_ARM64_SYSROOT}/usr")
set(CMAKE_PREFIX_PATH /usr "${SILT_ARM64_SYSROOT}/usr")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Never the amd64 libraries.
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu
    /usr/lib/x86_64-linux-gnu/cmake)

# GCC 12 for aarch64 reports -Wmaybe-uninitialized where the x86-64 compiler
# does not, on values read from an engaged std::optional after inlining
# (parquet_schema.cc: `switch (*ct)` under `if (ct)`), a known class of false
# positives (GCC bug 80635); kept as a warning, not an error, for this build.
set(CMAKE_CXX_FLAGS_INIT "-Wno-error=maybe-uninitialized")

# librocksdb.so from the unpacked tree needs libgflags.so.2.2 from there too;
# ld looks for a shared library's own dependencies only in -rpath-link dirs.
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-Wl,-rpath-link,${SILT_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT}")

# pkg-config reads only arm64 .pc files (and the architecture-independent ones).
set(ENV{PKG_CONFIG_LIBDIR}
    "${SILT_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Tests and tools built here run under qemu-user (make test-arm64): the
# arm64 glibc and multi-arch libraries are found under / as on a real
# machine; librocksdb and libgflags only in the unpacked tree.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -E
    LD_LIBRARY_PATH=${SILT_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu)
