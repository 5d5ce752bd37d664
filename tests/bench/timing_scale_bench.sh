#!/usr/bin/env bash
# Wall time of timing-only runs at scale (issue 13): LLaMA-7B, every weight trained with ZeRO-2
# (scenarios/workload_llama_7b.ini), on H100 80GB nodes of 8 (NVLink 4 + NVSwitch inside, one InfiniBand NDR
# NIC per GPU on a fat-tree), ring collectives.
#   - 1,024 GPUs (128 nodes), 100 steps: the goal is under 60 s on a 2-core machine;
#   - 8,192 GPUs (1,024 nodes), 20 steps: wall seconds per simulated step after the first (summary.json's
#     simulation.wall_s_per_step, timed inside dtsim), and the whole run's wall time, most of which is setup
#     (building the platform, routing and timing every bucket's collective once).
#
#   tests/bench/timing_scale_bench.sh [path/to/dtsim]        # default build/dtsim
set -euo pipefail
DTSIM=${1:-build/dtsim}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
wall_of() {  # gpus steps -> "wall seconds, step in ms"
  /usr/bin/python3 - "$DTSIM" "$ROOT/scenarios/workload_llama_7b.ini" "$1" "$2" "$OUT/g$1s$2" <<'PY'
import json, subprocess, sys, time
dtsim, scenario, gpus, steps, out = sys.argv[1:]
start = time.monotonic()
subprocess.run([dtsim, "run", scenario, "--set", "cluster.workers=" + gpus, "--set", "gpu.profile=h100-80gb",
                "--set", "cluster.intra_node_fabric=nvlink4-nvswitch", "--set", "workload.steps=" + steps,
                "--quiet", "--out", out], check=True)
wall = time.monotonic() - start
sim = json.load(open(out + "/summary.json"))["simulation"]
print("%.2f %.1f %.4f" % (wall, 1e3 * sim["step_s"], sim["wall_s_per_step"]))
PY
}
read -r w1024 step1024 per1024 < <(wall_of 1024 100)
printf 'LLaMA-7B ZeRO-2, 1024 H100, 100 steps: %.1f s of wall time (goal < 60 s), %.4f s per step; step %s ms\n' \
  "$w1024" "$per1024" "$step1024"
read -r w8192 step8192 per8192 < <(wall_of 8192 20)
printf 'LLaMA-7B ZeRO-2, 8192 H100, 20 steps: %.1f s of wall time, %.4f s per step; step %s ms\n' \
  "$w8192" "$per8192" "$step8192"
