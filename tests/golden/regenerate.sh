#!/usr/bin/env bash
# Rewrites tests/golden/digests.sha256 from the runs of cases.txt with the given dtsim (a portable default
# build). A changed digest is an intentional change of the numerics: say why in the commit that changes it.
# Usage: tests/golden/regenerate.sh [DTSIM] [JOBS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dtsim=$(realpath "${1:-$here/../../build/dtsim}")
jobs=${2:-$(nproc)}
numerics=$("$dtsim" --version | sed -n 's/^numerics: //p')
fingerprint=$(sed -n 's/.*fingerprint \([0-9a-f]*\).*/\1/p' <<< "$numerics")
case "$numerics" in
  NATIVE*) echo "regenerate: $dtsim is a native build; golden digests are made with the portable default" >&2; exit 2 ;;
esac
names=$(grep -vE '^[[:space:]]*(#|$)' "$here/cases.txt" | awk -F'|' '{gsub(/[ \t]+/, "", $1); print $1}')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export dtsim here work
# shellcheck disable=SC2016
xargs -P "$jobs" -I{} bash -c '"$here/golden.sh" sums "$dtsim" {} > "$work/{}.sums"' <<< "$names"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
{
  echo "# numerics fingerprint $fingerprint ($numerics)"
  echo "# made $(date -u +%Y-%m-%d) on $cpu; regenerate with tests/golden/regenerate.sh"
  for n in $names; do cat "$work/$n.sums"; done
} > "$here/digests.sha256"
echo "regenerate: $(grep -c '^[0-9a-f]' "$here/digests.sha256") digests written to $here/digests.sha256"
