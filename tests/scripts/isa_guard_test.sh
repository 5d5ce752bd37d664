#!/usr/bin/env bash
# The CPU check every dtsim executable starts with (gpu/isa_guard.cpp):
#  1. on a CPU that lacks an extension the build uses, dtsim refuses with one line on stderr and exit 2, before
#     anything else runs. A CPU without AVX2 is played by masking it in glibc's view of the CPU
#     (GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2), which is the view the check reads;
#  2. an extension the build does not use (AVX-512 for x86-64-v3) may be missing: dtsim runs;
#  3. the check itself is baseline x86-64 code: no VEX/EVEX-encoded instruction and none of BMI1/2, LZCNT or
#     MOVBE in its disassembly, so that it cannot itself die of an illegal instruction.
# Usage: isa_guard_test.sh DTSIM
set -uo pipefail
dtsim=${1:?usage: isa_guard_test.sh DTSIM}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

version=$("$dtsim" --version) || { echo "FAIL: $dtsim --version exited $?"; exit 1; }
level=$(sed -n 's/^numerics: \([^ ]*\).*/\1/p' <<< "$version")
echo "build level: ${level:-unknown}"
case "$level" in
  x86-64-v2) masked=SSE4_2 name=sse4.2 unused=AVX2 ;;
  *) masked=AVX2 name=avx2 unused=AVX512F ;;
esac

err=$(mktemp) out=$(mktemp)
trap 'rm -f "$err" "$out"' EXIT
GLIBC_TUNABLES=glibc.cpu.hwcaps=-$masked "$dtsim" run /nonexistent.ini > "$out" 2> "$err"
status=$?
[[ $status -eq 2 ]] || fail "without $masked: exit $status, expected 2"
[[ $(wc -l < "$err") -eq 1 ]] || fail "without $masked: expected one line on stderr, got: $(cat "$err")"
grep -q "this CPU lacks .*$name" "$err" || fail "without $masked: the line does not name $name: $(cat "$err")"
grep -q "rebuild" "$err" || fail "without $masked: the line says no way out: $(cat "$err")"
[[ ! -s $out ]] || fail "without $masked: something was printed on stdout: $(cat "$out")"
# The refusal comes before dtsim reads its arguments: the missing scenario was not what it reported.
grep -q "nonexistent" "$err" && fail "without $masked: dtsim got as far as reading its arguments"

GLIBC_TUNABLES=glibc.cpu.hwcaps=-$unused "$dtsim" --version > /dev/null 2> "$err" \
  || fail "without $unused, which this build does not use, dtsim refused: $(cat "$err")"

if [[ $level != native ]]; then
  objdump -d --no-show-raw-insn "$dtsim" \
    | awk '/<dtsim_isa_guard_check>:$/{p=1; next} p && /^$/{exit} p' > "$out"
  [[ -s $out ]] || fail "dtsim_isa_guard_check not found in the disassembly"
  newer=$(grep -E '%[xyz]mm|%k[0-7]|\s(v[a-z0-9]+|andn|bextr|blsi|blsmsk|blsr|bzhi|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|tzcnt|movbe)\s' "$out")
  [[ -z $newer ]] || fail "the check uses instructions newer than x86-64: $newer"
fi

[[ $failures -eq 0 ]] && echo "isa_guard: all checks passed" || exit 1
