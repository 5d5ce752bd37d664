#!/usr/bin/env bash
# Packs what tests/gpu/device_check.sh needs on the rented GPU machine, whose image has the CUDA toolkit and a
# driver but none of our Debian libraries and no dataset, and where nothing is built or installed:
#
#   scripts/device-bundle.sh [BUILD_DIR] [BUNDLE_DIR]      (defaults: build, build-device)
#
# BUNDLE_DIR (ignored by git, so name it in the device call's `carry`) receives
#   dtsim.tar.xz   dtsim and the CUDA test and benchmark binaries, laid out as in the build folder (dtsim,
#                  tests/...), every shared library they load except glibc's and the CUDA toolkit's (lib/), and
#                  this machine's glibc with its loader (glibc/), used only where the device's glibc is too old;
#   fashion-mnist/ the Debian package's four files, as they are (already gzip-compressed).
# About 44 MiB in all (2026-12-05: 14.2 MiB of xz and 30 MiB of dataset), under the device call's 64 MiB limit on
# carried files.
set -euo pipefail

build=${1:-build}
bundle=${2:-build-device}
binaries=("$build/dtsim" "$build/tests/dtsim_cuda_tests" "$build/tests/dtsim_cuda_model_tests"
          "$build/tests/dtsim_gpu_tests" "$build/tests/dtsim_cuda_bench")
for b in "${binaries[@]}"; do
  [ -x "$b" ] || { echo "device-bundle: $b is missing; build with CUDA first (cmake -DDTSIM_CUDA=ON, make)" >&2; exit 2; }
done
dataset=/usr/share/datasets/fashion-mnist
[ -r "$dataset/train-images-idx3-ubyte.gz" ] || { echo "device-bundle: $dataset is missing; install dataset-fashion-mnist" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/tests" "$stage/lib" "$stage/glibc"
cp "$build/dtsim" "$stage/"
for b in "${binaries[@]:1}"; do cp "$b" "$stage/tests/"; done

# Every library the binaries resolve here, by the path ldd found: glibc's own go to glibc/, the toolkit's stay
# behind (the device has its own, matching its driver), the rest to lib/.
is_glibc() { [[ $(basename "$1") =~ ^(libc|libm|libdl|libpthread|librt|libresolv|libutil)\.so ]]; }
ldd "${binaries[@]}" | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$lib" in
    /usr/local/cuda*) ;;
    *) if is_glibc "$lib"; then cp -L "$lib" "$stage/glibc/"; else cp -L "$lib" "$stage/lib/"; fi ;;
  esac
done
cp -L /lib64/ld-linux-x86-64.so.2 "$stage/glibc/"

rm -rf "$bundle"
mkdir -p "$bundle/fashion-mnist"
tar -C "$stage" -cf - . | xz -T0 -6 > "$bundle/dtsim.tar.xz"
cp "$dataset"/*.gz "$bundle/fashion-mnist/"
echo "device-bundle: $(du -sh "$bundle" | cut -f1) in $bundle ($(ls "$stage/lib" | wc -l) libraries, glibc $(ldd --version | head -n1 | awk '{print $NF}'))"
