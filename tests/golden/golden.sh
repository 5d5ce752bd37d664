#!/usr/bin/env bash
# Golden digests: a short run's metrics.csv and model.bin must keep their SHA-256 sums (digests.sha256) on every
# CPU of the build's instruction-set level. Cases are listed in cases.txt.
#
#   golden.sh check DTSIM CASE [DIGESTS]     run CASE and compare its two sums with DIGESTS (default: beside this
#                                            script); exit 0 if they match, 1 if not, 77 (skipped) when DIGESTS were
#                                            made for another numerics fingerprint (a native or other-level build)
#   golden.sh hostile DTSIM CASE PRELOAD [DIGESTS]
#                                            the same, run under an environment that must not move a bit: glibc
#                                            tunables that hide AVX-512 and fast string ops and scribble on freed
#                                            memory, thread-count and locale variables, and PRELOAD (a library that
#                                            sets flush-to-zero and denormals-are-zero when it loads)
#   golden.sh changed-digest DTSIM CASE [DIGESTS]
#                                            runs CASE once and checks that the comparison fails when one bit of its
#                                            metrics.csv sum or of its model.bin sum is changed, and passes unchanged
#   golden.sh sums DTSIM CASE                run CASE and print its two digest lines (regenerate.sh uses it)
# GOLDEN_EXTRA_ARGS, if set, is added to every dtsim run (the GPU machine's check gives the bundled dataset's
# folder with it: --set data.path=DIR, which changes no result).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scenarios=$(cd "$here/../../scenarios" && pwd)

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' >&2; exit 2; }

# The case's scenario and arguments, from cases.txt.
case_line() {
  local line
  line=$(grep -E "^$1[[:space:]]*\|" "$here/cases.txt") || { echo "golden: no case '$1' in cases.txt" >&2; exit 2; }
  echo "$line"
}

# run_case DTSIM CASE DIR [env assignments...]: runs the case into DIR.
run_case() {
  local dtsim=$1 name=$2 dir=$3; shift 3
  local line scenario args
  line=$(case_line "$name")
  scenario=$(awk -F'|' '{gsub(/^[ \t]+|[ \t]+$/, "", $2); print $2}' <<< "$line")
  args=$(awk -F'|' '{gsub(/^[ \t]+|[ \t]+$/, "", $3); print $3}' <<< "$line")
  rm -rf "$dir"
  # shellcheck disable=SC2086  # the arguments are words of cases.txt (and of GOLDEN_EXTRA_ARGS)
  if ! env "$@" "$dtsim" run "$scenarios/$scenario" --out "$dir" --quiet --set output.save_model=true $args \
       ${GOLDEN_EXTRA_ARGS:-} \
       > "$dir.log" 2>&1; then
    echo "golden: case $name: dtsim run failed:" >&2
    cat "$dir.log" >&2
    exit 1
  fi
  [[ -f $dir/metrics.csv && -f $dir/model.bin ]] || { echo "golden: case $name wrote no metrics.csv or model.bin" >&2; exit 1; }
}

sums_of() {  # sums_of DIR CASE
  (cd "$1" && sha256sum metrics.csv model.bin) | awk -v c="$2" '{print $1 "  " c "/" $2}'
}

fingerprint_of_build() { "$1" --version | sed -n 's/.*fingerprint \([0-9a-f]*\).*/\1/p'; }
fingerprint_of_digests() { sed -n 's/^# numerics fingerprint \([0-9a-f]*\).*/\1/p' "$1" | head -n 1; }

# Skips (77) when the digests describe another build's numerics: their bits are not comparable.
require_same_fingerprint() {
  local dtsim=$1 digests=$2 built made
  built=$(fingerprint_of_build "$dtsim")
  made=$(fingerprint_of_digests "$digests")
  if [[ -z $made ]]; then echo "golden: $digests has no '# numerics fingerprint' line" >&2; exit 1; fi
  if [[ $built != "$made" ]]; then
    echo "golden: SKIPPED: the digests were made by a build of numerics fingerprint $made; this build's is" \
         "${built:-unknown} ($("$dtsim" --version | sed -n 's/^numerics: //p')), whose bits differ by design" >&2
    exit 77
  fi
}

# compare DIR CASE DIGESTS: 0 when both sums match the digests file, 1 (saying which differs) otherwise.
compare() {
  local dir=$1 name=$2 digests=$3 mismatch=0 expected actual file
  while read -r actual file; do
    expected=$(awk -v f="$file" '$2 == f {print $1}' "$digests")
    if [[ -z $expected ]]; then
      echo "golden: $file has no digest in $digests" >&2; mismatch=1
    elif [[ $expected != "$actual" ]]; then
      echo "golden: $file changed: sha256 $actual, expected $expected" >&2; mismatch=1
    fi
  done < <(sums_of "$dir" "$name")
  if [[ $mismatch -ne 0 ]]; then
    echo "golden: a changed digest is a change of the numerics; if it is intended, regenerate with" \
         "tests/golden/regenerate.sh and say why in the commit" >&2
  fi
  return $mismatch
}

command=${1:-}; shift || true
case "$command" in
  check|hostile|changed-digest|sums) ;;
  *) usage ;;
esac
dtsim=${1:-}; name=${2:-}
[[ -n $dtsim && -n $name ]] || usage
[[ -x $dtsim ]] || { echo "golden: $dtsim is not an executable" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case "$command" in
  sums)
    run_case "$dtsim" "$name" "$work/run"
    sums_of "$work/run" "$name"
    ;;
  check)
    digests=${3:-$here/digests.sha256}
    require_same_fingerprint "$dtsim" "$digests"
    run_case "$dtsim" "$name" "$work/run"
    compare "$work/run" "$name" "$digests" && echo "golden: $name matches"
    ;;
  hostile)
    preload=${3:?golden.sh hostile DTSIM CASE PRELOAD [DIGESTS]}
    digests=${4:-$here/digests.sha256}
    require_same_fingerprint "$dtsim" "$digests"
    run_case "$dtsim" "$name" "$work/run" \
      GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-ERMS,-FSRM:glibc.malloc.perturb=165 \
      LD_PRELOAD="$preload" OMP_NUM_THREADS=3 EIGEN_DONT_PARALLELIZE=0 MKL_NUM_THREADS=3 LC_ALL=C.UTF-8 LANG=de_DE.UTF-8 \
      TZ=Pacific/Chatham
    # The preloaded library did set flush-to-zero, and dtsim found and reset it.
    grep -q '"floating_point_at_start": "flush-to-zero, denormals-are-zero, set before dtsim started; dtsim reset it"' \
      "$work/run/summary.json" || { echo "golden: FAIL: summary.json does not report the reset of flush-to-zero" >&2; exit 1; }
    compare "$work/run" "$name" "$digests" && echo "golden: $name matches under the hostile environment"
    ;;
  changed-digest)
    digests=${3:-$here/digests.sha256}
    require_same_fingerprint "$dtsim" "$digests"
    run_case "$dtsim" "$name" "$work/run"
    compare "$work/run" "$name" "$digests" || { echo "golden: $name does not match its digests to begin with" >&2; exit 1; }
    for file in metrics.csv model.bin; do
      # Flip the lowest bit of the digest's last hex digit: one bit of the 256.
      : > "$work/flipped"
      while IFS= read -r line; do
        if [[ $line == *"  $name/$file" ]]; then
          hex=${line%%  *}
          last=$(( 16#${hex:63:1} ^ 1 ))
          line=$(printf '%s%x  %s' "${hex:0:63}" "$last" "$name/$file")
        fi
        printf '%s\n' "$line" >> "$work/flipped"
      done < "$digests"
      if cmp -s "$digests" "$work/flipped"; then echo "golden: could not flip a bit of $name/$file's digest" >&2; exit 1; fi
      if compare "$work/run" "$name" "$work/flipped" 2> "$work/err"; then
        echo "golden: FAIL: a digest of $name/$file with one bit changed still compared equal" >&2; exit 1
      fi
      grep -q "$name/$file changed" "$work/err" || { echo "golden: FAIL: the mismatch did not name $name/$file" >&2; exit 1; }
    done
    echo "golden: one changed bit in either digest of $name is caught"
    ;;
esac
