# Sourced by the validation-goal tests: the verdict on one row of a validation table.
#   goal_verdict ERROR_PERCENT GOAL_PERCENT KIND   (KIND: row, miss (documented) or calibration)
# prints "ok" or why the row fails: a row outside its goal, a documented miss that came within the goal (the
# page would then be wrong) or grew beyond twice it, a calibration row off by more than 5 %.
goal_verdict() {
  awk -v e="$1" -v g="$2" -v kind="$3" 'BEGIN {
    a = e < 0 ? -e : e
    if (kind == "calibration") print (a <= 5 ? "ok" : "calibration off by more than 5 %")
    else if (kind == "miss") print (a <= g ? "now within the goal: update docs/validation.md" : a <= 2 * g ? "ok" : "miss grew beyond twice the goal")
    else print (a <= g ? "ok" : "outside the goal")
  }'
}
