#!/usr/bin/env bash
# The whole GPU check, in one call on the rented GPU machine (its image has the CUDA toolkit, a driver and
# Python but none of our Debian libraries; nothing is built there). Prepare here, then run there:
#
#   cmake -S . -B build-portable -DDTSIM_CUDA=ON            # the portable default: x86-64-v3
#   make -C build-portable -j2 dtsim dtsim_cuda_tests dtsim_cuda_model_tests dtsim_gpu_tests dtsim_cuda_bench
#   scripts/device-bundle.sh build-portable build-device       # binaries, libraries, dataset: about 44 MiB
#   (device) bash tests/gpu/device_check.sh build-device       # carry build-device; results under $OUT
# The device's CPU is not this machine's: the default build is for x86-64-v3 (AVX2, FMA), not -march=native, whose
# instructions the other CPU may lack. The step limits below are ceilings against hangs and add up to 22 minutes
# (1,320 s), more than one device call may run: give the call its full 600 s and expect the steps to take far less.
#
# Steps, most important first, each under its own time limit so that a slow one leaves the rest their turn:
#   1. the CUDA test suites (tests/gpu/run_on_device.sh: every op and one training step of every network against
#      the CPU reference);
#   2. dtsim_cuda_bench: training-step FLOP rates against cuBLAS SGEMM and BF16 GEMM, measured in the same run;
#   3. real runs with compute.device = cuda: the centralised MLP twice (same scenario and seed must give the same
#      metrics.csv), the 8-worker quickstart and the centralised LeNet; last, the MLP on the device's CPU, for
#      its time beside the GPU's (this machine's CPU results are in docs/compute.md);
#   4. golden digests of six CPU cases on the device's CPU, another CPU model for docs/testing.md;
#   5. dtsim calibrate --backend cuda: the GPU's products, memory bandwidth, launch cost and attention as a profile.
# Everything lands in OUT_DIR (default $OUT): logs, GoogleTest XML, the benchmark's JSON, each run's folder, and
# summary.txt, which is also printed. Exit status 0 only when every step passed.
set -u

bundle=${1:?usage: tests/gpu/device_check.sh BUNDLE_DIR [OUT_DIR]}
out=${2:-${OUT:?set OUT or give OUT_DIR}}
mkdir -p "$out"
summary="$out/summary.txt"
note() { echo "$*" | tee -a "$summary"; }
status=0

note "device_check $(date -u +%FT%TZ) on $(hostname)"
if command -v nvidia-smi > /dev/null; then
  note "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | head -n 1)"
fi
note "host: $(nproc) cores, $(ldd --version | head -n 1)"

work=$(mktemp -d /tmp/dtsim-device.XXXXXX)
tar -C "$work" -xJf "$bundle/dtsim.tar.xz" || { note "cannot unpack $bundle/dtsim.tar.xz"; exit 1; }
data=$(cd "$bundle/fashion-mnist" && pwd)
export LD_LIBRARY_PATH="$work/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Our binaries need glibc 2.34. On an older image each binary is replaced by a wrapper that starts it with the
# bundled loader and glibc; the driver's libcuda is then found in the system's library folder.
if "$work/dtsim" --version > /dev/null 2>&1; then
  note "loader: the system's"
else
  note "loader: the bundled glibc ($("$work/dtsim" --version 2>&1 | head -n 1))"
  cuda_dir=$(dirname "$(ldconfig -p | awk '/libcuda\.so\.1 / {print $NF; exit}')")
  for bin in "$work/dtsim" "$work"/tests/*; do
    mv "$bin" "$bin.real"
    printf '#!/bin/sh\nexec "%s" --library-path "%s" "%s" "$@"\n' "$work/glibc/ld-linux-x86-64.so.2" \
      "$work/glibc:$LD_LIBRARY_PATH:$cuda_dir" "$bin.real" > "$bin"
    chmod +x "$bin"
  done
fi

# ---- 1. CUDA tests ------------------------------------------------------------------------------------------
timeout 120 bash tests/gpu/run_on_device.sh "$work" "$out/tests" 2>&1 | tee -a "$summary"
rc=${PIPESTATUS[0]}
note "cuda tests: exit $rc"
[ "$rc" -ne 0 ] && status=1

# ---- 2. benchmark --------------------------------------------------------------------------------------------
timeout 90 "$work/tests/dtsim_cuda_bench" --benchmark_min_time=0.3 --benchmark_out="$out/cuda_bench.json" \
  --benchmark_out_format=json > "$out/cuda_bench.txt" 2>&1
rc=$?
sed -n '/^device 0/p; /^cuBLAS at/,$p' "$out/cuda_bench.txt" | tee -a "$summary"
note "cuda bench: exit $rc"
[ "$rc" -ne 0 ] && status=1

# ---- 3. real runs --------------------------------------------------------------------------------------------
# run NAME LIMIT_S SCENARIO [--set ...]: one dtsim run into $out/NAME, with its wall time and summary in a line.
run() {
  local name=$1 limit=$2 scenario=$3
  shift 3
  local start end rc
  start=$(date +%s.%N)
  timeout "$limit" "$work/dtsim" run "$scenario" --set data.path="$data" "$@" --out "$out/$name" --quiet \
    > "$out/$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  local line
  line=$(python3 - "$out/$name/summary.json" <<'EOF' 2>/dev/null || echo "no summary.json"
import json, sys
s = json.load(open(sys.argv[1]))
print(f"backend {s['backend']}, status {s['status']}, final accuracy {s['final_test_accuracy']:.4f}, "
      f"simulated {s['simulated_time_s']:.3f} s")
EOF
  )
  note "run $name: exit $rc, $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s wall; $line"
  [ "$rc" -ne 0 ] && { tail -n 3 "$out/$name.log" | tee -a "$summary"; status=1; }
}

run mlp_cuda_a 60 scenarios/centralized_mlp.ini --set compute.device=cuda
run mlp_cuda_b 60 scenarios/centralized_mlp.ini --set compute.device=cuda
if cmp -s "$out/mlp_cuda_a/metrics.csv" "$out/mlp_cuda_b/metrics.csv"; then
  note "mlp on cuda twice: metrics.csv identical"
else
  note "mlp on cuda twice: metrics.csv DIFFERS"
  status=1
fi
run quickstart_cuda 60 scenarios/quickstart.ini --set compute.device=cuda
run lenet_cuda 90 scenarios/centralized_lenet.ini --set compute.device=cuda
run mlp_cpu 60 scenarios/centralized_mlp.ini --set compute.device=cpu

# ---- 4. golden digests on the device's CPU ---------------------------------------------------------------------
# Another CPU model than the development machine's: the portable build must compute the same bits here
# (docs/compute.md, "Pinned numerics"; docs/testing.md lists the CPU models seen to pass).
note "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
for case_name in sync-mlp fedavg bf16 zero-3 qa-lora async-ps; do
  GOLDEN_EXTRA_ARGS="--set data.path=$data" timeout 120 bash tests/golden/golden.sh check "$work/dtsim" "$case_name" \
    > "$out/golden_$case_name.log" 2>&1
  rc=$?
  note "golden $case_name: exit $rc ($(tail -n 1 "$out/golden_$case_name.log"))"
  [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && status=1
done

# ---- 5. dtsim calibrate on the GPU ------------------------------------------------------------------------------
# The device measured as a profile (docs/compute.md, "dtsim calibrate"): gpu.ini, calibration.csv and attention.csv
# (its attention op at FlashAttention's benchmark shapes) land in OUT.
mem_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n 1 | tr -d ' ')
timeout 120 "$work/dtsim" calibrate --backend cuda --memory "${mem_mib:-0}MiB" --out "$out/calibrate" \
  > "$out/calibrate.log" 2>&1
rc=$?
tee -a "$summary" < "$out/calibrate.log"
note "calibrate: exit $rc"
[ "$rc" -ne 0 ] && status=1

note "device_check: exit $status"
exit "$status"
