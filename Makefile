# The two commands of the README, plus a few conveniences. Everything goes through CMake in $(BUILD_DIR).
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DDTSIM_WERROR=ON
SCENARIO ?= scenarios/quickstart.ini
OUT ?= out/quickstart

.PHONY: all deps build run test test-all bench clean

all: build

# Installs missing Debian packages (as root); silent when nothing is missing.
deps:
	@bash scripts/install-deps.sh

build: deps
	@mkdir -p $(BUILD_DIR)
	@cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) > $(BUILD_DIR)/configure.log 2>&1 || { cat $(BUILD_DIR)/configure.log; exit 1; }
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Builds, then runs the default scenario and prints its summary.
run: build
	./$(BUILD_DIR)/dtsim run $(SCENARIO) --out $(OUT)

# Builds, then runs the default test suite (everything not labelled 'long').
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE long

# The default suite plus the long-running tests.
test-all: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# Benchmarks: ratios to plain Eigen measured side by side (see tests/bench/).
bench: build
	./$(BUILD_DIR)/tests/dtsim_compute_bench
	bash tests/bench/collective_bench.sh $(BUILD_DIR)/dtsim

clean:
	rm -rf $(BUILD_DIR)

# libFuzzer targets (tests/fuzz/), built with clang-14, ASan and UBSan in build-fuzz/ and run for FUZZ_SECONDS
# each (default 60) on a copy of their seed corpora; fails when one finds a crash.
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz: deps
	@JOBS=$(JOBS) bash tests/fuzz/run_fuzzers.sh build-fuzz $(FUZZ_SECONDS)
