# silt — the two commands a new user needs:
#   make demo   install build dependencies, build (Release), run the embedded demo job
#   make test   install everything the tests need, build, run unit + integration tests
# Other targets: build, unit, integration, asan, format, clean, bench.

BUILD_DIR  ?= build
BUILD_TYPE ?= Release
JOBS       ?= 2
VENV       ?= .venv
DEMO_DIR   ?= silt-demo
SILT       := $(BUILD_DIR)/src/silt/cli/silt

.PHONY: all deps build demo test test-deps unit integration asan format clean bench

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
	@scripts/setup-test-env.sh
	@for s in scripts/setup-kafka.sh scripts/setup-minio.sh scripts/setup-spark.sh; do \
	  if [ -x $$s ]; then $$s || exit 1; fi; \
	done

unit: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) -L unit

integration: build test-deps
	@SILT_BIN=$(abspath $(SILT)) SILT_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  $(VENV)/bin/pytest tests/integration -q -ra

test: build test-deps
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) -L unit
	@SILT_BIN=$(abspath $(SILT)) SILT_BUILD_DIR=$(abspath $(BUILD_DIR)) \
	  $(VENV)/bin/pytest tests/integration -q -ra

# AddressSanitizer + UndefinedBehaviorSanitizer build and unit tests.
asan: deps
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSILT_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j$(JOBS)
	@ctest --test-dir build-asan --output-on-failure -j$(JOBS) -L unit

# End-to-end benchmark against Spark and delta-rs (bench/e2e/README.md);
# writes bench/results/<date>-<machine>.md and plots. Takes about an hour.
bench: build
	@scripts/setup-bench.sh >/dev/null
	@$(VENV)/bin/python bench/e2e/run.py --silt $(SILT)

format:
	@find src -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) build-asan
