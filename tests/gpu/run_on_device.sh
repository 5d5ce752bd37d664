#!/usr/bin/env bash
# Runs the gpu/ test binaries of a build folder on a machine with a GPU and prints a summary. Made for the rented
# H200, whose image has the CUDA toolkit and a driver but none of our Debian libraries: the binaries link only
# dtsim_gpu, static GoogleTest, static cudart and the toolkit's cuBLAS, and nothing is built there.
#
#   tests/gpu/run_on_device.sh BUILD_DIR [OUT_DIR]
#
# OUT_DIR (default: $OUT when set) receives each suite's full log and GoogleTest XML. Exit status 0 only when every
# test passed and none was skipped except CudaOpsWithoutDevice: on a device machine a skipped CUDA test means the
# GPU was not usable, which is a failure.
set -u

build=${1:?usage: tests/gpu/run_on_device.sh BUILD_DIR [OUT_DIR]}
out=${2:-${OUT:-}}
[ -n "$out" ] && mkdir -p "$out"
# cuBLAS comes from the machine's toolkit; the RUNPATH recorded at build time may name another of its folders.
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64:/usr/local/cuda/lib"

if command -v nvidia-smi > /dev/null; then
  echo "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -n 1)"
else
  echo "device: nvidia-smi not found"
fi

status=0
for suite in dtsim_cuda_tests dtsim_cuda_model_tests dtsim_gpu_tests; do
  bin="$build/tests/$suite"
  if [ ! -x "$bin" ]; then
    echo "$suite: not built ($bin missing)"
    status=1
    continue
  fi
  missing=$(ldd "$bin" | grep "not found")
  if [ -n "$missing" ]; then
    echo "$suite: shared libraries not found:"
    echo "$missing"
    status=1
    continue
  fi
  log=$(mktemp)
  xml=()
  [ -n "$out" ] && xml=(--gtest_output="xml:$out/$suite.xml")
  start=$(date +%s)
  "$bin" "${xml[@]}" > "$log" 2>&1
  rc=$?
  seconds=$(($(date +%s) - start))
  # One line per finished test ends in its time, "(N ms)"; the summaries at the end do not.
  passed=$(grep -cE '^\[       OK \] .* \([0-9]+ ms\)$' "$log")
  failed=$(grep -cE '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$log")
  skipped=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$log")
  echo "$suite: $passed passed, $failed failed, $skipped skipped, exit $rc, ${seconds}s"
  if [ "$failed" -gt 0 ]; then
    grep -E '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$log" | sed 's/^/  /'
    grep -B1 -A4 -E '^/.*: Failure$' "$log" | head -n 60 | sed 's/^/    /'
  fi
  # CudaOpsWithoutDevice checks the no-GPU error path and skips by design where a GPU works; any other skip
  # means the GPU was not usable.
  unexpected=$(grep -E '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$log" | grep -vc 'CudaOpsWithoutDevice')
  if [ "$unexpected" -gt 0 ]; then
    echo "  skipped because: $(grep -m1 -A1 ': Skipped$' "$log" | tail -n 1)"
    status=1
  fi
  grep -F '[   NOTE   ]' "$log" | sort -u | sed 's/^/  /'
  [ "$rc" -ne 0 ] && status=1
  [ -n "$out" ] && cp "$log" "$out/$suite.log"
  rm -f "$log"
done
exit "$status"
