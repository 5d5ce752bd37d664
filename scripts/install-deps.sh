#!/usr/bin/env bash
# Installs the Debian packages dtsim needs, and nothing else. Idempotent: when every
# package is already present it prints nothing and touches nothing.
set -euo pipefail

# The one list of build and run dependencies. Keep it sorted and Debian-only.
PACKAGES=(
  cmake
  dataset-fashion-mnist
  g++
  googletest
  libbenchmark-dev
  libboost-program-options-dev
  libeigen3-dev
  libgtest-dev
  libsimgrid-dev
  make
  nlohmann-json3-dev
  pkg-config
  python3-matplotlib
  zlib1g-dev
)
# `make fuzz` (scripts/install-deps.sh fuzz) also needs clang and its libFuzzer runtime.
if [[ "${1:-}" == "fuzz" ]]; then
  PACKAGES+=(clang-14 libclang-rt-14-dev)
fi
# `make test-slurm` (scripts/install-deps.sh slurm) also needs a Slurm controller, node daemon and client.
if [[ "${1:-}" == "slurm" ]]; then
  PACKAGES+=(munge slurm-client slurmctld slurmd)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing Debian packages: ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 2
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
