#!/usr/bin/env bash
# Wall-clock seconds per simulated allreduce at each fidelity, through `dtsim collective` (64 MiB on a star
# with the ib-hdr-200 profile). Prints a Markdown table. "first" is a size's first call, which also builds the
# plan and the mailboxes; "warm" is the mean of 3 calls after one warm-up, what a training loop repeating one
# allreduce pays per step. Stepwise is reported for the first call only (its per-transfer cost dominates).
#
#   tests/bench/collective_bench.sh [path/to/dtsim]        # default build/dtsim
#   ALGORITHM=tree RANKS="64 256" tests/bench/collective_bench.sh
#   TOPOLOGY=fat-tree RANKS=1024 tests/bench/collective_bench.sh   # the same table on a two-level fat-tree
#   TOPOLOGY_RATIO=1 tests/bench/collective_bench.sh        # stepwise N = 1024 on a fat-tree over a star, CPU time
#
# Stepwise at N = 4096 (33.5 M simulated transfers for the ring, ~2 minutes) is skipped unless STEPWISE_4096=1.
set -euo pipefail
DTSIM=${1:-build/dtsim}
ALGORITHM=${ALGORITHM:-ring}
RANKS=${RANKS:-"64 256 1024 4096"}
SIZE=${SIZE:-64MiB}
TOPOLOGY=${TOPOLOGY:-star}

if [[ ${TOPOLOGY_RATIO:-0} == 1 ]]; then
  # The stepwise ring allreduce at N = 1024 on both topologies, alternating, 5 times each; the ratio of the
  # medians is what the fat-tree's routing and sharing cost on top of the star's transfers. CPU seconds (user +
  # system, bash's `time`), which a shared or throttled machine disturbs less than wall time.
  TIMEFORMAT=%3U+%3S
  for i in 1 2 3 4 5; do
    for t in star fat-tree; do
      cpu=$({ time "$DTSIM" collective --ranks 1024 --topology "$t" --fidelity stepwise --sizes "$SIZE" \
                --format csv > /dev/null; } 2>&1 | tail -n 1)
      echo "$t $(awk -F+ '{printf "%.2f", $1 + $2}' <<<"$cpu")"
    done
  done | sort -k1,1 -k2,2n | awk '{w[$1] = w[$1] " " $2; n[$1]++; v[$1, n[$1]] = $2}
    END {s = v["star", 3]; f = v["fat-tree", 3];
         printf "stepwise ring allreduce of %s, N = 1024, CPU seconds: star%s, fat-tree%s; medians %.2f and %.2f, ratio %.2f\n",
                "'"$SIZE"'", w["star"], w["fat-tree"], s, f, f / s}'
  exit 0
fi

wall_of() {  # ranks fidelity extra-flags... -> "wall simulated_us"
  local n=$1 fidelity=$2
  shift 2
  "$DTSIM" collective --ranks "$n" --topology "$TOPOLOGY" --algorithm "$ALGORITHM" --fidelity "$fidelity" --sizes "$SIZE" "$@" |
    awk '!/^#/ && NF >= 8 {print $7, $4}'
}

echo "$ALGORITHM allreduce of $SIZE on a $TOPOLOGY, wall-clock seconds per collective"
echo
echo "| N | stepwise | aggregated first | aggregated warm | analytic first | analytic warm | simulated time (us) |"
echo "|---|---|---|---|---|---|---|"
for n in $RANKS; do
  if [[ $n -ge 4096 && ${STEPWISE_4096:-0} != 1 ]]; then
    step="skipped (> 1 min)"
  else
    read -r step _ < <(wall_of "$n" stepwise)
  fi
  read -r agg sim < <(wall_of "$n" aggregated)
  read -r agg_warm _ < <(wall_of "$n" aggregated --warmup 1 --iters 3)
  read -r ana _ < <(wall_of "$n" analytic)
  read -r ana_warm _ < <(wall_of "$n" analytic --warmup 1 --iters 3)
  echo "| $n | $step | $agg | $agg_warm | $ana | $ana_warm | $sim |"
done
