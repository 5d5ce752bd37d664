#!/usr/bin/env bash
# Regenerates every number in docs/labs/lab.md: runs the lab's sweeps and prints their comparison tables.
#
#   bash docs/labs/run_lab.sh [DTSIM] [OUT]     # defaults: build/dtsim, out/lab
#
# About 3.5 minutes of runs on a 2-core Intel Xeon with the sweeps one after another and --jobs 1 (202 s),
# more on a loaded machine (docs/labs/lab.md). Each sweep resumes if rerun.
set -euo pipefail
DTSIM=${1:-build/dtsim}
OUT=${2:-out/lab}
Q=scenarios/quickstart.ini
# A quarter of the GPUs at a third of their speed; a rate and momentum at which async-ps does not diverge.
HETERO=(--set stragglers.slow_fraction=0.25 --set stragglers.slow_factor=0.3333 --set training.lr=0.02
        --set training.momentum=0 --set training.epochs=2)

echo "== Step 1a: sync against async-ps on heterogeneous GPUs"
"$DTSIM" sweep $Q --vary training.strategy=sync,async-ps "${HETERO[@]}" --seeds 2 --quiet --out "$OUT/step1a"
"$DTSIM" compare "$OUT/step1a" --columns final_test_accuracy,simulated_time_s,idle_s,mean_staleness,cost_mid
echo "busiest links (links.csv, seed 1):"
for run in "$OUT"/step1a/*run.seed=1*/; do
  /usr/bin/python3 -c "import json, sys
s = json.load(open(sys.argv[1] + 'summary.json'))
b = s['busiest_link']
print(f\"  {sys.argv[1]}: {b['link']}, mean {100 * b['mean_utilisation']:.1f} %, peak {100 * b['peak_utilisation']:.1f} %\")" "$run"
  /usr/bin/python3 analysis/plot_run.py "$run" -o "$run/run.png" > /dev/null
done

echo "== Step 1b: bounding staleness and a staleness-aware rate"
"$DTSIM" sweep $Q --set training.strategy=async-ps --vary ps.staleness_bound=-1,2 --vary ps.staleness_lr=none,inverse \
    "${HETERO[@]}" --seeds 2 --quiet --out "$OUT/step1b"
"$DTSIM" compare "$OUT/step1b" --columns final_test_accuracy,simulated_time_s,mean_staleness

echo "== Step 1c: the timeline of a synchronous run with slow workers"
"$DTSIM" run $Q "${HETERO[@]}" --set output.trace=true --set output.trace_steps=20 --quiet --out "$OUT/step1c"
echo "$OUT/step1c/trace.json"

echo "== Step 2: top-k 1 % on 10 GbE, with and without error feedback"
"$DTSIM" sweep $Q --set fabric.profile=eth-10g-tcp --vary compression.kind=none,topk --seeds 2 --quiet --out "$OUT/step2a"
"$DTSIM" compare "$OUT/step2a" --columns final_test_accuracy,simulated_time_s,bytes_sent,compression_ratio
"$DTSIM" sweep $Q --set fabric.profile=eth-10g-tcp --set compression.kind=topk --vary compression.error_feedback=false,true \
    --seeds 2 --quiet --out "$OUT/step2b"
"$DTSIM" compare "$OUT/step2b" --columns final_test_accuracy,simulated_time_s,bytes_sent,compression_ratio

echo "== Step 3: a 8 x larger batch with linear and square-root learning-rate scaling and warmup"
"$DTSIM" sweep $Q --set training.batch_per_worker=256 --set training.base_batch=256 --set training.warmup_epochs=1 \
    --vary training.lr_scaling=none,sqrt,linear --seeds 2 --quiet --out "$OUT/step3"
"$DTSIM" compare "$OUT/step3" --columns final_test_accuracy,simulated_time_s,steps,cost_mid

for d in step1a step1b step2a step2b step3; do /usr/bin/python3 analysis/plot_sweep.py "$OUT/$d" > /dev/null; done
echo "plots: $OUT/step*/sweep.png, $OUT/step1a/*/run.png"
