#!/usr/bin/env bash
# The step-time validation table (docs/validation.md, "Step times against published training throughput")
# held to its goals: every row within 25 % of its published step time. The rows the page reports as misses
# must stay outside the goal but within twice it, and the mean |error| must stay at or below the page's
# figure; a row that leaves its goal fails, and so does a documented miss that comes within it (the page would
# then be wrong). No row is a calibration row: no profile value was set from these measurements.
#   tests/scripts/step_time_validation_goals.sh path/to/dtsim path/to/source
set -euo pipefail
DTSIM=$1
SOURCE=$2
source "$(dirname "$0")/goal_verdict.sh"
GOAL=25
MISSES=" F7 F10 F11 F12 A2 H1 H2 H3 H4 H5 H6 D2 "   # docs/validation.md: each with its reason
DOCUMENTED_MEAN=24.2     # docs/validation.md: the mean |error| over the rows, in %
ROWS=28

table=$(bash "$SOURCE/scripts/validate-step-times.sh" "$DTSIM")
echo "$table"
status=0
rows=0
sum=0
while read -r id gpus _ _ measured _ predicted _ error _; do
  [[ $id == \#* || -z $id ]] && continue
  rows=$((rows + 1))
  sum=$(awk -v s="$sum" -v e="$error" 'BEGIN { print s + (e < 0 ? -e : e) }')
  kind=row
  [[ $MISSES == *" $id "* ]] && kind=miss
  verdict=$(goal_verdict "$error" "$GOAL" "$kind")
  if [[ $verdict != ok ]]; then
    echo "FAIL $id ($gpus GPUs): measured $measured, predicted $predicted, error $error % ($verdict)"
    status=1
  fi
done <<<"$table"
if [[ $rows -ne $ROWS ]]; then
  echo "FAIL: $rows rows, docs/validation.md has $ROWS"
  status=1
fi
mean=$(awk -v s="$sum" -v n="$rows" 'BEGIN { printf "%.1f", s / n }')
echo "mean |error| $mean % over $rows rows (goal 10 %; docs/validation.md reports $DOCUMENTED_MEAN %)"
if awk -v m="$mean" -v d="$DOCUMENTED_MEAN" 'BEGIN { exit !(m > d + 0.05) }'; then
  echo "FAIL: the mean |error| grew beyond the documented $DOCUMENTED_MEAN %"
  status=1
fi
exit $status
