#!/usr/bin/env bash
# The nccl-tests validation table (docs/validation.md) held to its goals: every validation row within 10 % of its
# published measurement at large messages and 25 % at small ones, the calibration rows within 5 %, and the
# rows the page reports as misses still outside the goal but within twice it. A row that leaves its goal fails
# the test; so does a documented miss that comes within the goal, since the page would then be wrong.
#   tests/scripts/collective_validation_goals.sh path/to/dtsim path/to/source
set -euo pipefail
DTSIM=$1
SOURCE=$2
source "$(dirname "$0")/goal_verdict.sh"
CALIBRATION=" L1 L9 "
MISSES=" L4 L5 L11 S9 "   # docs/validation.md: "Misses", each with its reason

table=$(bash "$SOURCE/scripts/validate-collectives.sh" "$DTSIM")
echo "$table"
status=0
rows=0
while read -r id _ _ measured _ predicted _ error _; do
  [[ $id == \#* || -z $id ]] && continue
  rows=$((rows + 1))
  goal=25
  [[ $id == L* ]] && goal=10
  kind=row
  [[ $MISSES == *" $id "* ]] && kind=miss
  [[ $CALIBRATION == *" $id "* ]] && kind=calibration
  verdict=$(goal_verdict "$error" "$goal" "$kind")
  if [[ $verdict != ok ]]; then
    echo "FAIL $id: measured $measured, predicted $predicted, error $error % ($verdict)"
    status=1
  fi
done <<<"$table"
if [[ $rows -ne 20 ]]; then
  echo "FAIL: $rows rows, docs/validation.md has 20"
  status=1
fi
exit $status
