# The two commands of the README, plus a few conveniences. Everything goes through CMake in $(BUILD_DIR).
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# The portable default computes the same bits on every x86-64-v3 CPU; DTSIM_NATIVE=ON builds for this machine's
# CPU only (faster, results specific to it; docs/compute.md). Passed every time, so a build folder follows it.
DTSIM_NATIVE ?= OFF
DTSIM_ISA_LEVEL ?= x86-64-v3
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DDTSIM_WERROR=ON -DDTSIM_NATIVE=$(DTSIM_NATIVE) -DDTSIM_ISA_LEVEL=$(DTSIM_ISA_LEVEL)
SCENARIO ?= scenarios/quickstart.ini
OUT ?= out/quickstart

.PHONY: all deps build run test test-all test-slurm bench sanitize clean

all: build

# Installs missing Debian packages (as root); silent when nothing is missing.
deps:
	@bash scripts/install-deps.sh

build: deps
	@mkdir -p $(BUILD_DIR)
	@cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) > $(BUILD_DIR)/configure.log 2>&1 || { cat $(BUILD_DIR)/configure.log; exit 1; }
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Builds, then runs the default scenario, prints its summary and writes its HTML report (plots embedded).
run: build
	./$(BUILD_DIR)/dtsim run $(SCENARIO) --out $(OUT)
	/usr/bin/python3 analysis/report.py $(OUT)

# Builds, then runs the default test suite (everything not labelled 'long').
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE long

# The default suite plus the long-running tests.
test-all: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# The Slurm job-array test on a one-node Slurm cluster that this target starts on localhost and stops after
# (root; installs slurmctld, slurmd, slurm-client and munge if missing). The default suite skips that test,
# saying why, when no controller answers.
test-slurm: build
	@bash scripts/slurm-localhost.sh start
	@cd $(BUILD_DIR) && ctest --output-on-failure -R SweepSlurm; status=$$?; cd $(CURDIR) && bash scripts/slurm-localhost.sh stop; exit $$status

# Benchmarks: ratios to plain Eigen measured side by side (see tests/bench/), and the portable default build
# against a native build of the same tree (built in $(NATIVE_BUILD_DIR) first, dtsim and the compute bench only).
NATIVE_BUILD_DIR ?= build-native
bench: build
	@mkdir -p $(NATIVE_BUILD_DIR)
	@cmake -S . -B $(NATIVE_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DDTSIM_NATIVE=ON -DDTSIM_CUDA=OFF \
	  > $(NATIVE_BUILD_DIR)/configure.log 2>&1 || { cat $(NATIVE_BUILD_DIR)/configure.log; exit 1; }
	@cmake --build $(NATIVE_BUILD_DIR) -j $(JOBS) --target dtsim dtsim_compute_bench
	/usr/bin/python3 tests/bench/portable_vs_native.py $(BUILD_DIR) $(NATIVE_BUILD_DIR)
	./$(BUILD_DIR)/tests/dtsim_compute_bench
	bash tests/bench/collective_bench.sh $(BUILD_DIR)/dtsim
	bash tests/bench/scale_bench.sh $(BUILD_DIR)/dtsim
	bash tests/bench/timing_scale_bench.sh $(BUILD_DIR)/dtsim
	./$(BUILD_DIR)/tests/dtsim_overhead_bench scenarios/quickstart.ini
	./$(BUILD_DIR)/tests/dtsim_overhead_bench scenarios/quickstart.ini --set cluster.workers=64

# The default suite built with AddressSanitizer and UndefinedBehaviorSanitizer, in its own build folder.
# SimGrid switches actor stacks itself, which ASan's stack-use-after-return check cannot follow; everything
# else is on, and any report fails the test that triggered it.
SANITIZE_DIR ?= build-sanitize
SANITIZE_ENV = ASAN_OPTIONS=detect_stack_use_after_return=0:detect_leaks=0:abort_on_error=1 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
sanitize: deps
	@mkdir -p $(SANITIZE_DIR)
	@cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDTSIM_SANITIZE=ON -DDTSIM_CUDA=OFF \
	  -DDTSIM_NATIVE=OFF > $(SANITIZE_DIR)/configure.log 2>&1 || { cat $(SANITIZE_DIR)/configure.log; exit 1; }
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) -LE 'long|accuracy|validate' \
	  -E 'Cli.QuickstartIsDeterministicAndReachesEightyFivePercent'

clean:
	rm -rf $(BUILD_DIR)

# libFuzzer targets (tests/fuzz/), built with clang-14, ASan and UBSan in build-fuzz/ and run for FUZZ_SECONDS
# each (default 60) on a copy of their seed corpora; fails when one finds a crash.
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	@bash scripts/install-deps.sh fuzz
	@JOBS=$(JOBS) bash tests/fuzz/run_fuzzers.sh build-fuzz $(FUZZ_SECONDS)
