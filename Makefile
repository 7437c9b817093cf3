# silt — the two commands a new user needs:
#   make demo   install build dependencies, build (Release), run the embedded demo job
#   make test   install everything the tests need, build, run unit + integration tests
# Other targets: build, unit, integration, check, format-check, format, asan,
# tsan, fuzz, torture, clean, bench, bench-windowed, bench-merge, bench-soak,
# bench-ceiling, bench-edge, bench-scaleout, cross-arm64, test-arm64, test-dist, dist,
# deb, test-deb.

BUILD_DIR  ?= build
BUILD_TYPE ?= Release
JOBS       ?= 2
VENV       ?= .venv
DEMO_DIR   ?= silt-demo
SILT       := $(BUILD_DIR)/src/silt/cli/silt

FUZZ_SECONDS ?= 600

.PHONY: all deps build demo test test-deps unit integration check format-check asan tsan fuzz torture \
        format clean bench bench-windowed bench-merge bench-soak bench-ceiling bench-edge bench-scaleout \
        cross-arm64 test-arm64 test-dist dist deb test-deb

all: build

deps:
	@scripts/install-build-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null
	@cmake --build $(BUILD_DIR) -j$(JOBS)

demo: build
	@$(SILT) demo --dir $(DEMO_DIR)

# The Python reference readers, and the services the integration tests start
# on loopback (each script is idempotent and caches under ./.cache).
test-deps: deps
	@scripts/install-build-deps.sh --check --monitoring
	@scripts/setup-test-env.sh
	@for s in scripts/setup-kafka.sh scripts/setup-minio.sh scripts/setup-spark.sh scripts/setup-spark4.sh \
	          scripts/setup-grafana-schema.sh; do \
	  if [ -x $$s ]; then $$s || exit 1; fi; \
	done

unit: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) -L unit

integration: build test-deps
	@SILT_BIN=$(abspath $(SILT)) SILT_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  $(VENV)/bin/pytest tests/integration -q -ra --durations=25

# Static checks `make test` runs before the tests: every #include of a silt
# module is declared in the including target's CMake deps (and follows the
# LAYERS files inside modules), and the C++ sources are clang-formatted.
check:
	@python3 scripts/check-includes.py

format-check:
	@scripts/check-format.sh

# Last, the arm64 cross build and its unit tests + demo under qemu
# (test-arm64; about 16 CPU-minutes of compiling, docs/packaging.md), then
# the release archives of both architectures against the size budget and
# the amd64 .deb installed, run and purged (test-dist).
# The integration tests mostly wait (on Spark batches, brokers, kills):
# the arm64 cross build runs beside them at the lowest CPU priority, taking
# only the cores they leave idle, and test-arm64 then finds it built. Its
# packages (multi-arch runtime libraries too) are installed before the tests
# start, so that no library changes under a running test.
test: build test-deps check format-check
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) -L unit
	@scripts/install-build-deps.sh --arm64
	@scripts/setup-arm64-sysroot.sh
	@mkdir -p $(ARM64_BUILD_DIR); \
	(nice -n 19 $(MAKE) --no-print-directory cross-arm64 >$(ARM64_BUILD_DIR)/cross-build.log 2>&1; \
	  echo $$? >$(ARM64_BUILD_DIR)/cross-build.rc) & \
	SILT_BIN=$(abspath $(SILT)) SILT_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  $(VENV)/bin/pytest tests/integration -q -ra --durations=25; status=$$?; \
	wait; \
	if [ "$$(cat $(ARM64_BUILD_DIR)/cross-build.rc)" != 0 ]; then \
	  tail -n 40 $(ARM64_BUILD_DIR)/cross-build.log; echo "arm64 cross build failed"; exit 1; fi; \
	exit $$status
	@$(MAKE) --no-print-directory test-arm64
	@$(MAKE) --no-print-directory test-dist

# AddressSanitizer + UndefinedBehaviorSanitizer build and unit tests.
asan: deps
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSILT_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j$(JOBS)
	@ctest --test-dir build-asan --output-on-failure -j$(JOBS) -L unit

# ThreadSanitizer build (clang) of the threaded parts: the unit tests of fs
# (S3 parallel part uploads over the fake transport), base and delta, then,
# with the TSan-built binaries, the integration tests of S3 uploads against
# MinIO and of background auto-compaction. Any race report fails (exit 66).
# kafka and stream are left out: their tests run librdkafka's mock cluster,
# whose threads (C11 thrd_create in Debian's librdkafka) clang 14's TSan
# runtime does not intercept, so the first allocation on such a thread
# crashes inside TSan (SEGV in its allocator, not a race). With a newer
# runtime: make tsan TSAN_TESTS="base fs kafka delta stream metrics monitor".
# Of stream's tests, those that run no librdkafka thread (the query's
# metrics, the Kafka lag poller over the scripted cluster, and the query
# loop over file and generator sources, with batches split over threads by
# `parallelism`) run alone (TSAN_STREAM_FILTER); test_metrics_stop.py scrapes a TSan-built silt's
# endpoint under load (generator source: no librdkafka thread either).
TSAN_TESTS   ?= base fs delta metrics monitor
TSAN_STREAM_FILTER ?= QueryMetricsTest.*:KafkaLagPollerTest.*:QueryTest.*:*FileSource*
TSAN_PYTESTS ?= tests/integration/test_s3.py::test_fs_conformance_cases_pass_against_minio \
                tests/integration/test_delta_tools.py::test_auto_compact_in_the_background \
                tests/integration/test_metrics_stop.py
TSAN_ENV      = TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $$TSAN_OPTIONS"
tsan: test-deps
	@scripts/install-build-deps.sh --clang
	@CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DSILT_TSAN=ON >/dev/null
	@cmake --build build-tsan -j$(JOBS) --target silt $(foreach t,$(TSAN_TESTS),silt_$(t)_test) \
	  silt_stream_test
	@$(TSAN_ENV) ctest --test-dir build-tsan --output-on-failure -j$(JOBS) -L unit \
	  -R '^($(subst $(eval) ,|,$(strip $(TSAN_TESTS))))$$'
	@$(TSAN_ENV) build-tsan/src/silt/stream/silt_stream_test --gtest_filter='$(TSAN_STREAM_FILTER)'
	@$(TSAN_ENV) SILT_BIN=$(abspath build-tsan/src/silt/cli/silt) SILT_BUILD_DIR=$(abspath build-tsan) \
	  $(VENV)/bin/pytest $(TSAN_PYTESTS) -q -ra

# libFuzzer targets (tests/fuzz/README.md), FUZZ_SECONDS each, one at a time;
# writes tests/fuzz/results/<date>.md.
fuzz: deps
	@scripts/install-build-deps.sh --clang
	@FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) scripts/run-fuzz.sh

# The kill -9 tests at TORTURE_SCALE times their `make test` size, with
# broker and MinIO restarts (tests/torture/README.md); >= 1,000 kills at the
# default scale, about an hour and a half on 2 cores. Writes
# tests/torture/results/<date>-<host>.md.
TORTURE_SCALE ?= 4
torture: build test-deps
	@$(VENV)/bin/python tests/torture/run.py --silt $(SILT) --build-dir $(BUILD_DIR) \
	  --scale $(TORTURE_SCALE)

# End-to-end benchmark against Spark and delta-rs (bench/e2e/README.md);
# writes bench/results/<date>-<machine>.md and plots. Takes about an hour.
bench: build
	@scripts/setup-bench.sh >/dev/null
	@$(VENV)/bin/python bench/e2e/run.py --silt $(SILT)

# Windowed aggregation against Spark local[1] (bench/README.md, "Windowed
# aggregation"); about 15 minutes, most of it Spark.
bench-windowed: build
	@scripts/setup-bench.sh >/dev/null
	@$(VENV)/bin/python bench/windowed/run.py --silt $(SILT)

# Ceiling: workload A's events through simdjson, a Parquet encoder and snappy
# alone, and silt's events per CPU-second as a share of that limit
# (bench/README.md, "Ceiling"); a few minutes.
bench-ceiling: build
	@scripts/setup-bench.sh >/dev/null
	@$(VENV)/bin/python bench/ceiling/run.py --silt $(SILT) \
	  --bench $(BUILD_DIR)/bench/ceiling/silt_ceiling_bench

# Scale-out: commits per second one Delta table sustains with 1-8 writers
# (local disk, MinIO), and 1, 2, 4 scale-out workers draining one topic into
# one table (docs/scale-out.md); about 10 minutes.
bench-scaleout: build test-deps
	@$(VENV)/bin/python bench/scaleout/run.py --silt $(SILT) \
	  --commit-bench $(BUILD_DIR)/bench/scaleout/silt_commit_bench

# Soak: the fastest trigger at a steady rate for SOAK_SECONDS, RSS, CPU per
# batch and log size over time, and the flatness criterion of issue #22
# (bench/soak/README.md). Not part of `make test` or `make bench`.
SOAK_SECONDS ?= 3600
SOAK_RATE    ?= 10000
bench-soak: build
	@$(VENV)/bin/python bench/soak/run.py --silt silt=$(SILT) --duration $(SOAK_SECONDS) \
	  --rate $(SOAK_RATE) --out bench/results/soak-$$(date -u +%Y-%m-%d)

# The edge stack: Mosquitto -> silt -> MinIO at the seed's rates and two
# busier ones, memory and CPU of every process (bench/edge/run.py,
# docs/raspberry-pi.md); about 25 minutes.
bench-edge: build
	@scripts/setup-bench.sh >/dev/null
	@$(VENV)/bin/python bench/edge/run.py --silt $(SILT)

# MERGE of 100,000 rows into a 10-million-row partitioned table, silt against
# delta-rs and delta-spark (bench/README.md, "MERGE"); about 15 minutes. The
# generated table is kept in /tmp/silt-bench-merge for later runs.
bench-merge: build
	@scripts/setup-bench.sh >/dev/null
	@$(VENV)/bin/python bench/merge/run.py --silt $(SILT) --dir /tmp/silt-bench-merge

# linux/arm64 (Raspberry Pi 4 and the like), cross-compiled on Debian 12
# amd64: aarch64 gcc, the arm64 multi-arch -dev packages and qemu-user
# (install-build-deps.sh --arm64), the four -dev packages apt cannot install
# next to their amd64 versions unpacked by setup-arm64-sysroot.sh, and
# cmake/aarch64-linux-gnu.cmake. docs/packaging.md.
ARM64_BUILD_DIR ?= build-arm64
ARM64_SILT      := $(ARM64_BUILD_DIR)/src/silt/cli/silt
ARM64_TARGETS   ?=
ARM64_RUN        = qemu-aarch64-static -E LD_LIBRARY_PATH=$(abspath .cache/arm64-sysroot/usr/lib/aarch64-linux-gnu)
cross-arm64: deps
	@scripts/install-build-deps.sh --arm64
	@scripts/setup-arm64-sysroot.sh
	@cmake -S . -B $(ARM64_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake >/dev/null
	@cmake --build $(ARM64_BUILD_DIR) -j$(JOBS) $(ARM64_TARGETS)

# The arm64 unit tests (ctest runs each under qemu-user, the toolchain's
# CMAKE_CROSSCOMPILING_EMULATOR) and `silt demo` on the arm64 build.
# Left out: ProcessMetricsTest, which reads the resident set size from
# /proc/self/stat, a file qemu-user synthesizes with rss 0.
ARM64_TESTS ?=
ARM64_GTEST_FILTER ?= -ProcessMetricsTest.*
test-arm64: cross-arm64
	@GTEST_FILTER='$(ARM64_GTEST_FILTER)' ctest --test-dir $(ARM64_BUILD_DIR) --output-on-failure -j$(JOBS) -L unit \
	  $(if $(ARM64_TESTS),-R '^($(subst $(eval) ,|,$(strip $(ARM64_TESTS))))$$')
	@rm -rf $(ARM64_BUILD_DIR)/demo && $(ARM64_RUN) $(ARM64_SILT) demo --dir $(ARM64_BUILD_DIR)/demo

# Release archives $(DIST_DIR)/silt-<version>-linux-{amd64,arm64}.tar.gz: one
# stripped executable each, every library with a Debian static archive
# linked in, the remaining shared libraries listed (scripts/dist.py).
DIST_DIR ?= $(BUILD_DIR)/dist
dist: build
	@$(MAKE) --no-print-directory cross-arm64 ARM64_TARGETS="--target silt"
	@scripts/dist.py --build-dir $(BUILD_DIR) --arch amd64 --out $(DIST_DIR)
	@scripts/dist.py --build-dir $(ARM64_BUILD_DIR) --arch arm64 --out $(DIST_DIR) \
	  --extra-libdir .cache/arm64-sysroot/usr/lib/aarch64-linux-gnu

# silt_<version>_{amd64,arm64}.deb with silt@.service (packaging/), and the
# test that installs the amd64 one, runs a job as the unit does and purges it
# (as root; it creates the system user silt).
deb: dist
	@packaging/build-deb.sh $(DIST_DIR) amd64
	@packaging/build-deb.sh $(DIST_DIR) arm64

test-deb: build test-deps
	@scripts/dist.py --build-dir $(BUILD_DIR) --arch amd64 --out $(DIST_DIR) >/dev/null
	@SILT_DEB=$$(packaging/build-deb.sh $(DIST_DIR) amd64) $(VENV)/bin/pytest tests/packaging -q -ra

# make test's last step, after test-arm64 has cross-built everything: both
# release archives relinked and held to the 15 MiB budget (dist.py
# --check-budget), both .debs built, and the amd64 one installed, run as
# silt@.service runs it and purged (tests/packaging; skipped when not root).
test-dist: build test-deps cross-arm64
	@scripts/dist.py --build-dir $(BUILD_DIR) --arch amd64 --out $(DIST_DIR) --check-budget
	@scripts/dist.py --build-dir $(ARM64_BUILD_DIR) --arch arm64 --out $(DIST_DIR) --check-budget \
	  --extra-libdir .cache/arm64-sysroot/usr/lib/aarch64-linux-gnu
	@packaging/build-deb.sh $(DIST_DIR) arm64 >/dev/null
	@SILT_DEB=$$(packaging/build-deb.sh $(DIST_DIR) amd64) $(VENV)/bin/pytest tests/packaging -q -ra

format:
	@scripts/check-format.sh --fix

clean:
	rm -rf $(BUILD_DIR) build-asan build-tsan build-fuzz
