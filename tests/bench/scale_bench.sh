#!/usr/bin/env bash
# Peak memory (RSS) of synchronous data parallelism as the number of simulated workers grows: the quickstart
# (MLP 784-256-128-10, 235,146 parameters) with 8 samples per worker for 10 steps, at 8 and at 4096 workers.
# Issue 13's goal: the 4096-worker run within 2x of the 8-worker run. Prints one line with both and the ratio.
#
#   tests/bench/scale_bench.sh [path/to/dtsim]        # default build/dtsim
set -euo pipefail
DTSIM=${1:-build/dtsim}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
rss_of() {  # workers -> "max RSS in KB, wall seconds" (Python's getrusage: no GNU time package needed)
  /usr/bin/python3 - "$DTSIM" "$ROOT/scenarios/quickstart.ini" "$1" "$OUT/w$1" <<'PY'
import resource, subprocess, sys, time
dtsim, scenario, workers, out = sys.argv[1:]
start = time.monotonic()
subprocess.run([dtsim, "run", scenario, "--set", "cluster.workers=" + workers, "--set", "training.batch_per_worker=8",
                "--set", "training.max_steps=10", "--quiet", "--out", out], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "%.1f" % (time.monotonic() - start))
PY
}
read -r small small_s < <(rss_of 8)
read -r large large_s < <(rss_of 4096)
awk -v s="$small" -v l="$large" -v ss="$small_s" -v ls="$large_s" 'BEGIN {
  printf "quickstart, 10 steps: 8 workers %.0f MB (%.1f s), 4096 workers %.0f MB (%.1f s); RSS ratio %.2f (goal <= 2)\n",
         s / 1024, ss, l / 1024, ls, l / s }'
