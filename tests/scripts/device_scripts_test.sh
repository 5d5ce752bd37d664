#!/usr/bin/env bash
# The GPU machine's scripts run only where a GPU is lent, so they are kept from rotting here: all three parse, the
# bundle script refuses a build folder without the CUDA binaries (one line naming the file, status 2, nothing
# written), and the check refuses a bundle folder without a bundle.
set -u
src=${1:?usage: device_scripts_test.sh SOURCE_DIR}
fail=0
expect() {  # expect STATUS PATTERN COMMAND...: the command exits STATUS and its stderr+stdout matches PATTERN
  local want=$1 pattern=$2
  shift 2
  local output rc
  output=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qE "$pattern" <<< "$output"; then
    echo "FAIL: $* -> status $rc (want $want), output: $output"
    fail=1
  fi
}
for script in scripts/device-bundle.sh tests/gpu/device_check.sh tests/gpu/run_on_device.sh; do
  bash -n "$src/$script" || { echo "FAIL: $script does not parse"; fail=1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/build/tests"
expect 2 "device-bundle: $tmp/build/dtsim is missing; build with CUDA first" \
  bash "$src/scripts/device-bundle.sh" "$tmp/build" "$tmp/bundle"
[ -e "$tmp/bundle" ] && { echo "FAIL: device-bundle wrote $tmp/bundle after refusing"; fail=1; }
expect 1 "cannot unpack $tmp/empty/dtsim.tar.xz" env OUT="$tmp/out" bash "$src/tests/gpu/device_check.sh" "$tmp/empty"
[ "$fail" -eq 0 ] && echo "device scripts: all checks passed"
exit "$fail"
