#!/usr/bin/env bash
# `make fuzz`: configures and builds the libFuzzer targets (clang, ASan + UBSan) in BUILD_DIR, then runs each
# for SECONDS on a fresh copy of its committed seed corpus (tests/fuzz/corpus/<target>/ is never written).
# Prints the executions of each target; exits 1 when any target finds a crash, a sanitizer report, an
# uncaught exception, a timeout (-timeout=10 s per input) or runs out of memory (2 GiB), leaving the input
# in BUILD_DIR/fuzz-work/<target>/artifacts/.
#   usage: tests/fuzz/run_fuzzers.sh [BUILD_DIR] [SECONDS]      (defaults: build-fuzz, $FUZZ_SECONDS or 60)
set -euo pipefail
cd "$(dirname "$0")/../.."

build=${1:-build-fuzz}
seconds=${2:-${FUZZ_SECONDS:-60}}
jobs=${JOBS:-2}
cxx=${FUZZ_CXX:-clang++-14}
targets=(ini units profile idx)

[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_SECONDS must be a positive whole number of seconds, got '$seconds'" >&2; exit 2; }
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: $cxx not found; libFuzzer needs clang: apt-get install clang-14 libclang-rt-14-dev" >&2
  exit 2
fi

mkdir -p "$build"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if ! cmake -S . -B "$build" -DDTSIM_FUZZ=ON -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DDTSIM_CUDA=OFF "${launcher[@]}" > "$build/configure.log" 2>&1; then
  cat "$build/configure.log"
  exit 1
fi
cmake --build "$build" -j "$jobs" --target fuzzers

failed=()
summary=()
for t in "${targets[@]}"; do
  work="$build/fuzz-work/$t"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp tests/fuzz/corpus/"$t"/* "$work/corpus/"
  seeds=$(ls "$work/corpus" | wc -l)
  echo "fuzz_$t: $seconds s on $seeds seed inputs ..."
  start=$(date +%s)
  rc=0
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" > "$work/fuzz.log" 2>&1 || rc=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
  corpus=$(ls "$work/corpus" | wc -l)
  line="fuzz_$t: ${execs:-?} executions in $elapsed s, corpus $seeds -> $corpus inputs"
  if [[ $rc -ne 0 ]]; then
    line+=", FAILED (exit $rc): $(ls "$work/artifacts" | tr '\n' ' ')"
    failed+=("$t")
    grep -E "ERROR|runtime error|dtsim fuzz finding|terminate called|SUMMARY" "$work/fuzz.log" | head -5 >&2 || true
  fi
  echo "$line"
  summary+=("$line")
done

echo
echo "fuzz summary (logs in $build/fuzz-work/<target>/fuzz.log):"
printf '  %s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: findings in ${failed[*]}; reproduce with $build/tests/fuzz/fuzz_<target> <artifact>" >&2
  exit 1
fi
